"""Durable runs in one process, on DBOS with SQLite and asyncio: the steps a run records,
replay without the model or the tools (a forked workflow replays the recorded steps),
DBOS cancellation and abort with the abort contract, external cancellation leaving the run
resumable, durable steering in order. Process death is in ``test_durable_crash``."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest
from dbos import DBOS

from pi_trio.agent import Agent, AgentTool, AgentToolResult, FallbackPolicy, RunLimits, tool
from pi_trio.agent.hooks import BeforeToolCallResult
from pi_trio.ai import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    messages_to_json,
)
from pi_trio.ai.providers import MessageFold, now_ms
from pi_trio.durable import (
    LOOK_STEP,
    MODEL_STEP,
    TOOL_STARTED_STEP,
    TOOL_STEP,
    DurableAgent,
    interrupted_text,
    replay_events,
)
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

_names = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def dbos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    path = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    DBOS(
        config={
            "name": "pi-trio-durable-tests",
            "system_database_url": f"sqlite:///{path}",
            "log_level": "ERROR",
        }
    )
    DBOS.launch()
    yield
    DBOS.destroy()


def durable(factory: Callable[[], Agent]) -> DurableAgent:
    return DurableAgent(f"test-{next(_names)}", factory)


SCENARIO_TIMEOUT_S = 60.0
"""A scenario that waits longer has hung (a repeated tool blocking on its gate): it fails."""


def on_asyncio(fn: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(fn(), SCENARIO_TIMEOUT_S)

    return asyncio.run(bounded())


def normalized(messages: list[Any]) -> Any:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("timestamp", "durationMs")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(messages_to_json(messages)))


def schema(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {n: {"type": "integer"} for n in names}}


# --------------------------------------------------------------------------- replay events


def _message(content: list[Any], stop: str = "stop", **fields: Any) -> AssistantMessage:
    return AssistantMessage(
        content=content,
        api="faux",
        provider="faux",
        model="faux-1",
        usage=Usage(input=3, output=5, total_tokens=8),
        stop_reason=stop,  # type: ignore[arg-type]
        timestamp=now_ms(),
        **fields,
    )


@pytest.mark.parametrize(
    "message",
    [
        _message(
            [
                ThinkingContent(thinking="Let me see.", thinking_signature="sig"),
                TextContent(text="Calling.", text_signature="t1"),
                ToolCall(id="c1", name="add", arguments={"a": 1, "b": [2, {"c": "é"}]}),
            ],
            "toolUse",
        ),
        _message(
            [
                ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
                ToolCall(
                    id="c2", name="f", arguments={}, thought_signature="ts", namespace="mcp.x"
                ),
            ],
            "toolUse",
        ),
        _message([TextContent(text="")]),
        _message([TextContent(text="partial")], "aborted", error_message="Request was aborted"),
        _message([], "error", error_message="429 rate limited"),
    ],
)
def test_replay_events_rebuild_the_recorded_message_exactly(message):
    faux = FauxProvider()
    events = replay_events(message, faux.get_model())
    fold = MessageFold()
    for event in events:
        fold.apply(event)  # a protocol violation raises
    assert fold.result is message
    # what listeners see while a resumed run replays: the blocks with every field
    assert events[-2].partial.content == message.content
    assert events[0].type == "start"
    assert events[-1].type == ("done" if message.stop_reason in ("stop", "toolUse") else "error")


# --------------------------------------------------------------------------- steps and replay


def _scripted_run() -> tuple[Callable[[], Agent], FauxProvider, list[str]]:
    """Request 1 calls three tools in parallel (one raises, one times out), request 2
    answers. Tools count their executions in ``runs``."""
    runs: list[str] = []
    faux = FauxProvider(api="faux-steps", token_size=(2, 3))

    @tool
    async def add(a: int, b: int) -> str:
        """Add."""
        runs.append("add")
        await anyio.lowlevel.checkpoint()
        return str(a + b)

    async def fail(tool_call_id: str, params: Any) -> Any:
        runs.append("fail")
        raise RuntimeError("the disk is full")

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        runs.append("hang")
        on_update(AgentToolResult(content=[TextContent(text="waiting")]))
        await anyio.Event().wait()

    tools = [
        add,
        AgentTool(name="fail", description="Fails.", parameters=schema(), execute=fail),
        AgentTool(
            name="hang", description="Hangs.", parameters=schema(), execute=hang, timeout=0.05
        ),
    ]

    def build() -> Agent:
        faux.set_responses(
            [
                faux_assistant_message(
                    [
                        faux_text("Three at once."),
                        faux_tool_call("add", {"a": 2, "b": 3}, id="t-add"),
                        faux_tool_call("fail", {}, id="t-fail"),
                        faux_tool_call("hang", {}, id="t-hang"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message("5, a full disk and a timeout."),
            ]
        )
        return Agent(model=faux.get_model(), tools=tools, stream_fn=faux)

    return build, faux, runs


def test_each_request_and_each_tool_call_is_recorded_as_steps_in_source_order():
    build, faux, runs = _scripted_run()
    agent = durable(build)

    async def scenario() -> tuple[Any, list[tuple[int, str]], list[Any]]:
        result = await agent.run("Do three things.")
        steps = await DBOS.list_workflow_steps_async(result.workflow_id)
        outputs = [s["output"] for s in steps]
        return result, [(s["function_id"], s["function_name"]) for s in steps], outputs

    result, operations, outputs = on_asyncio(scenario)
    # every operation the run recorded: nobody sent it a message, so it never took any
    # (no DBOS.recv); step id 1 is drawn and unused (older versions recorded RUN_STEP)
    assert operations == [
        (2, MODEL_STEP),
        (3, f"{TOOL_STARTED_STEP}:add"),
        (4, f"{TOOL_STEP}:add"),
        (5, f"{TOOL_STARTED_STEP}:fail"),
        (6, f"{TOOL_STEP}:fail"),
        (7, f"{TOOL_STARTED_STEP}:hang"),
        (8, f"{TOOL_STEP}:hang"),
        (9, MODEL_STEP),
        (10, LOOK_STEP),
    ]
    # which steps read the mark of the last message sent: not the request that called
    # the tools (their steps read it later in the turn), every other step (no mark: null)
    recorded = [json.loads(o) if isinstance(o, str) else o for o in outputs]
    # the started marker records only that the call started
    assert [r.get("sent", "unread") if isinstance(r, dict) else r for r in recorded] == [
        "unread",
        *[True, None] * 3,
        None,
        None,
    ]
    assert recorded[0]["looked"] is False
    results = {m.tool_call_id: m for m in result.messages if m.role == "toolResult"}
    assert results["t-add"].content[0].text == "5"
    assert results["t-fail"].is_error
    assert results["t-fail"].content[0].text == "the disk is full"
    assert results["t-hang"].content[0].text == 'Tool "hang" timed out after 0.05s'
    assert result.stop_reason == "stop"
    assert result.new_messages == result.messages[-len(result.new_messages) :]
    assert [m.role for m in result.new_messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert faux.call_count == 2
    assert sorted(runs) == ["add", "fail", "hang"]


def test_a_call_of_a_tool_safe_to_replay_is_one_step_at_the_ids_it_always_had():
    runs: list[str] = []

    async def look(tool_call_id: str, params: Any) -> str:
        runs.append("look")
        return "seen"

    async def pay(tool_call_id: str, params: Any) -> str:
        runs.append("pay")
        return "paid"

    tools = [
        AgentTool(
            name="look", description="Look.", parameters=schema(), execute=look, replay="safe"
        ),
        AgentTool(name="pay", description="Pay.", parameters=schema(), execute=pay),
    ]

    def build() -> Agent:
        faux = FauxProvider(api="faux-safe")
        faux.set_responses(
            [
                faux_assistant_message(
                    [
                        faux_tool_call("look", {}, id="t-look"),
                        faux_tool_call("pay", {}, id="t-pay"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message("Looked and paid."),
            ]
        )
        return Agent(model=faux.get_model(), tools=tools, stream_fn=faux)

    async def scenario() -> tuple[Any, list[tuple[int, str]]]:
        result = await durable(build).run("Look, then pay.")
        steps = await DBOS.list_workflow_steps_async(result.workflow_id)
        return result, [(s["function_id"], s["function_name"]) for s in steps]

    result, operations = on_asyncio(scenario)
    # "look" runs again after a crash anyway: no started marker, whose id (3) stays drawn
    # so that runs recorded with one resume at the same ids
    assert operations == [
        (2, MODEL_STEP),
        (4, f"{TOOL_STEP}:look"),
        (5, f"{TOOL_STARTED_STEP}:pay"),
        (6, f"{TOOL_STEP}:pay"),
        (7, MODEL_STEP),
        (8, LOOK_STEP),
    ]
    assert sorted(runs) == ["look", "pay"]
    texts = [m.content[0].text for m in result.messages if m.role == "toolResult"]
    assert texts == ["seen", "paid"]


def test_the_run_keeps_every_field_of_a_tool_but_its_execution():
    built: list[Agent] = []

    async def lookup(tool_call_id: str, params: Any) -> Any:
        return {"content": [{"type": "text", "text": "found"}], "structuredContent": {"n": 1}}

    original = AgentTool(
        name="lookup",
        label="Look up",
        description="Look up.",
        parameters=schema(),
        execute=lookup,
        prepare_arguments=dict,
        execution_mode="sequential",
        timeout=5,
        replay="safe",
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    )

    def build() -> Agent:
        faux = FauxProvider(api="faux-fields")
        faux.set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("lookup", {}, id="t-1")], stop_reason="toolUse"
                ),
                faux_assistant_message("Found."),
            ]
        )
        built.append(Agent(model=faux.get_model(), tools=[original], stream_fn=faux))
        return built[-1]

    result = on_asyncio(lambda: durable(build).run("Look it up."))
    (used,) = built[0].state.tools
    assert used is not original
    assert used.execute is not original.execute
    for field in AgentTool.__slots__:
        if field not in ("execute", "timeout"):
            assert getattr(used, field) == getattr(original, field), field
    (tool_result,) = [m for m in result.messages if m.role == "toolResult"]
    assert tool_result.content[0].text == "found"


def test_a_replayed_run_calls_neither_the_model_nor_the_tools_and_ends_the_same():
    build, faux, runs = _scripted_run()
    agent = durable(build)
    seen: list[tuple[str, bool]] = []
    agent.subscribe(lambda event, info: seen.append((event.type, info.replayed)), replayed=True)
    skipped: list[str] = []
    agent.subscribe(lambda event: skipped.append(event.type))

    async def scenario() -> tuple[Any, Any]:
        first = await agent.run("Do three things.")
        steps = await DBOS.list_workflow_steps_async(first.workflow_id)
        last = max(s["function_id"] for s in steps if s["function_name"] == MODEL_STEP)
        # a fork re-executes the workflow with every step before ``last + 1`` recorded
        seen.clear()
        skipped.clear()
        handle = await DBOS.fork_workflow_async(first.workflow_id, last + 1)
        forked = await (await agent.retrieve(handle.get_workflow_id())).result(poll_interval=0.05)
        return first, forked

    first, forked = on_asyncio(scenario)
    assert faux.call_count == 2
    assert sorted(runs) == ["add", "fail", "hang"]
    assert normalized(forked.messages) == normalized(first.messages)
    # the listener that asked for replays got the whole run again, marked replayed
    assert seen[0] == ("agent_start", True)
    assert seen[-1] == ("agent_end", True)
    assert ("tool_execution_end", True) in seen
    assert all(replayed for _, replayed in seen)
    # the default listener got none of it: everything came from recorded steps
    assert skipped == []


# --------------------------------------------------------------------------- cancel and abort


class Gate:
    """An ``anyio.Event`` made in the event loop that uses it (``open()`` there)."""

    def __init__(self) -> None:
        self.event: anyio.Event | None = None

    def open(self) -> anyio.Event:
        self.event = anyio.Event()
        return self.event

    def set(self) -> None:
        if self.event is not None:
            self.event.set()


def _blocking_run(started: Gate) -> Callable[[], Agent]:
    """Request 1 calls ``wait`` (which blocks until cancelled), request 2 answers."""

    async def wait(tool_call_id: str, params: Any) -> str:
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        # answers from the transcript alone: a resumed run builds a new provider
        if context.messages[-1].role == "user":
            return faux_assistant_message(
                [faux_text("Waiting."), faux_tool_call("wait", {}, id="t-wait")],
                stop_reason="toolUse",
            )
        return faux_assistant_message("Gave up waiting.")

    def build() -> Agent:
        faux = FauxProvider(api="faux-block")
        faux.set_responses([reply, reply])
        tools = [AgentTool(name="wait", description="Wait.", parameters=schema(), execute=wait)]
        return Agent(model=faux.get_model(), tools=tools, stream_fn=faux)

    return build


def test_cancel_workflow_aborts_the_run_with_the_abort_contract_and_resume_continues_it():
    started = Gate()
    agent = durable(_blocking_run(started))
    events: list[str] = []
    agent.subscribe(lambda event: events.append(event.type))

    async def scenario() -> tuple[Any, str, Any]:
        opened = started.open()
        run = await agent.start("Wait for it.")
        await opened.wait()
        await agent.cancel(run.workflow_id)
        aborted = await run.result()
        status = await run.status()
        await DBOS.resume_workflow_async(run.workflow_id)
        resumed = await (await agent.retrieve(run.workflow_id)).result(poll_interval=0.05)
        return aborted, status, resumed

    aborted, status, resumed = on_asyncio(scenario)
    assert aborted.cancelled
    assert status == "CANCELLED"
    last = aborted.messages[-1]
    assert last.role == "toolResult"
    assert last.is_error
    assert last.content[0].text == "Operation aborted"
    assert events[events.index("tool_execution_start") :][:6] == [
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    # resumed from its last completed step: the interrupted "never" tool is not repeated
    assert not resumed.cancelled
    results = [m for m in resumed.messages if m.role == "toolResult"]
    assert [r.content[0].text for r in results] == [interrupted_text("wait")]
    assert resumed.messages[-1].content[0].text == "Gave up waiting."


def test_abort_ends_a_run_in_this_process_and_records_the_aborted_transcript():
    started = Gate()
    agent = durable(_blocking_run(started))

    async def scenario() -> Any:
        opened = started.open()
        run = await agent.start("Wait for it.")
        await opened.wait()
        await agent.follow_up(run.workflow_id, "after that")
        await agent.steer(run.workflow_id, "hurry up")
        assert agent.abort(run.workflow_id)
        assert not agent.abort("no-such-run")
        result = await run.result()
        assert await run.status() == "SUCCESS"
        return result

    result = on_asyncio(scenario)
    assert not result.cancelled
    assert result.messages[-1].content[0].text == "Operation aborted"
    assert result.stop_reason == "toolUse"
    # not delivered, not lost: steering first, then follow-ups, as an agent's queues
    assert [m.content[0].text for m in result.queued] == ["hurry up", "after that"]


def test_abort_while_the_model_streams_keeps_the_partial_answer():
    streaming = Gate()

    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        from pi_trio.ai.providers import MessageBuilder

        builder = MessageBuilder(model)
        await send.send(builder.start())
        start = builder.text_start()
        await send.send(start)
        await send.send(builder.text_delta(start.content_index, "Hel"))
        streaming.set()
        await anyio.sleep_forever()

    agent = durable(lambda: Agent(model=FauxProvider().get_model(), stream_fn=slow))

    async def scenario() -> Any:
        opened = streaming.open()
        run = await agent.start("Say hello.")
        await opened.wait()
        agent.abort(run.workflow_id)
        return await run.result()

    result = on_asyncio(scenario)
    last = result.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.content[0].text == "Hel"


def test_cancel_workflow_while_the_model_streams_ends_with_the_partial_answer_aborted():
    streaming = Gate()

    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        from pi_trio.ai.providers import MessageBuilder

        builder = MessageBuilder(model)
        await send.send(builder.start())
        start = builder.text_start()
        await send.send(start)
        await send.send(builder.text_delta(start.content_index, "Hel"))
        streaming.set()
        await anyio.sleep_forever()

    agent = durable(lambda: Agent(model=FauxProvider().get_model(), stream_fn=slow))
    events: list[str] = []
    agent.subscribe(lambda event: events.append(event.type))

    async def scenario() -> tuple[Any, str]:
        opened = streaming.open()
        run = await agent.start("Say hello.")
        await opened.wait()
        await agent.cancel(run.workflow_id)
        return await run.result(), await run.status()

    result, status = on_asyncio(scenario)
    assert result.cancelled
    assert status == "CANCELLED"
    last = result.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.content[0].text == "Hel"
    assert events[-4:] == ["message_update", "message_end", "turn_end", "agent_end"]


def test_external_cancellation_delivers_the_closing_events_and_leaves_the_run_resumable():
    started = Gate()
    agent = durable(_blocking_run(started))
    events: list[str] = []
    agent.subscribe(lambda event: events.append(event.type))
    workflow: list[str] = []

    async def interrupted() -> None:
        opened = started.open()
        run = await agent.start("Wait for it.")
        workflow.append(run.workflow_id)
        await opened.wait()
        # asyncio.run cancels the still running workflow task when this returns

    on_asyncio(interrupted)
    assert events[-3:] == ["message_end", "turn_end", "agent_end"]

    async def resume() -> Any:
        assert (await DBOS.get_workflow_status_async(workflow[0])).status == "PENDING"
        await DBOS.resume_workflow_async(workflow[0])
        return await (await agent.retrieve(workflow[0])).result(poll_interval=0.05)

    resumed = on_asyncio(resume)
    assert resumed.messages[-1].content[0].text == "Gave up waiting."


# --------------------------------------------------------------------------- steering


def test_steering_and_follow_ups_sent_to_a_run_arrive_in_order():
    release = Gate()
    started = Gate()

    async def wait(tool_call_id: str, params: Any) -> str:
        started.set()
        assert release.event is not None
        await release.event.wait()
        return "waited"

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        last = context.messages[-1]
        if last.role == "user" and len(context.messages) == 2:
            return faux_assistant_message(
                [faux_tool_call("wait", {}, id="t-wait")], stop_reason="toolUse"
            )
        return faux_assistant_message(f"ok {len(context.messages)}")

    def build() -> Agent:
        faux = FauxProvider(api="faux-steer")
        faux.set_responses([reply] * 8)
        tools = [AgentTool(name="wait", description="Wait.", parameters=schema(), execute=wait)]
        return Agent(model=faux.get_model(), tools=tools, stream_fn=faux)

    agent = durable(build)

    async def scenario() -> Any:
        opened = started.open()
        release.open()
        run = await agent.start("Start.")
        await opened.wait()
        await agent.steer(run.workflow_id, "first steer")
        await agent.follow_up(run.workflow_id, "the follow-up")
        await agent.steer(run.workflow_id, "second steer")
        release.set()
        result = await run.result()
        steps = await DBOS.list_workflow_steps_async(result.workflow_id)
        return result, [s["function_name"] for s in steps]

    result, operations = on_asyncio(scenario)
    users = [m.content[0].text for m in result.messages if m.role == "user"]
    assert users == ["Start.", "first steer", "second steer", "the follow-up"]
    assert result.queued == []
    assert result.messages[-1].role == "assistant"
    # the tool's step saw the messages sent while it ran: the run took them after that
    # turn (three messages, then an empty queue), and after no other
    take = ["DBOS.recv", "DBOS.sleep"]
    assert operations == [
        MODEL_STEP,
        f"{TOOL_STARTED_STEP}:wait",
        f"{TOOL_STEP}:wait",
        *take * 4,
        *[MODEL_STEP] * 3,  # one steering message a turn, then the follow-up
        LOOK_STEP,
    ]


def test_a_turn_whose_calls_all_ran_no_step_looks_for_messages_in_a_step_of_its_own():
    # the request that calls tools leaves reading the mark to the calls' steps; here the
    # hook blocks the only call, so no step of the turn read it
    blocking = Gate()
    release = Gate()
    contexts: list[list[str]] = []

    async def block(context: Any, signal: Any) -> BeforeToolCallResult:
        blocking.set()
        assert release.event is not None
        await release.event.wait()
        return BeforeToolCallResult(block=True, reason="not now")

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        users = [m.content[0].text for m in context.messages if m.role == "user"]
        contexts.append(users)
        if not any(m.role == "assistant" for m in context.messages):
            return faux_assistant_message(
                [faux_tool_call("pay", {}, id="t-pay")], stop_reason="toolUse"
            )
        return faux_assistant_message(f"ok {len(context.messages)}")

    async def pay(tool_call_id: str, params: Any) -> str:
        raise AssertionError("the hook blocks every call")

    def build() -> Agent:
        faux = FauxProvider(api="faux-blocked")
        faux.set_responses([reply] * 4)
        tools = [AgentTool(name="pay", description="Pay.", parameters=schema(), execute=pay)]
        return Agent(model=faux.get_model(), tools=tools, stream_fn=faux, before_tool_call=block)

    agent = durable(build)

    async def scenario() -> tuple[Any, Any, list[str]]:
        opened = blocking.open()
        release.open()
        run = await agent.start("Pay.")
        await opened.wait()
        await agent.steer(run.workflow_id, "steer")
        release.set()
        first = await run.result()
        steps = await DBOS.list_workflow_steps_async(first.workflow_id)
        # a fork from the last operation replays every decision to look and to take
        handle = await DBOS.fork_workflow_async(first.workflow_id, steps[-1]["function_id"])
        forked = await (await agent.retrieve(handle.get_workflow_id())).result(poll_interval=0.05)
        return first, forked, [s["function_name"] for s in steps]

    first, forked, operations = on_asyncio(scenario)
    # the second request saw the steering message: taken right after the blocked turn
    assert contexts[:2] == [["Pay."], ["Pay.", "steer"]]
    assert operations == [
        MODEL_STEP,
        LOOK_STEP,  # the blocked turn's own look: it saw the steering message
        "DBOS.recv",
        "DBOS.sleep",
        "DBOS.recv",
        "DBOS.sleep",
        MODEL_STEP,
        LOOK_STEP,  # the end of the run
    ]
    assert len(contexts) == 2  # the fork called the model for no request
    assert normalized(forked.messages) == normalized(first.messages)


def test_a_message_sent_after_the_last_turn_is_reported_queued_not_left_unread():
    at_end = Gate()
    release = Gate()

    def build() -> Agent:
        faux = FauxProvider(api="faux-late")
        faux.set_responses([faux_assistant_message("Done.")])
        return Agent(model=faux.get_model(), stream_fn=faux)

    agent = durable(build)

    async def hold_at_end(event: Any) -> None:
        # the run has looked for messages for the last time; it waits for this listener
        if event.type == "agent_end":
            at_end.set()
            assert release.event is not None
            await release.event.wait()

    agent.subscribe(hold_at_end)

    async def scenario() -> Any:
        ended = at_end.open()
        release.open()
        run = await agent.start("Answer once.")
        await ended.wait()
        await agent.follow_up(run.workflow_id, "too late")
        release.set()
        return await run.result()

    result = on_asyncio(scenario)
    assert [m.role for m in result.new_messages] == ["user", "assistant"]
    assert [m.content[0].text for m in result.queued] == ["too late"]


# --------------------------------------------------------------------------- fallback and limits


def test_a_resumed_run_keeps_its_fallback_position_and_its_limit_counters():
    """The fallback decision and the limit counters come from the responses, which a
    resumed run replays from its steps: forked after the primary's recorded failure, the
    run asks the backup (not the primary) and stops at the same limit."""
    asked: list[str] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        asked.append(model.id)
        if model.id == "primary":
            return faux_assistant_message(
                "", stop_reason="error", error_message="529 overloaded_error: Overloaded"
            )
        turn = sum(1 for m in context.messages if m.role == "toolResult")
        call = faux_tool_call("add", {"a": turn, "b": 1}, id=f"t-{turn}")
        return faux_assistant_message([call], stop_reason="toolUse")

    @tool
    async def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    def build() -> Agent:
        faux = FauxProvider(api="faux-fallback", models=[{"id": "primary"}, {"id": "backup"}])
        faux.set_responses([reply] * 4)
        return Agent(
            model=faux.get_model("primary"),
            tools=[add],
            stream_fn=faux,
            fallback=FallbackPolicy(models=[faux.get_model("backup")]),  # type: ignore[list-item]
            limits=RunLimits(max_requests=3),
        )

    agent = durable(build)

    async def scenario() -> tuple[Any, Any]:
        first = await agent.run("Count.")
        steps = await DBOS.list_workflow_steps_async(first.workflow_id)
        model_steps = sorted(s["function_id"] for s in steps if s["function_name"] == MODEL_STEP)
        assert len(model_steps) == 3
        asked.clear()
        # every step before the backup's first request is recorded: the primary's failure
        handle = await DBOS.fork_workflow_async(first.workflow_id, model_steps[1])
        forked = await (await agent.retrieve(handle.get_workflow_id())).result(poll_interval=0.05)
        return first, forked

    first, forked = on_asyncio(scenario)
    assert asked == ["backup", "backup"]  # the replayed failure fell through again
    assert normalized(forked.messages) == normalized(first.messages)
    answers = [m for m in forked.messages if m.role == "assistant"]
    assert [(m.model, m.stop_reason) for m in answers] == [
        ("backup", "toolUse"),
        ("backup", "toolUse"),
        ("backup", "aborted"),
    ]
    assert answers[-1].error_message == (
        "Run limit exceeded: RunLimits(max_requests=3); 3 requests made"
    )
