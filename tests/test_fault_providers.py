"""The fault suite, providers: a misbehaving loopback server (resets, truncation, garbage,
huge lines and bodies, stalls, redirects, wrong content types, 204s, keys echoed back)
against every HTTP provider (``fault_providers_support.PROVIDERS``). Every fault ends in
exactly one terminal event, last, with a text that names the fault and never the key;
nothing hangs, nothing raises."""

from __future__ import annotations

import functools
import gzip
import json
import tracemalloc
from typing import Any, NamedTuple
from urllib.parse import quote

import anyio
import httpx2
import pytest
import trio

from pi_trio.ai import AssistantMessage, Context, UserMessage, open_stream
from pi_trio.ai._http_body import ERROR_BODY_READ_LIMIT
from pi_trio.ai.providers import ProviderRegistry, _eventstream, _sse
from pi_trio.testing import SSEReply, serve_sse

from .fault_providers_support import GARBAGE, PROVIDERS, Provider, bedrock_prelude
from .fault_server import (
    CountingTransport,
    FaultConn,
    chunk,
    head,
    loopback_registry,
    serve_faults,
    shared_tls_context,
)
from .provider_support import at_url

# One network read brings at most this much (httpcore's read size).
NETWORK_READ = 64 * 1024
HUGE = 32 * 1024 * 1024
# What the event limits are lowered to, so that crossing them takes little time.
EVENT_LIMIT = 256 * 1024

pytestmark = pytest.mark.parametrize("provider", PROVIDERS)


# Cases that do not apply to a provider are skipped in these synchronous fixtures: a skip
# raised inside a trio test is reported without its reason.


@pytest.fixture
def sse_provider(provider: Provider) -> Provider:
    if not provider.sse:
        pytest.skip("binary frames are read only under their own content type")
    return provider


@pytest.fixture
def closing_provider(provider: Provider) -> Provider:
    if not provider.closing_event:
        pytest.skip("a Gemini stream has no closing event: it may end after any chunk")
    return provider


@pytest.fixture
def garbage_provider(provider: Provider, kind: str) -> Provider:
    if kind == "bad checksum" and provider.sse:
        pytest.skip("SSE has no checksums")
    return provider


@functools.cache
def gzip_bomb() -> bytes:
    return gzip.compress(b"x" * HUGE, compresslevel=9)  # about 32 KiB on the wire


def hello() -> Context:
    return Context(messages=[UserMessage(content="hello", timestamp=1)])


class Outcome(NamedTuple):
    events: list[Any]
    message: AssistantMessage

    @property
    def text(self) -> str:
        return self.message.error_message or ""


def check_one_terminal(events: list[Any]) -> None:
    kinds = [e.type for e in events]
    assert kinds.count("done") + kinds.count("error") == 1, kinds
    assert kinds[-1] in ("done", "error"), kinds


async def stream(
    provider: Provider,
    url: str,
    *,
    registry: ProviderRegistry | None = None,
    key: str | None = None,
    **options: Any,
) -> Outcome:
    owned = registry is None
    registry = registry or loopback_registry()
    try:
        with anyio.fail_after(30):
            async with open_stream(
                at_url(provider.model, url),
                hello(),
                registry=registry,
                api_key=provider.key if key is None else key,
                **options,
            ) as events:
                seen = [event async for event in events]
    finally:
        if owned:
            await registry.aclose()
    check_one_terminal(seen)
    return Outcome(seen, events.result())


def failed(provider: Provider, outcome: Outcome, prefix: str = "") -> str:
    assert outcome.message.stop_reason == "error", outcome.message
    assert outcome.text.startswith(prefix), outcome.text
    assert provider.key[:8] not in outcome.text
    return outcome.text


def reply(status: int, body: bytes, headers: dict[str, str] | None = None) -> Any:
    async def script(conn: FaultConn) -> None:
        all_headers = {"content-length": str(len(body)), **(headers or {})}
        await conn.send(head(status, all_headers) + body)

    return script


def answer(provider: Provider, body: bytes | None = None) -> Any:
    """The recorded answer (or ``body``) with the provider's content type."""
    return reply(200, provider.body if body is None else body, ok_head(provider))


def ok_head(provider: Provider, **headers: str) -> dict[str, str]:
    return {"content-type": provider.content_type, **headers}


# --------------------------------------------------------------------------- keys


async def test_a_key_ending_in_a_newline_is_sent_stripped(provider: Provider) -> None:
    async with serve_faults(answer(provider)) as server:
        outcome = await stream(provider, server.url, key=f"{provider.key}\n")
    assert outcome.message.stop_reason == "stop", outcome.text
    sent = server.requests[0].headers[provider.auth_header]
    assert sent == provider.auth_prefix + provider.key


@pytest.mark.parametrize("bad", ["\n", "\x00", " ", "é"])
async def test_a_key_with_a_character_inside_is_refused_before_any_request(
    provider: Provider, bad: str
) -> None:
    async with serve_faults(answer(provider)) as server:
        outcome = await stream(provider, server.url, key=f"sk-fault-{bad}secret-0123456789")
    prefix = f"The API key for provider {provider.model.provider!r} contains "
    text = failed(provider, outcome, prefix)
    assert "secret" not in text
    assert [e.type for e in outcome.events] == ["error"]
    assert server.requests == []


async def test_a_key_echoed_back_in_every_form_is_redacted(provider: Provider) -> None:
    key = provider.key
    secret = f"{key}\n"
    echoed = " | ".join(
        [
            key,
            json.dumps(secret),
            repr(secret.encode()),
            quote(secret, safe=""),
            f"Bearer {key[:14]}…",
        ]
    )
    body = json.dumps({"error": {"message": f"invalid key: {echoed}"}}).encode()
    async with serve_faults(reply(401, body, {"content-type": "application/json"})) as server:
        outcome = await stream(provider, server.url, key=secret)
    text = failed(provider, outcome)
    assert "invalid key: [redacted]" in text
    assert text.count("[redacted]") == 5, text
    assert key[:8] not in text
    assert key[-8:] not in text


# --------------------------------------------------------------------------- bodies


async def test_a_huge_error_body_is_read_only_a_few_kb_and_its_connection_closed(
    provider: Provider,
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(head(500, {"content-length": str(HUGE)})):
            await conn.send_until_closed(HUGE)

    transport = CountingTransport()
    registry = loopback_registry(transport)
    async with serve_faults(script) as server:
        try:
            outcome = await stream(provider, server.url, registry=registry)
            with anyio.fail_after(10):
                await server.wait_until(lambda s: s.client_closed == 1)
        finally:
            await registry.aclose()
    text = failed(provider, outcome, f"{provider.status_head(500)}xxxx")
    assert text.endswith("... [truncated 4192+ chars]")
    assert transport.bytes_pulled <= ERROR_BODY_READ_LIMIT + NETWORK_READ
    assert server.bytes_sent < HUGE


async def test_a_gzip_bomb_error_body_is_inflated_only_a_few_kb(provider: Provider) -> None:
    bomb = gzip_bomb()
    async with serve_faults(reply(503, bomb, {"content-encoding": "gzip"})) as server:
        tracemalloc.start()
        try:
            outcome = await stream(provider, server.url)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    text = failed(provider, outcome, f"{provider.status_head(503)}xxxx")
    assert len(text) < 4200
    assert peak < HUGE // 4  # inflating it all would hold 32 MiB


async def test_a_huge_200_body_that_is_no_event_stream_is_given_up_on(
    provider: Provider,
) -> None:
    async def script(conn: FaultConn) -> None:
        page = {"content-type": "text/html", "transfer-encoding": "chunked"}
        if await conn.send(head(200, page) + chunk(b"<html><body>")):
            await conn.send_until_closed(HUGE, chunked=True)

    transport = CountingTransport()
    registry = loopback_registry(transport)
    async with serve_faults(script) as server:
        try:
            outcome = await stream(provider, server.url, registry=registry)
        finally:
            await registry.aclose()
    failed(
        provider,
        outcome,
        "200 status code: expected an event stream, got content-type 'text/html': <html><body>xxx",
    )
    assert transport.bytes_pulled <= ERROR_BODY_READ_LIMIT + 2 * NETWORK_READ


async def test_a_huge_event_is_refused_at_the_event_limit(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sse, "MAX_SSE_EVENT_BYTES", EVENT_LIMIT)
    monkeypatch.setattr(_eventstream, "MAX_PENDING_BYTES", EVENT_LIMIT)
    # an SSE line that never ends; an event-stream message announcing 16 MiB
    start = b"data: " if provider.sse else bedrock_prelude(16 * 1024 * 1024)

    async def script(conn: FaultConn) -> None:
        if await conn.send(head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))):
            await conn.send(chunk(start))
            await conn.send_until_closed(HUGE, chunked=True)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    if provider.sse:
        expected = f"The response stream sent more than {EVENT_LIMIT} bytes without ending an event"
    else:
        expected = f"Bedrock event stream message is larger than {EVENT_LIMIT} bytes"
    failed(provider, outcome, expected)
    assert server.bytes_sent < HUGE


# --------------------------------------------------------------------------- statuses


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_an_error_naming_status_and_location(
    provider: Provider, status: int
) -> None:
    async with serve_faults(answer(provider)) as elsewhere:
        target = f"{elsewhere.url}/stolen?x=1"
        async with serve_faults(reply(status, b"", {"location": target})) as server:
            outcome = await stream(provider, server.url)
    assert failed(provider, outcome) == (
        f"{status} redirect to {target!r} not followed: requests carry an API key and are "
        "never redirected; set the model's base_url to the final address"
    )
    assert "\n" not in outcome.text
    assert len(server.requests) == 1
    assert elsewhere.requests == []


async def test_a_redirect_is_not_followed_by_a_client_configured_to(provider: Provider) -> None:
    class Following(ProviderRegistry):
        def http_client(self) -> httpx2.AsyncClient:
            client = getattr(self, "_following", None)
            if client is None:
                client = self._following = httpx2.AsyncClient(
                    follow_redirects=True, verify=shared_tls_context()
                )
            return client

        async def aclose(self) -> None:
            await self.http_client().aclose()

    registry = Following()
    async with (
        serve_faults(answer(provider)) as elsewhere,
        serve_faults(reply(307, b"", {"location": elsewhere.url})) as server,
    ):
        try:
            outcome = await stream(provider, server.url, registry=registry)
        finally:
            await registry.aclose()
    failed(provider, outcome, f"307 redirect to {elsewhere.url!r} not followed")
    assert elsewhere.requests == []


async def test_a_204_is_an_error_not_an_empty_answer(provider: Provider) -> None:
    async with serve_faults(reply(204, b"")) as server:
        outcome = await stream(provider, server.url)
    assert failed(provider, outcome) == (
        "204 status code (no body): expected an event stream (no content-type)"
    )


@pytest.mark.parametrize(
    ("content_type", "body", "shown"),
    [
        ("text/html; charset=utf-8", b"<html>Sign in to the Wi-Fi</html>", "<html>Sign in"),
        ("application/json", b'{"error": {"message": "quota exceeded"}}', "quota exceeded"),
        ("text/event-stream", b": keep-alive\n\n", ": keep-alive"),
    ],
)
async def test_a_200_without_events_names_its_content_type(
    provider: Provider, content_type: str, body: bytes, shown: str
) -> None:
    async with serve_faults(reply(200, body, {"content-type": content_type})) as server:
        outcome = await stream(provider, server.url)
    kind = f"content-type {content_type!r}"
    failed(provider, outcome, f"200 status code: expected an event stream, got {kind}: {shown}")


async def test_an_event_stream_labelled_wrongly_is_still_read(sse_provider: Provider) -> None:
    provider = sse_provider
    async with serve_faults(reply(200, provider.body, {"content-type": "text/plain"})) as server:
        outcome = await stream(provider, server.url)
    assert outcome.message.stop_reason == "stop", outcome.text
    assert outcome.message.content


# --------------------------------------------------------------------------- transport


async def test_a_reset_mid_stream_keeps_the_content_so_far(provider: Provider) -> None:
    body = provider.body

    async def script(conn: FaultConn) -> None:
        first = provider.through_first_text
        framing = ok_head(provider, **{"content-length": str(len(body))})
        if await conn.send(head(200, framing) + first):
            await anyio.sleep(0.05)
            conn.reset()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(provider, outcome, "Network error")
    assert any(e.type == "text_delta" for e in outcome.events)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_body_cut_short_is_a_network_error(provider: Provider, framing: str) -> None:
    body = provider.body
    cut = body[: len(body) // 2]

    async def script(conn: FaultConn) -> None:
        if framing == "chunked":
            framed = ok_head(provider, **{"transfer-encoding": "chunked"})
            await conn.send(head(200, framed) + chunk(cut))
        else:
            framed = ok_head(provider, **{"content-length": str(len(body))})
            await conn.send(head(200, framed) + cut)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(provider, outcome, "Network error: the server closed the connection mid-response")


async def test_a_stream_that_ends_before_its_last_event_is_an_error(
    closing_provider: Provider,
) -> None:
    provider = closing_provider
    async with serve_faults(answer(provider, provider.through_first_text)) as server:
        outcome = await stream(provider, server.url)
    failed(provider, outcome)
    assert any(e.type == "text_delta" for e in outcome.events)


@pytest.mark.parametrize("broken", ["status line", "binary", "chunk framing"])
async def test_broken_http_is_a_network_error(provider: Provider, broken: str) -> None:
    garbage = {
        "status line": b"HTTP/1.1 2OO OK\r\n\r\n",
        "binary": b"\x00\xff\x13\x37 garbage\r\n\r\n",
        "chunk framing": head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))
        + b"zz\r\nnot a chunk\r\n",
    }[broken]

    async def script(conn: FaultConn) -> None:
        await conn.send(garbage)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(provider, outcome, "Network error")


@pytest.mark.parametrize("kind", list(GARBAGE))
async def test_garbage_events_are_an_error_outcome(garbage_provider: Provider, kind: str) -> None:
    provider = garbage_provider
    async with serve_faults(answer(provider, provider.garbage(kind))) as server:
        outcome = await stream(provider, server.url)
    if provider.lenient_chunks and kind == "wrong shapes":
        # Gemini chunks of an unknown shape are skipped (decoded leniently)
        assert outcome.message.content == []
        return
    failed(provider, outcome)


async def test_a_stall_before_the_response_times_out(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url, timeout_ms=5000)
    failed(provider, outcome, "Request timed out while waiting for data")


async def test_a_stall_mid_stream_times_out_keeping_the_content_so_far(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    first = provider.through_first_text

    async def script(conn: FaultConn) -> None:
        framed = ok_head(provider, **{"transfer-encoding": "chunked"})
        if await conn.send(head(200, framed) + chunk(first)):
            await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url, timeout_ms=5000)
        with anyio.fail_after(5):
            await server.wait_until(lambda s: s.client_closed == 1)
    failed(provider, outcome, "Request timed out while waiting for data")
    assert any(e.type == "text_delta" for e in outcome.events)


# --------------------------------------------------------------------------- request body

# Sampling parameters naming what a request is: another model, an OpenAI-hosted MCP tool
# (the vendor would call the URL), a stored response, OpenRouter's data collection.
HOSTILE_SAMPLING = {
    "model": "o3-pro",
    "tools": [{"type": "mcp", "server_label": "x", "server_url": "https://attacker.example"}],
    "store": True,
    "provider": {"data_collection": "allow"},
}
SAMPLING_APIS = ("openai-completions", "openai-responses", "azure-openai-responses")


async def test_sampling_params_never_set_what_the_request_builder_owns(
    provider: Provider,
) -> None:
    """The APIs that take sampling parameters refuse ones naming a key their builder
    owns, before sending; the others never put sampling parameters in the body."""
    replies = [SSEReply(provider.body, headers={"content-type": provider.content_type})]
    async with serve_sse(replies) as server:
        outcome = await stream(provider, server.url, sampling_params=HOSTILE_SAMPLING)
    if provider.api in SAMPLING_APIS:
        text = failed(provider, outcome, "sampling_params may not set ")
        assert all(f"'{key}'" in text for key in ("model", "store", "tools")), text
        assert server.requests == []
        return
    assert outcome.message.stop_reason == "stop", outcome.text
    (sent,) = server.requests
    seen = (sent.path + sent.content.decode("latin-1")).lower()
    for marker in ("o3-pro", "attacker.example", "data_collection", '"store":true'):
        assert marker not in seen.replace(" ", ""), marker
