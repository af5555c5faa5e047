"""Cassettes: every provider's traffic recorded against a loopback server that echoes the
key back (in a header, a cookie and the body: raw, URL-encoded, base64), then replayed
offline with another key. No form of the key is in the file; the replay gives the same
answer; a request the cassette does not hold fails naming the closest one."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote

import anyio
import pytest
import trio

from pi_trio.ai import AssistantMessage, Context, UserMessage, complete
from pi_trio.testing import (
    CassetteTransport,
    RecordingTransport,
    SSEReply,
    cassette_registry,
    registry_with_transport,
    serve_sse,
)
from pi_trio.testing._redact import Redactor, secret_forms

from .fault_providers_support import KEY, PROVIDERS, Provider
from .fault_server import FaultConn, chunk, head, serve_faults
from .provider_support import at_url

providers = pytest.mark.parametrize("provider", PROVIDERS)
REPLAY_KEY = "sk-replay-only-key-9876543210"


def ask(text: str = "hello") -> Context:
    return Context(messages=[UserMessage(content=text, timestamp=1)])


def key_forms(key: str) -> list[bytes]:
    """The key as a file could hold it: raw, URL-encoded, JSON-escaped, base64 at each
    alignment (the middle of the encoding, which depends on the key alone)."""
    forms = [key.encode(), quote(key, safe="").encode(), quote_plus(key).encode()]
    forms.append(json.dumps(key)[1:-1].encode())
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + key.encode())
        forms.append(encoded[4:-4])
        forms.append(base64.urlsafe_b64encode(b"\0" * offset + key.encode())[4:-4])
    return forms


def echoing_reply(provider: Provider, key: str) -> SSEReply:
    """The recorded answer, with the key echoed in headers and, for SSE, in a comment."""
    echo = f"{key} {quote(key, safe='')} {base64.b64encode(key.encode()).decode()}"
    body = provider.body
    if provider.sse:
        body = f": echo {echo}\n\n".encode() + body
    headers = {
        "content-type": provider.content_type,
        "x-echo": key,
        "set-cookie": f"session={key}; Path=/",
    }
    return SSEReply(body, headers=headers)


async def record(provider: Provider, path: Path, key: str) -> tuple[AssistantMessage, Any]:
    async with serve_sse([echoing_reply(provider, key)]) as server:
        registry = registry_with_transport(RecordingTransport(path))
        try:
            message = await complete(
                at_url(provider.model, server.url), ask(), api_key=key, registry=registry
            )
        finally:
            await registry.aclose()
    return message, server


async def replay(provider: Provider, transport: CassetteTransport, text: str = "hello") -> Any:
    registry = registry_with_transport(transport)
    try:
        # a URL nothing listens on: the answer can only come from the cassette
        model = at_url(provider.model, "http://127.0.0.1:9")
        # another key of the provider's shape (Codex's names the account it bills)
        key = provider.key.replace(KEY, REPLAY_KEY)
        return await complete(model, ask(text), api_key=key, registry=registry)
    finally:
        await registry.aclose()


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@providers
async def test_a_recorded_exchange_replays_offline_and_holds_no_key(
    provider: Provider, tmp_path: Path
) -> None:
    path = tmp_path / "cassette.jsonl"
    live, server = await record(provider, path, provider.key)
    assert live.stop_reason == "stop", live.error_message
    assert len(server.requests) == 1

    saved = path.read_bytes()
    for form in key_forms(provider.key):
        assert form not in saved, form
    lines = records(path)
    assert lines[0] == {"cassette": "pi_trio", "version": 1}
    assert [r["kind"] for r in lines[1:3]] == ["request", "response"]
    assert lines[-1] == {"id": 1, "kind": "end", "complete": True}
    request, response = lines[1], lines[2]
    assert request["headers"][provider.auth_header] in ("[redacted]", "Bearer [redacted]")
    assert response["headers"]["x-echo"] == "[redacted]"
    assert request["path"] == unquote(server.requests[0].path.partition("?")[0])

    transport = CassetteTransport(path)
    again = await replay(provider, transport)
    assert again.stop_reason == "stop", again.error_message
    assert again.content == live.content
    assert again.usage == live.usage
    assert transport.misses == []


@pytest.mark.parametrize("provider", PROVIDERS[:1])
async def test_a_request_the_cassette_lacks_names_the_closest_and_what_differs(
    provider: Provider, tmp_path: Path
) -> None:
    path = tmp_path / "cassette.jsonl"
    await record(provider, path, provider.key)
    transport = CassetteTransport(path)

    changed = await replay(provider, transport, "hello, world")
    assert changed.stop_reason == "error"
    text = changed.error_message or ""
    assert text.startswith(f"CassetteMiss: No exchange of the cassette {str(path)!r} matches POST")
    assert "the closest, #1 POST /v1/messages, differs in the body from byte" in text
    assert "'hello'" in text or 'hello"' in text
    assert "PI_TRIO_RECORD=1" in text
    assert transport.misses == [text.removeprefix("CassetteMiss: ")]

    assert (await replay(provider, transport)).stop_reason == "stop"
    twice = await replay(provider, transport)
    assert "answered POST /v1/messages" in (twice.error_message or "")
    assert "1 time(s) already" in (twice.error_message or "")


@pytest.mark.parametrize("provider", PROVIDERS[:1])
async def test_timing_is_recorded_and_replayed_on_anyios_clock(
    provider: Provider, tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    path = tmp_path / "cassette.jsonl"
    chunks = [bytes(event) for event in provider.events]

    async with serve_sse([SSEReply(chunks)]) as server:
        transport = RecordingTransport(path, timing=True)
        registry = registry_with_transport(transport)
        try:
            message = await complete(
                at_url(provider.model, server.url), ask(), api_key=provider.key, registry=registry
            )
        finally:
            await registry.aclose()
    assert message.stop_reason == "stop"
    stamps = [r["at_ms"] for r in records(path) if r.get("kind") in ("response", "chunk")]
    assert stamps == sorted(stamps)
    # a slower pace in the file (10 s between chunks), replayed: the answer takes that long
    lines = records(path)
    chunk_lines = [r for r in lines if r.get("kind") == "chunk"]
    for k, line in enumerate(chunk_lines):
        line["at_ms"] = 10_000.0 * k
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    last = 10_000.0 * (len(chunk_lines) - 1)
    assert last > 0
    start = anyio.current_time()
    again = await replay(provider, CassetteTransport(path, timing=True))
    assert again.stop_reason == "stop"
    assert anyio.current_time() - start >= last / 1000


async def test_cassette_registry_records_when_PI_TRIO_RECORD_is_set_and_replays_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = PROVIDERS[0].values[0]
    path = tmp_path / "recorded.jsonl"
    async with serve_sse([SSEReply(provider.body)]) as server:
        monkeypatch.setenv("PI_TRIO_RECORD", "1")
        registry = cassette_registry(path)
        try:
            live = await complete(
                at_url(provider.model, server.url), ask(), api_key=provider.key, registry=registry
            )
        finally:
            await registry.aclose()
    assert live.stop_reason == "stop"
    monkeypatch.setenv("PI_TRIO_RECORD", "0")
    registry = cassette_registry(path)
    try:
        model = at_url(provider.model, "http://127.0.0.1:9")
        again = await complete(model, ask(), api_key=REPLAY_KEY, registry=registry)
    finally:
        await registry.aclose()
    assert again.content == live.content
    assert len(server.requests) == 1


async def test_a_failed_connection_is_recorded_and_raised_again(tmp_path: Path) -> None:
    provider = PROVIDERS[0].values[0]
    path = tmp_path / "refused.jsonl"
    registry = registry_with_transport(RecordingTransport(path))
    try:
        # nothing listens on port 9
        model = at_url(provider.model, "http://127.0.0.1:9")
        live = await complete(model, ask(), api_key=provider.key, registry=registry)
    finally:
        await registry.aclose()
    assert live.stop_reason == "error"
    assert records(path)[-1]["kind"] == "error"
    again = await replay(provider, CassetteTransport(path))
    assert again.error_message == live.error_message


# --------------------------------------------------------------------------- redaction


def test_credential_query_parameters_and_headers_are_blanked_and_learnt() -> None:
    redactor = Redactor(env={})
    url = redactor.url("https://x.example/v1/m:generate?alt=sse&key=AIzaSECRET-0123456789")
    assert url == "https://x.example/v1/m:generate?alt=sse&key=[redacted]"
    headers = redactor.headers(
        [
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/2025/us-east-1, Signature=abc",
            ),
            ("X-Amz-Security-Token", "FwoGZXIvYXdzEXAMPLETOKEN"),
            ("X-Amz-Date", "20250101T000000Z"),
        ]
    )
    assert headers == {
        "authorization": "AWS4-HMAC-SHA256 [redacted]",
        "x-amz-security-token": "[redacted]",
        "x-amz-date": "20250101T000000Z",
    }
    # learnt: an echo of the token or the key elsewhere is removed too
    echo = b"token FwoGZXIvYXdzEXAMPLETOKEN and key AIzaSECRET-0123456789"
    assert redactor.clean(echo) == b"token [redacted] and key [redacted]"


def test_configured_keys_are_removed_in_every_form() -> None:
    key = "sk-configured-0123456789abcdef"
    redactor = Redactor(env={"OPENAI_API_KEY": key})
    for form in key_forms(key):
        assert form in secret_forms(key)
        text = b"before " + form + b" after"
        assert redactor.clean(text).count(b"[redacted]") >= 1, form
        assert key.encode()[:12] not in redactor.clean(text)


async def test_a_key_cut_between_two_network_reads_is_still_kept_out(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    key = "sk-split-between-chunks-0123"
    provider = PROVIDERS[0].values[0]
    body = f": {key}\n\n".encode() + provider.body
    cut = 12  # inside the key

    async def script(conn: FaultConn) -> None:
        framing = {"content-type": provider.content_type, "transfer-encoding": "chunked"}
        if await conn.send(head(200, framing) + chunk(body[:cut])):
            await anyio.sleep(1)  # the client reads the first part on its own
            await conn.send(chunk(body[cut:]) + b"0\r\n\r\n")

    path = tmp_path / "split.jsonl"
    async with serve_faults(script) as server:
        registry = registry_with_transport(RecordingTransport(path, secrets=[key]))
        try:
            message = await complete(
                at_url(provider.model, server.url),
                ask(),
                api_key="sk-other-0123456789",
                registry=registry,
            )
        finally:
            await registry.aclose()
    assert message.stop_reason == "stop", message.error_message
    saved = path.read_bytes()
    assert key.encode()[:8] not in saved
    assert key.encode()[-8:] not in saved
    assert b": [redacted]" in saved


def test_a_broken_cassette_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"cassette": "pi_trio", "version": 1}\n' + "[" * 100_000 + "\n")
    with pytest.raises(ValueError, match=r"broken\.jsonl:2: not a cassette's JSON line"):
        CassetteTransport(path)
    path.write_text('{"id": 1}\n')
    with pytest.raises(ValueError, match=r"broken\.jsonl:1: not a pi_trio cassette"):
        CassetteTransport(path)
