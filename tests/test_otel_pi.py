"""pi 1.6's telemetry vocabulary on OpenTelemetry (``instrument(vocabulary=...)``,
``traced_provider``), checked against what pi-ai 1.6 records for the same faux requests
(tests/fixtures/pi1x/telemetry_*.json, recorded by tests/record_pi1x_pi16.mjs with
pi-telemetry's in-memory context), and the content-capture settings."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.trace import StatusCode

from pi_trio.agent import Agent
from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    Context,
    Cost,
    DoneEvent,
    Usage,
    UserMessage,
    complete_simple,
    open_stream_simple,
)
from pi_trio.ai.deferred import DeferredHandle, fetch_deferred
from pi_trio.ai.providers import ApiProvider, ProviderRegistry
from pi_trio.otel import instrument, traced_provider
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .otel_support import BACKENDS, Pipeline, text_tool

FIXTURES = Path(__file__).parent / "fixtures" / "pi1x"
COUNTERS = ("pi.ai.tokens", "pi.ai.cost")
HISTOGRAMS = ("pi.ai.request.duration", "pi.ai.first_chunk.duration")


def recorded(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def traced(otel: Pipeline, faux: FauxProvider) -> ProviderRegistry:
    registry = ProviderRegistry(builtins=False)
    registry.register(traced_provider(faux.api_provider, **otel.providers))
    return registry


def context() -> Context:
    return Context(messages=[UserMessage(content="Hello there.")])


def pi_spans(otel: Pipeline) -> list[dict[str, Any]]:
    """The pi spans as pi-telemetry's in-memory context records them."""
    shown = []
    for span in sorted(otel.spans(), key=lambda s: s.start_time):
        if not span.name.startswith("pi.ai."):
            continue
        attributes = dict(span.attributes or {})
        error_type = attributes.pop("error.type", None)
        if span.status.status_code is StatusCode.ERROR:
            status = {
                "status": "error",
                "error": {"name": error_type, "message": span.status.description},
            }
        else:
            assert error_type is None
            status = {"status": "ok"}
        shown.append(
            {
                "name": span.name,
                "attributes": attributes,
                "events": [
                    {"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events
                ],
                "status": status,
            }
        )
    return shown


def recorded_spans(fixture: Any) -> list[dict[str, Any]]:
    return [
        {k: s[k] for k in ("name", "attributes", "events", "status")}
        for s in fixture["spans"]
        if s["name"].startswith("pi.ai.")
    ]


def metric_sums(otel: Pipeline) -> dict[tuple[str, str], float]:
    """Counter totals by metric and attributes; histogram counts likewise."""
    sums: dict[tuple[str, str], float] = {}
    for name in COUNTERS:
        for point in otel.points(name):
            key = (name, json.dumps(dict(point.attributes), sort_keys=True))
            sums[key] = sums.get(key, 0) + point.value
    for name in HISTOGRAMS:
        for point in otel.points(name):
            key = (name, json.dumps(dict(point.attributes), sort_keys=True))
            sums[key] = sums.get(key, 0) + point.count
    return sums


def recorded_sums(fixture: Any) -> dict[tuple[str, str], float]:
    sums: dict[tuple[str, str], float] = {}
    for m in fixture["metrics"]:
        key = (m["name"], json.dumps(m["attributes"], sort_keys=True))
        sums[key] = sums.get(key, 0) + (m["value"] if m["kind"] == "counter" else 1)
    return sums


# --------------------------------------------------------------------------- against pi 1.6


async def test_a_request_with_every_block_kind_is_recorded_as_pi16_records_it(
    otel: Pipeline,
) -> None:
    fixture = recorded("telemetry_blocks")
    faux = FauxProvider(api="faux", token_size=(3, 3))
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("Think it over."),
                    faux_text("Here it is."),
                    faux_tool_call("lookup", {"query": "ünïcode 🚀"}, id="call-1"),
                ],
                stop_reason="toolUse",
                response_id="resp_1",
            )
        ]
    )
    await complete_simple(
        faux.get_model(), context(), registry=traced(otel, faux), reasoning="high"
    )
    assert pi_spans(otel) == recorded_spans(fixture)
    assert metric_sums(otel) == recorded_sums(fixture)
    units = {m["name"]: m["unit"] for m in fixture["metrics"]}
    data = otel.reader.get_metrics_data()
    assert data is not None
    ours = {
        m.name: m.unit
        for r in data.resource_metrics
        for scope in r.scope_metrics
        for m in scope.metrics
        if m.name.startswith("pi.ai.")
    }
    assert ours == units


async def test_an_error_has_error_status_with_the_first_500_characters(otel: Pipeline) -> None:
    fixture = recorded("telemetry_error")
    faux = FauxProvider(api="faux", token_size=(3, 3))
    faux.set_responses(
        [
            faux_assistant_message(
                [], stop_reason="error", error_message=f"Upstream said: {'x' * 600}"
            )
        ]
    )
    await complete_simple(faux.get_model(), context(), registry=traced(otel, faux))
    assert pi_spans(otel) == recorded_spans(fixture)
    (span,) = otel.named("pi.ai.request")
    assert len(span.status.description) == 500
    assert metric_sums(otel) == recorded_sums(fixture)


async def test_an_aborted_request_stays_ok_with_stop_aborted(
    otel: Pipeline, autojump_clock: Any
) -> None:
    fixture = recorded("telemetry_aborted")
    faux = FauxProvider(api="faux", token_size=(3, 3), tokens_per_second=1000)
    faux.set_responses([faux_assistant_message("A long answer that will be cut off by the abort.")])
    controller = AbortController()
    async with open_stream_simple(
        faux.get_model(), context(), registry=traced(otel, faux), signal=controller.signal
    ) as events:
        seen = 0
        async for _ in events:
            seen += 1
            if seen == 3:
                controller.abort()
    assert events.result().stop_reason == "aborted"
    assert pi_spans(otel) == recorded_spans(fixture)
    assert metric_sums(otel) == recorded_sums(fixture)


async def test_deferred_polls_are_poll_spans_and_pending_ones_add_no_tokens(
    otel: Pipeline,
) -> None:
    fixture = recorded("telemetry_deferred")
    faux = FauxProvider(api="faux", token_size=(3, 3), deferred={"pending_fetches": 1})
    faux.set_responses([faux_assistant_message("Ready now.")])
    registry = traced(otel, faux)
    model = faux.get_model()
    submitted = await complete_simple(model, context(), registry=registry, deferred=True)
    assert submitted.deferred is not None
    for _ in range(2):
        await fetch_deferred(submitted.deferred, model=model, registry=registry)
    assert pi_spans(otel) == recorded_spans(fixture)
    assert metric_sums(otel) == recorded_sums(fixture)


# --------------------------------------------------------------------------- agents


def agent_run(faux: FauxProvider) -> Agent:
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text("Calling."), faux_tool_call("echo", {"value": "secret"}, id="c1")],
                stop_reason="toolUse",
            ),
            faux_assistant_message("done"),
        ]
    )
    return Agent(
        model=faux.get_model(),
        tools=[text_tool("echo", lambda v: f"echoed {v}")],
        stream_fn=faux,
        thinking_level="high",
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_agent_in_pis_vocabulary_writes_a_request_span_per_request(backend: str) -> None:
    otel = Pipeline()
    agent = agent_run(FauxProvider(token_size=(3, 3)))
    instrument(agent, vocabulary="pi", **otel.providers)
    anyio.run(agent.prompt, "go", backend=backend)
    assert [s.name for s in otel.spans()] == ["pi.ai.request", "pi.ai.request"]
    first, second = sorted(otel.spans(), key=lambda s: s.start_time)
    assert first.attributes is not None
    assert (first.attributes["stop"], first.attributes["api"]) == ("toolUse", agent.state.model.api)
    assert [e.name for e in first.events] == ["pi.ai.first_chunk", "pi.ai.block", "pi.ai.block"]
    assert dict(first.events[2].attributes or {}) == {
        "type": "tool_call",
        "index": 1,
        "chars": 18,
        "tool": "echo",
    }
    assert second.attributes is not None
    assert second.attributes["stop"] == "stop"
    # no prompt, answer or argument anywhere
    shown = json.dumps([dict(s.attributes or {}) for s in otel.spans()])
    shown += json.dumps([dict(e.attributes or {}) for s in otel.spans() for e in s.events])
    assert "secret" not in shown
    assert "go" not in shown.split('"')


async def test_both_vocabularies_nest_the_pi_span_in_the_chat_span(otel: Pipeline) -> None:
    agent = agent_run(FauxProvider(token_size=(3, 3)))
    instrument(agent, vocabulary="both", **otel.providers)
    await agent.prompt("go")
    chats = {s.context.span_id: s for s in otel.named("chat")}
    pis = otel.named("pi.ai.request")
    assert len(chats) == len(pis) == 2
    assert all(p.parent is not None and p.parent.span_id in chats for p in pis)
    assert len(otel.named("execute_tool")) == 1


async def test_an_abort_in_pis_vocabulary_is_ok_with_stop_aborted(
    otel: Pipeline, autojump_clock: Any
) -> None:
    faux = FauxProvider(token_size=(1, 1), tokens_per_second=10)
    faux.set_responses([faux_assistant_message("a long answer that takes a while")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    instrument(agent, vocabulary="pi", **otel.providers)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await anyio.sleep(0.5)
        agent.abort()
    (span,) = otel.spans()
    assert span.attributes is not None
    assert span.attributes["stop"] == "aborted"
    assert span.status.status_code is not StatusCode.ERROR


def test_an_unknown_vocabulary_is_refused() -> None:
    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    with pytest.raises(ValueError, match=r"vocabulary must be one of 'genai', 'pi', 'both'"):
        instrument(agent, vocabulary="otel")  # type: ignore[arg-type]


async def test_capture_content_takes_the_mode_names_and_logs_an_unknown_one(
    otel: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    for mode, captured in [("SPAN_ONLY", True), ("NO_CONTENT", False), ("sometimes", False)]:
        otel.exporter.clear()
        agent = agent_run(FauxProvider())
        undo = instrument(agent, capture_content=mode, **otel.providers)
        await agent.prompt("go")
        undo()
        keys = {k for s in otel.spans() for k in (s.attributes or {})}
        assert ("gen_ai.input.messages" in keys) is captured, mode
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned == [
        "capture_content='sometimes' is not a content-capture setting; capturing no content "
        "(use one of NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT, true, false)"
    ]
    caplog.clear()  # the warning was the point; the fixture checks for no other record


async def test_a_look_that_finds_the_response_not_ready_adds_no_tokens_or_cost(
    otel: Pipeline,
) -> None:
    """Even when the provider reports usage on it (pi 1.6: only final polls count)."""

    def answer(stop: Any, tokens: int) -> AssistantMessage:
        usage = Usage(input=tokens, output=tokens, cost=Cost(total=tokens / 1000))
        return AssistantMessage(
            content=[],
            api="bg",
            provider="p",
            model="m",
            usage=usage,
            stop_reason=stop,
            timestamp=1,
        )

    async def fetch(model: Any, handle: DeferredHandle, options: Any, send: Any) -> None:
        ready = handle.id == "ready"
        message = answer("stop" if ready else "deferred", 7 if ready else 1000)
        await send.send(DoneEvent(reason=message.stop_reason, message=message))

    async def stream(*args: Any) -> None:
        raise AssertionError("not called")

    faux = FauxProvider(api="bg", provider="p", models=[{"id": "m"}])
    registry = ProviderRegistry(builtins=False)
    registry.register(
        traced_provider(
            ApiProvider(api="bg", stream=stream, stream_simple=stream, fetch_deferred=fetch),
            **otel.providers,
        )
    )
    model = faux.get_model()
    for id in ("pending", "ready"):
        handle = DeferredHandle(provider="p", model_id="m", api="bg", id=id)
        await fetch_deferred(handle, model=model, registry=registry)
    tokens = {dict(p.attributes)["kind"]: p.value for p in otel.points("pi.ai.tokens")}
    assert tokens == {"input": 7, "output": 7, "cache_read": 0, "cache_write": 0}
    assert [p.value for p in otel.points("pi.ai.cost")] == [0.007]
    assert [s.name for s in otel.spans()] == ["pi.ai.poll", "pi.ai.poll"]
