"""Delivery without a dispatcher task: runs whose listeners are all synchronous start no
task, and a listener subscribed mid-run, even an asynchronous one, keeps the contract."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from pi_trio.agent import Agent, AgentTool, AgentToolResult, RunPolicy
from pi_trio.ai import TextContent
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, echo_tool


class TaskCounter(trio.abc.Instrument):
    def __init__(self) -> None:
        self.spawned: list[str] = []

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned.append(task.name)


async def test_a_run_with_only_synchronous_listeners_starts_no_task() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    recorder = Recorder()
    agent.subscribe(recorder)
    counter = TaskCounter()
    trio.lowlevel.add_instrument(counter)
    try:
        await agent.prompt("hi")
    finally:
        trio.lowlevel.remove_instrument(counter)
    assert counter.spawned == []
    assert recorder.types[0] == "agent_start"
    assert recorder.types[-1] == "agent_end"


async def test_an_async_listener_subscribed_mid_run_gets_every_later_event_in_order(
    autojump_clock: Any,
) -> None:
    faux = FauxProvider(tokens_per_second=50, token_size=(1, 1))
    faux.set_responses([faux_assistant_message("one two three four five six")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    everything = Recorder()
    late: list[tuple[str, int]] = []
    reduced_first: list[bool] = []

    async def slow(event: Any) -> None:
        # The reducer applied the event before this listener sees it.
        late.append((event.type, len(agent.state.messages)))
        if event.type == "message_end":
            reduced_first.append(agent.state.messages[-1] is event.message)
        elif event.type == "message_update":
            reduced_first.append(agent.state.streaming_message is event.message)
        await trio.sleep(0.01)

    def subscribe_on_start(event: Any) -> None:
        everything(event)
        if event.type == "message_start" and event.message.role == "assistant":
            agent.subscribe(slow)

    agent.subscribe(subscribe_on_start)
    await agent.prompt("hi")
    start = everything.types.index("message_start", 3)
    assert [kind for kind, _ in late] == everything.types[start + 1 :]
    assert late[-1] == ("agent_end", len(agent.state.messages))
    assert reduced_first
    assert all(reduced_first)
    assert agent.state.messages[-1].content[0].text == "one two three four five six"
    assert not agent.state.is_streaming


async def test_abort_never_interrupts_a_listener_subscribed_mid_run(autojump_clock: Any) -> None:
    faux = FauxProvider(tokens_per_second=50, token_size=(1, 1))
    faux.set_responses([faux_assistant_message("one two three four five six")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    started: list[str] = []
    finished: list[str] = []

    async def persisting(event: Any) -> None:
        started.append(event.type)
        if event.type == "message_update":
            agent.abort()
        await trio.sleep(1)
        finished.append(event.type)

    def subscribe_on_start(event: Any) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.subscribe(persisting)

    agent.subscribe(subscribe_on_start)
    await agent.prompt("hi")
    assert finished == started
    assert started[0] == "message_update"
    assert started[-1] == "agent_end"
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert not agent.state.is_streaming


async def test_tool_updates_reach_synchronous_listeners_while_the_tool_runs(
    autojump_clock: Any,
) -> None:
    seen_during_tool: list[Any] = []
    recorder = Recorder()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=[TextContent(text="half way")]))
        seen_during_tool.extend(recorder.of("tool_execution_update"))
        await trio.sleep(1)
        return AgentToolResult(content=[TextContent(text="done")])

    tool = AgentTool(name="work", description="works", parameters={}, execute=execute)
    answers = Scripted(asst([call("c1", "work", {})], stop="toolUse"), asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=answers, tools=[tool])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert [e.partial_result.content[0].text for e in seen_during_tool] == ["half way"]
    assert agent.state.messages[-1].stop_reason == "stop"


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
async def test_tool_updates_reach_asynchronous_listeners_while_the_tool_runs(
    autojump_clock: Any, mode: str
) -> None:
    delivered_at: list[tuple[str, float]] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        for step in ("one", "two", "three"):
            on_update(AgentToolResult(content=[TextContent(text=step)]))
            await trio.sleep(10)
        return AgentToolResult(content=[TextContent(text="done")])

    async def listener(event: Any) -> None:
        if event.type == "tool_execution_update":
            await trio.lowlevel.checkpoint()  # a listener that really waits
            delivered_at.append((event.partial_result.content[0].text, trio.current_time()))

    tool = AgentTool(name="work", description="works", parameters={}, execute=execute)
    calls = (
        [call("c1", "work", {}), call("c2", "work", {})]
        if mode == "parallel"
        else [call("c1", "work", {})]
    )
    answers = Scripted(asst(calls, stop="toolUse"), asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=answers, tools=[tool], tool_execution=mode)
    agent.subscribe(listener)
    start = trio.current_time()
    await agent.prompt("go")
    # each update arrives when it is sent (0, 10, 20 s into the tool), not all at 30 s
    times = sorted({round(t - start) for _, t in delivered_at})
    assert times == [0, 10, 20]
    assert len(delivered_at) == 3 * len(calls)
    assert agent.state.messages[-1].stop_reason == "stop"


async def test_a_listener_raising_on_a_tool_update_fails_the_run_not_the_tool() -> None:
    tool_finished: list[bool] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=[TextContent(text="progress")]))
        tool_finished.append(True)
        return AgentToolResult(content=[TextContent(text="done")])

    def fragile(event: Any) -> None:
        if event.type == "tool_execution_update":
            raise RuntimeError("listener broke on an update")

    tool = AgentTool(name="work", description="works", parameters={}, execute=execute)
    answers = Scripted(asst([call("c1", "work", {})], stop="toolUse"), asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=answers, tools=[tool])
    agent.subscribe(fragile)
    await agent.prompt("go")
    assert tool_finished == [True]
    assert agent.state.error_message == "listener broke on an update"
    assert agent.state.messages[-1].stop_reason == "error"
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["c1"]


async def test_cancelling_the_caller_bounds_a_mid_run_listener_by_close_timeout(
    autojump_clock: Any,
) -> None:
    faux = FauxProvider(tokens_per_second=50)
    faux.set_responses(
        [
            faux_assistant_message(faux_tool_call("echo", {"value": "x"}), stop_reason="toolUse"),
            faux_assistant_message("never"),
        ]
    )
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        tools=[echo_tool()],
        policy=RunPolicy(close_timeout=2.0),
    )
    recorder = Recorder()

    async def stuck(event: Any) -> None:
        recorder(event)
        await trio.sleep_forever()

    def subscribe_on_start(event: Any) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.subscribe(stuck)

    agent.subscribe(subscribe_on_start)
    start = trio.current_time()
    with trio.move_on_after(5):
        await agent.prompt("go")
    assert trio.current_time() - start <= 5 + 2.0 + 0.01
    assert not agent.state.is_streaming
    assert recorder.events  # it was delivered to, and then cut off


async def test_a_blocked_async_listener_holds_the_provider_at_once() -> None:
    from pi_trio.ai.providers import MessageBuilder

    DISPATCH_BUFFER = 64  # only sizes the stream

    sent = [0]
    release = trio.Event()

    async def many_deltas(model: Any, context: Any, options: Any, send: Any) -> None:
        builder = MessageBuilder(model)
        await send.send(builder.start())
        await send.send(builder.text_start())
        for _ in range(10 * DISPATCH_BUFFER):
            await send.send(builder.text_delta(0, "x"))
            sent[0] += 1
        await send.send(builder.text_end(0))
        await send.send(builder.done())

    async def blocked(event: Any) -> None:
        if event.type == "message_update":
            await release.wait()

    agent = Agent(model=MOCK_MODEL, stream_fn=many_deltas)
    agent.subscribe(blocked)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await trio.testing.wait_all_tasks_blocked()
        assert sent[0] == 0  # the first delta waits for the listener
        release.set()
    assert sent[0] == 10 * DISPATCH_BUFFER
    assert agent.state.messages[-1].content[0].text == "x" * (10 * DISPATCH_BUFFER)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
async def test_a_listener_unsubscribed_by_an_earlier_one_misses_that_event(
    asynchronous: bool,
) -> None:
    seen: list[str] = []
    unsubscribe: list[Any] = []

    def first(event: Any) -> None:
        if event.type == "turn_end":
            unsubscribe[0]()

    def second_sync(event: Any) -> None:
        seen.append(event.type)

    async def second_async(event: Any) -> None:
        seen.append(event.type)

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(first)
    unsubscribe.append(agent.subscribe(second_async if asynchronous else second_sync))
    await agent.prompt("hi")
    assert "message_end" in seen
    assert "turn_end" not in seen
    assert "agent_end" not in seen


async def test_subscribing_the_same_listener_twice_delivers_each_event_once() -> None:
    recorder = Recorder()
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    first = agent.subscribe(recorder)
    agent.subscribe(recorder)
    await agent.prompt("hi")
    assert recorder.types.count("agent_end") == 1
    assert recorder.types.count("agent_start") == 1
    first()
    await agent.prompt("again")
    assert recorder.types.count("agent_end") == 1  # one unsubscribe removed it


def _updating_tool(started: trio.Event, abort_inside: Any = None) -> AgentTool:
    """A tool that reports progress, then blocks until it is cancelled."""

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[TextContent(text="saved 1 of 3")]))
        if abort_inside is not None:
            abort_inside()  # before the update's delivery has even begun
        started.set()
        await trio.sleep_forever()

    return AgentTool(name="work", description="works", parameters={}, execute=execute)


@pytest.mark.parametrize(
    "when", ["from the tool", "once the tool waits", "while the listener waits"]
)
async def test_abort_during_a_tool_update_lets_its_listener_finish(
    when: str, autojump_clock: Any
) -> None:
    """An asynchronous listener saving a tool's progress finishes its ``await`` whenever
    the abort comes, then the tool gets ``Operation aborted``. Once the tool waits, the
    abort may come before or after the update's delivery began (trio orders the two
    tasks at random): twenty runs see both orders (the old delivery interrupted the
    listener in about half of them)."""
    for _ in range(20):
        await _abort_during_a_tool_update(when)


async def _abort_during_a_tool_update(when: str) -> None:
    started = trio.Event()
    entered = trio.Event()
    log: list[str] = []
    agent: Agent

    async def saving(event: Any) -> None:
        if event.type == "tool_execution_update":
            log.append("enter")
            entered.set()
            try:
                await trio.sleep(0.05)
            except BaseException as exc:
                log.append(f"interrupted by {type(exc).__name__}")
                raise
            log.append("exit")

    inside = when == "from the tool"
    tool = _updating_tool(started, (lambda: agent.abort()) if inside else None)
    answers = Scripted(asst([call("c1", "work", {})], stop="toolUse"), asst("never"))
    agent = Agent(model=MOCK_MODEL, stream_fn=answers, tools=[tool])
    agent.subscribe(saving)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        if when == "once the tool waits":
            await started.wait()
            agent.abort()
        elif when == "while the listener waits":
            await entered.wait()
            agent.abort()
    assert log == ["enter", "exit"]
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.content[0].text for r in results] == ["Operation aborted"]
    assert answers.count == 1  # the provider is not asked again


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
@pytest.mark.parametrize("cancelled_on", ["message_update", "tool_execution_end", "agent_end"])
def test_every_listener_sees_the_same_events_when_the_caller_cancels_mid_delivery(
    backend: str, cancelled_on: str
) -> None:
    """Three listeners (sync, async, sync); the caller's scope is cancelled while the
    asynchronous one waits on an event: the third still gets that event and every later
    one, the very same objects in the same order, ending with ``agent_end``."""
    import anyio.lowlevel

    async def main() -> None:
        faux = FauxProvider(token_size=(1, 1))
        faux.set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("echo", {"value": "x"}, id="c1")], stop_reason="toolUse"
                ),
                faux_assistant_message("a few words to stream"),
            ]
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[echo_tool()])
        seen: list[list[Any]] = [[], [], []]
        outer = anyio.CancelScope()

        def first(event: Any) -> None:
            seen[0].append(event)

        async def second(event: Any) -> None:
            seen[1].append(event)
            if event.type == cancelled_on and not outer.cancel_called:
                outer.cancel()
            for _ in range(3):
                await anyio.lowlevel.checkpoint()

        def third(event: Any) -> None:
            seen[2].append(event)

        for listener in (first, second, third):
            agent.subscribe(listener)
        with outer:
            await agent.prompt("go")
        assert outer.cancel_called
        assert [e.type for e in seen[0]][-1] == "agent_end"
        for other in seen[1:]:
            assert len(other) == len(seen[0])
            assert all(a is b for a, b in zip(seen[0], other, strict=True))
        assert not agent.state.is_streaming

    if backend == "trio":
        trio.run(main)
    else:
        anyio.run(main, backend="asyncio")


async def test_a_listener_cut_at_the_bound_does_not_keep_the_event_from_the_ones_after_it(
    autojump_clock: Any,
) -> None:
    """A listener still waiting close_timeout past the caller's deadline is cut there; the
    listener after it still gets that event, then the closing ones, ``agent_end`` last."""
    faux = FauxProvider(tokens_per_second=50, token_size=(1, 1))
    faux.set_responses([faux_assistant_message("a long answer that keeps on streaming " * 4)])
    agent = Agent(model=faux.get_model(), stream_fn=faux, close_timeout=2.0)
    seen: list[list[Any]] = [[], []]
    stuck_on: list[Any] = []

    def first(event: Any) -> None:
        seen[0].append(event)

    async def stuck(event: Any) -> None:
        if event.type == "message_update" and not stuck_on:
            stuck_on.append(event)
            await trio.sleep_forever()

    def third(event: Any) -> None:
        seen[1].append(event)

    for listener in (first, stuck, third):
        agent.subscribe(listener)
    start = trio.current_time()
    with trio.move_on_after(5) as outer:
        await agent.prompt("go")
    assert outer.cancelled_caught
    assert trio.current_time() - start == pytest.approx(5 + 2.0)
    assert stuck_on[0] in seen[1]  # the event the stuck listener was cut on
    assert len(seen[0]) == len(seen[1])
    assert all(a is b for a, b in zip(*seen, strict=True))
    assert seen[1][-1].type == "agent_end"
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert not agent.state.is_streaming


async def test_a_finished_tool_batch_is_not_held_through_the_next_request() -> None:
    """Thousands of agents in flight each hold what their run holds: the batch of the
    previous turn (its calls, outcomes, results and bound methods) must be garbage by the
    time the next request runs (W10 paid about 1.4 KB per agent while it was not)."""
    import gc

    from pi_trio.agent._batch import ToolBatch

    alive: list[int] = []

    def second(context: Any, options: Any) -> Any:
        alive.append(sum(isinstance(o, ToolBatch) for o in gc.get_objects()))
        return asst("done")

    scripted = Scripted(asst([call("c1", "echo", {"text": "x"})], "toolUse"), second)
    agent = Agent(model=MOCK_MODEL, tools=[echo_tool()], stream_fn=scripted)
    await agent.prompt("go")
    assert scripted.count == 2
    assert alive == [0]
