"""The ``tool`` decorator: schemas from annotations, argument conversion, results."""

from __future__ import annotations

import datetime
from typing import Any, Literal

import msgspec
import pytest
import trio

from pi_trio.agent import Agent, AgentTool, AgentToolResult, tool
from pi_trio.ai import AbortSignal, TextContent, validate_tool_arguments

from .helpers import MOCK_MODEL, Scripted, asst, call


class Point(msgspec.Struct):
    x: int
    y: int


@tool
async def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)


def test_the_schema_comes_from_the_annotations_and_the_docstring_is_the_description() -> None:
    assert isinstance(add, AgentTool)
    assert add.name == "add"
    assert add.description == "Add two integers."
    assert add.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
        "required": ["a"],
        "additionalProperties": False,
    }


def test_literals_optionals_and_nested_structs_become_json_schema() -> None:
    @tool(name="paint", label="Paint", execution_mode="sequential", timeout=3)
    def paint(where: Point, color: Literal["red", "blue"] = "red", note: str | None = None) -> str:
        """Paint a point."""
        return f"{where.x},{where.y} {color} {note}"

    assert paint.name == "paint"
    assert paint.label == "Paint"
    assert paint.execution_mode == "sequential"
    assert paint.timeout == 3
    props = paint.parameters["properties"]
    assert props["color"] == {"enum": ["blue", "red"], "default": "red"}
    assert props["where"] == {"$ref": "#/$defs/Point"}
    assert paint.parameters["$defs"]["Point"]["required"] == ["x", "y"]
    # the schema is usable as is by the validator (local $refs resolve)
    assert validate_tool_arguments(paint, {"where": {"x": "1", "y": 2}}) == {
        "where": {"x": 1, "y": 2}
    }


async def test_arguments_are_converted_to_the_annotated_types_before_the_call() -> None:
    seen: list[Any] = []

    @tool
    async def place(where: Point, tags: list[str]) -> str:
        """Place a point."""
        seen.append((where, tags))
        return "ok"

    result = await place.execute(
        "c1", {"where": {"x": 1, "y": 2}, "tags": ["a"]}, None, lambda u: None
    )
    assert seen == [(Point(1, 2), ["a"])]
    assert result == AgentToolResult(content=[TextContent(text="ok")])


async def test_runtime_parameters_are_filled_in_by_name_and_hidden_from_the_schema() -> None:
    updates: list[Any] = []

    @tool
    async def work(n: int, tool_call_id: str, signal: AbortSignal, on_update: Any) -> str:
        """Do work."""
        on_update("half way")
        return f"{tool_call_id}:{n}:{signal is not None}"

    assert set(work.parameters["properties"]) == {"n"}
    result = await work.execute("c7", {"n": 3}, AbortSignal(), updates.append)
    assert result.content == [TextContent(text="c7:3:True")]
    assert updates == ["half way"]


async def test_non_string_results_are_sent_as_json_and_kept_in_details() -> None:
    @tool
    def stats(values: list[float]) -> dict[str, float]:
        """Sum and count."""
        return {"sum": sum(values), "count": len(values)}

    result = await stats.execute("c", {"values": [1, 2.5]}, None, None)
    assert result.content == [TextContent(text='{"sum":3.5,"count":2}')]
    assert result.details == {"sum": 3.5, "count": 2}


async def test_returning_an_agent_tool_result_gives_full_control() -> None:
    @tool
    async def stop() -> AgentToolResult:
        """Stop the run."""
        return AgentToolResult(content=[TextContent(text="bye")], terminate=True)

    result = await stop.execute("c", {}, None, None)
    assert result.terminate is True


def test_missing_annotations_docstrings_and_star_args_are_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match="parameter 'x' needs a type annotation"):

        @tool
        async def untyped(x) -> str:  # type: ignore[no-untyped-def]
            """Doc."""
            return ""

    with pytest.raises(TypeError, match="give the function a docstring"):

        @tool
        async def undocumented(x: int) -> str:
            return ""

    with pytest.raises(TypeError, match=r"\*args/\*\*kwargs cannot be described"):

        @tool
        async def variadic(*xs: int) -> str:
            """Doc."""
            return ""


def test_an_annotation_without_a_json_schema_names_the_tool_the_parameter_and_the_fix() -> None:
    with pytest.raises(TypeError) as caught:

        @tool
        def schedule(when: str, zones: set[datetime.timezone]) -> str:
            """Schedule something."""
            return ""

    text = str(caught.value)
    assert "\n" not in text
    assert text.startswith(
        "@tool 'schedule': parameter 'zones' is annotated set[datetime.timezone], which has "
        "no JSON schema for the model (type <class 'datetime.timezone'> is not supported); "
        "use str, int, float, bool"
    )
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__

    with pytest.raises(TypeError, match=r"^@tool 'vague': parameter 'x' is annotated object,"):

        @tool
        def vague(x: object) -> str:
            """Doc."""
            return ""

    with pytest.raises(TypeError, match=r"^@tool 'later': an annotation names something undefined"):

        @tool
        def later(x: Undefined) -> str:  # type: ignore[name-defined]  # noqa: F821
            """Doc."""
            return ""


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: tool(42),
            TypeError,
            r"^tool\(\) takes the function to turn into a tool .* got 42$",
        ),
        (lambda: tool("add"), TypeError, r"got 'add'; give the name as @tool\(name='add'\)$"),
        (
            lambda: tool(timeout="abc"),
            TypeError,
            r"^@tool: timeout must be a number of seconds .* got 'abc'$",
        ),
        (
            lambda: tool(timeout=0),
            ValueError,
            r"^@tool: timeout must be positive seconds .* got 0$",
        ),
        (
            lambda: tool(execution_mode="eager"),
            ValueError,
            r"^@tool: execution_mode must be 'sequential', 'parallel' or None, got 'eager'$",
        ),
        (lambda: tool(timeout=5)(3), TypeError, r"^@tool\(...\) decorates a function, got 3$"),
        (
            lambda: AgentTool(name="t", description="d", parameters={}, execute=print, timeout="1"),
            TypeError,
            r"^AgentTool 't': timeout must be a number of seconds",
        ),
    ],
)
def test_wrong_decorator_arguments_are_one_line_errors_naming_the_argument(
    make: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        make()


async def test_a_decorated_tool_runs_in_an_agent_and_bad_arguments_become_an_error_result() -> None:
    stream = Scripted(
        asst([call("t1", "add", {"a": 40}), call("t2", "add", {"a": "not a number"})], "toolUse"),
        asst("done"),
    )
    agent = Agent(model=MOCK_MODEL, tools=[add], stream_fn=stream)
    await agent.prompt("add")
    results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
    assert results["t1"].content == [TextContent(text="42")]
    assert results["t2"].is_error
    assert results["t2"].content[0].text.startswith('Validation failed for tool "add":')


async def test_a_decorated_tool_timeout_applies(autojump_clock: Any) -> None:
    @tool(timeout=1)
    async def slow() -> str:
        """Sleep."""
        await trio.sleep(10)
        return "late"

    agent = Agent(
        model=MOCK_MODEL,
        tools=[slow],
        stream_fn=Scripted(asst([call("t1", "slow", {})], "toolUse"), asst("done")),
    )
    await agent.prompt("go")
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert result.content[0].text == 'Tool "slow" timed out after 1s'


def test_output_schema_and_replay_are_runtime_only_never_declared_to_the_model() -> None:
    from pi_trio.ai.transcript import to_tool_declaration

    schema = {"type": "object", "properties": {"sum": {"type": "number"}}}
    add = AgentTool(
        name="add",
        description="adds",
        parameters={"type": "object", "properties": {}},
        execute=lambda *args: None,
        output_schema=schema,
        replay="safe",
    )
    assert add.output_schema is schema
    declaration = to_tool_declaration(add)
    assert "outputSchema" not in msgspec.json.decode(msgspec.json.encode(declaration))
    with pytest.raises(TypeError, match="output_schema must be a JSON schema dict"):
        AgentTool(
            name="x",
            description="x",
            parameters={},
            execute=lambda *args: None,
            output_schema="nope",  # type: ignore[arg-type]
        )
