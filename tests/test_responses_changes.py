"""OpenAI Responses requests with system messages and tool changes mid-conversation, sent
to a loopback server and compared with what pi 1.6 sent for the same transcript and compat
(tests/fixtures/pi1x/responses_changes.json, recorded by tests/record_pi1x_pi16.mjs):
``additional_tools`` items where the transcript declares tools
(``supportsAdditionalTools``), system messages in place, or everything folded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from pi_trio.ai import Context, Model, complete_simple, from_json, messages_from_json
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import SSEReply, serve_sse

FIXTURES = Path(__file__).parent / "fixtures" / "pi1x"
RECORDED = json.loads((FIXTURES / "responses_changes.json").read_text())
CASES = {case["name"]: case for case in RECORDED["cases"]}


def reply() -> bytes:
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": RECORDED["model"]["id"],
        "output": [],
        "usage": {"input_tokens": 12, "output_tokens": 0, "total_tokens": 12},
    }
    events = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.completed", "sequence_number": 1, "response": response},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


async def sent_by_pi_trio(case: dict[str, Any]) -> Any:
    registry = ProviderRegistry()
    async with serve_sse([SSEReply(reply())]) as server:
        model = from_json(
            json.dumps({**RECORDED["model"], "baseUrl": server.url, "compat": case["compat"]}),
            Model,
        )
        try:
            await complete_simple(
                model,
                Context(messages=messages_from_json(json.dumps(case["messages"]))),
                registry=registry,
                api_key="test-key",
            )
        finally:
            await registry.aclose()
    (request,) = server.requests
    assert request.path == case["request"]["path"]
    return request.json()


@pytest.mark.parametrize("name", list(CASES))
async def test_the_request_is_the_one_pi16_sends(name: str) -> None:
    case = CASES[name]
    assert await sent_by_pi_trio(case) == case["request"]["body"]


def test_additional_tools_on_asyncio() -> None:
    case = CASES["additional_tools"]
    assert anyio.run(sent_by_pi_trio, case, backend="asyncio") == case["request"]["body"]
