"""An aborted response keeps the metadata the provider had written when it was cut off
(its response id, its model), as the original runtime's does."""

from __future__ import annotations

from typing import Any

from pi_trio.agent import Agent
from pi_trio.ai import get_model
from pi_trio.testing import ReplayResponse, ReplayTransport, registry_with_transport

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
