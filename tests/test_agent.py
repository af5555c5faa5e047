"""The Agent: state, transcript declarations, listeners, runs (the A-scenarios)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from pi_trio.agent import Agent, AgentBusyError, AgentTool, AgentToolResult
from pi_trio.ai import (
    AbortSignal,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
)
from pi_trio.ai.transcript import ToolRef, get_current_system_message
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, echo_tool, user, user_text


def unused(*args: Any) -> Any:
    raise AssertionError("the stream function must not be called")


def named_tool(name: str) -> AgentTool:
    async def execute(*args: Any) -> Any:
        return name

    return AgentTool(
        name=name, label=name, description=f"{name} tool", parameters={}, execute=execute
    )


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


async def test_default_state() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=unused)
    state = agent.state
    assert state.model is MOCK_MODEL
    assert state.thinking_level == "off"
    assert state.tools == []
    assert state.messages == []
    assert state.is_streaming is False
    assert state.streaming_message is None
    assert state.pending_tool_calls == frozenset()
    assert state.error_message is None
    assert state.system_prompt == ""


async def test_initial_system_prompt_becomes_the_first_transcript_message() -> None:
    agent = Agent(
        system_prompt="You are a helpful assistant.",
        model=MOCK_MODEL,
        thinking_level="low",
        stream_fn=unused,
    )
    assert agent.state.messages == [
        SystemMessage(content="You are a helpful assistant.", timestamp=0)
    ]
    assert agent.state.model is MOCK_MODEL
    assert agent.state.thinking_level == "low"
    assert agent.state.system_prompt == "You are a helpful assistant."


async def test_initial_prompt_and_tools_become_one_declaration_message() -> None:
    agent = Agent(
        model=MOCK_MODEL, system_prompt="You are helpful.", tools=[echo_tool()], stream_fn=unused
    )
    head = agent.state.messages[0]
    assert head.role == "system"
    assert head.content == "You are helpful."
    assert [t.name for t in head.tools_added] == ["echo"]
    assert all(isinstance(t, Tool) for t in head.tools_added)


async def test_changing_tools_is_announced_before_the_next_request_once() -> None:
    seen: list[list[str]] = []

    def record(context: Any, options: Any) -> Any:
        marks = []
        for m in context.messages:
            if m.role == "system":
                marks.append("+" + ",".join(t.name for t in m.tools_added or []))
                marks.append("-" + ",".join(t.name for t in m.tools_removed or []))
        seen.append(marks)
        return asst("ok")

    first, second = named_tool("first"), named_tool("second")
    agent = Agent(
        model=MOCK_MODEL,
        system_prompt="You are helpful.",
        tools=[first],
        stream_fn=Scripted(record),
    )
    await agent.prompt("one")
    agent.state.tools = [second]
    await agent.prompt("two")
    await agent.prompt("three")
    assert seen == [
        ["+first", "-"],
        ["+first", "-", "+second", "-first"],
        ["+first", "-", "+second", "-first"],
    ]
    update = next(m for m in agent.state.messages[1:] if m.role == "system")
    assert update.content == ""
    assert update.tools_added == [Tool(name="second", description="second tool", parameters={})]
    assert update.tools_removed == [ToolRef(name="first")]


async def test_tool_changes_merge_into_a_pending_system_message() -> None:
    system_counts: list[int] = []

    def check(context: Any, options: Any) -> Any:
        # recorded, not asserted here: a failure inside the stream function only fails the run
        system_counts.append(sum(m.role == "system" for m in context.messages))
        return asst("ok")

    agent = Agent(model=MOCK_MODEL, system_prompt="You are helpful.", stream_fn=Scripted(check))
    agent.state.tools = [echo_tool()]
    pending = SystemMessage(content="", sections={"skills": "<skills>x</skills>"}, timestamp=1)
    await agent.prompt([pending, user("hi", timestamp=2)])
    assert system_counts == [2]
    assert agent.state.error_message is None
    assert agent.state.messages[-1].stop_reason == "stop"
    assert [m.role for m in agent.state.messages] == ["system", "system", "user", "assistant"]
    merged = agent.state.messages[1]
    assert merged.sections == {"skills": "<skills>x</skills>"}
    assert [t.name for t in merged.tools_added] == ["echo"]
    assert merged.timestamp == 1


async def test_the_executable_set_wins_over_a_pending_messages_tool_claims() -> None:
    agent = Agent(
        model=MOCK_MODEL,
        system_prompt="p",
        tools=[named_tool("first")],
        stream_fn=Scripted(asst("ok")),
    )
    pending = SystemMessage(
        content="",
        sections={"note": "<note>x</note>"},
        tools_added=[Tool(name="second", description="second tool", parameters={})],
        tools_removed=[ToolRef(name="first")],
        timestamp=1,
    )
    await agent.prompt([pending, user("hi")])
    assert agent.state.messages[1] == SystemMessage(
        content="", sections={"note": "<note>x</note>"}, timestamp=1
    )
    head = get_current_system_message(agent.state.messages)
    assert [t.name for t in head.tools_added] == ["first"]


async def test_reset_keeps_the_system_baseline_and_clears_queues_and_error() -> None:
    async def explode(*args: Any) -> None:
        raise RuntimeError("provider exploded")

    agent = Agent(
        model=MOCK_MODEL,
        system_prompt="You are helpful.",
        tools=[echo_tool()],
        messages=[user("old")],
        stream_fn=explode,
    )
    await agent.prompt("fails")
    assert agent.state.error_message == "provider exploded"
    agent.stream_fn = unused
    agent.steer("later")
    agent.follow_up("even later")
    agent.reset()
    assert len(agent.state.messages) == 1
    head = agent.state.messages[0]
    assert head.content == "You are helpful."
    assert [t.name for t in head.tools_added] == ["echo"]
    assert not agent.has_queued_messages()
    assert agent.state.error_message is None


async def test_subscribing_and_writing_state_emit_nothing_and_unsubscribe_works() -> None:
    rec = Recorder()
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    unsubscribe = agent.subscribe(rec)
    agent.state.thinking_level = "high"
    assert agent.state.thinking_level == "high"
    assert rec.events == []
    unsubscribe()
    unsubscribe()
    await agent.prompt("x")
    assert rec.events == []


async def test_a_stream_function_that_raises_still_yields_a_well_formed_failed_run() -> None:
    async def explode(*args: Any) -> None:
        raise RuntimeError("provider exploded")

    rec = Recorder()
    agent = Agent(model=MOCK_MODEL, stream_fn=explode)
    agent.subscribe(rec)
    await agent.prompt("hello")
    assert rec.types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    last = agent.state.messages[-1]
    assert last.role == "assistant"
    assert last.stop_reason == "error"
    assert last.error_message == "provider exploded"
    assert agent.state.error_message == "provider exploded"


async def test_prompt_returns_only_after_async_agent_end_listeners_finished(autojump_clock) -> None:
    barrier = trio.Event()
    finished = []

    async def listener(event: Any) -> None:
        if event.type == "agent_end":
            await barrier.wait()
            finished.append(True)

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(listener)
    done = []
    async with trio.open_nursery() as nursery:

        async def go() -> None:
            await agent.prompt("x")
            done.append(True)

        nursery.start_soon(go)
        await trio.sleep(0.01)
        assert done == []
        assert finished == []
        assert agent.state.is_streaming is True
        barrier.set()
    assert finished == [True]
    assert agent.state.is_streaming is False


async def test_wait_for_idle_waits_for_async_listeners(autojump_clock) -> None:
    barrier = trio.Event()

    async def listener(event: Any) -> None:
        if event.type == "message_end" and event.message.role == "assistant":
            await barrier.wait()

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(listener)
    idle = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "x")
        await trio.sleep(0.01)

        async def wait() -> None:
            await agent.wait_for_idle()
            idle.append(True)

        nursery.start_soon(wait)
        await trio.sleep(0.01)
        assert idle == []
        assert agent.state.is_streaming
        barrier.set()
    assert idle == [True]
    assert not agent.state.is_streaming
    await agent.wait_for_idle()


async def test_state_accessors_copy_on_assign_and_return_the_live_list() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=unused)
    agent.state.model = MOCK_MODEL
    assert agent.state.model is MOCK_MODEL
    tools = [echo_tool()]
    agent.state.tools = tools
    assert agent.state.tools == tools
    assert agent.state.tools is not tools
    messages = [user("a")]
    agent.state.messages = messages
    assert agent.state.messages is not messages
    extra = user("b")
    agent.state.messages.append(extra)
    assert agent.state.messages[1] is extra
    agent.state.messages = []
    assert agent.state.messages == []
    with pytest.raises(AttributeError):
        agent.state.system_prompt = "no"  # type: ignore[misc]


def noop_tool() -> AgentTool:
    async def execute(*args: Any) -> Any:
        return "done"

    return AgentTool(
        name="noop", description="noop", parameters={"type": "object"}, execute=execute
    )


async def test_legacy_prepare_next_turn_with_only_a_signal_gets_the_run_signal() -> None:
    got: list[Any] = []

    def prepare(signal: Any) -> None:
        got.append(signal)

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"), asst("done"))
    agent = Agent(
        model=MOCK_MODEL, tools=[noop_tool()], stream_fn=stream, prepare_next_turn=prepare
    )
    await agent.prompt("x")
    assert stream.count == 2
    assert len(got) == 1
    assert isinstance(got[0], AbortSignal)


async def test_finish_turn_is_forwarded_with_the_abort_signal() -> None:
    got: list[Any] = []

    def finish(turn: Any, signal: Any) -> Any:
        got.append((signal, roles(turn.context.messages)))
        return {"action": "end"}

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"))
    agent = Agent(model=MOCK_MODEL, tools=[noop_tool()], stream_fn=stream, finish_turn=finish)
    await agent.prompt("x")
    assert stream.count == 1
    assert isinstance(got[0][0], AbortSignal)
    assert got[0][1] == ["system", "user", "assistant", "toolResult"]


async def test_session_id_is_forwarded_and_settable() -> None:
    stream = Scripted(asst("ok"))
    agent = Agent(model=MOCK_MODEL, stream_fn=stream, session_id="session-abc")
    await agent.prompt("x")
    agent.stream_options.session_id = "session-def"
    assert agent.stream_options.session_id == "session-def"
    await agent.prompt("y")
    assert [c[2].session_id for c in stream.calls] == ["session-abc", "session-def"]


async def test_prompt_while_running_is_refused_with_the_upstream_text(autojump_clock) -> None:
    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        await trio.sleep(100)

    agent = Agent(model=MOCK_MODEL, stream_fn=slow)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(agent.prompt, "First message")
        await trio.sleep(0.01)
        assert agent.state.is_streaming
        with pytest.raises(
            AgentBusyError,
            match=r"Agent is already processing a prompt\. Use steer\(\) or followUp\(\)",
        ):
            await agent.prompt("Second message")
        with pytest.raises(
            AgentBusyError,
            match=r"Agent is already processing\. Wait for completion before continuing\.",
        ):
            await agent.continue_()
        with pytest.raises(AgentBusyError, match=r"Wait for completion before resetting\."):
            agent.reset()
        assert roles(agent.state.messages) == ["user"]
        agent.abort()
    assert not agent.state.is_streaming
    assert agent.state.messages[-1].stop_reason == "aborted"


# --------------------------------------------------------------------------- faux e2e


def faux_agent(*responses: Any, **kw: Any) -> tuple[Agent, FauxProvider]:
    faux = FauxProvider(token_size=kw.pop("token_size", (3, 5)))
    faux.set_responses(list(responses))
    agent = Agent(model=faux.get_model(), system_prompt="You are a test.", stream_fn=faux, **kw)
    return agent, faux


async def test_faux_basic_text_prompt() -> None:
    agent, _ = faux_agent(faux_assistant_message("4"))
    await agent.prompt("What is 2+2?")
    assert roles(agent.state.messages) == ["system", "user", "assistant"]
    assert "4" in user_text(agent.state.messages[-1])


async def test_faux_tool_execution_tracks_pending_tool_calls() -> None:
    snapshots: list[tuple[str, list[str]]] = []

    async def calculate(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        expression = params["expression"]
        return f"{expression} = {123 * 456}"

    calc = AgentTool(
        name="calculate",
        description="calc",
        execute=calculate,
        parameters={
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
    )
    agent, _ = faux_agent(
        faux_assistant_message(
            [
                faux_text("Let me calculate that."),
                faux_tool_call("calculate", {"expression": "123 * 456"}, id="calc-1"),
            ],
            stop_reason="toolUse",
        ),
        faux_assistant_message("The result is 56088."),
        tools=[calc],
    )

    def listener(event: Any) -> None:
        if event.type in ("tool_execution_start", "tool_execution_end"):
            snapshots.append((event.type, sorted(agent.state.pending_tool_calls)))

    agent.subscribe(listener)
    await agent.prompt("What is 123 * 456?")
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert "123 * 456 = 56088" in user_text(result)
    assert "56088" in user_text(agent.state.messages[-1])
    assert agent.state.pending_tool_calls == frozenset()
    assert snapshots == [("tool_execution_start", ["calc-1"]), ("tool_execution_end", [])]


async def test_faux_streaming_emits_lifecycle_updates_in_order() -> None:
    rec = Recorder()
    agent, _ = faux_agent(faux_assistant_message("1 2 3 4 5"), token_size=(1, 1))
    agent.subscribe(rec)
    await agent.prompt("count")
    types = rec.types
    assert types.count("message_update") >= 5
    assert types.index("agent_start") < types.index("message_start") < types.index("message_end")
    assert types[-1] == "agent_end"
    assert not agent.state.is_streaming
    assert len(agent.state.messages) == 3


async def test_faux_context_persists_across_prompts() -> None:
    def answer(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        knows = any(m.role == "user" and "Alice" in user_text(m) for m in context.messages)
        return faux_assistant_message("Your name is Alice." if knows else "I don't know.")

    agent, _ = faux_agent(faux_assistant_message("Nice to meet you, Alice."), answer)
    await agent.prompt("My name is Alice.")
    assert len(agent.state.messages) == 3
    await agent.prompt("What is my name?")
    assert len(agent.state.messages) == 5
    assert "alice" in user_text(agent.state.messages[4]).lower()


async def test_faux_thinking_blocks_are_preserved_verbatim() -> None:
    agent, _ = faux_agent(
        faux_assistant_message([faux_thinking("step by step"), faux_text("4")]),
        thinking_level="low",
    )
    await agent.prompt("think")
    assert agent.state.messages[-1].content == [
        ThinkingContent(thinking="step by step"),
        TextContent(text="4"),
    ]


async def test_continue_validation_errors() -> None:
    agent = Agent(model=MOCK_MODEL, stream_fn=unused)
    with pytest.raises(ValueError, match="No messages to continue from"):
        await agent.continue_()
    agent.state.messages = [user("x"), asst("y")]
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        await agent.continue_()


async def test_continue_from_a_user_tail_answers_it() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("HELLO WORLD")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    agent.state.messages = [user("Say exactly: HELLO WORLD")]
    await agent.continue_()
    assert roles(agent.state.messages) == ["user", "assistant"]
    assert "HELLO WORLD" in user_text(agent.state.messages[-1])


async def test_continue_from_a_tool_result_tail() -> None:
    from pi_trio.ai import ToolResultMessage

    agent, _ = faux_agent(faux_assistant_message("The answer is 8."))
    agent.state.messages = [
        user("What is 5 + 3?"),
        asst(
            [TextContent(text="Let me"), call("calc-1", "calculate", {"expression": "5 + 3"})],
            "toolUse",
        ),
        ToolResultMessage(
            tool_call_id="calc-1",
            tool_name="calculate",
            content=[TextContent(text="5 + 3 = 8")],
            is_error=False,
        ),
    ]
    await agent.continue_()
    assert agent.state.messages[-1].role == "assistant"
    assert "8" in user_text(agent.state.messages[-1])


async def test_a_listener_that_raises_turns_the_run_into_a_failure() -> None:
    def listener(event: Any) -> None:
        if (
            event.type == "message_end"
            and event.message.role == "assistant"
            and event.message.stop_reason != "error"
        ):
            raise RuntimeError("listener broke")

    rec = Recorder()
    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(listener)
    agent.subscribe(rec)
    await agent.prompt("x")
    assert agent.state.error_message == "listener broke"
    assert rec.types[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert agent.state.messages[-1].error_message == "listener broke"
    assert not agent.state.is_streaming


async def test_a_listener_raising_on_the_failure_events_propagates_to_the_caller() -> None:
    def listener(event: Any) -> None:
        raise RuntimeError("always")

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(listener)
    with pytest.raises(RuntimeError, match="always"):
        await agent.prompt("x")
    assert not agent.state.is_streaming
    agent.subscribe(listener)()


async def test_listeners_are_awaited_in_subscription_order_for_every_event() -> None:
    log: list[str] = []

    async def first(event: Any) -> None:
        await trio.lowlevel.checkpoint()
        log.append(f"a:{event.type}")

    def second(event: Any, signal: Any) -> None:
        assert isinstance(signal, AbortSignal)
        log.append(f"b:{event.type}")

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(first)
    agent.subscribe(second)
    await agent.prompt("x")
    pairs = list(zip(log[::2], log[1::2], strict=True))
    assert all(a[2:] == b[2:] and a[0] == "a" and b[0] == "b" for a, b in pairs)
    assert log[-1] == "b:agent_end"


async def test_the_reducer_has_applied_an_event_before_listeners_see_it() -> None:
    checks: list[bool] = []

    def listener(event: Any) -> None:
        if event.type == "message_end":
            checks.append(agent.state.messages[-1] is event.message)

    agent = Agent(model=MOCK_MODEL, stream_fn=Scripted(asst("ok")))
    agent.subscribe(listener)
    await agent.prompt("x")
    assert checks == [True, True]


async def test_tool_results_default_to_empty_content_and_the_agent_is_reusable() -> None:
    async def execute(*args: Any) -> Any:
        return AgentToolResult()

    tool = AgentTool(name="quiet", description="d", parameters={"type": "object"}, execute=execute)
    stream = Scripted(asst([call("t1", "quiet", {})], "toolUse"), asst("done"))
    agent = Agent(model=MOCK_MODEL, tools=[tool], stream_fn=stream)
    await agent.prompt("x")
    await agent.prompt("again")
    assert roles(agent.state.messages) == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]


@pytest.mark.parametrize(
    "hook",
    [
        "transform_context",
        "convert_to_llm",
        "get_api_key",
        "prepare_request",
        "finish_turn",
        "prepare_next_turn",
    ],
)
async def test_a_hook_that_raises_fails_the_run_with_its_message_and_the_agent_stays_usable(
    hook: str,
) -> None:
    def broken(*args: Any) -> Any:
        raise RuntimeError(f"{hook} broke")

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"), asst("done"))
    agent = Agent(model=MOCK_MODEL, tools=[noop_tool()], stream_fn=stream, **{hook: broken})
    rec = Recorder()
    agent.subscribe(rec)
    await agent.prompt("go")
    assert agent.state.error_message == f"{hook} broke"
    assert rec.types[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert not agent.state.is_streaming
    calls = [
        b.id
        for m in agent.state.messages
        if m.role == "assistant"
        for b in m.content
        if b.type == "toolCall"
    ]
    results = [m.tool_call_id for m in agent.state.messages if m.role == "toolResult"]
    assert sorted(calls) == sorted(results)
    setattr(agent.hooks, hook, None)
    agent.stream_fn = Scripted(asst("fine"))
    await agent.prompt("again")
    assert user_text(agent.state.messages[-1]) == "fine"
