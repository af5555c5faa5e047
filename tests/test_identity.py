"""How requests identify the app: the User-Agent and attribution headers (pi 1.6's
ClientIdentity), on a direct call and on an agent's requests."""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import pytest

from pi_trio.agent import Agent
from pi_trio.agent.extend import DEFAULT_AGENT_IDENTITY
from pi_trio.ai import Context, Model, UserMessage, complete
from pi_trio.ai._identity import get_attribution_headers
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import (
    PI_TRIO_ATTRIBUTION,
    ClientAttribution,
    ClientIdentity,
    CustomUserAgent,
    merge_client_identity,
)
from pi_trio.testing import ReplayResponse, ReplayTransport, registry_with_transport

BODY = (
    b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def model(provider: str, base_url: str) -> Model:
    return Model(
        id="m",
        name="M",
        api="openai-completions",
        provider=provider,
        base_url=base_url,
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=1000,
        max_tokens=100,
    )


async def request_headers(target: Model, **options: Any) -> Any:
    transport = ReplayTransport(ReplayResponse(BODY))
    registry = registry_with_transport(transport)
    try:
        context = Context(messages=[UserMessage(content="hi")])
        await complete(target, context, registry=registry, api_key="k", **options)
    finally:
        await registry.aclose()
    return transport.requests[0].headers


async def test_a_direct_call_sends_a_detailed_user_agent_and_no_attribution() -> None:
    headers = await request_headers(model("openrouter", "https://openrouter.ai/api/v1"))
    agent = headers["user-agent"]
    assert agent.startswith("pi-trio/")
    assert f"python/{sys.version_info.major}.{sys.version_info.minor}" in agent
    assert "http-referer" not in headers


async def test_attribution_becomes_each_providers_headers() -> None:
    identity = ClientIdentity(attribution=PI_TRIO_ATTRIBUTION)
    router = await request_headers(
        model("openrouter", "https://openrouter.ai/api/v1"), identity=identity
    )
    assert router["http-referer"] == PI_TRIO_ATTRIBUTION.url
    assert router["x-openrouter-title"] == "pi-trio"
    assert router["x-openrouter-categories"] == "cli-agent"
    nim = ClientAttribution(name="myapp", url="https://example.org")
    assert get_attribution_headers(
        "custom", "https://integrate.api.nvidia.com/v1", ClientIdentity(attribution=nim)
    ) == {"X-BILLING-INVOKE-ORIGIN": "Myapp"}
    assert get_attribution_headers("opencode", "https://x", ClientIdentity(attribution=nim)) == {
        "x-opencode-client": "myapp"
    }
    plain = await request_headers(model("openai", "https://api.openai.com/v1"), identity=identity)
    assert "http-referer" not in plain


async def test_configured_headers_win_and_none_removes_one() -> None:
    target = msgspec.structs.replace(
        model("openai", "https://api.openai.com/v1"), headers={"User-Agent": "model-agent"}
    )
    assert (await request_headers(target))["user-agent"] == "model-agent"
    custom = ClientIdentity(user_agent=CustomUserAgent(custom="mine/1"))
    plain = model("openai", "https://api.openai.com/v1")
    assert (await request_headers(plain, identity=custom))["user-agent"] == "mine/1"
    headers = await request_headers(plain, headers={"User-Agent": None})
    assert "pi-trio" not in headers.get("user-agent", "")


def test_identities_merge_field_by_field_and_none_turns_attribution_off() -> None:
    short = ClientIdentity(user_agent="short")
    merged = merge_client_identity(DEFAULT_AGENT_IDENTITY, short)
    assert merged is not None
    assert merged.user_agent == "short"
    assert merged.attribution == PI_TRIO_ATTRIBUTION
    off = merge_client_identity(DEFAULT_AGENT_IDENTITY, ClientIdentity(attribution=None))
    assert off is not None
    assert off.attribution is None
    assert merge_client_identity(None, None) is None


@pytest.mark.parametrize(
    ("identity", "expected"),
    [(None, PI_TRIO_ATTRIBUTION.url), (ClientIdentity(attribution=None), None)],
)
async def test_an_agents_requests_carry_its_attribution(identity: Any, expected: Any) -> None:
    transport = ReplayTransport(ReplayResponse(BODY))
    registry = registry_with_transport(transport)
    target = model("openrouter", "https://openrouter.ai/api/v1")
    agent = Agent(model=target, registry=registry, get_api_key=lambda provider: "k")
    agent.stream_options.identity = identity
    try:
        assert (await agent.prompt("hi")).ok
    finally:
        await registry.aclose()
    assert transport.requests[0].headers.get("http-referer") == expected
