"""``on_provider_stream_event``: every event of the provider's stream, as the provider sent
it, reaches the hook before it is mapped; a failing hook fails the request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from pi_trio.agent import Agent
from pi_trio.ai import Context, Model, StreamOptions, UserMessage, get_model, open_stream
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.testing import ReplayResponse, ReplayTransport, registry_with_transport

from .provider_support import UNFINISHED_BODY_WARNINGS

pytestmark = UNFINISHED_BODY_WARNINGS

FIXTURES = Path(__file__).parent / "fixtures"
SONNET = get_model("anthropic", "claude-sonnet-4-5")
_GPT = get_model("openai", "gpt-4o-mini")
assert SONNET is not None
assert _GPT is not None
GPT = msgspec.structs.replace(_GPT, api="openai-completions")  # Chat Completions bodies


def sse_data(body: bytes, names: frozenset[str] | None = None) -> list[Any]:
    """The JSON of each SSE event of ``body`` (named in ``names``, when given)."""
    parser = SSEParser()
    events = parser.feed(body) + parser.close()
    out = []
    for event in events:
        if names is not None and event.event not in names:
            continue
        try:
            out.append(json.loads(event.data))
        except ValueError:
            continue
    return out


async def stream(model: Model, body: bytes, **options: Any) -> list[Any]:
    registry = registry_with_transport(ReplayTransport(ReplayResponse(body)))
    try:
        context = Context(messages=[UserMessage(content="hi")])
        async with open_stream(model, context, registry=registry, api_key="k", **options) as s:
            return [event async for event in s]
    finally:
        await registry.aclose()


async def test_anthropic_events_reach_the_hook_as_the_sdk_yields_them() -> None:
    body = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    seen: list[tuple[Any, str]] = []
    events = await stream(
        SONNET, body, on_provider_stream_event=lambda event, model: seen.append((event, model.id))
    )
    assert events[-1].type == "done"
    names = frozenset(
        {
            "message_start",
            "message_delta",
            "message_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
        }
    )
    assert [event for event, _ in seen] == sse_data(body, names)
    assert {model_id for _, model_id in seen} == {SONNET.id}
    assert all(event["type"] != "ping" for event, _ in seen)  # keep-alives are not events


async def test_completions_chunks_reach_an_async_hook_and_done_does_not() -> None:
    body = (FIXTURES / "openai_completions" / "text.sse").read_bytes()
    seen: list[Any] = []

    async def hook(event: Any, model: Model) -> None:
        await trio.lowlevel.checkpoint()
        seen.append(event)

    events = await stream(GPT, body, on_provider_stream_event=hook)
    assert events[-1].type == "done"
    assert seen == sse_data(body)
    assert b"[DONE]" in body
    assert "[DONE]" not in seen
    assert all(isinstance(chunk, dict) for chunk in seen)


async def test_a_failing_hook_ends_the_request_with_an_error_naming_it() -> None:
    body = (FIXTURES / "openai_completions" / "text.sse").read_bytes()
    calls = 0

    def hook(event: Any, model: Model) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ValueError("the audit log is full")

    events = await stream(GPT, body, on_provider_stream_event=hook)
    assert events[-1].type == "error"
    assert events[-1].error.error_message == "ValueError: the audit log is full"
    assert calls == 2  # nothing was read after the failure


async def test_the_agent_keyword_reaches_the_provider_and_alternates_with_mapping() -> None:
    """With an agent the events are delivered as they are mapped, so the order of hook
    calls and listener events shows that each raw event is seen before its mapping."""
    body = (FIXTURES / "openai_completions" / "text.sse").read_bytes()
    registry = registry_with_transport(ReplayTransport(ReplayResponse(body)))
    order: list[str] = []

    def hook(event: Any, model: Model) -> None:
        delta = (event.get("choices") or [{}])[0].get("delta", {}).get("content")
        order.append(f"raw:{delta}" if delta else "raw")

    def listener(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            order.append(f"delta:{event.assistant_message_event.delta}")

    try:
        agent = Agent(
            model=GPT,
            registry=registry,
            stream_options=StreamOptions(api_key="k"),
            on_provider_stream_event=hook,
        )
        assert agent.stream_options.on_provider_stream_event is hook
        agent.subscribe(listener)
        await agent.prompt("hi")
    finally:
        await registry.aclose()
    deltas = [entry.removeprefix("raw:") for entry in order if entry.startswith("raw:")]
    assert deltas, order
    for text in deltas:
        raw_at = order.index(f"raw:{text}")
        assert order[raw_at + 1] == f"delta:{text}", order


async def test_without_the_hook_the_stream_is_read_in_batches() -> None:
    """No hook, no decoding to plain values: the options default is ``None``."""
    assert StreamOptions().on_provider_stream_event is None
    body = (FIXTURES / "openai_completions" / "text.sse").read_bytes()
    events = await stream(GPT, body)
    assert events[-1].type == "done"
    assert msgspec.json.encode(events[-1].message.content)


# --------------------------------------------------------------------------- on_response

MISTRAL = get_model("mistral", "mistral-small-latest")
RADIUS = get_model("radius", "balanced")
assert MISTRAL is not None
assert RADIUS is not None


@pytest.mark.parametrize(
    ("model", "notified"),
    [(MISTRAL, True), (RADIUS, True), (SONNET, False), (GPT, False)],
    ids=["mistral", "pi-messages", "anthropic", "completions"],
)
async def test_on_response_sees_a_failed_status_where_the_vendor_code_reports_it(
    model: Model, notified: bool
) -> None:
    """Mistral, Codex and pi-messages report every response to ``on_response`` before
    checking its status; the SDK-based providers only a successful one."""
    statuses: list[int] = []
    registry = registry_with_transport(
        ReplayTransport(ReplayResponse(b'{"error": {"message": "slow down"}}', status=429))
    )
    try:
        context = Context(messages=[UserMessage(content="hi")])
        async with open_stream(
            model,
            context,
            registry=registry,
            api_key="k",
            on_response=lambda info, model: statuses.append(info.status),
        ) as s:
            events = [event async for event in s]
    finally:
        await registry.aclose()
    assert events[-1].type == "error"
    assert "slow down" in (events[-1].error.error_message or "")
    assert statuses == ([429] if notified else [])
