"""InlineStream: a stream function run in the engine's task, each event delivered as sent."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pi_trio.ai import AssistantMessageEvent, Context, MessageBuilder, StreamOptions
from pi_trio.ai._consume import InlineStream

from .helpers import MOCK_MODEL


class ListenerBroke(Exception):
    pass


def inline(deliver: Any) -> InlineStream:
    async def deliver_async(event: Any) -> None:
        await anyio.lowlevel.checkpoint()
        deliver(event)

    return InlineStream(MOCK_MODEL, "scripted", None, lambda: True, deliver, deliver_async)


async def run(stream: InlineStream, stream_fn: Any) -> Any:
    return await stream.run(stream_fn, MOCK_MODEL, Context(messages=[]), StreamOptions())


async def test_a_listener_failing_on_an_event_stops_the_stream_and_is_raised_itself() -> None:
    sent_after: list[str] = []

    def deliver(event: AssistantMessageEvent) -> None:
        if event.type == "text_delta":
            raise ListenerBroke("listener broke")

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        builder = MessageBuilder(model)
        await send.send(builder.start())
        await send.send(builder.text_start())
        await send.send(builder.text_delta(0, "a"))
        sent_after.append("unreachable")

    with pytest.raises(ListenerBroke, match="listener broke"):
        await run(inline(deliver), stream_fn)
    assert sent_after == []


async def test_a_listener_failing_on_the_missing_terminal_is_raised_itself() -> None:
    def deliver(event: AssistantMessageEvent) -> None:
        if event.type == "error":
            raise ListenerBroke("failed on the synthesized error")

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        await send.send(MessageBuilder(model).start())

    with pytest.raises(ListenerBroke, match="failed on the synthesized error"):
        await run(inline(deliver), stream_fn)


async def test_a_stream_without_a_terminal_event_ends_in_an_error_outcome() -> None:
    delivered: list[str] = []

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        await send.send(MessageBuilder(model).start())

    final = await run(inline(lambda event: delivered.append(event.type)), stream_fn)
    assert final.stop_reason == "error"
    assert "returned without a terminal event" in final.error_message
    assert delivered == ["start", "error"]


async def test_an_event_sent_after_the_terminal_one_is_refused_and_the_outcome_stays() -> None:
    delivered: list[str] = []

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        builder = MessageBuilder(model)
        await send.send(builder.start())
        await send.send(builder.done())
        await send.send(builder.start())  # after the terminal event

    final = await run(inline(lambda event: delivered.append(event.type)), stream_fn)
    assert delivered == ["start", "done"]
    assert final.stop_reason == "stop"
