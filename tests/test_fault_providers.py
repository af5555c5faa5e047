"""The fault suite, providers: a misbehaving loopback server (resets, truncation, garbage,
huge lines and bodies, stalls, redirects, wrong content types, 204s, keys echoed back)
against all four HTTP providers. Every fault ends in exactly one terminal event, last,
with a text that names the fault and never the key; nothing hangs, nothing raises."""

from __future__ import annotations

import gzip
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

import anyio
import httpx2
import pytest
import trio

from pi_trio.ai import (
    AssistantMessage,
    Context,
    Model,
    ProviderRegistry,
    UserMessage,
    get_model,
    open_stream,
)
from pi_trio.ai._http_body import ERROR_BODY_READ_LIMIT
from pi_trio.ai.providers import _sse
from pi_trio.testing import registry_with_transport

from .fault_server import CountingTransport, FaultConn, chunk, head, serve_faults
from .provider_support import at_url

FIXTURES = Path(__file__).parent / "fixtures"
KEY = "sk-fault-secret-0123456789"
# One network read brings at most this much (httpcore's read size).
NETWORK_READ = 64 * 1024
HUGE = 32 * 1024 * 1024


class Provider(NamedTuple):
    api: str
    model: Model
    fixture: str
    auth_header: str
    auth_prefix: str
    text_marker: bytes  # in the first event of the recorded body that carries text

    def status_text(self, status: int, text: str, *, json_message: bool = False) -> str:
        """How a failed status starts: ``<status> <text>``, or as the vendor SDK and pi 1.6
        word it: the whole JSON body for Anthropic, the JSON of the ``error`` object for
        Chat Completions, with a prefix for OpenAI Responses."""
        if self.api == "anthropic-messages" and json_message:
            return f'{status} {{"error":{{"message":"{text}'
        if self.api == "openai-completions" and json_message:
            return f'{status}: {{"message":"{text}'
        if self.api != "openai-responses":
            return f"{status} {text}"
        if json_message:
            return f'OpenAI API error ({status}): {{"message":"{text}'
        return f"OpenAI API error ({status}): {status} {text}"


def _provider(
    api: str, provider: str, model_id: str, fixture: str, header: str, marker: bytes
) -> Any:
    model = get_model(provider, model_id)
    assert model is not None
    assert model.api == api
    prefix = "Bearer " if header == "authorization" else ""
    return pytest.param(Provider(api, model, fixture, header, prefix, marker), id=api)


PROVIDERS = [
    _provider(
        "anthropic-messages",
        "anthropic",
        "claude-haiku-4-5",
        "anthropic",
        "x-api-key",
        b'"text_delta"',
    ),
    _provider(
        "openai-completions",
        "groq",
        "openai/gpt-oss-120b",
        "openai_completions",
        "authorization",
        b'"content":"H',
    ),
    _provider(
        "openai-responses",
        "openai",
        "gpt-5-mini",
        "openai_responses",
        "authorization",
        b'"response.output_text.delta"',
    ),
    _provider(
        "google-generative-ai",
        "google",
        "gemini-2.5-flash",
        "google",
        "x-goog-api-key",
        b'"text": "H\xc3\xa9llo',
    ),
]

pytestmark = pytest.mark.parametrize("provider", PROVIDERS)


def recorded(provider: Provider) -> bytes:
    return (FIXTURES / provider.fixture / "text.sse").read_bytes()


def through_first_text(provider: Provider) -> bytes:
    """The recorded body up to the end of its first event that carries text."""
    body = recorded(provider)
    end = re.compile(rb"\r?\n\r?\n").search(body, body.index(provider.text_marker))
    assert end is not None
    return body[: end.end()]


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
    key: str = KEY,
    **options: Any,
) -> Outcome:
    owned = registry is None
    registry = registry or ProviderRegistry()
    try:
        with anyio.fail_after(30):
            async with open_stream(
                at_url(provider.model, url), hello(), registry=registry, api_key=key, **options
            ) as events:
                seen = [event async for event in events]
    finally:
        if owned:
            await registry.aclose()
    check_one_terminal(seen)
    return Outcome(seen, events.result())


def failed(outcome: Outcome, prefix: str = "") -> str:
    assert outcome.message.stop_reason == "error", outcome.message
    assert outcome.text.startswith(prefix), outcome.text
    assert KEY[:8] not in outcome.text
    return outcome.text


def reply(status: int, body: bytes, headers: dict[str, str] | None = None) -> Any:
    async def script(conn: FaultConn) -> None:
        all_headers = {"content-length": str(len(body)), **(headers or {})}
        await conn.send(head(status, all_headers) + body)

    return script


SSE = {"content-type": "text/event-stream"}


# --------------------------------------------------------------------------- keys


async def test_a_key_ending_in_a_newline_is_sent_stripped(provider: Provider) -> None:
    async with serve_faults(reply(200, recorded(provider), SSE)) as server:
        outcome = await stream(provider, server.url, key=f"{KEY}\n")
    assert outcome.message.stop_reason == "stop"
    assert server.requests[0].headers[provider.auth_header] == provider.auth_prefix + KEY


@pytest.mark.parametrize("bad", ["\n", "\x00", " ", "é"])
async def test_a_key_with_a_character_inside_is_refused_before_any_request(
    provider: Provider, bad: str
) -> None:
    async with serve_faults(reply(200, recorded(provider), SSE)) as server:
        outcome = await stream(provider, server.url, key=f"sk-fault-{bad}secret-0123456789")
    text = failed(outcome, f"The API key for provider {provider.model.provider!r} contains ")
    assert "secret" not in text
    assert [e.type for e in outcome.events] == ["error"]
    assert server.requests == []


async def test_a_key_echoed_back_in_every_form_is_redacted(provider: Provider) -> None:
    secret = f"{KEY}\n"
    echoed = " | ".join(
        [
            KEY,
            json.dumps(secret),
            repr(secret.encode()),
            quote(secret, safe=""),
            f"Bearer {KEY[:14]}…",
        ]
    )
    body = json.dumps({"error": {"message": f"invalid key: {echoed}"}}).encode()
    async with serve_faults(reply(401, body, {"content-type": "application/json"})) as server:
        outcome = await stream(provider, server.url, key=secret)
    text = failed(outcome, provider.status_text(401, "invalid key: [redacted]", json_message=True))
    assert text.count("[redacted]") == 5
    assert "sk-fault" not in text


# --------------------------------------------------------------------------- bodies


async def test_a_huge_error_body_is_read_only_a_few_kb_and_its_connection_closed(
    provider: Provider,
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(head(500, {"content-length": str(HUGE)})):
            await conn.send_until_closed(HUGE)

    transport = CountingTransport()
    registry = registry_with_transport(transport)
    async with serve_faults(script) as server:
        try:
            outcome = await stream(provider, server.url, registry=registry)
            with anyio.fail_after(10):
                await server.wait_until(lambda s: s.client_closed == 1)
        finally:
            await registry.aclose()
    text = failed(outcome, provider.status_text(500, "xxxx"))
    assert text.endswith("... [truncated 4192+ chars]")
    assert transport.bytes_pulled <= ERROR_BODY_READ_LIMIT + NETWORK_READ
    assert server.bytes_sent < HUGE


async def test_a_gzip_bomb_error_body_is_inflated_only_a_few_kb(provider: Provider) -> None:
    bomb = gzip.compress(b"x" * HUGE, compresslevel=9)  # about 32 KiB on the wire
    async with serve_faults(reply(503, bomb, {"content-encoding": "gzip"})) as server:
        tracemalloc.start()
        try:
            outcome = await stream(provider, server.url)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    text = failed(outcome, provider.status_text(503, "xxxx"))
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
    registry = registry_with_transport(transport)
    async with serve_faults(script) as server:
        try:
            outcome = await stream(provider, server.url, registry=registry)
        finally:
            await registry.aclose()
    failed(
        outcome,
        "200 status code: expected an event stream, got content-type 'text/html': <html><body>xxx",
    )
    assert transport.bytes_pulled <= ERROR_BODY_READ_LIMIT + 2 * NETWORK_READ


async def test_a_huge_line_is_refused_at_the_event_limit(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sse, "MAX_SSE_EVENT_BYTES", 256 * 1024)

    async def script(conn: FaultConn) -> None:
        if await conn.send(head(200, {**SSE, "transfer-encoding": "chunked"})):
            await conn.send(chunk(b"data: "))
            await conn.send_until_closed(HUGE, chunked=True)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(outcome, "The response stream sent more than 262144 bytes without ending an event")
    assert server.bytes_sent < HUGE


# --------------------------------------------------------------------------- statuses


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_is_an_error_naming_status_and_location(
    provider: Provider, status: int
) -> None:
    async with serve_faults(reply(200, recorded(provider), SSE)) as elsewhere:
        target = f"{elsewhere.url}/stolen?x=1"
        async with serve_faults(reply(status, b"", {"location": target})) as server:
            outcome = await stream(provider, server.url)
    assert failed(outcome) == (
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
                client = self._following = httpx2.AsyncClient(follow_redirects=True)
            return client

        async def aclose(self) -> None:
            await self.http_client().aclose()

    registry = Following()
    async with (
        serve_faults(reply(200, recorded(provider), SSE)) as elsewhere,
        serve_faults(reply(307, b"", {"location": elsewhere.url})) as server,
    ):
        try:
            outcome = await stream(provider, server.url, registry=registry)
        finally:
            await registry.aclose()
    failed(outcome, f"307 redirect to {elsewhere.url!r} not followed")
    assert elsewhere.requests == []


async def test_a_204_is_an_error_not_an_empty_answer(provider: Provider) -> None:
    async with serve_faults(reply(204, b"")) as server:
        outcome = await stream(provider, server.url)
    assert failed(outcome) == (
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
    failed(outcome, f"200 status code: expected an event stream, got {kind}: {shown}")


async def test_an_event_stream_labelled_wrongly_is_still_read(provider: Provider) -> None:
    body = recorded(provider)
    async with serve_faults(reply(200, body, {"content-type": "text/plain"})) as server:
        outcome = await stream(provider, server.url)
    assert outcome.message.stop_reason == "stop"
    assert outcome.message.content


# --------------------------------------------------------------------------- transport


async def test_a_reset_mid_stream_keeps_the_content_so_far(provider: Provider) -> None:
    body = recorded(provider)

    async def script(conn: FaultConn) -> None:
        first = through_first_text(provider)
        if await conn.send(head(200, {**SSE, "content-length": str(len(body))}) + first):
            await anyio.sleep(0.05)
            conn.reset()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(outcome, "Network error")
    assert any(e.type == "text_delta" for e in outcome.events)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_body_cut_short_is_a_network_error(provider: Provider, framing: str) -> None:
    body = recorded(provider)
    cut = body[: len(body) // 2]

    async def script(conn: FaultConn) -> None:
        if framing == "chunked":
            await conn.send(head(200, {**SSE, "transfer-encoding": "chunked"}) + chunk(cut))
        else:
            await conn.send(head(200, {**SSE, "content-length": str(len(body))}) + cut)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(outcome, "Network error: the server closed the connection mid-response")


async def test_a_stream_that_ends_before_its_last_event_is_an_error(provider: Provider) -> None:
    if provider.api == "google-generative-ai":
        pytest.skip("a Gemini stream has no closing event: it may end after any chunk")
    body = recorded(provider)
    complete_events = body[: body.index(b"\n\n", len(body) // 3) + 2]
    async with serve_faults(reply(200, complete_events, SSE)) as server:
        outcome = await stream(provider, server.url)
    failed(outcome)


@pytest.mark.parametrize(
    "garbage",
    [
        b"HTTP/1.1 2OO OK\r\n\r\n",
        b"\x00\xff\x13\x37 garbage\r\n\r\n",
        head(200, {**SSE, "transfer-encoding": "chunked"}) + b"zz\r\nnot a chunk\r\n",
    ],
    ids=["status line", "binary", "chunk framing"],
)
async def test_broken_http_is_a_network_error(provider: Provider, garbage: bytes) -> None:
    async def script(conn: FaultConn) -> None:
        await conn.send(garbage)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    failed(outcome, "Network error")


@pytest.mark.parametrize(
    "body",
    [
        b"data: {not json\n\n",
        b"data: " + b"[" * 5000 + b"\n\n",
        b"data: [1, 2]\n\ndata: null\n\n",
        b"event: message_start\ndata: \xff\xfe\n\n",
    ],
    ids=["broken json", "deep nesting", "wrong shapes", "invalid utf-8"],
)
async def test_garbage_events_are_an_error_outcome(provider: Provider, body: bytes) -> None:
    async with serve_faults(reply(200, body, SSE)) as server:
        outcome = await stream(provider, server.url)
    if provider.api == "google-generative-ai" and body.startswith(b"data: [1, 2]"):
        # Gemini chunks of an unknown shape are skipped (decoded leniently)
        assert outcome.message.content == []
        return
    failed(outcome)


async def test_a_stall_before_the_response_times_out(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url, timeout_ms=5000)
    failed(outcome, "Request timed out while waiting for data")


async def test_a_stall_mid_stream_times_out_keeping_the_content_so_far(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    first = through_first_text(provider)

    async def script(conn: FaultConn) -> None:
        if await conn.send(head(200, {**SSE, "transfer-encoding": "chunked"}) + chunk(first)):
            await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url, timeout_ms=5000)
        with anyio.fail_after(5):
            await server.wait_until(lambda s: s.client_closed == 1)
    failed(outcome, "Request timed out while waiting for data")
    assert any(e.type == "text_delta" for e in outcome.events)
