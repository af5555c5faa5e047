"""Typed output (``output_type=``): the answer is produced and validated as the type,
natively or through the ``final_result`` tool, wrong answers go back to the model a
bounded number of times, and the value is on the ``RunResult`` and in the transcript."""

from __future__ import annotations

import dataclasses
import importlib.util
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict

import anyio
import msgspec
import pytest

from pi_trio.agent import (
    Agent,
    AgentTool,
    OutputSettings,
    OutputValidationError,
    RunAbortedError,
    RunError,
    RunResult,
)
from pi_trio.agent.extend import FINAL_RESULT_TOOL
from pi_trio.ai import (
    AssistantMessage,
    Context,
    StreamOptions,
    messages_from_json,
    messages_to_json,
)
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.ai.transcript import get_current_tools
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .helpers import echo_tool, user_text


class Weather(msgspec.Struct):
    """A weather report."""

    city: str
    temp_c: float
    note: str | None = None


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


class Node(msgspec.Struct):
    value: int
    children: list[Node] = []


class Meeting(msgspec.Struct):
    title: str
    when: datetime


OSLO = '{"city": "Oslo", "temp_c": 21.5}'
ROOT = Path(__file__).resolve().parent.parent


def scripted(*steps: Any) -> FauxProvider:
    faux = FauxProvider()
    faux.set_responses(list(steps))
    return faux


def native_agent(faux: FauxProvider, **options: Any) -> Agent:
    return Agent(model=faux.get_model(), stream_fn=faux, output_mode="native", **options)


def tool_agent(faux: FauxProvider, **options: Any) -> Agent:
    return Agent(model=faux.get_model(), stream_fn=faux, output_mode="tool", **options)


def final_call(args: Any, id: str | None = None) -> AssistantMessage:
    return faux_assistant_message(
        [faux_tool_call(FINAL_RESULT_TOOL, args, id=id)], stop_reason="toolUse"
    )


def roles(result: RunResult[Any]) -> list[str]:
    return [m.role for m in result.messages]


# --------------------------------------------------------------------------- native


async def test_native_answer_is_the_typed_output_and_every_request_carries_the_schema() -> None:
    seen: list[StreamOptions] = []

    def answer(context: Context, options: StreamOptions, state: Any, model: Any) -> Any:
        seen.append(options)
        return faux_assistant_message(OSLO)

    agent = native_agent(scripted(answer))
    result = await agent.prompt("Weather in Oslo?", output_type=Weather)
    assert result.output == Weather(city="Oslo", temp_c=21.5)
    assert result.ok
    assert result.text == OSLO  # the transcript holds the answer as JSON text
    output_format = seen[0].output_format
    assert output_format is not None
    assert output_format.name == "Weather"
    assert output_format.description == "A weather report."
    assert output_format.schema["type"] == "object"
    assert output_format.schema["required"] == ["city", "temp_c"]
    assert "$ref" not in output_format.schema
    assert roles(result) == ["user", "assistant"]  # no tool, no extra message


async def test_a_native_answer_that_does_not_validate_goes_back_naming_the_field() -> None:
    faux = scripted(
        faux_assistant_message('{"city": "Oslo", "temp_c": "warm"}'),
        faux_assistant_message(f"```json\n{OSLO}\n```"),
    )
    result = await native_agent(faux).prompt("Weather?", output_type=Weather)
    assert result.output == Weather(city="Oslo", temp_c=21.5)
    assert roles(result) == ["user", "assistant", "user", "assistant"]
    correction = user_text(result.messages[2])
    assert "Expected `float`, got `str` - at `$.temp_c`" in correction
    assert faux.state.call_count == 2


async def test_native_retries_are_bounded_then_the_run_fails_clearly() -> None:
    faux = scripted(
        faux_assistant_message("Sunny, about 20 degrees."),
        faux_assistant_message('{"city": "Oslo"}'),
        faux_assistant_message(OSLO),  # never asked for
    )
    result = await native_agent(faux, max_output_retries=1).prompt("Weather?", output_type=Weather)
    assert faux.state.call_count == 2
    assert faux.pending_response_count == 1
    assert not result.ok
    assert result.stop_reason == "stop"  # the transcript tells what the model did
    message = (
        "The model's answer did not validate as Weather after 2 attempts: "
        "Object missing required field `temp_c`"
    )
    with pytest.raises(OutputValidationError, match=f"^{message}$") as caught:
        _ = result.output
    assert caught.value.result is result
    with pytest.raises(OutputValidationError):
        result.raise_for_error()


async def test_no_retries_means_the_first_wrong_answer_fails() -> None:
    faux = scripted(faux_assistant_message("not json"), faux_assistant_message(OSLO))
    result = await native_agent(faux, max_output_retries=0).prompt("?", output_type=Weather)
    assert faux.state.call_count == 1
    with pytest.raises(OutputValidationError, match="after 1 attempt: JSON is malformed"):
        _ = result.output


async def test_a_tool_turn_is_not_an_answer_in_native_mode() -> None:
    faux = scripted(
        faux_assistant_message([faux_tool_call("echo", {"value": "hi"})], stop_reason="toolUse"),
        faux_assistant_message(OSLO),
    )
    agent = native_agent(faux, tools=[echo_tool()])
    result = await agent.prompt("?", output_type=Weather)
    assert roles(result) == ["user", "assistant", "toolResult", "assistant"]
    assert result.output.city == "Oslo"


# --------------------------------------------------------------------------- tool


async def test_the_final_result_call_is_the_output_and_ends_the_run() -> None:
    faux = scripted(
        faux_assistant_message([faux_tool_call("echo", {"value": "hi"})], stop_reason="toolUse"),
        final_call({"city": "Oslo", "temp_c": 3}),
        faux_assistant_message("never asked for"),
    )
    agent = tool_agent(faux, tools=[echo_tool()])
    result = await agent.prompt("?", output_type=Weather)
    assert result.output == Weather(city="Oslo", temp_c=3.0)
    assert result.ok
    assert faux.pending_response_count == 1
    assert roles(result)[-3:] == ["toolResult", "assistant", "toolResult"]
    call = result.messages[-2].content[0]
    assert (call.name, call.arguments) == (FINAL_RESULT_TOOL, {"city": "Oslo", "temp_c": 3})
    assert user_text(result.messages[-1]) == "Final result received."
    # the run's own tool; the Agent's tools are unchanged
    assert [t.name for t in agent.state.tools] == ["echo"]


async def test_final_result_next_to_another_tool_still_ends_the_run_after_the_batch() -> None:
    faux = scripted(
        faux_assistant_message(
            [
                faux_tool_call("echo", {"value": "hi"}),
                faux_tool_call(FINAL_RESULT_TOOL, {"city": "Oslo", "temp_c": 1}),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message("never asked for"),
    )
    result = await tool_agent(faux, tools=[echo_tool()]).prompt("?", output_type=Weather)
    assert result.output.temp_c == 1.0
    assert roles(result) == ["system", "user", "assistant", "toolResult", "toolResult"]
    assert faux.state.call_count == 1


async def test_wrong_arguments_come_back_as_an_error_result_naming_the_field() -> None:
    faux = scripted(
        final_call({"city": "Oslo", "temp_c": "warm"}),
        final_call({"city": "Oslo", "temp_c": 2}),
    )
    result = await tool_agent(faux).prompt("?", output_type=Weather)
    assert result.output.temp_c == 2.0
    failed = result.messages[3]
    assert failed.role == "toolResult"
    assert failed.is_error
    assert user_text(failed).startswith(
        "Invalid Weather: Expected `float`, got `str` - at `$.temp_c`. Call final_result again"
    )


async def test_arguments_json_schema_lets_through_are_still_checked_by_msgspec() -> None:
    # JSON Schema passes any string as a date-time; msgspec's conversion does not
    faux = scripted(
        final_call({"title": "Sync", "when": "next tuesday"}),
        final_call({"title": "Sync", "when": "2026-03-01T10:00:00Z"}),
    )
    result = await tool_agent(faux).prompt("?", output_type=Meeting)
    assert result.output.when.year == 2026
    text = user_text(result.messages[3])
    assert text.startswith("Invalid Meeting: Invalid RFC3339 encoded datetime - at `$.when`")


async def test_a_text_answer_in_tool_mode_is_corrected_then_bounded() -> None:
    faux = scripted(
        faux_assistant_message("It is sunny."),
        faux_assistant_message("Still sunny."),
        final_call({"city": "Oslo", "temp_c": 1}),
    )
    result = await tool_agent(faux, max_output_retries=1).prompt("?", output_type=Weather)
    assert faux.state.call_count == 2
    assert f"calling the {FINAL_RESULT_TOOL} tool" in user_text(result.messages[3])
    with pytest.raises(
        OutputValidationError,
        match=f"after 2 attempts: the model answered in text instead of calling {FINAL_RESULT_TOOL}",
    ):
        result.raise_for_error()


async def test_failed_final_result_calls_are_bounded_too() -> None:
    faux = scripted(
        final_call({"city": "Oslo"}), final_call({"city": "Oslo"}), final_call({"city": "X"})
    )
    result = await tool_agent(faux, max_output_retries=1).prompt("?", output_type=Weather)
    assert faux.state.call_count == 2
    with pytest.raises(
        OutputValidationError, match=r"after 2 attempts: Object missing required field `temp_c`$"
    ):
        _ = result.output


async def test_a_tool_already_named_final_result_is_refused_before_the_run() -> None:
    taken = AgentTool(
        name=FINAL_RESULT_TOOL, description="x", parameters={"type": "object"}, execute=print
    )
    faux = scripted(faux_assistant_message("hi"))
    agent = tool_agent(faux, tools=[taken])
    with pytest.raises(
        ValueError, match=r"already named 'final_result'.*OutputSettings\(mode='native'\)"
    ):
        await agent.prompt("?", output_type=Weather)
    assert not agent.state.is_streaming
    assert (await agent.prompt("?")).text == "hi"  # the agent is still usable


# --------------------------------------------------------------------------- types


@pytest.mark.parametrize("mode", ["native", "tool"])
@pytest.mark.parametrize(
    ("output_type", "wire", "expected"),
    [
        (Point, {"x": 1, "y": 2}, Point(1, 2)),
        (Person, {"name": "Ada", "age": 36}, {"name": "Ada", "age": 36}),
        (list[int], {"result": [1, 2, 3]}, [1, 2, 3]),
    ],
)
async def test_dataclasses_typeddicts_and_other_types(
    mode: str, output_type: Any, wire: Any, expected: Any
) -> None:
    if mode == "native":
        faux = scripted(faux_assistant_message(msgspec.json.encode(wire).decode()))
    else:
        faux = scripted(final_call(wire))
    agent = Agent(model=faux.get_model(), stream_fn=faux, output_mode=mode)  # type: ignore[arg-type]
    result = await agent.prompt("?", output_type=output_type)
    assert result.output == expected


@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_a_recursive_type_keeps_its_definition_and_validates_at_depth(mode: str) -> None:
    tree = {"value": 1, "children": [{"value": 2, "children": [{"value": "three"}]}]}
    fixed = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}
    if mode == "native":
        steps = [faux_assistant_message(msgspec.json.encode(t).decode()) for t in (tree, fixed)]
    else:
        steps = [final_call(tree), final_call(fixed)]
    faux = scripted(*steps)
    agent = Agent(model=faux.get_model(), stream_fn=faux, output_mode=mode)  # type: ignore[arg-type]
    result = await agent.prompt("?", output_type=Node)
    assert result.output == Node(1, [Node(2, [Node(3)])])
    # natively the correction, with the tool the error result, before the last answer
    told = user_text(result.messages[-2] if mode == "native" else result.messages[-3])
    assert "Expected `int`, got `str` - at `$.children[0].children[0].value`" in told


def test_the_schema_of_a_recursive_type_refers_to_its_own_definition() -> None:
    from pi_trio.agent._output_schema import output_schema

    schema = output_schema(Node).schema
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert set(schema["$defs"]) == {"Node"}
    assert schema["$defs"]["Node"]["required"] == ["value"]


def test_misused_output_settings_are_refused_where_they_are_given() -> None:
    faux = scripted(faux_assistant_message(OSLO))
    with pytest.raises(
        ValueError,
        match=r"^OutputSettings\(mode=...\) must be 'auto', 'native' or 'tool'; got 'json'$",
    ):
        Agent(model=faux.get_model(), stream_fn=faux, output_mode="json")  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match=r"^OutputSettings\(max_retries=...\) must be a whole number, 0 or more; got -1$",
    ):
        OutputSettings(max_retries=-1)
    with pytest.raises(TypeError, match=r"output_type=<class 'object'> has no JSON schema"):
        OutputSettings(type=object)
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    with pytest.raises(TypeError, match=r"^Agent\(output=...\) takes an OutputSettings"):
        agent.output = {"mode": "native"}  # type: ignore[assignment]


async def test_a_type_without_a_schema_fails_before_the_run_and_keeps_the_queue() -> None:
    faux = scripted(faux_assistant_message("first"), faux_assistant_message("second"))
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    await agent.prompt("hi")
    agent.follow_up("more")
    with pytest.raises(TypeError, match=r"output_type=<class 'object'> has no JSON schema"):
        await agent.continue_(output_type=object)
    assert agent.has_queued_messages()
    assert (await agent.continue_()).text == "second"


# --------------------------------------------------------------------------- the result


async def test_output_without_an_output_type_is_a_clear_error() -> None:
    faux = scripted(faux_assistant_message("hi"))
    plain = await Agent(model=faux.get_model(), stream_fn=faux).prompt("?")
    assert plain.ok
    with pytest.raises(RuntimeError, match="not asked for a typed output: pass output_type="):
        _ = plain.output


async def test_a_failed_request_raises_the_run_error_not_an_output_error() -> None:
    faux = scripted(faux_assistant_message("", stop_reason="error", error_message="503 busy"))
    result = await native_agent(faux).prompt("?", output_type=Weather)
    with pytest.raises(RunError, match=r"^503 busy$") as caught:
        _ = result.output
    assert not isinstance(caught.value, OutputValidationError)


async def test_an_aborted_output_run_raises_run_aborted_error() -> None:
    faux = scripted(faux_assistant_message(OSLO * 20))
    agent = native_agent(faux)
    agent.subscribe(lambda event: agent.abort() if event.type == "message_update" else None)
    result = await agent.prompt("?", output_type=Weather)
    with pytest.raises(RunAbortedError):
        _ = result.output


async def test_the_agents_output_type_applies_to_each_run_unless_the_prompt_names_one() -> None:
    faux = scripted(faux_assistant_message(OSLO), faux_assistant_message('{"x": 1, "y": 2}'))
    agent = native_agent(faux, output_type=Weather)
    first = await agent.prompt("?")
    second = await agent.prompt("?", output_type=Point)
    assert first.output == Weather(city="Oslo", temp_c=21.5)
    assert second.output == Point(1, 2)


async def test_the_agents_own_hooks_still_run_around_the_output_hooks() -> None:
    turns: list[str] = []

    def finish_turn(turn: Any) -> None:
        turns.append(turn.message.content[0].text)

    def prepare_next_turn() -> dict[str, Any]:  # the older form, without the turn
        return {"messages": []}

    faux = scripted(faux_assistant_message("nope"), faux_assistant_message(OSLO))
    agent = native_agent(faux, finish_turn=finish_turn, prepare_next_turn=prepare_next_turn)
    result = await agent.prompt("?", output_type=Weather)
    assert turns == ["nope", OSLO]
    assert result.output.city == "Oslo"


async def test_finish_turn_ending_the_run_wins_over_a_retry() -> None:
    faux = scripted(faux_assistant_message("nope"), faux_assistant_message(OSLO))
    agent = native_agent(faux, finish_turn=lambda turn: "end")
    result = await agent.prompt("?", output_type=Weather)
    assert faux.state.call_count == 1
    with pytest.raises(OutputValidationError, match="after 1 attempt: JSON is malformed"):
        _ = result.output


# --------------------------------------------------------------------------- mode


async def test_auto_mode_is_native_for_a_registry_provider_that_takes_json_schema() -> None:
    seen: list[Any] = []

    def answer(context: Context, options: StreamOptions, state: Any, model: Any) -> Any:
        tools = [t.name for t in get_current_tools(context.messages)]
        seen.append((options.output_format, tools))
        return faux_assistant_message(OSLO)

    faux = scripted(answer, answer, final_call(msgspec.json.decode(OSLO)))
    registry = ProviderRegistry()
    faux.register(registry)
    flagged = msgspec.structs.replace(faux.get_model(), compat={"supportsJsonSchemaOutput": True})
    native = await Agent(model=flagged, registry=registry).prompt("?", output_type=Weather)
    assert native.output.city == "Oslo"
    # a stream function of the Agent's own may not read output_format: the tool path,
    # where the text answer is corrected and the final_result call accepted
    plain = Agent(model=flagged, stream_fn=faux)
    assert (await plain.prompt("?", output_type=Weather)).output.city == "Oslo"
    (native_format, native_tools), (tool_format, tool_tools) = seen
    assert native_format is not None
    assert native_format.name == "Weather"
    assert FINAL_RESULT_TOOL not in native_tools
    assert tool_format is None
    assert FINAL_RESULT_TOOL in tool_tools


# --------------------------------------------------------------------------- transcript


@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_the_transcript_stays_pi_json_with_the_original_roles(mode: str) -> None:
    answer = (
        faux_assistant_message(OSLO) if mode == "native" else final_call(msgspec.json.decode(OSLO))
    )
    faux = scripted(faux_assistant_message("no"), answer)
    agent = Agent(model=faux.get_model(), stream_fn=faux, output_mode=mode)  # type: ignore[arg-type]
    await agent.prompt("?", output_type=Weather)
    messages = agent.state.messages
    assert {m.role for m in messages} <= {"system", "user", "assistant", "toolResult"}
    data = messages_to_json(messages)
    assert messages_from_json(data) == messages


# --------------------------------------------------------------------------- asyncio


@pytest.mark.parametrize("mode", ["native", "tool"])
def test_output_runs_on_asyncio(mode: str) -> None:
    async def main() -> Weather:
        bad, good = (
            (faux_assistant_message("{}"), faux_assistant_message(OSLO))
            if mode == "native"
            else (final_call({}), final_call(msgspec.json.decode(OSLO)))
        )
        faux = scripted(bad, good)
        agent = Agent(model=faux.get_model(), stream_fn=faux, output_mode=mode)  # type: ignore[arg-type]
        result = await agent.prompt("?", output_type=Weather)
        assert faux.state.call_count == 2
        return result.output

    assert anyio.run(main, backend="asyncio") == Weather(city="Oslo", temp_c=21.5)


# --------------------------------------------------------------------------- the README


async def test_the_readme_example_runs_and_prints_what_it_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = ROOT / "examples" / "structured_output.py"
    readme = (ROOT / "README.md").read_text()
    assert f"```python\n{path.read_text()}```" in readme
    spec = importlib.util.spec_from_file_location("examples_structured_output", path)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    await example.main()
    printed = capsys.readouterr().out
    assert printed.startswith("Weather(city='Oslo', temp_c=12.5")
    assert f"```text\n{printed}```" in readme
