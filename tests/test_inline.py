"""InlineStream: a stream function run in the engine's task, each event delivered as sent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.agent import Agent
from pi_trio.ai import AssistantMessageEvent, Context, StreamOptions, get_model
from pi_trio.ai._stream._consume import InlineStream
from pi_trio.ai.providers import MessageBuilder, ProviderRegistry
from pi_trio.testing import SSEReply, serve_sse

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


async def test_an_http_provider_hands_events_to_sync_listeners_without_awaiting() -> None:
    # In an agent run the HTTP provider's events go through ``InlineStream.send_nowait``:
    # the listener is called from it, with no ``InlineStream.send`` coroutine between.
    body = (Path(__file__).parent / "fixtures" / "anthropic" / "text.sse").read_bytes()
    stacks: list[set[tuple[str, str]]] = []

    def listener(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            frames = set()
            frame = sys._getframe().f_back
            while frame is not None:
                frames.add((frame.f_globals.get("__name__", ""), frame.f_code.co_name))
                frame = frame.f_back
            stacks.append(frames)

    async with serve_sse([SSEReply(body)]) as server:
        sonnet = get_model("anthropic", "claude-sonnet-4-5")
        assert sonnet is not None
        registry = ProviderRegistry()
        try:
            agent = Agent(
                model=msgspec.structs.replace(sonnet, base_url=server.url),
                registry=registry,
                stream_options=StreamOptions(api_key="sk-ant-test"),
            )
            agent.subscribe(listener)
            result = await agent.prompt("hi")
        finally:
            await registry.aclose()
    assert result.messages[-1].stop_reason == "stop"
    assert len(stacks) == 2
    for frames in stacks:
        assert ("pi_trio.ai._stream._consume", "send_nowait") in frames
        assert ("pi_trio.ai._stream._consume", "send") not in frames
