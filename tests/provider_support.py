"""Helpers shared by the provider tests: replaying recorded bodies and comparing streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.ai import AbortController, AssistantMessage, Context, Model, complete, open_stream
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import (
    ReplayResponse,
    ReplayTransport,
    SSEReply,
    registry_with_transport,
    serve_sse,
    split_bytes,
)

# httpx2 reads a response body through nested async generators; a body left before its end
# (a break, an error event, a reset, an abort) leaves the inner ones for trio to finalize at
# garbage collection, with a ResourceWarning. The connection itself is closed right away by
# ``response.aclose()`` (see the closed-response assertions); only the generator objects
# are collected later. A provider test module sets ``pytestmark`` to one of these.
UNFINISHED_BODY_WARNINGS = pytest.mark.filterwarnings(
    "ignore:Async generator 'httpcore2?.*:ResourceWarning",
    "ignore:Async generator 'httpx2.*:ResourceWarning",
)
# the same, for bodies replayed by ``ReplayTransport`` whose own generators are left too
UNFINISHED_REPLAY_WARNINGS = pytest.mark.filterwarnings(
    "ignore:Async generator 'httpcore2?.*:ResourceWarning",
    "ignore:Async generator 'httpx2.*:ResourceWarning",
    "ignore:Async generator 'pi_trio.testing._replay.*:ResourceWarning",
)


async def replay_stream(
    model: Model, context: Context, *replies: Any, key: str, **options: Any
) -> tuple[list[Any], ReplayTransport]:
    """Stream ``model`` against ``replies`` (recorded bodies) and return every event plus
    the transport, which recorded the requests it answered."""
    transport = ReplayTransport(*replies)
    registry = registry_with_transport(transport)
    options.setdefault("api_key", key)
    try:
        async with open_stream(model, context, registry=registry, **options) as stream:
            events = [event async for event in stream]
    finally:
        await registry.aclose()
    return events, transport


def cuts(body: bytes, step: int = 1) -> list[list[bytes]]:
    """``body`` as the network may bring it: whole, cut in two at every ``step``-th byte
    (breaking an event, a line, a UTF-8 sequence or a frame anywhere), and one byte per
    read."""
    halves = [[body[:i], body[i:]] for i in range(1, len(body), step)]
    return [[body], *halves, split_bytes(body, 1)]


async def events_however_cut(
    model: Model,
    context: Context,
    body: bytes,
    *,
    step: int = 1,
    reply: Callable[[list[bytes]], ReplayResponse] = ReplayResponse,
    **options: Any,
) -> tuple[list[Any], list[list[Any]]]:
    """The events of one request answered with ``body`` whole, and of one request per other
    way ``cuts`` cuts it, all over one registry. A provider must read a stream the same
    however the network cuts it."""
    chunkings = cuts(body, step)
    transport = ReplayTransport(*[reply(chunks) for chunks in chunkings])
    registry = registry_with_transport(transport)
    runs: list[list[Any]] = []
    try:
        for _ in chunkings:
            async with open_stream(model, context, registry=registry, **options) as stream:
                runs.append([event async for event in stream])
    finally:
        await registry.aclose()
    return runs[0], runs[1:]


def final_json(event: Any) -> bytes:
    """The terminal event's final message as JSON, without its timestamp and duration."""
    final = event.message if event.type == "done" else event.error
    return msgspec.json.encode(msgspec.structs.replace(final, timestamp=0, duration_ms=None))


def event_shape(events: list[Any]) -> list[tuple[Any, ...]]:
    """What a consumer observes, without timestamps."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e.type in ("done", "error"):
            out.append((e.type, e.reason, final_json(e)))
        else:
            out.append(
                (
                    e.type,
                    getattr(e, "content_index", None),
                    getattr(e, "delta", None),
                    getattr(e, "content", None),
                )
            )
    return out


def at_url(model: Model, url: str) -> Model:
    """``model`` pointed at a local server."""
    return msgspec.structs.replace(model, base_url=url)


async def complete_with_fresh_registry(
    model: Model, context: Context, *, key: str, **options: Any
) -> AssistantMessage:
    """``complete`` over real HTTP with a registry of its own, closed afterwards."""
    registry = ProviderRegistry()
    try:
        return await complete(model, context, registry=registry, api_key=key, **options)
    finally:
        await registry.aclose()


async def abort_at_first_text_delta(
    model: Model, context: Context, body: bytes, *, key: str
) -> tuple[list[str], AssistantMessage]:
    """Stream ``body`` from a loopback server that then holds the response open, abort
    at the first text delta, and return the event types seen and the final message once
    the server saw the client close and no connection is left open."""
    controller = AbortController()
    registry = ProviderRegistry()
    seen: list[str] = []
    with anyio.fail_after(10):
        async with serve_sse([SSEReply([body], hold_open=True)]) as server:
            try:
                async with open_stream(
                    at_url(model, server.url),
                    context,
                    registry=registry,
                    api_key=key,
                    signal=controller.signal,
                ) as stream:
                    async for event in stream:
                        seen.append(event.type)
                        if event.type == "text_delta":
                            controller.abort()
                await server.wait_until(lambda s: s.client_closed == 1)
            finally:
                await registry.aclose()
            await server.wait_until(lambda s: s.open_connections == 0)
    return seen, stream.result()
