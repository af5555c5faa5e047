"""Tool approval: a call whose tool needs approval pauses the run with a placeholder
result; ``Agent.resume`` runs the decided calls in the placeholders' places and goes on.
The scenarios run on trio (autojump clock) and on asyncio."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
import pytest
import trio.testing

from pi_trio.agent import (
    Agent,
    AgentContext,
    AgentHooks,
    AgentTool,
    ApprovalPendingError,
    PendingApproval,
    ResumeError,
    TranscriptChangedError,
    approve,
    deny,
    edit,
    tool,
)
from pi_trio.agent.extend import is_approval_placeholder
from pi_trio.agent.hooks import BeforeToolCallResult
from pi_trio.ai import TextContent, ToolCall, ToolResultMessage, UserMessage, messages_to_json
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

BACKENDS = ("trio", "asyncio")


def run_on(backend: str, scenario: Callable[[], Awaitable[None]]) -> None:
    options = {"clock": trio.testing.MockClock(autojump_threshold=0)} if backend == "trio" else {}
    anyio.run(scenario, backend=backend, backend_options=options)


class World:
    """An agent on the faux provider with a ``refund`` tool that needs approval above 100,
    a ``lookup`` tool that does not, and a log of what ran and what listeners saw."""

    def __init__(self, responses: list[Any], *, sequential: bool = False, **agent: Any) -> None:
        self.ran: list[tuple[str, Any]] = []
        self.events: list[Any] = []
        self.faux = FauxProvider()
        self.faux.set_responses(responses)
        self.contexts: list[Any] = []  # what the model was sent, request by request

        async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
            self.contexts.append(context)
            await self.faux(model, context, options, send)

        async def refund(tool_call_id: str, params: Any) -> str:
            self.ran.append(("refund", params))
            await anyio.lowlevel.checkpoint()
            return f"refunded {params['amount']}"

        async def lookup(tool_call_id: str, params: Any) -> str:
            self.ran.append(("lookup", params))
            return f"order {params['order']}: shipped"

        schema = {
            "type": "object",
            "properties": {"order": {"type": "integer"}, "amount": {"type": "integer"}},
            "required": ["order"],
        }
        tools = [
            AgentTool(
                name="refund",
                description="Refund an order.",
                parameters=schema,
                execute=refund,
                needs_approval=lambda args: args.get("amount", 0) > 100,
            ),
            AgentTool(
                name="lookup", description="Look up an order.", parameters=schema, execute=lookup
            ),
        ]
        self.agent = Agent(
            model=self.faux.get_model(),
            stream_fn=stream_fn,
            tools=tools,
            system_prompt="You handle refunds.",
            tool_execution="sequential" if sequential else "parallel",
            **agent,
        )
        self.agent.subscribe(self.events.append)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def roles(self) -> list[str]:
        return [m.role for m in self.agent.state.messages]


def calls(*specs: tuple[str, dict[str, Any], str]) -> Any:
    return faux_assistant_message(
        [faux_text("On it.")] + [faux_tool_call(n, a, id=i) for n, a, i in specs],
        stop_reason="toolUse",
    )


def text(message: Any) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


def one_result_per_call(messages: list[Any]) -> None:
    for index, message in enumerate(messages):
        if message.role != "assistant" or message.stop_reason in ("error", "aborted"):
            continue
        for block in message.content:
            if isinstance(block, ToolCall):
                later = [m for m in messages[index + 1 :] if m.role == "toolResult"]
                assert [m.tool_call_id for m in later].count(block.id) == 1, block.id


# --------------------------------------------------------------------------- pausing


def test_a_call_that_needs_approval_pauses_the_run_while_the_others_run() -> None:
    async def scenario() -> None:
        world = World(
            [
                calls(
                    ("lookup", {"order": 42}, "c1"),
                    ("refund", {"order": 42, "amount": 500}, "c2"),
                    ("refund", {"order": 7, "amount": 5}, "c3"),
                ),
                faux_assistant_message("unused"),
            ]
        )
        result = await world.agent.prompt("Refund order 42.")

        assert result.status == "approval_pending"
        assert not result.ok
        assert result.pending_approvals == (
            PendingApproval(
                tool_call_id="c2", tool_name="refund", arguments={"order": 42, "amount": 500}
            ),
        )
        with pytest.raises(ApprovalPendingError, match=r"refund \(c2\).*agent\.resume"):
            result.raise_for_error()
        # the model was asked once: the run ended with the turn
        assert world.faux.state.call_count == 1
        assert world.ran == [("lookup", {"order": 42}), ("refund", {"order": 7, "amount": 5})]
        messages = world.agent.state.messages
        assert world.roles() == [
            "system",
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "toolResult",
        ]
        one_result_per_call(messages)
        placeholder = messages[4]
        assert placeholder.tool_call_id == "c2"
        assert placeholder.is_error is True
        assert text(placeholder) == 'Tool call "refund" is waiting for approval; it has not run.'
        assert placeholder.details["piTrioApproval"]["status"] == "pending"
        assert is_approval_placeholder(placeholder)
        assert not any(is_approval_placeholder(m) for m in messages[:4] + messages[5:])
        # every run ends with agent_end; every started call ended
        types = world.types()
        assert types[0] == "agent_start"
        assert types[-1] == "agent_end"
        assert types[-2] == "turn_end"
        assert types.count("tool_execution_start") == types.count("tool_execution_end") == 3
        ends = [e for e in world.events if e.type == "tool_execution_end"]
        assert [(e.tool_call_id, e.is_error) for e in ends if e.tool_call_id == "c2"] == [
            ("c2", True)
        ]
        assert world.agent.state.pending_tool_calls == frozenset()
        assert not world.agent.state.is_streaming
        # the transcript is the original's JSON: it loads and re-encodes unchanged
        encoded = messages_to_json(messages)
        assert json.loads(encoded)[4]["details"]["piTrioApproval"]["status"] == "pending"

    run_on("trio", scenario)


@pytest.mark.parametrize("backend", BACKENDS)
def test_resume_runs_approved_denied_and_edited_calls_in_their_placeholders_places(
    backend: str,
) -> None:
    async def scenario() -> None:
        world = World(
            [
                calls(
                    ("refund", {"order": 1, "amount": 500}, "a"),
                    ("lookup", {"order": 1}, "b"),
                    ("refund", {"order": 2, "amount": 300}, "c"),
                    ("refund", {"order": 3, "amount": 200}, "d"),
                ),
                faux_assistant_message("All handled."),
            ]
        )
        paused = await world.agent.prompt("Refund 1, 2 and 3.")
        assert [p.tool_call_id for p in paused.pending_approvals] == ["a", "c", "d"]
        before = list(world.agent.state.messages)
        world.events.clear()
        world.ran.clear()

        result = await world.agent.resume(
            {
                "a": approve(),
                "c": deny("Order 2 was refunded last week."),
                "d": edit({"order": 3, "amount": 20}),
            }
        )

        assert result.status == "completed"
        assert result.ok
        assert result.text == "All handled."
        assert world.ran == [
            ("refund", {"order": 1, "amount": 500}),
            ("refund", {"order": 3, "amount": 20}),
        ]
        messages = world.agent.state.messages
        # the results took the placeholders' places; the answer came after them
        assert world.roles() == ["system", "user", "assistant"] + ["toolResult"] * 4 + ["assistant"]
        assert messages[:3] == before[:3]
        assert messages[4] is before[4]
        assert [m.tool_call_id for m in messages[3:7]] == ["a", "b", "c", "d"]
        assert text(messages[3]) == "refunded 500"
        assert not messages[3].is_error
        assert messages[5].is_error
        assert text(messages[5]) == "Order 2 was refunded last week."
        assert text(messages[6]) == (
            "The approver edited the arguments before the call ran; it ran with: "
            '{"order":3,"amount":20}refunded 20'
        )
        assert not any(is_approval_placeholder(m) for m in messages)
        one_result_per_call(messages)
        # the model saw the results in the placeholders' places
        seen = world.contexts[-1].messages
        assert [m.role for m in seen] == [m.role for m in messages[:-1]]
        # the resumed run: one run, one continued turn, then the next
        types = world.types()
        assert types[:2] == ["agent_start", "turn_start"]
        assert types.count("agent_start") == types.count("agent_end") == 1
        assert types[-1] == "agent_end"
        starts = [
            (e.tool_call_id, e.args) for e in world.events if e.type == "tool_execution_start"
        ]
        assert starts == [
            ("a", {"order": 1, "amount": 500}),
            ("c", {"order": 2, "amount": 300}),
            ("d", {"order": 3, "amount": 20}),
        ]
        first_end = next(e for e in world.events if e.type == "turn_end")
        assert first_end.message is before[2]
        assert [r.tool_call_id for r in first_end.tool_results] == ["a", "b", "c", "d"]
        # what the run added: the three results and the answer
        assert [m.role for m in result.messages] == ["toolResult"] * 3 + ["assistant"]
        assert world.agent.state.pending_tool_calls == frozenset()

    run_on(backend, scenario)


def test_the_decorator_and_an_async_predicate_ask_for_approval() -> None:
    async def scenario() -> None:
        ran: list[str] = []

        @tool(needs_approval=True)
        async def delete(path: str) -> str:
            """Delete a file."""
            ran.append(path)
            return "deleted"

        async def is_big(args: Any) -> bool:
            await anyio.lowlevel.checkpoint()
            return bool(args["size"] > 10)

        @tool(needs_approval=is_big)
        async def buy(size: int) -> str:
            """Buy something."""
            ran.append(f"buy {size}")
            return "bought"

        faux = FauxProvider()
        faux.set_responses(
            [
                calls(
                    ("delete", {"path": "/tmp/x"}, "d1"),
                    ("buy", {"size": 3}, "b1"),
                    ("buy", {"size": 30}, "b2"),
                ),
                faux_assistant_message("ok"),
            ]
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[delete, buy])
        result = await agent.prompt("go")
        assert [p.tool_call_id for p in result.pending_approvals] == ["d1", "b2"]
        assert ran == ["buy 3"]
        result = await agent.resume({"d1": deny(), "b2": approve()})
        assert ran == ["buy 3", "buy 30"]
        denial = next(m for m in agent.state.messages if getattr(m, "tool_call_id", "") == "d1")
        assert text(denial) == 'Tool call "delete" was denied by the approver.'
        assert result.ok

    run_on("trio", scenario)


def test_a_predicate_that_fails_gives_an_error_result_and_the_call_does_not_run() -> None:
    async def scenario() -> None:
        ran: list[Any] = []

        def broken(args: Any) -> Any:
            if args["n"] == 1:
                raise KeyError("limit")
            return "yes"  # not a bool

        async def execute(tool_call_id: str, params: Any) -> str:
            ran.append(params)
            return "done"

        risky = AgentTool(
            name="risky",
            description="d",
            parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
            execute=execute,
            needs_approval=broken,
        )
        faux = FauxProvider()
        faux.set_responses(
            [
                calls(("risky", {"n": 1}, "r1"), ("risky", {"n": 2}, "r2")),
                faux_assistant_message("ok"),
            ]
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[risky])
        result = await agent.prompt("go")
        assert result.status == "completed"
        assert ran == []
        errors = [text(m) for m in agent.state.messages if m.role == "toolResult"]
        assert errors[0] == "'limit'"
        assert "returned 'yes'; it must return True" in errors[1]

    run_on("trio", scenario)


def test_an_approval_policy_that_is_not_a_bool_or_a_function_is_refused_where_it_is_given() -> None:
    with pytest.raises(
        TypeError, match=r"AgentTool 'x': needs_approval takes True, False or a function"
    ):
        AgentTool(name="x", description="d", parameters={}, execute=print, needs_approval="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"@tool: needs_approval takes"):
        tool(needs_approval=1)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"edit\(arguments\) takes the call's new arguments as a dict"
    ):
        edit([1, 2])  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_a_sequential_batch_the_calls_after_a_pending_one_wait_and_run_in_order_on_resume(
    backend: str,
) -> None:
    async def scenario() -> None:
        world = World(
            [
                calls(
                    ("lookup", {"order": 1}, "a"),
                    ("refund", {"order": 1, "amount": 500}, "b"),
                    ("lookup", {"order": 2}, "c"),
                    ("refund", {"order": 2, "amount": 900}, "d"),
                ),
                faux_assistant_message("Done."),
            ],
            sequential=True,
        )
        result = await world.agent.prompt("go")
        assert [p.tool_call_id for p in result.pending_approvals] == ["b", "d"]
        assert world.ran == [("lookup", {"order": 1})]
        statuses = [
            m.details["piTrioApproval"]["status"] if is_approval_placeholder(m) else "ran"
            for m in world.agent.state.messages[3:]
        ]
        assert statuses == ["ran", "pending", "waiting", "pending"]
        waiting = world.agent.state.messages[5]
        assert text(waiting) == (
            'Tool call "lookup" has not run: it runs after an earlier call of this turn is '
            "approved."
        )

        with pytest.raises(ResumeError, match=r"no decision for 'd'"):
            await world.agent.resume({"b": approve()})
        with pytest.raises(ResumeError, match=r"names 'c', which is not waiting for approval"):
            await world.agent.resume({"b": approve(), "c": approve(), "d": approve()})
        result = await world.agent.resume({"b": approve(), "d": deny("too much")})
        assert world.ran == [
            ("lookup", {"order": 1}),
            ("refund", {"order": 1, "amount": 500}),
            ("lookup", {"order": 2}),
        ]
        assert result.ok
        one_result_per_call(world.agent.state.messages)

    run_on(backend, scenario)


def test_a_resumed_turn_can_pause_again_and_before_tool_call_sees_the_edited_arguments() -> None:
    async def scenario() -> None:
        seen: list[Any] = []

        def before(ctx: Any) -> Any:
            seen.append((ctx.tool_call.id, ctx.args))
            if ctx.args.get("order") == 13:
                return BeforeToolCallResult(block=True, reason="unlucky")
            return None

        world = World(
            [
                calls(("refund", {"order": 1, "amount": 500}, "a")),
                calls(("refund", {"order": 2, "amount": 700}, "b")),
                faux_assistant_message("Both done."),
            ],
            hooks=AgentHooks(before_tool_call=before),
        )
        await world.agent.prompt("go")
        assert seen == []  # a waiting call meets before_tool_call when it runs
        second = await world.agent.resume({"a": edit({"order": 13, "amount": 5})})
        assert seen == [("a", {"order": 13, "amount": 5})]
        assert second.status == "approval_pending"
        assert [p.tool_call_id for p in second.pending_approvals] == ["b"]
        blocked = world.agent.state.messages[3]
        assert text(blocked).endswith("unlucky")
        third = await world.agent.resume({"b": approve()})
        assert third.text == "Both done."
        assert world.ran == [("refund", {"order": 2, "amount": 700})]

    run_on("trio", scenario)


def test_an_edit_that_the_schema_refuses_is_an_error_before_the_run() -> None:
    async def scenario() -> None:
        world = World(
            [calls(("refund", {"order": 1, "amount": 500}, "a")), faux_assistant_message("ok")]
        )
        await world.agent.prompt("go")
        world.events.clear()
        with pytest.raises(
            ResumeError, match=r"(?s)edit\(\.\.\.\) for call 'a' \(refund\): .*order: missing"
        ):
            await world.agent.resume({"a": edit({"amount": "lots"})})
        assert world.events == []
        assert world.ran == []
        with pytest.raises(TypeError, match=r"the decision for 'a' is True; use approve\(\)"):
            await world.agent.resume({"a": True})  # type: ignore[dict-item]
        # still paused, and resumable
        assert (await world.agent.resume({"a": approve()})).ok

    run_on("trio", scenario)


# --------------------------------------------------------------------------- refusing to resume


def paused_world() -> World:
    return World(
        [
            faux_assistant_message("Hello."),
            calls(("lookup", {"order": 5}, "a"), ("refund", {"order": 5, "amount": 500}, "b")),
            faux_assistant_message("Refunded."),
            faux_assistant_message("Something else."),
        ]
    )


async def pause(world: World) -> None:
    await world.agent.prompt("Hi")
    result = await world.agent.prompt("Refund 5")
    assert result.status == "approval_pending"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda m: m.append(UserMessage(content="and more", timestamp=1)),
            r"1 message\(s\) \(user\) were added after the paused turn",
        ),
        (
            lambda m: m[4].content.append(TextContent(text="extra")),
            r"the paused answer \(message 4, whose tool calls wait\) was edited",
        ),
        (
            lambda m: m.pop(5),
            r"call 'a' \(lookup\) of the paused answer has no result",
        ),
        (
            lambda m: m.insert(6, m[5]),
            r"call 'a' \(lookup\) of the paused answer has 2 results",
        ),
        (
            lambda m: m.append(
                ToolResultMessage(tool_call_id="zz", tool_name="x", content=[], is_error=False)
            ),
            r"a result for call 'zz' follows the paused answer \(message 4\), which made no",
        ),
        (lambda m: m.pop(6), r"no tool call is waiting for approval"),
    ],
)
async def test_a_resume_after_the_transcript_changed_is_refused_naming_the_change(
    change: Callable[[list[Any]], Any], expected: str
) -> None:
    world = paused_world()
    await pause(world)
    change(world.agent.state.messages)
    world.events.clear()
    with pytest.raises(ResumeError, match=expected):
        await world.agent.resume({"b": approve()})
    assert world.events == []
    assert world.ran == [("lookup", {"order": 5})]


async def test_history_before_the_paused_answer_may_change_and_the_run_still_resumes() -> None:
    world = paused_world()
    await pause(world)
    messages = world.agent.state.messages
    # redacted, then compacted: the decisions are about the paused answer's calls
    messages[1] = UserMessage(content="[redacted]", timestamp=1)
    del messages[2:4]
    messages.insert(1, UserMessage(content="Summary of earlier turns.", timestamp=1))
    result = await world.agent.resume({"b": approve()})
    assert result.text == "Refunded."
    one_result_per_call(world.agent.state.messages)


async def test_a_run_whose_hook_replaces_the_context_pauses_and_resumes() -> None:
    def window(turn: Any) -> Any:  # a sliding window: the model sees the last messages
        messages = turn.context.messages
        return {"context": AgentContext(messages=messages[-3:], tools=turn.context.tools)}

    world = World(
        [
            faux_assistant_message("Hello."),
            calls(("lookup", {"order": 5}, "a")),
            calls(("refund", {"order": 5, "amount": 500}, "b")),
            faux_assistant_message("Refunded."),
        ],
        hooks=AgentHooks(prepare_next_turn=window),
    )
    await world.agent.prompt("Hi")
    result = await world.agent.prompt("Look up and refund 5")
    assert [p.tool_call_id for p in result.pending_approvals] == ["b"]
    result = await world.agent.resume({"b": approve()})
    assert result.text == "Refunded."
    assert len(world.contexts[-1].messages) < len(world.agent.state.messages)


async def test_prompting_while_paused_goes_on_without_the_call_and_resume_then_names_why() -> None:
    world = paused_world()
    await pause(world)
    await world.agent.prompt("Never mind.")
    with pytest.raises(
        TranscriptChangedError, match=r"2 message\(s\) \(user, assistant\) were added"
    ):
        await world.agent.resume({"b": approve()})
    # the model saw the placeholder as the call's result
    seen = world.contexts[-1].messages
    assert text(seen[-2]) == 'Tool call "refund" is waiting for approval; it has not run.'


async def test_nothing_to_resume() -> None:
    world = paused_world()
    with pytest.raises(
        ResumeError, match=r"no tool call is waiting for approval; resume\(\) continues"
    ):
        await world.agent.resume({})
    with pytest.raises(TypeError, match=r"takes a dict from call id"):
        await pause(world) or await world.agent.resume([("b", approve())])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- abort and cancellation


@pytest.mark.parametrize("backend", BACKENDS)
def test_abort_while_paused_does_nothing_and_the_run_still_resumes(backend: str) -> None:
    async def scenario() -> None:
        world = paused_world()
        await pause(world)
        before = messages_to_json(world.agent.state.messages)
        world.agent.abort("stop")
        world.agent.abort()
        await world.agent.wait_for_idle()
        assert messages_to_json(world.agent.state.messages) == before
        assert (await world.agent.resume({"b": approve()})).text == "Refunded."

    run_on(backend, scenario)


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_abort_while_a_resumed_call_runs_gives_it_the_aborted_result_in_its_place(
    backend: str, mode: str
) -> None:
    async def scenario() -> None:
        started = anyio.Event()

        async def slow(tool_call_id: str, params: Any) -> str:
            started.set()
            await anyio.sleep_forever()
            return "never"

        gate = AgentTool(
            name="gate",
            description="d",
            parameters={"type": "object"},
            execute=slow,
            needs_approval=True,
        )
        faux = FauxProvider()
        faux.set_responses(
            [calls(("gate", {}, "g"), ("gate", {}, "h")), faux_assistant_message("x")]
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[gate], tool_execution=mode)
        events: list[Any] = []
        agent.subscribe(events.append)
        await agent.prompt("go")
        events.clear()
        async with anyio.create_task_group() as group:

            async def abort_when_started() -> None:
                await started.wait()
                agent.abort()

            group.start_soon(abort_when_started)
            result = await agent.resume({"g": approve(), "h": deny("no")})
        assert result.status == "aborted"
        assert result.pending_approvals == ()
        results = [
            (m.tool_call_id, text(m)) for m in agent.state.messages if m.role == "toolResult"
        ]
        assert results == [("g", "Operation aborted"), ("h", "no")]
        one_result_per_call(agent.state.messages)
        types = [e.type for e in events]
        assert types[0] == "agent_start"
        assert types[-1] == "agent_end"
        assert types.count("tool_execution_start") == types.count("tool_execution_end") == 2
        assert faux.state.call_count == 1
        assert not agent.state.is_streaming
        assert agent.state.pending_tool_calls == frozenset()

    run_on(backend, scenario)


async def test_an_abort_on_the_resumed_turns_start_closes_its_batch_and_the_turn() -> None:
    world = paused_world()
    await pause(world)
    world.events.clear()
    world.agent.subscribe(lambda e: world.agent.abort() if e.type == "turn_start" else None)
    result = await world.agent.resume({"b": approve()})
    assert result.status == "aborted"
    types = world.types()
    assert types == [
        "agent_start",
        "turn_start",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    refund = world.agent.state.messages[6]
    assert (refund.tool_call_id, text(refund)) == ("b", "Operation aborted")
    assert world.ran == [("lookup", {"order": 5})]


async def test_an_abort_before_the_resumed_turn_starts_leaves_the_pause_as_it_was() -> None:
    world = paused_world()
    await pause(world)
    before = messages_to_json(world.agent.state.messages)
    unsubscribe = world.agent.subscribe(
        lambda e: world.agent.abort() if e.type == "agent_start" else None
    )
    result = await world.agent.resume({"b": approve()})
    unsubscribe()
    assert result.status == "aborted"
    assert messages_to_json(world.agent.state.messages) == before
    assert [p.tool_call_id for p in result.pending_approvals] == ["b"]
    assert (await world.agent.resume({"b": approve()})).text == "Refunded."


async def test_the_callers_cancellation_during_a_resume_leaves_one_result_per_call() -> None:
    world = paused_world()
    await pause(world)
    # the resumed refund waits at its checkpoint when the caller's deadline passes
    with anyio.CancelScope() as scope:
        world.agent.subscribe(
            lambda e: scope.cancel() if e.type == "tool_execution_start" else None
        )
        await world.agent.resume({"b": approve()})
    assert scope.cancelled_caught
    one_result_per_call(world.agent.state.messages)
    assert world.types()[-1] == "agent_end"
    assert not world.agent.state.is_streaming
    assert not any(is_approval_placeholder(m) for m in world.agent.state.messages)
    refund = world.agent.state.messages[6]
    assert (refund.tool_call_id, text(refund)) == ("b", "Operation aborted")


def test_a_decision_is_json() -> None:
    for decision in (approve(), deny("no"), edit({"a": [1]})):
        assert msgspec.json.decode(msgspec.json.encode(decision), type=type(decision)) == decision
    assert msgspec.json.encode(edit({"a": 1})) == b'{"action":"edit","arguments":{"a":1}}'
