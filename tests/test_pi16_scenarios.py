"""pi_trio's agent against traces recorded from the original pi 1.6 (tests/record_pi16.mjs).

Each scenario runs here with the same script (faux provider, 3-token chunks, the same
tools and hooks), and the events a listener sees and the final transcript must equal the
recording, up to what is not a contract: wall-clock values (``timestamp``,
``durationMs``), and the ``partial`` a ``message_update`` carries (the original's
consumer lags its producer, so its partials hold content that arrives later).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.agent.extend import run_tool_call
from pi_trio.agent.hooks import AfterToolCallResult
from pi_trio.ai import Cost, TextContent, ToolCall, Usage, to_json
from pi_trio.ai.json import parse_tool_call_arguments
from pi_trio.ai.transcript import NestedToolCallRecord, NestedToolCalls
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

FIXTURES = Path(__file__).parent / "fixtures" / "pi16"
NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
VOLATILE = frozenset({"timestamp", "durationMs"})


def normalize(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("type") == "message_update":
            event = dict(value["assistantMessageEvent"])
            event.pop("partial", None)
            return {"type": "message_update", "assistantMessageEvent": normalize(event)}
        return {k: "<t>" if k in VOLATILE else normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def first_difference(got: Any, want: Any, path: str = "$") -> str | None:
    """Where ``got`` first differs from ``want`` (``None``: equal), for a readable failure."""
    if type(got) is not type(want):
        return f"{path}: {got!r:.300} != {want!r:.300}"
    if isinstance(got, dict):
        for key in sorted(set(got) | set(want)):
            if key not in got or key not in want:
                return f"{path}.{key}: only in {'want' if key not in got else 'got'}"
            found = first_difference(got[key], want[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(got, list):
        for index, (a, b) in enumerate(zip(got, want, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(got) == len(want) else f"{path}: {len(got)} items, want {len(want)}"
    return None if got == want else f"{path}: {got!r:.300} != {want!r:.300}"


def recorded(name: str) -> tuple[list[Any], list[Any], dict[str, Any]]:
    lines = (FIXTURES / f"{name}.events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    transcript = json.loads((FIXTURES / f"{name}.transcript.json").read_text())
    return events, transcript, json.loads((FIXTURES / f"{name}.json").read_text())


def tool(name: str, description: str, execute: Any, parameters: Any = NUMBERS) -> AgentTool:
    return AgentTool(
        name=name, label=name, description=description, parameters=parameters, execute=execute
    )


async def _add(tool_call_id: str, params: Any) -> AgentToolResult:
    total = params["a"] + params["b"]
    return AgentToolResult(content=[TextContent(text=str(total))], details={"sum": total})


async def _mul(tool_call_id: str, params: Any) -> AgentToolResult:
    product = params["a"] * params["b"]
    return AgentToolResult(content=[TextContent(text=str(product))], details={"product": product})


ADD = tool("add", "Add two numbers", _add)
MUL = tool("mul", "Multiply two numbers", _mul)


def faux(*responses: Callable[[], Any], **options: Any) -> FauxProvider:
    provider = FauxProvider(api="faux", token_size=(3, 3), **options)
    # built when the request arrives, as the recording's factories are
    provider.set_responses([lambda *_, build=build: build() for build in responses])
    return provider


def recording(agent: Agent) -> list[Any]:
    events: list[Any] = []
    agent.subscribe(lambda event: events.append(json.loads(to_json(event))))
    return events


def check(name: str, agent: Agent, events: list[Any]) -> dict[str, Any]:
    want_events, want_transcript, extra = recorded(name)
    got_transcript = json.loads(to_json(agent.state.messages))
    assert first_difference(normalize(events), normalize(want_events)) is None
    assert first_difference(normalize(got_transcript), normalize(want_transcript)) is None
    return extra


async def test_tool_turn() -> None:
    provider = faux(
        lambda: faux_assistant_message(
            [
                faux_thinking("Add them."),
                faux_text("Let me add."),
                faux_tool_call("add", {"a": 2, "b": 3}, id="call_1"),
            ],
            stop_reason="toolUse",
        ),
        lambda: faux_assistant_message("2 + 3 = 5"),
    )
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        system_prompt="You add numbers.",
        tools=[ADD],
    )
    events = recording(agent)
    await agent.prompt("What is 2 + 3?")
    check("tool_turn", agent, events)


async def test_parallel_tools() -> None:
    fast_finished = anyio.Event()

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[TextContent(text="waiting")], details={"stage": 1}))
        await fast_finished.wait()
        return AgentToolResult(
            content=[TextContent(text=f"slow {params['a'] + params['b']}")], details={}
        )

    async def fast(tool_call_id: str, params: Any) -> Any:
        fast_finished.set()
        return AgentToolResult(
            content=[TextContent(text=f"fast {params['a'] * params['b']}")], details={}
        )

    provider = faux(
        lambda: faux_assistant_message(
            [
                faux_tool_call("slow", {"a": 1, "b": 2}, id="call_slow"),
                faux_tool_call("fast", {"a": 3, "b": 4}, id="call_fast"),
            ],
            stop_reason="toolUse",
        ),
        lambda: faux_assistant_message("done"),
    )
    tools = [tool("slow", "Finishes after fast", slow), tool("fast", "Finishes first", fast)]
    agent = Agent(model=provider.get_model(), stream_fn=provider, tools=tools)
    events = recording(agent)
    await agent.prompt("Run both.")
    check("parallel_tools", agent, events)


async def test_malformed_arguments_run_no_hook_and_answer_with_the_parse_error() -> None:
    text = '{"a": 2, "b": '
    parsed = parse_tool_call_arguments(text)
    hooks: list[str] = []

    def call_with_error() -> Any:
        call = faux_tool_call("add", {}, id="call_1")
        call.arguments, call.arguments_error = parsed.arguments, parsed.arguments_error
        return faux_assistant_message([call], stop_reason="toolUse")

    provider = faux(call_with_error, lambda: faux_assistant_message("Sorry."))
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        tools=[ADD],
        before_tool_call=lambda context: hooks.append(f"before {context.tool_call.id}"),
        after_tool_call=lambda context: hooks.append(f"after {context.tool_call.id}"),
    )
    events = recording(agent)
    await agent.prompt("Add.")
    extra = check("malformed_arguments", agent, events)
    assert hooks == extra["hooks"] == []


async def test_a_length_stop_with_tool_calls_runs_no_tool_and_no_hook() -> None:
    hooks: list[str] = []
    provider = faux(
        lambda: faux_assistant_message(
            [
                faux_text("Adding."),
                faux_tool_call("add", {"a": 1, "b": 2}, id="call_1"),
                faux_tool_call("add", {"a": 3}, id="call_2"),
            ],
            stop_reason="length",
        ),
        lambda: faux_assistant_message("Let me try again."),
    )
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        tools=[ADD],
        before_tool_call=lambda context: hooks.append(f"before {context.tool_call.id}"),
    )
    events = recording(agent)
    await agent.prompt("Add twice.")
    extra = check("length_with_tool_calls", agent, events)
    assert hooks == extra["hooks"]


async def test_a_stream_function_that_raises_ends_the_run_with_its_error() -> None:
    provider = faux()

    async def broken(*args: Any) -> None:
        raise RuntimeError("network down")

    agent = Agent(model=provider.get_model(), stream_fn=broken, tools=[ADD])
    events = recording(agent)
    result = await agent.prompt("Hello?")
    extra = check("stream_function_throws", agent, events)
    assert agent.state.error_message == extra["errorMessage"] == "network down"
    assert result.error_message == "network down"


async def test_nested_calls_through_run_tool_call() -> None:
    hooks: list[str] = []
    captured: list[Any] = []
    outcomes: list[Any] = []

    async def batch(tool_call_id: str, params: Any, signal: Any) -> Any:
        calls = [
            ToolCall(id="nested_1", name="add", arguments={"a": 1, "b": 2}),
            ToolCall(id="nested_2", name="add", arguments={"a": "x"}),
            ToolCall(id="nested_3", name="nope", arguments={}),
        ]
        for call in calls:
            outcomes.append(
                await run_tool_call(
                    call,
                    tools=[ADD],
                    assistant_message=captured[0].assistant_message,
                    context=captured[0].context,
                    signal=signal,
                    before_tool_call=lambda c: hooks.append(f"nested before {c.tool_call.id}"),
                    after_tool_call=lambda c: hooks.append(
                        f"nested after {c.tool_call.id} {str(c.is_error).lower()}"
                    ),
                )
            )
        text = "; ".join(o.result.content[0].text for o in outcomes)
        return AgentToolResult(content=[TextContent(text=text)], details={"ran": len(outcomes)})

    def before(context: Any) -> None:
        captured[:] = [context]
        hooks.append(f"before {context.tool_call.id}")

    provider = faux(
        lambda: faux_assistant_message(
            [faux_tool_call("batch", {}, id="call_batch")], stop_reason="toolUse"
        ),
        lambda: faux_assistant_message("Batch done."),
    )
    batch_tool = tool(
        "batch", "Runs add twice and a missing tool", batch, {"type": "object", "properties": {}}
    )
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        tools=[batch_tool, ADD],
        before_tool_call=before,
        after_tool_call=lambda context: hooks.append(f"after {context.tool_call.id}"),
    )

    def record_nested(event: Any) -> None:
        # the host records the nested calls on the result message (the loop does not)
        if event.type == "message_end" and event.message.role == "toolResult":
            event.message.nested_calls = NestedToolCalls(
                calls=[
                    NestedToolCallRecord(
                        id=o.tool_call.id,
                        name=o.tool_call.name,
                        arguments=o.tool_call.arguments,
                        status="error" if o.is_error else "ok",
                        duration_ms=o.duration_ms,
                        error="failed" if o.is_error else None,
                    )
                    for o in outcomes
                ],
                complete=True,
            )

    agent.subscribe(record_nested)
    events = recording(agent)
    await agent.prompt("Run the batch.")
    extra = check("run_tool_call_nested", agent, events)
    assert hooks == extra["hooks"]
    got = normalize([json.loads(to_json(o)) for o in outcomes])
    assert got == normalize(extra["outcomes"])


async def test_changing_the_tools_declares_them_in_a_system_message() -> None:
    provider = faux(
        lambda: faux_assistant_message("First."), lambda: faux_assistant_message("Second.")
    )
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        system_prompt="You do arithmetic.",
        tools=[ADD],
    )
    events = recording(agent)
    await agent.prompt("One.")
    agent.state.tools = [MUL]
    await agent.prompt("Two.")
    extra = check("system_tool_changes", agent, events)
    assert agent.state.system_prompt == extra["systemPrompt"]


async def test_tool_results_carry_is_error_structured_content_and_usage_as_1_6_does() -> None:
    def cost(input: int, output: int) -> Usage:
        return Usage(
            input=input,
            output=output,
            total_tokens=input + output,
            cost=Cost(input=0.001, output=0.002, total=0.003),
        )

    def result(text: str, **fields: Any) -> Any:
        async def execute(tool_call_id: str, params: Any) -> AgentToolResult:
            return AgentToolResult(
                content=[TextContent(text=text)], details={"text": text}, **fields
            )

        return execute

    empty = {"type": "object", "properties": {}}
    tools = [
        tool(
            "refuse", "Reports a failure without throwing", result("refused", is_error=True), empty
        ),
        tool(
            "measure",
            "Structured result with usage",
            result("42 cm", structured_content={"cm": 42}, usage=cost(5, 7)),
            empty,
        ),
        tool(
            "rewrite",
            "Structured result whose content the hook replaces",
            result("raw", structured_content={"raw": True}),
            empty,
        ),
        tool(
            "annotate",
            "Structured result whose details the hook replaces",
            result("kept", structured_content={"kept": True}),
            empty,
        ),
    ]

    def after(context: Any) -> AfterToolCallResult | None:
        if context.tool_call.name == "rewrite":
            return AfterToolCallResult(content=[TextContent(text="rewritten")])
        if context.tool_call.name == "annotate":
            return AfterToolCallResult(details={"note": "hook"}, usage=cost(1, 1))
        return None

    names = ["refuse", "measure", "rewrite", "annotate"]
    provider = faux(
        lambda: faux_assistant_message(
            [faux_tool_call(name, {}, id=f"call_{i}") for i, name in enumerate(names, 1)],
            stop_reason="toolUse",
        ),
        lambda: faux_assistant_message("Noted."),
    )
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        tools=tools,
        tool_execution="sequential",
        after_tool_call=after,
    )
    events = recording(agent)
    await agent.prompt("Use the tools.")
    check("tool_result_fields", agent, events)


@pytest.mark.parametrize("name", ["abort_streaming"])
async def test_abort_on_the_first_delta(name: str, autojump_clock: Any) -> None:
    provider = faux(
        lambda: faux_assistant_message("This answer is long enough to be cut off early."),
        tokens_per_second=1000,
    )
    agent = Agent(model=provider.get_model(), stream_fn=provider)
    events = recording(agent)

    def abort_on_delta(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            agent.abort()

    agent.subscribe(abort_on_delta)
    await agent.prompt("Talk.")
    check(name, agent, events)
