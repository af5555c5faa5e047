"""``Eager``: await a coroutine, learning (once, synchronously) when it first suspends;
and the parallel batch built on it: calls that never wait cost no task, a call that
waits does not delay the others."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
import trio

from pi_trio.agent import AgentContext, AgentLoopConfig, AgentTool, AgentToolResult, run_agent_loop
from pi_trio.agent._eager import Eager
from pi_trio.ai import TextContent

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, user


async def finishes_at_once(value: int) -> int:
    return value * 2


async def waits_then_returns(log: list[str]) -> str:
    log.append("before")
    await anyio.lowlevel.checkpoint()
    log.append("after")
    return "done"


async def test_a_coroutine_that_never_waits_runs_to_its_value_without_on_suspend() -> None:
    suspended: list[bool] = []
    assert await Eager(finishes_at_once(21), lambda: suspended.append(True)) == 42
    assert suspended == []


async def test_on_suspend_runs_once_before_the_first_wait_reaches_the_event_loop() -> None:
    log: list[str] = []

    async def waits_twice() -> str:
        log.append("before")
        await anyio.lowlevel.checkpoint()
        log.append("mid")
        await anyio.lowlevel.checkpoint()
        log.append("after")
        return "done"

    assert await Eager(waits_twice(), lambda: log.append("suspended")) == "done"
    assert log == ["before", "suspended", "mid", "after"]


async def test_exceptions_from_the_coroutine_propagate_unchanged() -> None:
    async def fails() -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError("bad tool")

    with pytest.raises(ValueError, match="bad tool"):
        await Eager(fails(), lambda: None)


async def test_cancellation_reaches_the_coroutine_and_its_cleanup_runs(autojump_clock: Any) -> None:
    cleaned: list[bool] = []

    async def sleeps() -> None:
        try:
            await trio.sleep(10)
        finally:
            cleaned.append(True)

    with trio.move_on_after(1) as scope:
        await Eager(sleeps(), lambda: None)
    assert scope.cancelled_caught
    assert cleaned == [True]


async def test_values_sent_by_the_event_loop_reach_the_coroutine(autojump_clock: Any) -> None:
    async def two_waits() -> float:
        await trio.sleep(1)
        await trio.sleep(2)
        return trio.current_time()

    start = trio.current_time()
    assert await Eager(two_waits(), lambda: None) == pytest.approx(start + 3)


async def test_an_on_suspend_that_raises_closes_the_coroutine() -> None:
    closed: list[bool] = []

    async def waits() -> None:
        try:
            await anyio.lowlevel.checkpoint()
        finally:
            closed.append(True)

    def broken() -> None:
        raise RuntimeError("on_suspend broke")

    with pytest.raises(RuntimeError, match="on_suspend broke"):
        await Eager(waits(), broken)
    assert closed == [True]


def test_eager_works_on_asyncio() -> None:
    async def main() -> None:
        log: list[str] = []
        assert await Eager(waits_then_returns(log), lambda: log.append("suspended")) == "done"
        assert log == ["before", "suspended", "after"]
        assert await Eager(finishes_at_once(1), lambda: log.append("never")) == 2

    anyio.run(main, backend="asyncio")


# --------------------------------------------------------------------------- the batch


class TaskCounter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned.append(task.name)


def tool(name: str, execute: Any) -> AgentTool:
    return AgentTool(name=name, description=name, parameters={}, execute=execute)


def ok(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)])


async def run_batch(tools: list[AgentTool]) -> tuple[Recorder, TaskCounter]:
    calls = [call(f"c{k}", t.name, {}) for k, t in enumerate(tools)]
    stream = Scripted(asst(calls, "toolUse"), asst("done"))
    recorder = Recorder()
    counter = TaskCounter()
    trio.lowlevel.add_instrument(counter)
    try:
        await run_agent_loop(
            [user("go")],
            AgentContext(tools=tools),
            AgentLoopConfig(model=MOCK_MODEL, tool_execution="parallel"),
            recorder,
            stream_fn=stream,
        )
    finally:
        trio.lowlevel.remove_instrument(counter)
    return recorder, counter


async def test_parallel_calls_that_never_wait_start_no_task_and_end_in_source_order() -> None:
    async def instant(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return ok(call_id)

    recorder, counter = await run_batch(
        [tool("a", instant), tool("b", instant), tool("c", instant)]
    )
    assert counter.spawned == []
    assert [e.tool_call_id for e in recorder.of("tool_execution_end")] == ["c0", "c1", "c2"]


async def test_a_waiting_call_does_not_delay_the_calls_after_it(autojump_clock: Any) -> None:
    log: list[str] = []

    async def slow(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        log.append(f"start {call_id}")
        await trio.sleep(5)
        log.append(f"end {call_id}")
        return ok(call_id)

    async def quick(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        log.append(f"start {call_id}")
        await trio.sleep(1 if call_id == "c1" else 2)
        log.append(f"end {call_id}")
        return ok(call_id)

    start = trio.current_time()
    recorder, counter = await run_batch([tool("a", slow), tool("b", quick), tool("c", quick)])
    assert trio.current_time() - start == pytest.approx(5)
    # c0 starts first and waits; the others then start (in the scheduler's order)
    assert log[0] == "start c0"
    assert sorted(log[1:3]) == ["start c1", "start c2"]
    assert len(counter.spawned) == 2  # the calls not started when the first one waited
    assert [e.tool_call_id for e in recorder.of("tool_execution_end")] == ["c1", "c2", "c0"]
    results = [
        e.message.tool_call_id for e in recorder.of("message_end") if e.message.role == "toolResult"
    ]
    assert results == ["c0", "c1", "c2"]


async def test_a_listener_failing_while_parallel_calls_wait_fails_the_run_with_its_message(
    autojump_clock: Any,
) -> None:
    async def waits(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await trio.sleep(1)
        return ok(call_id)

    def fragile(event: Any) -> None:
        if event.type == "tool_execution_update" or (
            event.type == "tool_execution_end" and event.tool_call_id == "c0"
        ):
            raise RuntimeError("listener broke")

    from pi_trio.agent import Agent

    calls = [call("c0", "a", {}), call("c1", "b", {})]
    agent = Agent(
        model=MOCK_MODEL,
        tools=[tool("a", waits), tool("b", waits)],
        stream_fn=Scripted(asst(calls, "toolUse"), asst("never")),
    )
    agent.subscribe(fragile)
    await agent.prompt("go")
    assert agent.state.error_message == "listener broke"
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert sorted(r.tool_call_id for r in results) == ["c0", "c1"]
    assert not agent.state.is_streaming


async def test_batches_of_one_run_share_its_tool_group_and_abort_still_reaches_them(
    autojump_clock: Any,
) -> None:
    from pi_trio.agent import Agent

    cleaned: list[str] = []

    async def waits(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        try:
            await trio.sleep(1 if call_id.startswith("first") else 100)
        finally:
            cleaned.append(call_id)
        return ok(call_id)

    first = [call("first-a", "a", {}), call("first-b", "a", {})]
    second = [call("second-a", "a", {}), call("second-b", "a", {})]
    agent = Agent(
        model=MOCK_MODEL,
        tools=[tool("a", waits)],
        stream_fn=Scripted(asst(first, "toolUse"), asst(second, "toolUse"), asst("never")),
    )
    recorder = Recorder()
    agent.subscribe(recorder)
    counter = TaskCounter()
    trio.lowlevel.add_instrument(counter)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(agent.prompt, "go")
            await trio.sleep(5)  # the first batch is done, the second one waits
            agent.abort()
    finally:
        trio.lowlevel.remove_instrument(counter)
    results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
    assert not results["first-a"].is_error
    assert not results["first-b"].is_error
    assert results["second-a"].content[0].text == "Operation aborted"
    assert results["second-b"].content[0].text == "Operation aborted"
    assert sorted(cleaned) == ["first-a", "first-b", "second-a", "second-b"]
    # one task per waiting call that was not started in the engine's task, no more
    assert sorted(n for n in counter.spawned if n.startswith("tool")) == [
        "tool a first-b",
        "tool a second-b",
    ]
    assert recorder.types[-1] == "agent_end"
    assert not agent.state.is_streaming
