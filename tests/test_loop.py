"""The stateless loop engine: the L- and LD-scenarios of the reference."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import trio

from pi_trio.agent import (
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from pi_trio.agent.extend import positional_arity
from pi_trio.agent.hooks import (
    AfterToolCallResult,
    AgentLoopTurnUpdate,
    AgentRequestUpdate,
    BeforeToolCallResult,
)
from pi_trio.ai import SystemMessage, TextContent, Usage
from pi_trio.ai._types import Cost
from pi_trio.testing import FauxProvider, faux_assistant_message

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, echo_tool, user, user_text


def config(**kw: Any) -> AgentLoopConfig:
    return AgentLoopConfig(model=MOCK_MODEL, **kw)


async def run(prompts, context=None, cfg=None, stream=None) -> tuple[Recorder, list[Any]]:
    rec = Recorder()
    messages = await run_agent_loop(
        prompts, context or AgentContext(), cfg or config(), rec, None, stream
    )
    return rec, messages


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


# --------------------------------------------------------------------------- basics


async def test_omitting_the_stream_function_uses_the_provider_registered_for_the_api() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("fallback")])
    unregister = faux.register()
    try:
        _, messages = await run([user("Hello")], cfg=AgentLoopConfig(model=faux.get_model()))
    finally:
        unregister()
    assert faux.call_count == 1
    assert user_text(messages[-1]) == "fallback"


async def test_basic_prompt_emits_the_lifecycle_and_returns_user_and_assistant() -> None:
    stream = Scripted(asst("Hi there!"))
    async with agent_loop([user("Hello")], AgentContext(), config(), stream_fn=stream) as events:
        types = [e.type async for e in events]
    assert roles(events.result()) == ["user", "assistant"]
    assert types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_leaving_agent_loop_early_cancels_the_run_without_an_error(autojump_clock) -> None:
    cancelled: list[bool] = []
    started = trio.Event()

    async def slow(context: Any, options: Any) -> Any:
        started.set()
        try:
            await trio.sleep(100)
        except trio.Cancelled:
            cancelled.append(True)
            raise
        return asst("never")

    async with agent_loop(
        [user("Hello")], AgentContext(), config(), stream_fn=Scripted(slow)
    ) as ev:
        async for event in ev:
            if event.type == "message_end":
                await started.wait()  # the request is in flight
                break
    assert cancelled == [True]
    with pytest.raises(RuntimeError, match="once the run finished"):
        ev.result()


async def test_provider_context_is_built_only_from_transcript_messages() -> None:
    head = SystemMessage(content="Transcript prompt", tools_added=[], timestamp=1)
    stream = Scripted(asst("ok"))
    await run([head, user("Hello")], stream=stream)
    context = stream.calls[0][1]
    assert context.system_prompt is None
    assert context.tools is None
    assert context.messages[0] is head


async def test_custom_roles_are_filtered_out_by_convert_to_llm() -> None:
    class Notification:
        role = "notification"
        text = "fyi"

    seen: list[Any] = []

    def convert(messages: list[Any]) -> list[Any]:
        kept = [m for m in messages if m.role in ("user", "assistant", "toolResult", "system")]
        seen.append(kept)
        return kept

    stream = Scripted(asst("ok"))
    await run(
        [user("hi")],
        AgentContext(messages=[Notification()]),
        config(convert_to_llm=convert),
        stream,
    )
    assert len(seen[0]) == 1
    assert seen[0][0].role == "user"
    assert stream.count == 1
    sent = stream.calls[0][1].messages
    assert sent == seen[0]
    assert [m.role for m in sent] == ["user"]
    assert all(m.role != "notification" for m in sent)


async def test_transform_context_runs_before_convert_to_llm() -> None:
    prior = [user("a"), asst("b"), user("c"), asst("d")]
    got: list[Any] = []

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        return messages[-2:]

    def convert(messages: list[Any]) -> list[Any]:
        got.append(list(messages))
        return messages

    cfg = config(transform_context=transform, convert_to_llm=convert)
    await run([user("new message")], AgentContext(messages=prior), cfg, Scripted(asst("ok")))
    assert len(got[0]) == 2
    assert user_text(got[0][-1]) == "new message"


# --------------------------------------------------------------------------- tools


async def test_tool_round_trip_and_after_tool_call_patches_usage() -> None:
    u1 = Usage(
        input=1,
        output=2,
        cache_read=3,
        cache_write=4,
        total_tokens=10,
        cost=Cost(input=0.1, output=0.2, cache_read=0.3, cache_write=0.4, total=1),
    )
    u2 = Usage(
        input=5,
        output=6,
        cache_read=7,
        cache_write=8,
        total_tokens=26,
        cost=Cost(input=0.5, output=0.6, cache_read=0.7, cache_write=0.8, total=2.6),
    )
    executed: list[Any] = []
    seen_usage: list[Any] = []
    tool = echo_tool(
        executed=executed,
        result=lambda p: AgentToolResult(
            content=[TextContent(text=f"echoed: {p['value']}")], usage=u1
        ),
    )

    def after(ctx: Any, signal: Any) -> AfterToolCallResult:
        seen_usage.append(ctx.result.usage)
        return AfterToolCallResult(usage=u2)

    stream = Scripted(asst([call("tool-1", "echo", {"value": "hello"})], "toolUse"), asst("done"))
    rec, messages = await run(
        [user("hi")], AgentContext(tools=[tool]), config(after_tool_call=after), stream
    )
    assert executed == ["hello"]
    assert len(rec.of("tool_execution_start")) == 1
    assert rec.of("tool_execution_end")[0].is_error is False
    assert seen_usage == [u1]
    result = next(m for m in messages if m.role == "toolResult")
    assert result.usage == u2
    assert result.duration_ms is not None


async def test_tool_calls_of_a_length_truncated_message_are_never_executed() -> None:
    executed: list[Any] = []
    stream = Scripted(asst([call("tool-1", "echo", {"value": "hel"})], "length"), asst("done"))
    rec, messages = await run(
        [user("hi")], AgentContext(tools=[echo_tool(executed=executed)]), stream=stream
    )
    assert executed == []
    end = rec.of("tool_execution_end")[0]
    assert end.is_error is True
    assert "output token limit" in end.result.content[0].text
    assert stream.count == 2
    assert messages[-1].role == "assistant"


async def test_arguments_mutated_by_before_tool_call_reach_execute_without_revalidation() -> None:
    received: list[Any] = []

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        received.append(params["value"])
        return "ok"

    tool = AgentTool(
        name="echo",
        description="Echo",
        execute=execute,
        parameters={"type": "object", "properties": {"value": {"type": "string"}}},
    )

    def before(ctx: Any, signal: Any) -> None:
        ctx.args["value"] = 123

    stream = Scripted(asst([call("t1", "echo", {"value": "hello"})], "toolUse"), asst("done"))
    await run([user("x")], AgentContext(tools=[tool]), config(before_tool_call=before), stream)
    assert received == [123]


async def test_a_decorated_execute_gets_the_arguments_its_wrapped_function_accepts() -> None:
    # a ``functools.wraps`` decorator forwarding ``*args``: the agent goes by the wrapped
    # function's two parameters, as ``inspect.signature`` (and every tool wrapper) does
    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await fn(*args, **kwargs)

        return wrapper

    @logged
    async def execute(tool_call_id: str, params: Any) -> str:
        return f"{tool_call_id}:{params['value']}"

    assert positional_arity(execute) == 2
    tool = AgentTool(
        name="echo",
        description="Echo",
        execute=execute,
        parameters={"type": "object", "properties": {"value": {"type": "string"}}},
    )
    stream = Scripted(asst([call("t1", "echo", {"value": "hi"})], "toolUse"), asst("done"))
    _, messages = await run([user("x")], AgentContext(tools=[tool]), config(), stream)
    result = next(m for m in messages if m.role == "toolResult")
    assert result.is_error is False
    assert user_text(result) == "t1:hi"


async def _late() -> str:
    return "never awaited"


@pytest.mark.parametrize(
    ("returned", "expected", "is_error"),
    [
        ("text", "text", False),
        ({"content": [{"type": "text", "text": "fields"}]}, "fields", False),
        (42, "Tool echo returned 42; expected an AgentToolResult", True),
        (
            {"content": 5},
            "Tool echo returned {'content': 5}, which is not a valid AgentToolResult",
            True,
        ),
        ("coroutine", "Tool echo returned an awaitable it did not await", True),
    ],
)
async def test_what_a_tool_returns_is_taken_as_a_result_or_reported_as_an_error(
    returned: Any, expected: str, is_error: bool
) -> None:
    pending = []

    async def execute(tool_call_id: str, params: Any) -> Any:
        if returned == "coroutine":
            pending.append(_late())
            return pending[0]
        return returned

    tool = AgentTool(name="echo", description="Echo", execute=execute, parameters={})
    stream = Scripted(asst([call("t1", "echo", {})], "toolUse"), asst("done"))
    _, messages = await run([user("x")], AgentContext(tools=[tool]), config(), stream)
    for coroutine in pending:
        coroutine.close()
    result = next(m for m in messages if m.role == "toolResult")
    assert user_text(result).startswith(expected)
    assert result.is_error is is_error


async def test_prepare_arguments_runs_before_validation() -> None:
    received: list[Any] = []

    def prepare(raw: Any) -> Any:
        if (
            isinstance(raw, dict)
            and isinstance(raw.get("oldText"), str)
            and isinstance(raw.get("newText"), str)
        ):
            return {
                "edits": [
                    *raw.get("edits", []),
                    {"oldText": raw["oldText"], "newText": raw["newText"]},
                ]
            }
        return raw

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        received.append(params["edits"])
        return "ok"

    schema = {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                },
            }
        },
        "required": ["edits"],
    }
    tool = AgentTool(
        name="edit",
        description="Edit",
        parameters=schema,
        execute=execute,
        prepare_arguments=prepare,
    )
    stream = Scripted(
        asst([call("t1", "edit", {"oldText": "before", "newText": "after"})], "toolUse"),
        asst("done"),
    )
    rec, _ = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    assert received == [[{"oldText": "before", "newText": "after"}]]
    assert rec.of("tool_execution_start")[0].args == {"oldText": "before", "newText": "after"}


def blocking_echo(release: trio.Event, log: list[str], **options: Any) -> AgentTool:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        log.append(f"start:{params['value']}")
        if params["value"] == "first":
            await release.wait()
        log.append(f"end:{params['value']}")
        return AgentToolResult(content=[TextContent(text=params["value"])])

    return AgentTool(
        name="echo",
        description="Echo",
        execute=execute,
        parameters={"type": "object", "properties": {"value": {"type": "string"}}},
        **options,
    )


async def run_blocking_batch(
    tool: AgentTool, release: trio.Event, cfg: AgentLoopConfig | None = None
) -> tuple[Recorder, list[Any]]:
    stream = Scripted(
        asst(
            [
                call("tool-1", "echo", {"value": "first"}),
                call("tool-2", "echo", {"value": "second"}),
            ],
            "toolUse",
        ),
        asst("done"),
    )
    async with trio.open_nursery() as nursery:

        async def release_later() -> None:
            await trio.sleep(0.02)
            release.set()

        nursery.start_soon(release_later)
        result = await run([user("x")], AgentContext(tools=[tool]), cfg, stream)
    return result


async def test_parallel_tools_end_in_completion_order_and_results_stay_in_source_order(
    autojump_clock,
) -> None:
    release, log = trio.Event(), []
    rec, _ = await run_blocking_batch(blocking_echo(release, log), release)
    assert log.index("start:second") < log.index("end:first")
    assert [e.tool_call_id for e in rec.of("tool_execution_end")] == ["tool-2", "tool-1"]
    result_ends = [
        e.message.tool_call_id for e in rec.of("message_end") if e.message.role == "toolResult"
    ]
    assert result_ends == ["tool-1", "tool-2"]
    assert [r.tool_call_id for r in rec.of("turn_end")[0].tool_results] == ["tool-1", "tool-2"]


async def test_a_sequential_tool_forces_the_whole_batch_sequential(autojump_clock) -> None:
    release, log = trio.Event(), []
    await run_blocking_batch(blocking_echo(release, log, execution_mode="sequential"), release)
    assert log == ["start:first", "end:first", "start:second", "end:second"]


async def test_sequential_config_runs_tools_one_after_another(autojump_clock) -> None:
    release, log = trio.Event(), []
    await run_blocking_batch(
        blocking_echo(release, log), release, config(tool_execution="sequential")
    )
    assert log == ["start:first", "end:first", "start:second", "end:second"]


async def test_steering_is_injected_only_after_the_whole_batch_finished() -> None:
    executed: list[Any] = []
    polls = {"n": 0}

    def steering() -> list[Any]:
        polls["n"] += 1
        if executed and polls["n"] == 2:
            return [user("interrupt")]
        return []

    stream = Scripted(
        asst(
            [call("t1", "echo", {"value": "first"}), call("t2", "echo", {"value": "second"})],
            "toolUse",
        ),
        asst("done"),
    )
    rec, _ = await run(
        [user("go")],
        AgentContext(tools=[echo_tool(executed=executed)]),
        config(tool_execution="sequential", get_steering_messages=steering),
        stream,
    )
    assert executed == ["first", "second"]
    starts = [e.message for e in rec.of("message_start")]
    interrupt_at = next(
        i for i, m in enumerate(starts) if m.role == "user" and user_text(m) == "interrupt"
    )
    result_at = [i for i, m in enumerate(starts) if m.role == "toolResult"]
    assert all(i < interrupt_at for i in result_at)
    assert "interrupt" in stream.texts(1)


# --------------------------------------------------------------------------- turn hooks


async def test_finish_turn_runs_after_tool_results_and_before_turn_end() -> None:
    log: list[str] = []
    tool = echo_tool(
        result=lambda p: AgentToolResult(content=[TextContent(text="x")], terminate=True)
    )

    def finish(turn: Any, signal: Any) -> None:
        assert len(turn.tool_results) == 1
        assert turn.context.messages[-1].role == "toolResult"
        log.append("finishTurn")

    def emit(event: Any) -> None:
        if event.type == "message_end":
            log.append(f"message_end:{event.message.role}")
        elif event.type == "turn_end":
            log.append("turn_end")

    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"))
    await run_agent_loop(
        [user("x")], AgentContext(tools=[tool]), config(finish_turn=finish), emit, None, stream
    )
    assert log[-3:] == ["message_end:toolResult", "finishTurn", "turn_end"]


@pytest.mark.parametrize("reason", ["error", "aborted"])
async def test_finish_turn_runs_for_failed_responses_but_cannot_revive_them(reason: str) -> None:
    log: list[str] = []
    polls = {"steer": 0, "follow": 0}

    def finish(turn: Any, signal: Any) -> dict[str, str]:
        assert turn.message.stop_reason == reason
        log.append("finishTurn")
        return {"action": "continue"}

    def steering() -> list[Any]:
        polls["steer"] += 1
        return []

    def follow() -> list[Any]:
        polls["follow"] += 1
        return [user("later")]

    def emit(event: Any) -> None:
        if event.type == "turn_end":
            log.append("turn_end")

    stream = Scripted(asst([], reason, error_message=reason))
    cfg = config(finish_turn=finish, get_steering_messages=steering, get_follow_up_messages=follow)
    await run_agent_loop([user("x")], AgentContext(), cfg, emit, None, stream)
    assert log == ["finishTurn", "turn_end"]
    assert stream.count == 1
    assert polls == {"steer": 1, "follow": 0}


def noop_tool() -> AgentTool:
    async def execute(*args: Any) -> Any:
        return "done"

    return AgentTool(
        name="noop",
        description="noop",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )


async def test_finish_turn_end_skips_queue_polls_and_next_turn_preparation() -> None:
    counts = {"steer": 0, "follow": 0, "prepare": 0}

    def steering() -> list[Any]:
        counts["steer"] += 1
        return []

    def follow() -> list[Any]:
        counts["follow"] += 1
        return [user("queued")]

    def prepare(turn: Any, signal: Any) -> None:
        counts["prepare"] += 1

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"))
    cfg = config(
        finish_turn=lambda turn, signal: {"action": "end"},
        get_steering_messages=steering,
        get_follow_up_messages=follow,
        prepare_next_turn=prepare,
    )
    await run([user("x")], AgentContext(tools=[noop_tool()]), cfg, stream)
    assert stream.count == 1
    assert counts == {"steer": 1, "follow": 0, "prepare": 0}


async def test_finish_turn_continue_with_nothing_scheduled_makes_exactly_one_more_request() -> None:
    calls = {"n": 0}

    def finish(turn: Any, signal: Any) -> Any:
        calls["n"] += 1
        return {"action": "continue"} if calls["n"] == 1 else None

    stream = Scripted(asst("one"), asst("two"))
    await run([user("x")], cfg=config(finish_turn=finish), stream=stream)
    assert stream.count == 2
    assert calls["n"] == 2


async def test_a_natural_tool_result_request_satisfies_continue() -> None:
    calls = {"n": 0}

    def finish(turn: Any, signal: Any) -> Any:
        calls["n"] += 1
        return "continue" if calls["n"] == 1 else None

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"), asst("done"))
    await run([user("x")], AgentContext(tools=[noop_tool()]), config(finish_turn=finish), stream)
    assert stream.count == 2
    assert calls["n"] == 2


@pytest.mark.parametrize("kind", ["steering", "follow-up"])
async def test_a_natural_queued_request_satisfies_continue(kind: str) -> None:
    calls = {"n": 0}
    polls = {"n": 0}
    queued = [user(kind)]

    def finish(turn: Any, signal: Any) -> Any:
        calls["n"] += 1
        return "continue" if calls["n"] == 1 else None

    def steering() -> list[Any]:
        polls["n"] += 1
        return queued if kind == "steering" and polls["n"] == 2 else []

    def follow() -> list[Any]:
        if kind == "follow-up" and queued:
            return [queued.pop()]
        return []

    stream = Scripted(asst("one"), asst("two"))
    cfg = config(finish_turn=finish, get_steering_messages=steering, get_follow_up_messages=follow)
    await run([user("x")], cfg=cfg, stream=stream)
    assert stream.count == 2
    assert calls["n"] == 2
    assert kind in stream.texts(1)


async def test_prepare_request_runs_after_pending_input_and_replaces_request_state() -> None:
    steering_message = user("steering")
    ended: list[Any] = []
    served = [steering_message]
    replacement = MOCK_MODEL.__copy__()
    replacement.id = replacement.name = "replacement"
    canonical = user("canonical projection")
    called = {"n": 0}
    # Assertions inside the hooks would only turn the run into an error outcome, so the
    # hooks record what they saw and the checks run after the loop.
    prepared_saw: list[tuple[bool, bool]] = []
    stream_saw: list[tuple[list[Any], Any]] = []

    def steering() -> list[Any]:
        return [served.pop()] if served else []

    def prepare(request: Any, signal: Any) -> AgentRequestUpdate:
        called["n"] += 1
        prepared_saw.append(
            (steering_message in ended, steering_message in request.context.messages)
        )
        return AgentRequestUpdate(
            context=AgentContext(messages=[canonical], tools=request.context.tools),
            model=replacement,
            thinking_level="high",
        )

    def stream_check(context: Any, options: Any) -> Any:
        stream_saw.append((list(context.messages), options.reasoning))
        return asst("ok")

    stream = Scripted(stream_check)

    def emit(event: Any) -> None:
        if event.type == "message_end":
            ended.append(event.message)

    messages = await run_agent_loop(
        [user("x")],
        AgentContext(),
        config(get_steering_messages=steering, prepare_request=prepare),
        emit,
        None,
        stream,
    )
    assert called["n"] == 1
    assert stream.calls[0][0].id == "replacement"
    assert prepared_saw == [(True, True)]
    assert len(stream_saw) == 1
    seen_messages, seen_reasoning = stream_saw[0]
    assert seen_messages == [canonical]
    assert seen_reasoning == "high"
    final = messages[-1]
    assert final.role == "assistant"
    assert final.error_message is None
    assert final.stop_reason != "error"
    assert user_text(final) == "ok"


async def test_no_steering_poll_happens_after_prepare_request() -> None:
    late = user("late steering")
    queue: list[Any] = []
    polls = {"n": 0}
    prepared = {"n": 0}

    def steering() -> list[Any]:
        polls["n"] += 1
        drained = list(queue)
        queue.clear()
        return drained

    def prepare(request: Any, signal: Any) -> None:
        prepared["n"] += 1
        if prepared["n"] == 1:
            queue.append(late)

    stream = Scripted(asst("one"), asst("two"))
    await run(
        [user("x")],
        cfg=config(get_steering_messages=steering, prepare_request=prepare),
        stream=stream,
    )
    assert [late in ctx.messages for ctx in stream.contexts()] == [False, True]
    assert prepared["n"] == 2
    assert polls["n"] == 3


async def test_prepare_next_turn_can_inject_a_system_message_before_the_next_request() -> None:
    calls = {"n": 0}

    def prepare(turn: Any, signal: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            return AgentLoopTurnUpdate(messages=[SystemMessage(content="updated guidance")])
        return None

    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"), asst("done"))
    await run(
        [user("x")], AgentContext(tools=[echo_tool()]), config(prepare_next_turn=prepare), stream
    )
    assert stream.count == 2
    assert calls["n"] == 1
    assert any(
        m.role == "system" and m.content == "updated guidance" for m in stream.calls[1][1].messages
    )


async def test_steering_queued_during_prepare_next_turn_reaches_the_next_request() -> None:
    queue: list[Any] = []

    def prepare(turn: Any, signal: Any) -> None:
        queue.append(user("late steering"))

    def steering() -> list[Any]:
        drained = list(queue)
        queue.clear()
        return drained

    stream = Scripted(asst([call("t1", "noop", {})], "toolUse"), asst("done"))
    cfg = config(prepare_next_turn=prepare, get_steering_messages=steering)
    await run([user("x")], AgentContext(tools=[noop_tool()]), cfg, stream)
    assert stream.count == 2
    assert "late steering" in stream.texts(1)


async def test_finish_turn_end_receives_the_finalized_turn_and_stops_with_the_exact_sequence() -> (
    None
):
    executed: list[Any] = []
    seen: dict[str, Any] = {}

    def finish(turn: Any, signal: Any) -> dict[str, str]:
        seen["ids"] = [r.tool_call_id for r in turn.tool_results]
        seen["roles"] = roles(turn.context.messages)
        return {"action": "end"}

    stream = Scripted(
        asst([call("tool-1", "echo", {"value": "hello"})], "toolUse"), asst("should not run")
    )
    rec, messages = await run(
        [user("x")],
        AgentContext(tools=[echo_tool(executed=executed)]),
        config(finish_turn=finish),
        stream,
    )
    assert stream.count == 1
    assert executed == ["hello"]
    assert seen == {"ids": ["tool-1"], "roles": ["system", "user", "assistant", "toolResult"]}
    assert roles(messages) == ["system", "user", "assistant", "toolResult"]
    assert rec.types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_should_stop_after_turn_ends_the_run_without_polling_the_queues() -> None:
    polls = {"steer": 0, "follow": 0}

    def steering() -> list[Any]:
        polls["steer"] += 1
        return []

    def follow() -> list[Any]:
        polls["follow"] += 1
        return [user("queued")]

    stream = Scripted(asst([call("tool-1", "echo", {"value": "hello"})], "toolUse"))
    cfg = config(
        should_stop_after_turn=lambda ctx: True,
        get_steering_messages=steering,
        get_follow_up_messages=follow,
    )
    rec, messages = await run([user("x")], AgentContext(tools=[echo_tool()]), cfg, stream)
    assert stream.count == 1
    assert polls == {"steer": 1, "follow": 0}
    assert roles(messages) == ["system", "user", "assistant", "toolResult"]
    assert rec.types[-2:] == ["turn_end", "agent_end"]


# --------------------------------------------------------------------------- terminate


async def test_a_batch_where_every_result_terminates_stops_the_run() -> None:
    tool = echo_tool(result=lambda p: AgentToolResult(content=[], terminate=True))
    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"))
    rec, messages = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    assert stream.count == 1
    assert roles(messages) == ["system", "user", "assistant", "toolResult"]
    assert len(rec.of("turn_end")) == 1


async def test_a_blocked_call_with_terminate_stops_the_run() -> None:
    executed: list[Any] = []

    def before(ctx: Any, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="Blocked by policy", terminate=True)

    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"))
    _, messages = await run(
        [user("x")],
        AgentContext(tools=[echo_tool(executed=executed)]),
        config(before_tool_call=before),
        stream,
    )
    assert executed == []
    assert stream.count == 1
    result = messages[-1]
    assert result.is_error is True
    assert result.content == [TextContent(text="Blocked by policy")]


async def test_a_mixed_batch_with_one_terminating_blocked_call_continues() -> None:
    executed: list[Any] = []

    def before(ctx: Any, signal: Any) -> Any:
        if ctx.args["value"] == "first":
            return {"block": True, "terminate": True}
        return None

    stream = Scripted(
        asst(
            [call("t1", "echo", {"value": "first"}), call("t2", "echo", {"value": "second"})],
            "toolUse",
        ),
        asst("done"),
    )
    await run(
        [user("x")],
        AgentContext(tools=[echo_tool(executed=executed)]),
        config(before_tool_call=before),
        stream,
    )
    assert executed == ["second"]
    assert stream.count == 2


async def test_not_all_results_terminating_continues() -> None:
    tool = echo_tool(result=lambda p: AgentToolResult(content=[], terminate=p["value"] == "first"))
    stream = Scripted(
        asst(
            [call("t1", "echo", {"value": "first"}), call("t2", "echo", {"value": "second"})],
            "toolUse",
        ),
        asst("done"),
    )
    _, messages = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    assert stream.count == 2
    assert roles(messages) == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]


async def test_after_tool_call_can_make_a_batch_terminate() -> None:
    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"))
    await run(
        [user("x")],
        AgentContext(tools=[echo_tool()]),
        config(after_tool_call=lambda ctx, s: {"terminate": True}),
        stream,
    )
    assert stream.count == 1


# --------------------------------------------------------------------------- continue


async def test_continue_on_an_empty_context_raises_before_anything_runs() -> None:
    stream = Scripted(asst("never"))
    with pytest.raises(ValueError, match="Cannot continue: no messages in context"):
        agent_loop_continue(AgentContext(), config(), stream_fn=stream)
    with pytest.raises(ValueError, match="Cannot continue: no messages in context"):
        await run_agent_loop_continue(AgentContext(), config(), lambda e: None, None, stream)
    with pytest.raises(ValueError, match="Cannot continue from message role: assistant"):
        agent_loop_continue(AgentContext(messages=[asst("x")]), config(), stream_fn=stream)
    assert stream.count == 0


async def test_continue_from_a_user_message_emits_no_user_events_and_extends_the_context_in_place() -> (
    None
):
    context = AgentContext(messages=[user("Hello")])
    rec = Recorder()
    messages = await run_agent_loop_continue(context, config(), rec, None, Scripted(asst("hi")))
    assert roles(messages) == ["assistant"]
    assert [e.message.role for e in rec.of("message_end")] == ["assistant"]
    assert roles(context.messages) == ["user", "assistant"]


async def test_continue_accepts_a_custom_role_last_message() -> None:
    class Custom:
        role = "custom"
        text = "Hook content"

    def convert(messages: list[Any]) -> list[Any]:
        return [user(m.text) if m.role == "custom" else m for m in messages]

    messages = await run_agent_loop_continue(
        AgentContext(messages=[Custom()]),
        config(convert_to_llm=convert),
        lambda e: None,
        None,
        Scripted(asst("ok")),
    )
    assert roles(messages) == ["assistant"]


# --------------------------------------------------------------------------- LD


async def test_an_unknown_tool_gets_an_immediate_error_result_without_hooks() -> None:
    hooks: list[str] = []
    stream = Scripted(asst([call("t1", "missing", {})], "toolUse"), asst("done"))
    cfg = config(
        before_tool_call=lambda c, s: hooks.append("before"),
        after_tool_call=lambda c, s: hooks.append("after"),
    )
    rec, _ = await run([user("x")], AgentContext(tools=[echo_tool()]), cfg, stream)
    end = rec.of("tool_execution_end")[0]
    assert end.is_error is True
    assert end.result.content == [TextContent(text="Tool missing not found")]
    assert end.result.details == {}
    assert end.duration_ms is None
    assert hooks == []
    assert stream.count == 2


async def test_invalid_arguments_get_the_validation_error_text() -> None:
    executed: list[Any] = []
    stream = Scripted(asst([call("t1", "echo", {"value": {"no": 1}})], "toolUse"), asst("done"))
    rec, _ = await run(
        [user("x")], AgentContext(tools=[echo_tool(executed=executed)]), stream=stream
    )
    text = rec.of("tool_execution_end")[0].result.content[0].text
    assert text.startswith('Validation failed for tool "echo":')
    assert "Received arguments:" in text
    assert executed == []


async def test_blocking_without_a_reason_uses_the_default_text() -> None:
    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"), asst("done"))
    rec, _ = await run(
        [user("x")],
        AgentContext(tools=[echo_tool()]),
        config(before_tool_call=lambda c, s: {"block": True}),
        stream,
    )
    assert rec.of("tool_execution_end")[0].result.content[0].text == "Tool execution was blocked"


async def test_a_tool_that_raises_gets_an_error_result_and_after_tool_call_can_flip_it() -> None:
    async def execute(*args: Any) -> Any:
        raise RuntimeError("X")

    tool = AgentTool(name="boom", description="d", parameters={"type": "object"}, execute=execute)
    stream = Scripted(asst([call("t1", "boom", {})], "toolUse"), asst("done"))
    _, messages = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    result = next(m for m in messages if m.role == "toolResult")
    assert result.is_error is True
    assert result.content == [TextContent(text="X")]
    assert stream.count == 2

    stream = Scripted(asst([call("t1", "boom", {})], "toolUse"), asst("done"))
    _, messages = await run(
        [user("x")],
        AgentContext(tools=[tool]),
        config(after_tool_call=lambda c, s: {"is_error": False}),
        stream,
    )
    assert next(m for m in messages if m.role == "toolResult").is_error is False


async def test_a_throwing_after_tool_call_gives_an_error_result_and_keeps_the_duration() -> None:
    def after(ctx: Any, signal: Any) -> None:
        raise RuntimeError("after failed")

    stream = Scripted(
        asst([call("t1", "echo", {"value": "a"}), call("t2", "echo", {"value": "b"})], "toolUse"),
        asst("done"),
    )
    rec, messages = await run(
        [user("x")], AgentContext(tools=[echo_tool()]), config(after_tool_call=after), stream
    )
    results = [m for m in messages if m.role == "toolResult"]
    assert [r.content[0].text for r in results] == ["after failed", "after failed"]
    assert all(r.duration_ms is not None for r in results)
    assert [r.is_error for r in results] == [True, True]
    ends = rec.of("tool_execution_end")
    assert sorted(e.tool_call_id for e in ends) == ["t1", "t2"]
    assert [e.is_error for e in ends] == [True, True]
    assert [e.result.content[0].text for e in ends] == ["after failed", "after failed"]


async def test_hooks_returning_the_wrong_type_give_an_error_result_that_says_so() -> None:
    stream = Scripted(asst([call("t1", "echo", {"value": "v"})], "toolUse"), asst("done"))
    rec, _ = await run(
        [user("x")],
        AgentContext(tools=[echo_tool()]),
        config(before_tool_call=lambda c, s: 42),
        stream,
    )
    text = rec.of("tool_execution_end")[0].result.content[0].text
    assert "before_tool_call returned 42" in text


async def test_a_tool_returning_a_malformed_result_gets_an_error_result() -> None:
    async def execute(*args: Any) -> Any:
        return 3.5

    tool = AgentTool(name="bad", description="d", parameters={"type": "object"}, execute=execute)
    stream = Scripted(asst([call("t1", "bad", {})], "toolUse"), asst("done"))
    rec, _ = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    end = rec.of("tool_execution_end")[0]
    assert end.is_error is True
    assert "Tool bad returned 3.5" in end.result.content[0].text


async def test_progress_updates_precede_the_end_and_carry_the_raw_arguments() -> None:
    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        on_update(AgentToolResult(content=[TextContent(text="50%")]))
        on_update(AgentToolResult(content=[TextContent(text="90%")]))
        return "done"

    tool = AgentTool(
        name="work",
        description="d",
        parameters={"type": "object"},
        execute=execute,
        prepare_arguments=lambda raw: {**raw, "extra": True},
    )
    stream = Scripted(asst([call("t1", "work", {"n": 1})], "toolUse"), asst("done"))
    rec, _ = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    kinds = [e.type for e in rec.events if e.type.startswith("tool_execution")]
    assert kinds == [
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_update",
        "tool_execution_end",
    ]
    assert [u.args for u in rec.of("tool_execution_update")] == [{"n": 1}, {"n": 1}]


async def test_a_tool_returning_no_content_gets_an_empty_content_list() -> None:
    async def execute(*args: Any) -> Any:
        return AgentToolResult()

    tool = AgentTool(name="quiet", description="d", parameters={"type": "object"}, execute=execute)
    stream = Scripted(asst([call("t1", "quiet", {})], "toolUse"), asst("done"))
    _, messages = await run([user("x")], AgentContext(tools=[tool]), stream=stream)
    result = next(m for m in messages if m.role == "toolResult")
    assert result.content == []
    assert result.tool_call_id == "t1"
    assert result.tool_name == "quiet"


async def test_the_final_assistant_message_carries_the_requested_thinking_level() -> None:
    _, messages = await run(
        [user("x")], cfg=config(thinking_level="medium"), stream=Scripted(asst("ok"))
    )
    assert messages[-1].thinking_level == "medium"
    _, messages = await run([user("x")], stream=Scripted(asst("ok")))
    assert messages[-1].thinking_level == "off"


async def test_a_stream_with_only_a_terminal_event_still_yields_message_start_and_end() -> None:
    rec, _ = await run([user("x")], stream=Scripted(asst("ok")))
    assistant_events = [
        e.type
        for e in rec.events
        if getattr(getattr(e, "message", None), "role", "") == "assistant"
        and e.type.startswith("message")
    ]
    assert assistant_events == ["message_start", "message_end"]


async def test_get_api_key_falls_back_to_the_configured_key_when_empty() -> None:
    from pi_trio.ai import StreamOptions

    stream = Scripted(asst("ok"))
    await run(
        [user("x")],
        cfg=config(
            get_api_key=lambda provider: "", stream_options=StreamOptions(api_key="configured")
        ),
        stream=stream,
    )
    assert stream.calls[0][2].api_key == "configured"
    stream = Scripted(asst("ok"))
    await run(
        [user("x")], cfg=config(get_api_key=lambda provider: f"key-for-{provider}"), stream=stream
    )
    assert stream.calls[0][2].api_key == "key-for-openai"
