"""Anthropic requests with system messages and tool changes in the middle of the
conversation, sent to a loopback server and compared with what pi 1.6 sent for the same
transcript and compat (tests/fixtures/pi1x/anthropic_changes.json, recorded by
tests/record_pi1x_pi16.mjs): in place (``supportsMidConvoSystemMessages``), with native
``tool_addition`` / ``tool_removal`` blocks and the fixed tool list
(``supportsMidConvoToolChanges``, the ``inline-tools`` beta), or folded into the prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.ai import Context, Model, complete_simple, from_json, messages_from_json
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import SSEReply, serve_sse

FIXTURES = Path(__file__).parent / "fixtures" / "pi1x"
RECORDED = json.loads((FIXTURES / "anthropic_changes.json").read_text())
CASES = {case["name"]: case for case in RECORDED["cases"]}


def claude_reply(message_id: str, text: str) -> bytes:
    events = [
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": RECORDED["model"]["id"],
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 12, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 4},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def claude(base_url: str, compat: dict[str, Any]) -> Model:
    model = from_json(json.dumps({**RECORDED["model"], "baseUrl": base_url}), Model)
    return msgspec.structs.replace(model, base_url=base_url, compat=compat or None)


async def sent_by_pi_trio(case: dict[str, Any]) -> tuple[Any, str | None]:
    messages = messages_from_json(json.dumps(case["messages"]))
    registry = ProviderRegistry()
    async with serve_sse([SSEReply(claude_reply("msg_1", "ok"))]) as server:
        try:
            message = await complete_simple(
                claude(server.url, case["compat"]),
                Context(messages=messages),
                registry=registry,
                api_key="test-key",
                cache_retention=case["options"].get("cacheRetention"),
            )
        finally:
            await registry.aclose()
    assert message.stop_reason == "stop", message.error_message
    (request,) = server.requests
    return request.json(), request.headers.get("anthropic-beta")


@pytest.mark.parametrize("name", list(CASES))
async def test_the_request_is_the_one_pi16_sends(name: str) -> None:
    case = CASES[name]
    body, beta = await sent_by_pi_trio(case)
    assert body == case["request"]["body"]
    assert beta == case["request"]["beta"]


def test_the_native_request_keeps_the_cached_prefix_of_the_previous_one() -> None:
    """What the cache needs, said in the fixture's terms: with native tool changes the
    top-level tools and system are those of a request made before any change."""
    native = CASES["native_tools"]["request"]["body"]
    assert [t["name"] for t in native["tools"]] == ["add", "__pi_deferred_placeholder__"]
    kinds = [
        block["type"]
        for message in native["messages"]
        if message["role"] == "system"
        for block in message["content"]
    ]
    assert kinds == ["text", "tool_addition", "text", "tool_removal", "tool_addition"]


def test_pi_trio_sends_the_same_on_asyncio() -> None:
    case = CASES["native_tools"]

    async def main() -> tuple[Any, str | None]:
        return await sent_by_pi_trio(case)

    body, beta = anyio.run(main, backend="asyncio")
    assert body == case["request"]["body"]
    assert beta == case["request"]["beta"]
