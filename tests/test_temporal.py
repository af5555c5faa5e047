"""Temporal runs with the worker in this process, on a dev server the session started
(``temporal_address``): the activities a run records, events reaching listeners from the
activities in the order an agent in one process delivers them, replay without the model or
the tools (a worker that keeps no workflow in its cache replays the whole history at every
step, and Temporal's ``Replayer`` checks the workflow is deterministic), cancellation as
the abort contract, steering and follow-ups as signals. Worker death is in
``test_temporal_crash``."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anyio
import pytest

pytest.importorskip("temporalio")  # the `temporal` extra; `make test` installs it

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import RetryPolicy
from temporalio.worker import Replayer

from pi_trio.agent import Agent, AgentTool, AgentToolResult, RunLimits, RunPolicy, tool
from pi_trio.agent.extend import run_limit_details
from pi_trio.ai import StreamOptions, TextContent, messages_to_json
from pi_trio.ai.providers import MessageBuilder
from pi_trio.temporal import (
    DELIVER_ACTIVITY,
    MODEL_ACTIVITY,
    TOOL_ACTIVITY,
    TemporalAgent,
)
from pi_trio.temporal._codec import (
    REQUEST_OPTION_FIELDS,
    WORKER_OPTION_FIELDS,
    decode_event,
    decode_options,
    encode_options,
    event_json,
)
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

_names = itertools.count()
SCENARIO_TIMEOUT_S = 60.0
"""A scenario that waits longer has hung (a repeated tool blocking on its gate): it fails."""


def temporal_agent(factory: Callable[[], Agent]) -> TemporalAgent:
    n = next(_names)
    return TemporalAgent(
        f"test-{n}",
        factory,
        task_queue=f"pi-trio-test-{n}",
        heartbeat_timeout=timedelta(seconds=2),
        retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=100)),
    )


def with_worker(
    address: str, agent: TemporalAgent, scenario: Callable[[Client], Any], **worker: Any
) -> Any:
    """Run ``scenario(client)`` on asyncio while a worker of ``agent`` runs."""

    async def main() -> Any:
        client = await Client.connect(address)
        async with agent.worker(client, **worker):
            return await scenario(client)

    async def bounded() -> Any:
        return await asyncio.wait_for(main(), SCENARIO_TIMEOUT_S)

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


async def activity_types(client: Client, workflow_id: str) -> list[str]:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


def payload_data(message: Any) -> bytes:
    """The data of every payload in a history event (a protobuf message), decoded."""
    if isinstance(message, Payload):
        return bytes(message.data)
    found: list[bytes] = []
    for _, value in message.ListFields():
        if hasattr(value, "ListFields"):
            values = [value]
        elif hasattr(value, "values"):  # a map field
            values = list(value.values())
        elif isinstance(value, (str, bytes, int, float, bool)):
            continue
        else:  # a repeated field
            values = list(value)
        found.extend(payload_data(v) for v in values if hasattr(v, "ListFields"))
    return b"\n".join(found)


# --------------------------------------------------------------------------- sans-IO


def test_every_stream_option_is_either_carried_by_the_request_or_taken_from_the_worker():
    assert sorted(REQUEST_OPTION_FIELDS + WORKER_OPTION_FIELDS) == sorted(
        StreamOptions.__struct_fields__
    )


def test_request_options_cross_without_secrets_and_take_the_workers_own():
    options = StreamOptions(
        api_key="sk-secret",
        headers={"x-key": "secret"},
        env={"KEY": "secret"},
        temperature=0.5,
        session_id="s-1",
        reasoning="high",
        max_retries=3,
    )
    raw = encode_options(options)
    assert b"secret" not in bytes(raw)
    worker = StreamOptions(api_key="sk-worker", headers={"x-key": "worker"})
    decoded = decode_options(raw, worker)
    assert decoded.api_key == "sk-worker"
    assert decoded.headers == {"x-key": "worker"}
    assert (decoded.temperature, decoded.session_id, decoded.reasoning, decoded.max_retries) == (
        0.5,
        "s-1",
        "high",
        3,
    )


def test_every_event_of_a_run_crosses_to_an_activity_unchanged():
    events: list[Any] = []
    faux = FauxProvider(api="faux-codec")
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text("Adding."), faux_tool_call("add", {"a": 1, "b": 2}, id="t-1")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("3"),
        ]
    )

    @tool
    async def add(a: int, b: int, on_update: Any) -> str:
        """Add."""
        on_update(AgentToolResult(content=[TextContent(text="working")], details={"n": 1}))
        return str(a + b)

    agent = Agent(model=faux.get_model(), tools=[add], stream_fn=faux)
    agent.subscribe(events.append)
    anyio.run(agent.prompt, "1 + 2?")
    kinds = {e.type for e in events}
    assert {"message_update", "tool_execution_update", "turn_end", "agent_end"} <= kinds
    for event in events:
        again = decode_event(event_json(event))
        assert type(again) is type(event)
        assert bytes(event_json(again)) == bytes(event_json(event))


def test_a_fallback_and_a_limit_hit_cross_to_an_activity_unchanged():
    events: list[Any] = []
    faux = FauxProvider(api="faux-codec", models=[{"id": "primary"}, {"id": "backup"}])
    faux.set_responses(
        [
            faux_assistant_message("", stop_reason="error", error_message="503 unavailable"),
            faux_assistant_message(
                [faux_tool_call("add", {"a": 1, "b": 2})], stop_reason="toolUse"
            ),
        ]
    )

    @tool
    async def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    agent = Agent(
        model=[faux.get_model("primary"), faux.get_model("backup")],  # type: ignore[list-item]
        tools=[add],
        stream_fn=faux,
        limits=RunLimits(max_requests=2),
    )
    agent.subscribe(events.append)
    anyio.run(agent.prompt, "1 + 2?")
    assert "model_fallback" in {e.type for e in events}
    assert run_limit_details(events[-1].messages[-1])["limit"] == "max_requests"
    for event in events:
        again = decode_event(event_json(event))
        assert type(again) is type(event)
        assert bytes(event_json(again)) == bytes(event_json(event))


# --------------------------------------------------------------------------- runs


def _scripted_run() -> tuple[Callable[[], Agent], FauxProvider, list[str]]:
    """Request 1 calls three tools (one raises, one times out), request 2 answers. Tools
    count their executions in ``runs``; ``add`` reports progress."""
    runs: list[str] = []
    faux = FauxProvider(api="faux-temporal", token_size=(3, 3))

    @tool
    async def add(a: int, b: int, on_update: Any) -> str:
        """Add."""
        runs.append("add")
        on_update(AgentToolResult(content=[TextContent(text="adding")]))
        await anyio.lowlevel.checkpoint()
        return str(a + b)

    async def fail(tool_call_id: str, params: Any) -> Any:
        runs.append("fail")
        raise RuntimeError("the disk is full")

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        runs.append("hang")
        await anyio.Event().wait()

    tools = [
        add,
        AgentTool(name="fail", description="Fails.", parameters=schema(), execute=fail),
        AgentTool(
            name="hang", description="Hangs.", parameters=schema(), execute=hang, timeout=0.05
        ),
    ]

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        if not any(m.role == "toolResult" for m in context.messages):
            return faux_assistant_message(
                [
                    faux_text("Three at once."),
                    faux_tool_call("add", {"a": 2, "b": 3}, id="t-add"),
                    faux_tool_call("fail", {}, id="t-fail"),
                    faux_tool_call("hang", {}, id="t-hang"),
                ],
                stop_reason="toolUse",
            )
        return faux_assistant_message("5, a full disk and a timeout.")

    faux.set_responses([reply] * 10)

    def build() -> Agent:
        return Agent(
            model=faux.get_model(), tools=tools, stream_fn=faux, tool_execution="sequential"
        )

    return build, faux, runs


def _in_process_events(build: Callable[[], Agent], prompt: str) -> list[str]:
    events: list[str] = []
    agent = build()
    agent.subscribe(lambda event: events.append(event.type))
    anyio.run(agent.prompt, prompt)
    return events


def test_a_run_records_each_request_and_tool_call_and_listeners_see_the_in_process_events(
    temporal_address,
):
    build, faux, runs = _scripted_run()
    expected = _in_process_events(build, "Do three things.")
    calls_before = faux.call_count
    runs.clear()
    agent = temporal_agent(build)
    seen: list[Any] = []
    agent.subscribe(lambda event, info: seen.append((event, info)))

    async def scenario(client: Client) -> tuple[Any, list[str]]:
        result = await agent.run(client, "Do three things.", workflow_id="scripted-1")
        return result, await activity_types(client, result.workflow_id)

    result, activities = with_worker(temporal_address, agent, scenario)
    name = agent.name
    assert activities == [
        f"{MODEL_ACTIVITY}:{name}",
        f"{TOOL_ACTIVITY}:{name}",
        f"{TOOL_ACTIVITY}:{name}",
        f"{TOOL_ACTIVITY}:{name}",
        f"{MODEL_ACTIVITY}:{name}",
        f"{DELIVER_ACTIVITY}:{name}",
    ]
    results = {m.tool_call_id: m for m in result.messages if m.role == "toolResult"}
    assert results["t-add"].content[0].text == "5"
    assert results["t-fail"].is_error
    assert results["t-fail"].content[0].text == "the disk is full"
    assert results["t-hang"].content[0].text == 'Tool "hang" timed out after 0.05s'
    assert result.stop_reason == "stop"
    assert not result.cancelled
    assert [m.role for m in result.new_messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert faux.call_count - calls_before == 2
    assert runs == ["add", "fail", "hang"]
    # every event once, in the order an agent in one process delivers them
    assert [event.type for event, _ in seen] == expected
    assert all(info.workflow_id == "scripted-1" and not info.replayed for _, info in seen)
    ends = [e for e, _ in seen if e.type == "message_end"]
    assert normalized([e.message for e in ends]) == normalized(result.new_messages)


def test_a_worker_that_caches_nothing_replays_every_step_without_the_model_or_the_tools(
    temporal_address,
):
    """With no workflow cache, every workflow task replays the history from the start:
    the model is asked twice, each tool runs once, each event reaches listeners once, and
    Temporal's ``Replayer`` finds the recorded history deterministic."""
    build, faux, runs = _scripted_run()
    expected = _in_process_events(build, "Do three things.")
    calls_before = faux.call_count
    runs.clear()
    agent = temporal_agent(build)
    seen: list[str] = []
    replays: list[bool] = []
    agent.subscribe(lambda event: seen.append(event.type))
    agent.subscribe(lambda event, info: replays.append(info.replayed), replayed=True)

    async def scenario(client: Client) -> Any:
        result = await agent.run(client, "Do three things.")
        history = await client.get_workflow_handle(result.workflow_id).fetch_history()
        await Replayer(workflows=[agent.workflow]).replay_workflow(history)
        return result

    result = with_worker(temporal_address, agent, scenario, max_cached_workflows=0)
    assert faux.call_count - calls_before == 2
    assert runs == ["add", "fail", "hang"]
    assert seen == expected
    # replays in the process that delivered the events are not delivered again
    assert replays == [False] * len(expected)
    assert result.messages[-1].content[0].text == "5, a full disk and a timeout."


def test_a_replayed_workflow_takes_the_same_fallback_and_stops_at_the_same_limit(
    temporal_address,
):
    """Without a workflow cache each workflow task replays the history from the start:
    the fallback and the limit counters come out of the recorded model activities, so the
    primary is asked once, the backup twice, and the run stops where it did in one
    process; ``Replayer`` finds the history deterministic."""
    asked: list[str] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        asked.append(model.id)
        if model.id == "primary":
            return faux_assistant_message("", stop_reason="error", error_message="503 unavailable")
        turn = sum(1 for m in context.messages if m.role == "toolResult")
        call = faux_tool_call("add", {"a": turn, "b": 1}, id=f"t-{turn}")
        return faux_assistant_message([call], stop_reason="toolUse")

    faux = FauxProvider(api="faux-chain", models=[{"id": "primary"}, {"id": "backup"}])
    faux.set_responses([reply] * 10)

    @tool
    async def add(a: int, b: int) -> str:
        """Add."""
        return str(a + b)

    def build() -> Agent:
        return Agent(
            model=[faux.get_model("primary"), faux.get_model("backup")],  # type: ignore[list-item]
            tools=[add],
            stream_fn=faux,
            limits=RunLimits(max_requests=3),
        )

    agent = temporal_agent(build)
    seen: list[str] = []
    agent.subscribe(lambda event: seen.append(event.type))

    async def scenario(client: Client) -> Any:
        result = await agent.run(client, "Count.")
        history = await client.get_workflow_handle(result.workflow_id).fetch_history()
        await Replayer(workflows=[agent.workflow]).replay_workflow(history)
        return result

    result = with_worker(temporal_address, agent, scenario, max_cached_workflows=0)
    assert asked == ["primary", "backup", "backup"]
    assert seen.count("model_fallback") == 1
    answers = [m for m in result.messages if m.role == "assistant"]
    assert [(m.model, m.stop_reason) for m in answers] == [
        ("backup", "toolUse"),
        ("backup", "toolUse"),
        ("backup", "aborted"),
    ]
    assert run_limit_details(answers[-1]) == {"limit": "max_requests", "maximum": 3, "spent": 3}


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
        if context.messages[-1].role == "user":
            return faux_assistant_message(
                [faux_text("Waiting."), faux_tool_call("wait", {}, id="t-wait")],
                stop_reason="toolUse",
            )
        return faux_assistant_message("Gave up waiting.")

    faux = FauxProvider(api="faux-block")
    faux.set_responses([reply] * 4)
    tools = [AgentTool(name="wait", description="Wait.", parameters=schema(), execute=wait)]
    return lambda: Agent(model=faux.get_model(), tools=tools, stream_fn=faux)


def test_cancelling_the_workflow_while_a_tool_runs_aborts_the_run_with_the_contract(
    temporal_address,
):
    started = Gate()
    agent = temporal_agent(_blocking_run(started))
    events: list[str] = []
    agent.subscribe(lambda event: events.append(event.type))

    async def scenario(client: Client) -> tuple[Any, Any]:
        opened = started.open()
        run = await agent.start(client, "Wait for it.")
        await opened.wait()
        await run.steer("hurry up")
        await run.follow_up("after that")
        await run.cancel()
        return await run.result(), await run.status()

    result, status = with_worker(temporal_address, agent, scenario)
    assert result.cancelled
    assert status == WorkflowExecutionStatus.COMPLETED  # the aborted transcript is the result
    last = result.messages[-1]
    assert last.role == "toolResult"
    assert last.is_error
    assert last.content[0].text == "Operation aborted"
    assert result.stop_reason == "toolUse"
    assert events[events.index("tool_execution_start") :] == [
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    # not delivered, not lost: steering first, then follow-ups, as an agent's queues
    assert [m.content[0].text for m in result.queued] == ["hurry up", "after that"]


def test_cancelling_the_workflow_while_the_model_streams_keeps_the_partial_answer(
    temporal_address,
):
    streaming = Gate()

    async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
        builder = MessageBuilder(model)
        await send.send(builder.start())
        start = builder.text_start()
        await send.send(start)
        await send.send(builder.text_delta(start.content_index, "Hel"))
        streaming.set()
        await anyio.sleep_forever()

    agent = temporal_agent(lambda: Agent(model=FauxProvider().get_model(), stream_fn=slow))
    events: list[Any] = []
    agent.subscribe(events.append)

    async def scenario(client: Client) -> Any:
        opened = streaming.open()
        run = await agent.start(client, "Say hello.")
        await opened.wait()
        await run.cancel()
        return await run.result()

    result = with_worker(temporal_address, agent, scenario)
    assert result.cancelled
    last = result.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.content[0].text == "Hel"
    assert [e.type for e in events[-4:]] == [
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert events[-3].message.stop_reason == "aborted"


def test_steering_and_follow_ups_are_signals_that_arrive_in_order(temporal_address):
    release = Gate()
    started = Gate()

    async def wait(tool_call_id: str, params: Any) -> str:
        started.set()
        assert release.event is not None
        await release.event.wait()
        return "waited"

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        if context.messages[-1].role == "user" and len(context.messages) == 2:
            return faux_assistant_message(
                [faux_tool_call("wait", {}, id="t-wait")], stop_reason="toolUse"
            )
        return faux_assistant_message(f"ok {len(context.messages)}")

    faux = FauxProvider(api="faux-steer")
    faux.set_responses([reply] * 8)
    tools = [AgentTool(name="wait", description="Wait.", parameters=schema(), execute=wait)]
    agent = temporal_agent(lambda: Agent(model=faux.get_model(), tools=tools, stream_fn=faux))

    async def scenario(client: Client) -> Any:
        opened = started.open()
        release.open()
        run = await agent.start(client, "Start.")
        await opened.wait()
        await run.steer("first steer")
        await run.follow_up("the follow-up")
        await run.steer("second steer")
        release.set()
        return await run.result()

    result = with_worker(temporal_address, agent, scenario)
    users = [m.content[0].text for m in result.messages if m.role == "user"]
    assert users == ["Start.", "first steer", "second steer", "the follow-up"]
    assert result.queued == []
    assert result.messages[-1].role == "assistant"


def test_a_message_sent_after_the_last_turn_is_reported_queued_not_lost(temporal_address):
    at_end = Gate()
    release = Gate()
    faux = FauxProvider(api="faux-late")
    faux.set_responses([faux_assistant_message("Done.")])
    agent = temporal_agent(lambda: Agent(model=faux.get_model(), stream_fn=faux))

    async def hold_at_end(event: Any) -> None:
        # the run has looked for messages for the last time; it waits for this listener
        if event.type == "agent_end":
            at_end.set()
            assert release.event is not None
            await release.event.wait()

    agent.subscribe(hold_at_end)

    async def scenario(client: Client) -> Any:
        ended = at_end.open()
        release.open()
        run = await agent.start(client, "Answer once.")
        await ended.wait()
        await run.follow_up("too late")
        release.set()
        return await run.result()

    result = with_worker(temporal_address, agent, scenario)
    assert [m.role for m in result.new_messages] == ["user", "assistant"]
    assert [m.content[0].text for m in result.queued] == ["too late"]


def test_starting_an_existing_workflow_id_returns_that_run(temporal_address):
    faux = FauxProvider(api="faux-once")
    faux.set_responses([faux_assistant_message("Once.")] * 3)
    agent = temporal_agent(lambda: Agent(model=faux.get_model(), stream_fn=faux))

    async def scenario(client: Client) -> tuple[Any, Any]:
        first = await agent.run(client, "Hi.", workflow_id="only-once")
        second = await agent.run(client, "Hi again.", workflow_id="only-once")
        return first, second

    first, second = with_worker(temporal_address, agent, scenario)
    assert normalized(second.messages) == normalized(first.messages)
    assert faux.call_count == 1


def test_keys_stay_in_the_worker_and_a_failing_listener_does_not_stop_the_run(
    temporal_address, caplog
):
    seen_keys: list[str | None] = []

    async def answer(model: Any, context: Any, options: Any, send: Any) -> None:
        seen_keys.append(options.api_key)
        faux = FauxProvider(api="faux-keys")
        faux.set_responses([faux_assistant_message("Keyed.")])
        await faux(model, context, options, send)

    def build() -> Agent:
        return Agent(
            model=FauxProvider(api="faux-keys").get_model(),
            stream_fn=answer,
            stream_options=StreamOptions(api_key="sk-static-secret", temperature=0.25),
            get_api_key=lambda provider: "sk-hook-secret",
        )

    agent = temporal_agent(build)
    seen: list[str] = []

    def broken(event: Any) -> None:
        raise RuntimeError("the listener is broken")

    agent.subscribe(broken)
    agent.subscribe(lambda event: seen.append(event.type))

    async def scenario(client: Client) -> tuple[Any, bytes]:
        result = await agent.run(client, "Use the key.")
        history = await client.get_workflow_handle(result.workflow_id).fetch_history()
        return result, b"\n".join(payload_data(event) for event in history.events)

    result, history = with_worker(temporal_address, agent, scenario)
    assert result.messages[-1].content[0].text == "Keyed."
    assert seen_keys == ["sk-hook-secret"]  # the worker's hook, called in the activity
    assert b"sk-" not in history
    assert b"0.25" in history  # the request's plain options travel in the history
    assert seen[0] == "agent_start"
    assert seen[-1] == "agent_end"
    failures = [r for r in caplog.records if "the run goes on" in r.getMessage()]
    assert len(failures) == len(seen)
    assert failures[0].exc_info is not None


def test_a_temporal_agent_refuses_an_empty_name_and_a_non_positive_timeout():
    with pytest.raises(ValueError, match=r"needs a non-empty name, got ''"):
        TemporalAgent("", Agent)
    with pytest.raises(ValueError, match=r"'x': heartbeat_timeout and activity_timeout must be"):
        TemporalAgent("x", Agent, heartbeat_timeout=timedelta(0))


def test_the_compaction_events_cross_to_an_activity_unchanged():
    from pi_trio.agent import Compaction

    faux = FauxProvider(api="faux-codec-compaction", models=[{"id": "m", "context_window": 900}])
    faux.set_responses(
        [faux_assistant_message("long answer " * 200)] * 2 + [faux_assistant_message("S")] * 4
    )
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        policy=RunPolicy(compaction=Compaction(reserve_tokens=400, keep_recent_tokens=10)),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    anyio.run(agent.prompt, "one")
    anyio.run(agent.prompt, "two")
    compaction = [e for e in events if e.type.startswith("compaction")]
    assert [e.type for e in compaction] == ["compaction_start", "compaction_end"]
    assert compaction[1].messages
    for event in compaction:
        again = decode_event(event_json(event))
        assert type(again) is type(event)
        assert bytes(event_json(again)) == bytes(event_json(event))
