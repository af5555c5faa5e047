"""An aborted response keeps the metadata the provider had written when it was cut off
(its response id, its model), as the original runtime's does."""

from __future__ import annotations

from typing import Any

import anyio

from pi_trio.agent import Agent
from pi_trio.ai import (
    AssistantMessage,
    StartEvent,
    TextContent,
    TextDeltaEvent,
    TextStartEvent,
    Usage,
    get_model,
)
from pi_trio.testing import FauxProvider, ReplayResponse, ReplayTransport, registry_with_transport

EVENTS = [
    (
        "message_start",
        '{"type":"message_start","message":{"id":"msg_01Abort","type":"message","role":'
        '"assistant","model":"claude-haiku-4-5-20251001","content":[],"usage":'
        '{"input_tokens":10,"output_tokens":1}}}',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ),
    *[
        (
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
            + word
            + ' "}}',
        )
        for word in ("one", "two", "three", "four")
    ],
]


async def test_an_aborted_response_keeps_its_response_id_and_model() -> None:
    body = [f"event: {name}\ndata: {data}\n\n".encode() for name, data in EVENTS]
    transport = ReplayTransport(ReplayResponse(body))
    registry = registry_with_transport(transport)
    model = get_model("anthropic", "claude-haiku-4-5")
    assert model is not None
    agent = Agent(model=model, registry=registry, get_api_key=lambda provider: "sk-test")
    deltas = 0

    def abort_on_second_delta(event: Any) -> None:
        nonlocal deltas
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            deltas += 1
            if deltas == 2:
                agent.abort()

    agent.subscribe(abort_on_second_delta)
    try:
        result = await agent.prompt("count")
    finally:
        await registry.aclose()
    final = result.final
    assert final is not None
    assert final.stop_reason == "aborted"
    assert final.response_id == "msg_01Abort"
    assert final.response_model == "claude-haiku-4-5-20251001"
    assert result.text == "one two "


async def test_a_stream_function_of_its_own_keeps_what_it_set_after_start(
    autojump_clock: Any,
) -> None:
    """A producer that is no MessageBuilder learns its response id after ``start`` (from
    the server's first chunk) and sets it on its partial; an abort keeps it."""

    async def producer(model: Any, context: Any, options: Any, send: Any) -> None:
        partial = AssistantMessage(
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="pending",
            timestamp=1,
        )
        await send.send(StartEvent(partial=partial))
        partial.response_id = "resp_own"
        partial.response_model = "own-model-2026"
        partial.usage = Usage(input=7, total_tokens=7)
        partial.content.append(TextContent(text=""))
        await send.send(TextStartEvent(content_index=0, partial=partial))
        for word in ("one ", "two ", "three "):
            await send.send(TextDeltaEvent(content_index=0, delta=word, partial=partial))
            await anyio.sleep(1)
        await anyio.sleep_forever()

    agent = Agent(model=FauxProvider().get_model(), stream_fn=producer)
    deltas = 0

    def abort_on_second_delta(event: Any) -> None:
        nonlocal deltas
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            deltas += 1
            if deltas == 2:
                agent.abort()

    agent.subscribe(abort_on_second_delta)
    final = (await agent.prompt("count")).final
    assert final is not None
    assert final.stop_reason == "aborted"
    assert final.content == [TextContent(text="one two ")]
    assert (final.response_id, final.response_model) == ("resp_own", "own-model-2026")
    assert final.usage.input == 7
