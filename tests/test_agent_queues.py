"""Queues, abort and concurrency of the Agent (the Q-scenarios)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import ImageContent, TextContent, UserMessage
from pi_trio.testing import FauxProvider, faux_assistant_message

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, user, user_text


def texts_of(messages: list[Any]) -> list[str]:
    return [user_text(m) for m in messages if m.role == "user"]


async def test_steer_and_follow_up_only_queue_while_idle() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.steer(user("s"))
    agent.follow_up("f")
    assert agent.state.messages == []
    assert agent.has_queued_messages()
    agent.abort()  # idle: no-op


async def test_abort_while_the_provider_streams_keeps_the_partial(autojump_clock) -> None:
    faux = FauxProvider(tokens_per_second=20, token_size=(2, 2))
    faux.set_responses([faux_assistant_message("word " * 200)])
    agent = Agent(model=faux.get_model(), system_prompt="s", stream_fn=faux)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "go")
        await trio.sleep(1.03)
        agent.abort()
    last = agent.state.messages[-1]
    assert not agent.state.is_streaming
    assert last.role == "assistant"
    assert last.stop_reason == "aborted"
    assert last.error_message == "Request was aborted"
    assert 0 < len(last.content[0].text) < len("word " * 200)
    assert agent.state.error_message == last.error_message


async def test_listeners_receive_the_run_signal_which_flips_on_abort(autojump_clock) -> None:
    signals: list[Any] = []

    async def wait_forever(model: Any, context: Any, options: Any, send: Any) -> None:
        await trio.sleep_forever()

    agent = Agent(model=MOCK_MODEL, stream_fn=wait_forever)
    agent.subscribe(
        lambda event, signal: signals.append(signal) if event.type == "agent_start" else None
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "x")
        await trio.sleep(0.01)
        assert signals[0].aborted is False
        assert agent.signal is signals[0]
        agent.abort("stop now")
    assert signals[0].aborted is True
    assert signals[0].reason == "stop now"
    assert agent.signal is None


def keeping_update_tool(
    name: str, kept: list[Any], *, wait: trio.Event | None = None, started: trio.Event | None = None
) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        kept.append(on_update)
        if started is not None:
            started.set()
        if wait is not None:
            await wait.wait()
        else:
            on_update(AgentToolResult(content=[TextContent(text="running")]))
        return AgentToolResult(content=[], terminate=True)

    return AgentTool(name=name, description=name, parameters={"type": "object"}, execute=execute)


async def test_late_tool_progress_after_settlement_is_ignored() -> None:
    kept: list[Any] = []
    rec = Recorder()
    agent = Agent(
        model=MOCK_MODEL,
        tools=[keeping_update_tool("delayed_tool", kept)],
        stream_fn=Scripted(asst([call("call-1", "delayed_tool", {})], "toolUse")),
    )
    agent.subscribe(rec)
    await agent.prompt("x")
    count = len(rec.events)
    kept[0](AgentToolResult(content=[TextContent(text="late")]))
    await trio.lowlevel.checkpoint()
    assert len(rec.of("tool_execution_update")) == 1
    assert len(rec.events) == count


async def test_a_settled_parallel_tools_late_update_is_ignored_while_another_runs() -> None:
    kept: list[Any] = []
    release, started = trio.Event(), trio.Event()
    settled_end = trio.Event()
    rec = Recorder()

    async def settled(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        kept.append(on_update)
        return AgentToolResult(content=[], terminate=True)

    slow = keeping_update_tool("slow_tool", [], wait=release, started=started)
    tools = [
        AgentTool(
            name="settled_tool", description="s", parameters={"type": "object"}, execute=settled
        ),
        slow,
    ]
    agent = Agent(
        model=MOCK_MODEL,
        tools=tools,
        stream_fn=Scripted(
            asst([call("call-1", "settled_tool", {}), call("call-2", "slow_tool", {})], "toolUse")
        ),
    )
    agent.subscribe(rec)
    agent.subscribe(
        lambda e: (
            settled_end.set()
            if e.type == "tool_execution_end" and e.tool_call_id == "call-1"
            else None
        )
    )
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "x")
        await started.wait()
        await settled_end.wait()
        before = len(rec.events)
        kept[0](AgentToolResult(content=[TextContent(text="late")]))
        await trio.lowlevel.checkpoint()
        assert len(rec.events) == before
        release.set()
    assert rec.of("tool_execution_update") == []


async def test_a_failing_completion_listener_does_not_abandon_running_parallel_tools() -> None:
    slow_started, release = trio.Event(), trio.Event()
    effects: list[str] = []
    types: list[str] = []

    async def work(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if tool_call_id == "fast":
            await slow_started.wait()
            return AgentToolResult(content=[], terminate=True)
        slow_started.set()
        await release.wait()
        effects.append("slow effect")
        return AgentToolResult(content=[], terminate=True)

    def listener(event: Any) -> None:
        types.append(event.type)
        if event.type == "agent_end":
            effects.append("agent_end")
        if event.type == "tool_execution_end" and event.tool_call_id == "fast":
            raise RuntimeError("completion listener failed")

    tool = AgentTool(name="work", description="w", parameters={"type": "object"}, execute=work)
    agent = Agent(
        model=MOCK_MODEL,
        tools=[tool],
        stream_fn=Scripted(asst([call("fast", "work", {}), call("slow", "work", {})], "toolUse")),
    )
    agent.subscribe(listener)
    done = []
    async with trio.open_nursery() as nursery:

        async def go() -> None:
            await agent.prompt("x")
            done.append(True)

        nursery.start_soon(go)
        await slow_started.wait()
        for _ in range(20):
            await trio.lowlevel.checkpoint()
        assert done == []
        assert agent.state.is_streaming
        assert "agent_end" not in types
        release.set()
    assert effects == ["slow effect", "agent_end"]
    assert not agent.state.is_streaming
    assert agent.state.error_message == "completion listener failed"


@pytest.mark.parametrize("scenario", ["tool abort", "provider abort", "normal completion"])
async def test_queued_steer_and_follow_up_survive_aborts_and_are_delivered_in_order(
    scenario: str, autojump_clock
) -> None:
    started, release = trio.Event(), trio.Event()
    saw_abort: list[bool] = []
    requests: list[list[str]] = []

    async def wait_tool(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        try:
            await release.wait()
        except trio.Cancelled:
            saw_abort.append(signal.aborted)
            raise
        return AgentToolResult(content=[TextContent(text="Tool done")], terminate=True)

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        requests.append(texts_of(context.messages))
        n = len(requests)
        if n == 1 and scenario == "provider abort":
            started.set()
            await trio.sleep_forever()
        answer = (
            asst([call("wait-1", "wait", {})], "toolUse")
            if n == 1
            else asst("Queued work answered")
        )
        from .helpers import terminal

        await send.send(terminal(answer))

    tool = AgentTool(name="wait", description="w", parameters={"type": "object"}, execute=wait_tool)
    agent = Agent(model=MOCK_MODEL, tools=[tool], stream_fn=stream_fn)
    rec = Recorder()
    agent.subscribe(rec)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "First task")
        await started.wait()
        agent.steer("Next task")
        agent.follow_up("Follow-up task")
        if scenario == "normal completion":
            release.set()
        else:
            agent.abort()
    assert rec.types[-1] == "agent_end"
    assert not agent.state.is_streaming
    assert saw_abort == ([True] if scenario == "tool abort" else [])
    if scenario != "normal completion":
        assert len(requests) == 1
        assert agent.has_queued_messages()
        assert "Next task" not in texts_of(agent.state.messages)
        if scenario == "tool abort":
            assert [m.role for m in agent.state.messages] == [
                "system",
                "user",
                "assistant",
                "toolResult",
            ]
            ends = rec.of("tool_execution_end")
            assert [(e.tool_call_id, e.is_error) for e in ends] == [("wait-1", True)]
            assert ends[0].result.content[0].text == "Operation aborted"
            assert [(r.tool_call_id, r.is_error) for r in rec.of("turn_end")[0].tool_results] == [
                ("wait-1", True)
            ]
            await agent.continue_()
        else:
            release.set()
            await agent.continue_()
    assert len(requests) == 3
    assert "Next task" in requests[1]
    assert "Follow-up task" not in requests[1]
    assert "Follow-up task" in requests[2]
    assert not agent.has_queued_messages()
    assert user_text(agent.state.messages[-1]) == "Queued work answered"


@pytest.mark.parametrize("kind", ["steer", "follow_up"])
async def test_messages_drained_before_an_aborted_next_turn_preparation_go_back_to_the_queue(
    kind: str,
) -> None:
    stream = Scripted(asst("done"))

    seen: list[Any] = []
    queued: list[str] = []

    def listener(event: Any) -> None:
        if event.type == "turn_end" and event.message.stop_reason == "stop" and not queued:
            queued.append(kind)
            getattr(agent, kind)(user("DO NOT LOSE"))

    async def prepare(turn: Any, signal: Any) -> None:
        # recorded, not asserted here: a failing assert in a hook only becomes a run error
        seen.append(("queued", agent.has_queued_messages()))
        await trio.lowlevel.checkpoint()
        agent.abort()
        seen.append(("aborted", signal.aborted))

    agent = Agent(model=MOCK_MODEL, stream_fn=stream, prepare_next_turn=prepare)
    rec = Recorder()
    agent.subscribe(listener)
    agent.subscribe(rec)
    await agent.prompt("start")
    # the hook ran once, saw the message already drained, and its abort took effect
    assert seen == [("queued", False), ("aborted", True)]
    assert "DO NOT LOSE" not in texts_of(agent.state.messages)
    assert agent.has_queued_messages()
    assert stream.count == 1
    assert rec.types[-1] == "agent_end"
    # the drained message is back at the front of its queue, nothing else is
    assert [user_text(m) for m in agent.peek_queued_messages()] == ["DO NOT LOSE"]
    # the abort stopped the run before another request (no aborted tail under the #9340
    # rule, scenarios Q15/Q16): the last answer is the completed one, and no error was set
    last = agent.state.messages[-1]
    assert last.role == "assistant"
    assert last.stop_reason == "stop"
    assert last.error_message is None
    assert agent.state.error_message is None
    assert rec.types.count("turn_start") == 1
    # ... and in the queue it came from
    if kind == "steer":
        agent.clear_steering_queue()
    else:
        agent.clear_follow_up_queue()
    assert not agent.has_queued_messages()


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_take_queued_messages_removes_exactly_the_matching_objects(mode: str) -> None:
    stream = Scripted(asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream, steering_mode=mode, follow_up_mode=mode)
    m = [UserMessage(content="same text", timestamp=i) for i in range(6)]
    for x in m[:3]:
        agent.steer(x)
    for x in m[3:]:
        agent.follow_up(x)
    taken = agent.take_queued_messages(lambda x: x is m[1] or x is m[4])
    assert taken == [m[1], m[4]]
    assert taken[0] is m[1]
    assert agent.take_queued_messages(lambda x: any(x is t for t in taken)) == []
    assert stream.count == 0
    await agent.prompt("start")
    users = [x for x in agent.state.messages if x.role == "user"][1:]
    assert [id(x) for x in users] == [id(m[0]), id(m[2]), id(m[3]), id(m[5])]
    assert stream.count == (2 if mode == "all" else 4)
    assert not agent.has_queued_messages()


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_prepared_system_messages_are_emitted_once_and_late_steering_is_drained(
    mode: str,
) -> None:
    from pi_trio.agent.hooks import AgentLoopTurnUpdate
    from pi_trio.ai import SystemMessage

    guidance = SystemMessage(content="updated guidance", timestamp=1)
    requests: list[Any] = []
    prepared = {"n": 0}

    def prepare_next(turn: Any, signal: Any) -> Any:
        if len(requests) == 1:
            return AgentLoopTurnUpdate(messages=[guidance])
        return None

    async def prepare_request(request: Any, signal: Any) -> Any:
        prepared["n"] += 1
        if prepared["n"] == 2:
            await trio.lowlevel.checkpoint()
            agent.steer(user("late first"))
            agent.steer(user("late second"))
        return {"context": request.context}

    def answer(context: Any, options: Any) -> Any:
        requests.append(context)
        if len(requests) == 1:
            return asst([call("work-1", "noop", {})], "toolUse")
        return asst("text")

    async def noop(*args: Any) -> Any:
        return "ok"

    tool = AgentTool(name="noop", description="n", parameters={"type": "object"}, execute=noop)
    agent = Agent(
        model=MOCK_MODEL,
        tools=[tool],
        stream_fn=Scripted(answer),
        steering_mode=mode,
        prepare_next_turn=prepare_next,
        prepare_request=prepare_request,
    )
    rec = Recorder()
    agent.subscribe(rec)
    await agent.prompt("go")
    assert agent.state.error_message is None
    assert len(requests) == (2 if mode == "all" else 3)
    assert guidance in requests[1].messages
    assert "late first" in texts_of(requests[1].messages)
    if mode == "all":
        assert "late second" in texts_of(requests[1].messages)
    else:
        assert "late second" not in texts_of(requests[1].messages)
        assert "late second" in texts_of(requests[2].messages)
    assert sum(1 for e in rec.of("message_end") if e.message is guidance) == 1
    assert sum(1 for x in agent.state.messages if x is guidance) == 1
    assert not agent.has_queued_messages()


async def test_continue_after_an_assistant_tail_consumes_a_queued_follow_up() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("Processed")))
    agent.state.messages = [user("Initial"), asst("Initial response")]
    agent.follow_up(user("Queued follow-up"))
    await agent.continue_()
    assert "Queued follow-up" in texts_of(agent.state.messages)
    assert agent.state.messages[-1].role == "assistant"


@pytest.mark.parametrize(("mode", "expected"), [("one-at-a-time", 2), ("all", 1)])
@pytest.mark.parametrize("with_prepare", [False, True])
async def test_continue_from_an_assistant_tail_honours_the_steering_mode(
    mode: str, expected: int, with_prepare: bool
) -> None:
    stream = Scripted(asst("Processed"))
    kw: dict[str, Any] = {"prepare_request": lambda r, s: None} if with_prepare else {}
    agent = Agent(model=MOCK_MODEL, stream_fn=stream, steering_mode=mode, **kw)
    agent.state.messages = [user("Initial"), asst("Initial response")]
    agent.steer("Steering 1")
    agent.steer("Steering 2")
    await agent.continue_()
    assert stream.count == expected
    tail = [m.role for m in agent.state.messages[2:]]
    assert tail == (
        ["user", "assistant", "user", "assistant"]
        if mode == "one-at-a-time"
        else ["user", "user", "assistant"]
    )
    assert "Steering 1" in stream.texts(0)
    if mode == "one-at-a-time":
        assert "Steering 2" not in stream.texts(0)
        assert "Steering 2" in stream.texts(1)
    else:
        assert "Steering 2" in stream.texts(0)


@pytest.mark.parametrize("initial", [[], "system-only"])
async def test_continue_from_an_empty_or_system_only_transcript_fails_without_draining(
    initial: Any,
) -> None:
    from pi_trio.ai import SystemMessage

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("never")))
    agent.state.messages = (
        [SystemMessage(content="system only")] if initial == "system-only" else []
    )
    agent.steer("steering")
    agent.follow_up("follow-up")
    with pytest.raises(ValueError, match="No messages to continue from"):
        await agent.continue_()
    assert texts_of(agent.peek_queued_messages()) == ["steering"]
    agent.clear_steering_queue()
    assert texts_of(agent.peek_queued_messages()) == ["follow-up"]


@pytest.mark.parametrize("tail", ["user", "toolResult"])
async def test_continuing_from_a_non_assistant_tail_answers_it_before_the_follow_up(
    tail: str,
) -> None:
    from pi_trio.ai import ToolResultMessage

    stream = Scripted(asst("done"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream)
    if tail == "user":
        agent.state.messages = [user("existing user")]
    else:
        agent.state.messages = [
            user("u"),
            asst([call("call-1", "noop", {})], "toolUse"),
            ToolResultMessage(
                tool_call_id="call-1",
                tool_name="noop",
                content=[TextContent(text="done")],
                is_error=False,
            ),
        ]
    agent.follow_up("follow-up")
    await agent.continue_()
    assert stream.count == 2
    assert "follow-up" not in stream.texts(0)
    assert "follow-up" in stream.texts(1)


@pytest.mark.parametrize(("mode", "expected"), [("one-at-a-time", 2), ("all", 1)])
async def test_continuing_from_a_user_tail_polls_steering_at_startup(
    mode: str, expected: int
) -> None:
    stream = Scripted(asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream, steering_mode=mode)
    agent.state.messages = [user("existing")]
    agent.steer("first")
    agent.steer("second")
    await agent.continue_()
    assert stream.count == expected
    assert "first" in stream.texts(0)
    assert ("second" in stream.texts(0)) == (mode == "all")


async def test_steering_is_delivered_before_follow_up_from_a_user_tail() -> None:
    stream = Scripted(asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream)
    agent.state.messages = [user("existing")]
    agent.steer("steering")
    agent.follow_up("follow-up")
    await agent.continue_()
    assert stream.count == 2
    assert "steering" in stream.texts(0)
    assert "follow-up" not in stream.texts(0)
    assert "follow-up" in stream.texts(1)


@pytest.mark.parametrize("reason", ["error", "aborted"])
async def test_failed_responses_keep_both_queues_even_if_finish_turn_says_continue(
    reason: str,
) -> None:
    agent = Agent(
        model=MOCK_MODEL,
        stream_fn=Scripted(asst([], reason, error_message=reason)),
        finish_turn=lambda t, s: {"action": "continue"},
    )
    agent.follow_up("follow-up")
    agent.subscribe(
        lambda e: (
            agent.steer("steering")
            if e.type == "message_end" and e.message.role == "assistant"
            else None
        )
    )
    await agent.prompt("start")
    assert texts_of(agent.peek_queued_messages()) == ["steering"]
    agent.clear_steering_queue()
    assert texts_of(agent.peek_queued_messages()) == ["follow-up"]


async def test_finish_turn_end_keeps_both_queues() -> None:
    agent = Agent(
        model=MOCK_MODEL, stream_fn=Scripted(asst("ok")), finish_turn=lambda t, s: {"action": "end"}
    )
    agent.follow_up("follow-up")
    agent.subscribe(
        lambda e: (
            agent.steer("steering")
            if e.type == "message_end" and e.message.role == "assistant"
            else None
        )
    )
    await agent.prompt("start")
    assert texts_of(agent.peek_queued_messages()) == ["steering"]
    agent.clear_steering_queue()
    assert texts_of(agent.peek_queued_messages()) == ["follow-up"]


async def test_peek_previews_the_next_batch_without_consuming() -> None:
    agent = Agent(
        model=MOCK_MODEL,
        stream_fn=Scripted(asst("ok")),
        steering_mode="one-at-a-time",
        follow_up_mode="all",
    )
    agent.steer("first steering")
    agent.steer("second steering")
    agent.follow_up("follow-up")
    assert texts_of(agent.peek_queued_messages()) == ["first steering"]
    assert texts_of(agent.peek_queued_messages()) == ["first steering"]
    agent.clear_steering_queue()
    assert texts_of(agent.peek_queued_messages()) == ["follow-up"]


def image_message(text: str, ts: int) -> UserMessage:
    return UserMessage(
        content=[TextContent(text=text), ImageContent(data="eA==", mime_type="image/png")],
        timestamp=ts,
    )


@pytest.mark.parametrize("kind", ["steer", "follow_up"])
@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
@pytest.mark.parametrize("clear", [False, True])
async def test_reserved_queue_entries_survive_an_abort_during_next_turn_preparation(
    kind: str, mode: str, clear: bool
) -> None:
    originals = [image_message("queued-1", 1), image_message("queued-2", 2)]
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("first"), faux_assistant_message("unexpected")])
    agent = Agent(model=faux.get_model(), stream_fn=faux, steering_mode=mode, follow_up_mode=mode)
    fired = []

    def listener(event: Any) -> None:
        if event.type == "turn_end" and not fired:
            fired.append(True)
            for m in originals:
                getattr(agent, kind)(m)

    def prepare(signal: Any) -> None:
        agent.abort()
        if clear:
            agent.clear_all_queues()

    agent.subscribe(listener)
    agent.hooks.prepare_next_turn = prepare
    await agent.prompt("old")
    assert faux.call_count == 1
    assert not any(m is o for m in agent.state.messages for o in originals)
    assert agent.has_queued_messages() == (not clear)

    agent.hooks.prepare_next_turn = None
    seen: list[Any] = []

    def record(context: Any, options: Any, state: Any, model: Any) -> Any:
        seen.append([user_text(m) for m in context.messages if m.role == "user"])
        return faux_assistant_message("ok")

    faux.set_responses([record] * 4)
    await agent.prompt("fresh")
    users = [m for m in agent.state.messages if m.role == "user"]
    later = users[2:]
    if clear:
        assert later == []
    else:
        assert [id(m) for m in later] == [id(o) for o in originals]
    assert any("queued-1" in s for s in seen) == (not clear)
    assert not agent.has_queued_messages()


async def test_an_all_mode_batch_stopped_after_its_first_message_restores_only_the_rest() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("unexpected")])
    agent = Agent(model=faux.get_model(), stream_fn=faux, steering_mode="all")
    accepted, pending = user("accepted"), user("pending")
    agent.steer(accepted)
    agent.steer(pending)
    unsubscribe = agent.subscribe(
        lambda e: agent.abort() if e.type == "message_end" and e.message is accepted else None
    )
    await agent.prompt("old")
    assert faux.call_count == 0
    assert any(m is accepted for m in agent.state.messages)
    assert not any(m is pending for m in agent.state.messages)
    unsubscribe()
    faux.set_responses([faux_assistant_message("fresh")])
    await agent.prompt("fresh")
    assert sum(m is accepted for m in agent.state.messages) == 1
    assert sum(m is pending for m in agent.state.messages) == 1
    assert not agent.has_queued_messages()


async def test_steering_queued_with_an_abort_at_message_end_is_neither_polled_nor_delivered() -> (
    None
):
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("completed")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    queued = user("queued")

    def listener(event: Any) -> None:
        if event.type == "message_end" and event.message.role == "assistant":
            agent.steer(queued)
            agent.abort()

    agent.subscribe(listener)
    await agent.prompt("go")
    assert faux.call_count == 1
    assert not any(m is queued for m in agent.state.messages)
    assert agent.has_queued_messages()
