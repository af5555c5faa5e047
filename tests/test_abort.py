"""Abort and cancellation: at every await point the run ends consistently.

A trio Instrument counts task steps (each step ends at a checkpoint) and aborts the run at
the k-th one, for every k until a run finishes without reaching it. After each run:
events are well nested, every tool call has exactly one result, ``agent_end`` is last,
no task the run started is left, and the agent works again.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
import trio
import trio.abc

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import TextContent, ToolCall
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, user_text


class AbortAt(trio.abc.Instrument):
    """Calls ``action`` after the k-th task step; tracks tasks spawned meanwhile."""

    def __init__(self, k: int, action: Any) -> None:
        self.k = k
        self.steps = 0
        self.action = action
        self.fired = False
        self.live: set[Any] = set()

    def after_task_step(self, task: Any) -> None:
        self.steps += 1
        if self.steps == self.k and not self.fired:
            self.fired = True
            self.action()

    def task_spawned(self, task: Any) -> None:
        self.live.add(task)

    def task_exited(self, task: Any) -> None:
        self.live.discard(task)


def tool(name: str) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        for i in range(3):
            await trio.lowlevel.checkpoint()
            on_update(AgentToolResult(content=[TextContent(text=f"{name} {i}")]))
        return AgentToolResult(content=[TextContent(text=f"{name} done")])

    return AgentTool(name=name, description=name, parameters={"type": "object"}, execute=execute)


def responses() -> list[Any]:
    return [
        faux_assistant_message(
            [
                faux_thinking("plan it"),
                faux_text("calling"),
                faux_tool_call("a", {"x": 1}, id="ca"),
                faux_tool_call("b", {}, id="cb"),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message([faux_tool_call("a", {}, id="cc")], stop_reason="toolUse"),
        faux_assistant_message("all done"),
    ]


def check_invariants(events: list[Any], agent: Agent) -> None:
    types = [e.type for e in events]
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert types.count("agent_start") == types.count("agent_end") == 1
    depth = 0
    open_message = None
    tool_events: Counter[tuple[str, str]] = Counter()
    for e in events:
        if e.type == "turn_start":
            assert depth == 0
            depth = 1
        elif e.type == "turn_end":
            assert depth == 1
            depth = 0
            assert e.message.role == "assistant"
        elif e.type == "message_start":
            assert open_message is None
            open_message = e.message
        elif e.type == "message_update":
            assert open_message is not None
        elif e.type == "message_end":
            assert open_message is not None
            open_message = None
        elif e.type.startswith("tool_execution_") and e.type != "tool_execution_update":
            tool_events[(e.type, e.tool_call_id)] += 1
    assert depth == 0
    assert open_message is None
    calls = [
        b.id
        for e in events
        if e.type == "message_end" and e.message.role == "assistant"
        for b in e.message.content
        if isinstance(b, ToolCall)
    ]
    results = Counter(m.tool_call_id for m in agent.state.messages if m.role == "toolResult")
    errored = {
        m.id
        for m in agent.state.messages
        if m.role == "assistant" and m.stop_reason in ("error", "aborted")
        for m in [m]
        for m in m.content
        if isinstance(m, ToolCall)
    }
    for call_id in calls:
        if call_id in errored:
            continue
        assert results[call_id] == 1, f"tool call {call_id} has {results[call_id]} results"
        assert tool_events[("tool_execution_start", call_id)] <= 1
        assert (
            tool_events[("tool_execution_end", call_id)]
            == tool_events[("tool_execution_start", call_id)]
        )
        if agent.state.error_message is None or agent.state.messages[-1].stop_reason == "aborted":
            assert tool_events[("tool_execution_start", call_id)] == 1
    assert not agent.state.is_streaming
    assert agent.state.pending_tool_calls == frozenset()
    assert agent.state.streaming_message is None


async def run_with_abort_at(k: int) -> tuple[bool, Agent, list[Any]]:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses(responses())
    agent = Agent(
        model=faux.get_model(), system_prompt="s", tools=[tool("a"), tool("b")], stream_fn=faux
    )
    rec = Recorder()
    agent.subscribe(rec)

    async def slow_listener(event: Any) -> None:
        if event.type in ("tool_execution_end", "turn_end", "message_end"):
            await trio.lowlevel.checkpoint()

    agent.subscribe(slow_listener)
    instrument = AbortAt(k, agent.abort)
    trio.lowlevel.add_instrument(instrument)
    try:
        await agent.prompt("go")
    finally:
        trio.lowlevel.remove_instrument(instrument)
    assert instrument.live == set(), f"tasks left after the run: {instrument.live}"
    check_invariants(rec.events, agent)
    return instrument.fired, agent, rec.events


async def test_abort_at_every_checkpoint_leaves_a_consistent_run() -> None:
    k = 1
    aborted_runs = 0
    ended_aborted = 0
    aborted_tool_results = 0
    while True:
        fired, agent, events = await run_with_abort_at(k)
        if not fired:
            break
        aborted_runs += 1
        # count aborts that happened, not just steps reached: the run ends with an
        # aborted assistant message, or its tools got "Operation aborted" results
        last = agent.state.messages[-1]
        if last.role == "assistant" and last.stop_reason == "aborted":
            ended_aborted += 1
        if any(
            m.role == "toolResult" and [b.text for b in m.content] == ["Operation aborted"]
            for m in agent.state.messages
        ):
            aborted_tool_results += 1
        # the agent is idle and works again
        agent.stream_fn = Scripted(asst("again"))
        await agent.prompt("next")
        assert agent.state.messages[-1].content[0].text == "again"
        k += 1
    assert aborted_runs > 20
    # the abort really happened (not just a step reached): most runs end aborted, while
    # streaming or while tools run (an abort during the last closing events ends nothing)
    assert ended_aborted >= 6, ended_aborted
    assert aborted_tool_results >= 6, aborted_tool_results
    assert ended_aborted + aborted_tool_results > aborted_runs // 2
    assert events[-2].type == "turn_end"
    assert agent.state.messages[-1].role == "assistant"


async def test_abort_during_parallel_tools_gives_every_call_one_result(autojump_clock) -> None:
    started = trio.Event()

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if tool_call_id == "fast":
            return "quick"
        started.set()
        await trio.sleep(100)
        return "never"

    work = AgentTool(name="work", description="w", parameters={"type": "object"}, execute=slow)
    calls = [call("fast", "work", {}), call("slow", "work", {}), call("other", "work", {})]
    agent = Agent(
        model=MOCK_MODEL, tools=[work], stream_fn=Scripted(asst(calls, "toolUse"), asst("never"))
    )
    rec = Recorder()
    agent.subscribe(rec)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await started.wait()
        agent.abort()
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["fast", "slow", "other"]
    assert [r.is_error for r in results] == [False, True, True]
    assert results[1].content[0].text == "Operation aborted"
    assert rec.types[-2:] == ["turn_end", "agent_end"]
    assert [r.tool_call_id for r in rec.of("turn_end")[0].tool_results] == ["fast", "slow", "other"]


async def test_abort_during_a_sequential_batch_completes_the_never_started_calls(
    autojump_clock,
) -> None:
    executed: list[str] = []

    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        executed.append(tool_call_id)
        await trio.sleep(100)

    work = AgentTool(
        name="work",
        description="w",
        parameters={"type": "object"},
        execute=slow,
        execution_mode="sequential",
    )
    agent = Agent(
        model=MOCK_MODEL,
        tools=[work],
        stream_fn=Scripted(
            asst([call("one", "work", {}), call("two", "work", {})], "toolUse"), asst("never")
        ),
    )
    rec = Recorder()
    agent.subscribe(rec)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await trio.sleep(1)
        agent.abort()
    kinds = [(e.type, e.tool_call_id) for e in rec.events if e.type.startswith("tool_execution")]
    assert kinds == [
        ("tool_execution_start", "one"),
        ("tool_execution_end", "one"),
        ("tool_execution_start", "two"),
        ("tool_execution_end", "two"),
    ]
    assert all(e.is_error for e in rec.of("tool_execution_end"))
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["one", "two"]
    assert [[b.text for b in r.content] for r in results] == [
        ["Operation aborted"],
        ["Operation aborted"],
    ]
    # the second call never started executing
    assert executed == ["one"]


@pytest.mark.parametrize("where", ["before_tool_call", "prepare_arguments"])
async def test_an_abort_requested_synchronously_in_preflight_never_executes_the_tool(
    where: str,
) -> None:
    executed: list[str] = []
    signals: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        executed.append(tool_call_id)
        return "ran"

    def prepare_arguments(raw: Any) -> Any:
        signals.append(agent.signal)
        agent.abort()
        return raw

    def before_tool_call(context: Any, signal: Any) -> None:
        signals.append(signal)
        agent.abort()

    work = AgentTool(
        name="work",
        description="w",
        parameters={"type": "object"},
        execute=execute,
        prepare_arguments=prepare_arguments if where == "prepare_arguments" else None,
    )
    stream = Scripted(asst([call("c", "work", {})], "toolUse"), asst("never"))
    agent = Agent(
        model=MOCK_MODEL,
        tools=[work],
        stream_fn=stream,
        before_tool_call=before_tool_call if where == "before_tool_call" else None,
    )
    rec = Recorder()
    agent.subscribe(rec)
    await agent.prompt("go")
    assert executed == []
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["c"]
    assert [b.text for b in results[0].content] == ["Operation aborted"]
    assert results[0].is_error
    assert [(e.type, e.tool_call_id) for e in rec.events if e.type.startswith("tool_")] == [
        ("tool_execution_start", "c"),
        ("tool_execution_end", "c"),
    ]
    # the run was aborted: its signal says so and the provider is not asked again
    assert len(signals) == 1
    assert signals[0].aborted
    assert stream.count == 1
    assert rec.types[-2:] == ["turn_end", "agent_end"]
    assert not agent.state.is_streaming
    assert agent.state.pending_tool_calls == frozenset()


async def test_abort_never_interrupts_a_listener(autojump_clock) -> None:
    finished: list[str] = []

    async def persisting(event: Any) -> None:
        if event.type == "message_update" and not finished:
            agent.abort()
            await trio.sleep(5)  # e.g. writing to disk
            finished.append("persisted")

    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("a long answer " * 5)])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    agent.subscribe(persisting)
    await agent.prompt("go")
    assert finished == ["persisted"]
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_external_cancellation_leaves_the_same_state_as_abort_and_propagates(
    autojump_clock,
) -> None:
    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        await trio.sleep(100)

    agent = Agent(model=MOCK_MODEL, stream_fn=slow)
    rec = Recorder()
    agent.subscribe(rec)
    with trio.move_on_after(1) as scope:
        await agent.prompt("go")
    assert scope.cancelled_caught
    assert rec.types[-1] == "agent_end"
    assert not agent.state.is_streaming
    assert agent.state.messages[-1].stop_reason == "aborted"
    agent.stream_fn = Scripted(asst("works"))
    await agent.prompt("again")
    assert agent.state.messages[-1].content[0].text == "works"


async def test_external_cancellation_bounds_closing_listeners_by_close_timeout(
    autojump_clock,
) -> None:
    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        await trio.sleep(100)

    async def stuck(event: Any) -> None:
        if event.type == "agent_end":
            await trio.sleep(1000)

    agent = Agent(model=MOCK_MODEL, stream_fn=slow, close_timeout=2)
    agent.subscribe(stuck)
    start = trio.current_time()
    with trio.move_on_after(1):
        await agent.prompt("go")
    assert trio.current_time() - start < 10
    # cancelled at 1 s, then the stuck listener gets exactly close_timeout (2 s, not 5)
    assert trio.current_time() - start == pytest.approx(1 + 2)
    assert not agent.state.is_streaming


async def test_steer_follow_up_and_abort_from_another_thread(autojump_clock) -> None:
    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        await trio.sleep_forever()

    agent = Agent(model=MOCK_MODEL, stream_fn=slow)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await trio.sleep(1)
        await anyio.to_thread.run_sync(agent.steer, "from a thread")
        await anyio.to_thread.run_sync(agent.follow_up, "also from a thread")
        await anyio.to_thread.run_sync(agent.abort)
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert agent.has_queued_messages()
    # steering is delivered first, so peek shows it; with it cleared, the follow-up shows
    assert [user_text(m) for m in agent.peek_queued_messages()] == ["from a thread"]
    agent.clear_steering_queue()
    assert [user_text(m) for m in agent.peek_queued_messages()] == ["also from a thread"]
    agent.clear_follow_up_queue()
    assert not agent.has_queued_messages()


async def test_a_hook_cancelled_by_abort_ends_the_run_without_another_request(
    autojump_clock,
) -> None:
    stream = Scripted(asst([call("t", "noop", {})], "toolUse"), asst("never"))

    async def noop(*args: Any) -> Any:
        return "ok"

    async def slow_prepare(turn: Any, signal: Any) -> None:
        await trio.sleep(100)

    agent = Agent(
        model=MOCK_MODEL,
        tools=[
            AgentTool(name="noop", description="n", parameters={"type": "object"}, execute=noop)
        ],
        stream_fn=stream,
        prepare_next_turn=slow_prepare,
    )
    rec = Recorder()
    agent.subscribe(rec)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await trio.sleep(1)
        agent.abort()
    assert stream.count == 1
    assert rec.types[-2:] == ["turn_end", "agent_end"]


@pytest.mark.parametrize("limit", [0.5, 2])
async def test_a_tool_timeout_gives_that_call_an_error_and_siblings_continue(
    limit: float, autojump_clock
) -> None:
    async def slow(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await trio.sleep(10 if tool_call_id == "slow" else 0.1)
        return "finished"

    work = AgentTool(
        name="work", description="w", parameters={"type": "object"}, execute=slow, timeout=limit
    )
    agent = Agent(
        model=MOCK_MODEL,
        tools=[work],
        stream_fn=Scripted(
            asst([call("slow", "work", {}), call("fast", "work", {})], "toolUse"), asst("ok")
        ),
    )
    await agent.prompt("go")
    results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
    assert results["slow"].is_error
    assert results["slow"].content[0].text == f'Tool "work" timed out after {limit:g}s'
    assert results["fast"].content[0].text == "finished"


async def test_max_concurrent_tools_caps_running_executions(autojump_clock) -> None:
    running = {"now": 0, "peak": 0}

    async def work(*args: Any) -> Any:
        running["now"] += 1
        running["peak"] = max(running["peak"], running["now"])
        await trio.sleep(1)
        running["now"] -= 1
        return "ok"

    t = AgentTool(name="w", description="w", parameters={"type": "object"}, execute=work)
    agent = Agent(
        model=MOCK_MODEL,
        tools=[t],
        max_concurrent_tools=2,
        stream_fn=Scripted(asst([call(f"c{i}", "w", {}) for i in range(5)], "toolUse"), asst("ok")),
    )
    await agent.prompt("go")
    assert running["peak"] == 2
    assert sum(m.role == "toolResult" for m in agent.state.messages) == 5


async def test_abort_then_external_cancellation_still_delivers_the_closing_events() -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("word " * 50)])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    rec = Recorder()
    agent.subscribe(rec)
    with trio.CancelScope() as outer:

        def press_twice(event: Any) -> None:
            if (
                event.type == "message_update"
                and event.assistant_message_event.type == "text_delta"
            ):
                agent.abort()
                outer.cancel()

        agent.subscribe(press_twice)
        await agent.prompt("go")
    assert outer.cancelled_caught
    assert rec.types[-3:] == ["message_end", "turn_end", "agent_end"]
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert not agent.state.is_streaming


async def test_a_failed_run_whose_caller_is_cancelled_bounds_its_closing_listeners(
    autojump_clock: Any,
) -> None:
    async def stuck(event: Any) -> None:
        if event.type == "agent_end":
            await trio.sleep(1000)

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")), close_timeout=2)
    start = trio.current_time()
    with trio.CancelScope() as outer:

        def failing(event: Any) -> None:
            is_answer = event.type == "message_end" and event.message.role == "assistant"
            if is_answer and not outer.cancel_called:
                outer.cancel()
                raise RuntimeError("listener broke")

        agent.subscribe(failing)
        agent.subscribe(stuck)
        await agent.prompt("go")
    assert trio.current_time() - start <= 2.5
    assert agent.state.error_message == "listener broke"
    assert agent.state.messages[-1].error_message == "listener broke"
    assert not agent.state.is_streaming


@pytest.mark.parametrize("at", ["agent_start", "turn_start"])
async def test_an_abort_before_the_prompt_was_announced_still_records_the_prompt(at: str) -> None:
    events: list[Any] = []

    async def aborting(event: Any) -> None:
        events.append(event)
        if event.type == at:
            agent.abort()

    stream = Scripted(asst("never"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream)
    agent.subscribe(aborting)
    await agent.prompt("keep me")
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant"]
    assert user_text(agent.state.messages[0]) == "keep me"
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert [e.type for e in events] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert stream.count == 0


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
@pytest.mark.parametrize("at", ["tool_execution_start", "tool_execution_end"])
async def test_an_abort_from_a_tool_event_listener_runs_no_further_tool(at: str, mode: str) -> None:
    executed: list[str] = []

    def execute(tool_call_id: str, params: Any) -> str:  # sync: no checkpoint of its own
        executed.append(tool_call_id)
        return "ran"

    work = AgentTool(name="work", description="w", parameters={"type": "object"}, execute=execute)
    stream = Scripted(asst([call("a", "work", {}), call("b", "work", {})], "toolUse"), asst("x"))
    agent = Agent(model=MOCK_MODEL, tools=[work], stream_fn=stream, tool_execution=mode)
    rec = Recorder()
    agent.subscribe(rec)

    def aborting(event: Any) -> None:
        if event.type == at:
            agent.abort()

    agent.subscribe(aborting)
    await agent.prompt("go")
    # aborted at the first call's start: nothing ran; at its end: only that call ran
    assert executed == ([] if at == "tool_execution_start" else ["a"])
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["a", "b"]
    texts = [r.content[0].text for r in results]
    assert texts == (
        ["Operation aborted", "Operation aborted"]
        if at == "tool_execution_start"
        else ["ran", "Operation aborted"]
    )
    assert stream.count == 1
    assert rec.types[-2:] == ["turn_end", "agent_end"]
    assert agent.state.pending_tool_calls == frozenset()
