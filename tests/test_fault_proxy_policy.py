"""The fault suite, the proxy's policy: what a token holder can make the server do with
its key. Every API with a request builder, over real loopback HTTP: a proxy server whose
model policy is the default ``catalog_models_only`` (the catalog entry re-pointed at a
loopback upstream, as an operator's own catalog would be), a client asking with a
catalog model carrying hostile fields and hostile options, and the upstream recording
what it was sent.

Each bypass of issue 23 is a case: another model named in sampling parameters, an
OpenAI-hosted MCP tool that makes the vendor call a URL of the client's choosing,
``store: true``, OpenRouter's ``data_collection`` through ``compat``, custom headers,
limits. Options the policy does not allow are refused (400) and nothing is sent; fields
of the client's copy of the model are never read, so they never reach the provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx2
import msgspec
import pytest
import trio

from pi_trio.ai import Model, get_model
from pi_trio.ai.providers import ApiProvider, ProviderRegistry
from pi_trio.proxy import catalog_models_only, create_app, serve
from pi_trio.testing import ServedRequest, SSEReply, serve_sse

from .fault_providers_support import PROVIDERS, Provider
from .provider_support import UNFINISHED_BODY_WARNINGS, at_url

pytestmark = UNFINISHED_BODY_WARNINGS

TOKEN = "proxy-token-0123456789"
ATTACKER = "https://attacker.example/mcp"
HOSTED_MCP = [
    {"type": "mcp", "server_label": "x", "server_url": ATTACKER, "require_approval": "never"}
]
LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
# What must not appear anywhere in a request the upstream receives (path, headers, body).
MARKERS = ("o3-pro", "attacker.example", "data_collection", "sk-client", "x-evil")


def catalog_model(provider: Provider) -> Model:
    """The catalog model the client names for ``provider``'s API: the fault suite's,
    except OpenRouter for Chat Completions (its routing is a bypass) and a catalog Azure
    model for Azure."""
    if provider.api == "openai-completions":
        model = get_model("openrouter", "openai/gpt-4o-mini")
    elif provider.api == "azure-openai-responses":
        model = get_model("azure", "gpt-5-mini")
    else:
        model = get_model(provider.model.provider, provider.model.id)
    assert model is not None
    assert model.api == provider.api
    return model


def catalog_at(url: str) -> Callable[[Model], Model | str]:
    """``catalog_models_only``, serving the catalog entry at ``url``."""

    def policy(model: Model) -> Model | str:
        served = catalog_models_only(model)
        return served if isinstance(served, str) else at_url(served, url)

    return policy


def keyed_registry(api: str, key: str) -> ProviderRegistry:
    """The built-in providers, the one of ``api`` called with the server's ``key`` (the
    Codex token has no environment variable, so every API gets it the same way)."""
    registry = ProviderRegistry()
    builtin = registry.require(api)

    async def stream(model: Model, context: Any, options: Any, send: Any) -> None:
        keyed = msgspec.structs.replace(options, api_key=key)
        await builtin.stream_simple(model, context, keyed, send)

    registry.register(ApiProvider(api=api, stream=stream, stream_simple=stream))
    return registry


def upstream_reply(provider: Provider) -> Callable[[ServedRequest], SSEReply]:
    def reply(request: ServedRequest) -> SSEReply:
        return SSEReply(provider.body, headers={"content-type": provider.content_type})

    return reply


def request_body(model: Model, model_fields: dict[str, Any], options: dict[str, Any]) -> bytes:
    sent = {**json.loads(msgspec.json.encode(model)), **model_fields}
    messages = [{"role": "user", "content": "hello", "timestamp": 1}]
    return json.dumps(
        {"model": sent, "context": {"messages": messages}, "options": options}
    ).encode()


async def through_proxy(
    nursery: trio.Nursery,
    provider: Provider,
    model_fields: dict[str, Any],
    options: dict[str, Any],
    model: Model | None = None,
) -> tuple[httpx2.Response, list[ServedRequest], Model]:
    """POST a request for ``model`` (by default ``provider``'s catalog model) with
    ``model_fields`` written over the client's copy and ``options``; the response and
    what the upstream received."""
    model = model or catalog_model(provider)
    registry = keyed_registry(provider.api, provider.key)
    async with serve_sse(upstream_reply(provider)) as upstream:
        app = create_app(tokens=[TOKEN], registry=registry, model_policy=catalog_at(upstream.url))
        url = await nursery.start(partial(serve, "127.0.0.1", 0, app=app))
        try:
            async with httpx2.AsyncClient() as http:
                with trio.fail_after(30):
                    response = await http.post(
                        f"{url}/api/stream",
                        content=request_body(model, model_fields, options),
                        headers={"Authorization": f"Bearer {TOKEN}"},
                    )
        finally:
            await registry.aclose()
    return response, upstream.requests, model


def token_limits(value: Any) -> list[int]:
    """The values of every ``*max*token*`` key anywhere in ``value``."""
    found: list[int] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = key.lower()
            if "max" in name and "token" in name and isinstance(item, int):
                found.append(item)
            found += token_limits(item)
    elif isinstance(value, list):
        for item in value:
            found += token_limits(item)
    return found


def check_sent_clean(provider: Provider, sent: ServedRequest, model: Model) -> None:
    """The upstream saw the server's request: its key, none of the client's markers, no
    stored response, the catalog's limits."""
    seen = " ".join([sent.path, json.dumps(sent.headers), sent.content.decode()]).lower()
    for marker in MARKERS:
        assert marker not in seen, marker
    assert sent.headers[provider.auth_header] == provider.auth_prefix + provider.key
    if provider.content_type == "text/event-stream" or sent.content.startswith(b"{"):
        body = sent.json()
        assert body.get("store") is not True
        assert all(limit <= model.max_tokens for limit in token_limits(body))


# --------------------------------------------------------------------------- refused

REFUSED_OPTIONS = {
    "another model in samplingParams": {"samplingParams": {"model": "o3-pro"}},
    "a hosted MCP tool in samplingParams": {"samplingParams": {"tools": HOSTED_MCP}},
    "store in samplingParams": {"samplingParams": {"store": True}},
    "OpenRouter routing in samplingParams": {
        "samplingParams": {"provider": {"data_collection": "allow"}}
    },
    "a sampling parameter that is no number": {"samplingParams": {"top_p": [0.5]}},
    "maxTokens beyond the model's": {"maxTokens": 10**9},
    "a thinking budget beyond the model's maxTokens": {"thinkingBudgets": {"high": 10**9}},
    "metadata beyond user_id": {"metadata": {"user_id": "u", "server_url": ATTACKER}},
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("options"), REFUSED_OPTIONS.values(), ids=list(REFUSED_OPTIONS))
async def test_an_option_the_policy_does_not_allow_is_refused_before_anything_is_sent(
    nursery: trio.Nursery, provider: Provider, options: dict[str, Any]
) -> None:
    response, sent, _ = await through_proxy(nursery, provider, {}, options)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error.startswith("options.")
    assert "must be" in error or "not allowed by this proxy" in error
    assert sent == []


# --------------------------------------------------------------------------- ignored

IGNORED_MODEL_FIELDS = {
    "another model in the model's samplingParams": {"samplingParams": {"model": "o3-pro"}},
    "another model by thinking level": {
        "samplingParamsByThinkingLevel": {level: {"model": "o3-pro"} for level in LEVELS}
    },
    "a hosted MCP tool in the model's samplingParams": {"samplingParams": {"tools": HOSTED_MCP}},
    "store in the model's samplingParams": {
        "samplingParams": {"store": True},
        "compat": {"supportsStore": True},
    },
    "OpenRouter data_collection through compat": {
        "compat": {"openRouterRouting": {"data_collection": "allow"}}
    },
    "the model's headers": {
        "headers": {"X-Evil": "1", "Authorization": "Bearer sk-client", "x-api-key": "sk-client"}
    },
    "the model's limits": {"maxTokens": 10**9, "contextWindow": 10**9},
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "model_fields", IGNORED_MODEL_FIELDS.values(), ids=list(IGNORED_MODEL_FIELDS)
)
async def test_the_clients_copy_of_the_model_only_names_it(
    nursery: trio.Nursery, provider: Provider, model_fields: dict[str, Any]
) -> None:
    response, sent, model = await through_proxy(nursery, provider, model_fields, {})
    assert response.status_code == 200, response.text
    assert b'"type":"done"' in response.content, response.content[-400:]
    (request,) = sent
    check_sent_clean(provider, request, model)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_headers_a_client_asks_for_are_dropped_unless_forwarded(
    nursery: trio.Nursery, provider: Provider
) -> None:
    headers = {
        "X-Evil": "1",
        "Authorization": "Bearer sk-client",
        "x-api-key": "sk-client",
        "x-goog-api-key": "sk-client",
        "api-key": "sk-client",
        "Host": "attacker.example",
        "X-Title": "my app",
    }
    response, sent, model = await through_proxy(nursery, provider, {}, {"headers": headers})
    assert response.status_code == 200, response.text
    (request,) = sent
    check_sent_clean(provider, request, model)
    assert request.headers["x-title"] == "my app"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_options_the_policy_allows_reach_the_provider(
    nursery: trio.Nursery, provider: Provider
) -> None:
    """Allowed options pass at their edges: the model's own maxTokens, a seed."""
    model = catalog_model(provider)
    options = {"maxTokens": model.max_tokens, "samplingParams": {"seed": 7, "top_p": 0.5}}
    response, sent, _ = await through_proxy(nursery, provider, {}, options)
    assert response.status_code == 200, response.text
    (request,) = sent
    check_sent_clean(provider, request, model)
    if provider.api in ("openai-completions", "openai-responses", "azure-openai-responses"):
        body = request.json()
        assert (body["seed"], body["top_p"]) == (7, 0.5)


# --------------------------------------------------------------------------- refused models


async def test_a_model_at_another_address_or_not_in_the_catalog_is_refused(
    nursery: trio.Nursery,
) -> None:
    provider = PROVIDERS[0].values[0]
    elsewhere = {"baseUrl": "https://attacker.example"}
    response, sent, _ = await through_proxy(nursery, provider, elsewhere, {})
    assert response.status_code == 403
    assert "must use its catalog baseUrl" in response.json()["error"]
    unknown = {"id": "o3-pro-unlisted"}
    response, sent2, _ = await through_proxy(nursery, provider, unknown, {})
    assert response.status_code == 403
    assert "is not in this proxy's catalog" in response.json()["error"]
    assert sent == sent2 == []


async def test_a_transcript_cannot_declare_a_hosted_tool(nursery: trio.Nursery) -> None:
    """A tool of the transcript is a name, a description and a schema, sent as a function
    tool; one that says it is something else is not a tool the server reads."""
    provider = provider_for("openai-responses")
    model = catalog_model(provider)
    hosted = {"name": "x", "description": "", "parameters": {}, **HOSTED_MCP[0]}
    system = {"role": "system", "content": "s", "toolsAdded": [hosted], "timestamp": 1}
    body = json.loads(request_body(model, {}, {}))
    body["context"]["messages"].insert(0, system)
    app = create_app(tokens=[TOKEN], model_policy=catalog_models_only)
    url = await nursery.start(partial(serve, "127.0.0.1", 0, app=app))
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{url}/api/stream",
            content=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
    assert response.status_code == 400
    assert response.json()["error"] == (
        "Invalid request body: Object contains unknown field `type` - at "
        "`$.context.messages[0].toolsAdded[0]`"
    )


# --------------------------------------------------------------------------- the server's model


def provider_for(api: str) -> Provider:
    return next(p.values[0] for p in PROVIDERS if p.values[0].api == api)


@pytest.mark.parametrize(
    ("provider_id", "model_id"),
    [("github-copilot", "claude-haiku-4.5"), ("nvidia", "google/gemma-3-12b-it")],
)
async def test_a_model_that_needs_its_catalog_headers_gets_them_through_the_proxy(
    nursery: trio.Nursery, provider_id: str, model_id: str
) -> None:
    """GitHub Copilot wants its editor headers, NVIDIA its polling header: the server's
    catalog entry carries them, and they go out as the catalog writes them."""
    model = get_model(provider_id, model_id)
    assert model is not None
    assert model.headers
    provider = provider_for(model.api)
    response, requests, _ = await through_proxy(nursery, provider, {}, {}, model)
    assert response.status_code == 200, response.text
    assert b'"type":"done"' in response.content
    (sent,) = requests
    for name, value in model.headers.items():
        assert sent.headers[name.lower()] == value, name


RADIUS_FIELDS = {  # what the original's catalog gives a Radius model beyond pi_trio's
    "lab": "Moonshot AI",
    "enabled": True,
    "providers": [{"id": "openrouter", "name": "OpenRouter", "credential": "radius"}],
    "free": False,
}


async def test_a_model_with_fields_this_version_does_not_know_is_served(
    nursery: trio.Nursery,
) -> None:
    """A Radius model as the original's 1.6 catalog writes it, with ``lab``, ``enabled``,
    ``providers`` and ``free``: the client's copy only names the model, so fields the
    server does not know are no reason to refuse it."""
    provider = provider_for("pi-messages")
    response, sent, model = await through_proxy(nursery, provider, RADIUS_FIELDS, {})
    assert response.status_code == 200, response.text
    assert b'"type":"done"' in response.content
    (request,) = sent
    check_sent_clean(provider, request, model)
    assert b"Moonshot" not in request.content
