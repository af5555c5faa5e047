"""Helpers shared by the provider tests: replaying recorded bodies and comparing streams."""

from __future__ import annotations

from typing import Any

import msgspec

from pi_trio.ai import Context, Model, open_stream
from pi_trio.testing import ReplayTransport, registry_with_transport


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


def final_json(event: Any) -> bytes:
    """The terminal event's final message as JSON, without its timestamp."""
    final = event.message if event.type == "done" else event.error
    return msgspec.json.encode(msgspec.structs.replace(final, timestamp=0))


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
