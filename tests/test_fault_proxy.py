"""The fault suite, proxy: the server under a request-smuggling shape, client-chosen
headers, stalled uploads, deeply nested JSON and a key that must not leak; the client
against redirects, huge error bodies and a bad token. Servers run in the test's nursery
on free loopback ports; raw sockets where the attack is below HTTP clients."""

from __future__ import annotations

import gc
import json
import re
import tracemalloc
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
import msgspec
import pytest
import trio

from pi_trio.agent import stream_proxy
from pi_trio.ai import AssistantMessage, Context, Model, UserMessage, complete, get_model
from pi_trio.ai._http_body import ERROR_BODY_READ_LIMIT
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.proxy import (
    DEFAULT_FORWARD_HEADERS,
    ProxyApp,
    catalog_models_only,
    create_app,
    serve,
)
from pi_trio.proxy import _rebuild as proxy_rebuild
from pi_trio.proxy._access import serve_model
from pi_trio.proxy._body import (
    ASCII_BYTE_COST,
    BYTE_COST,
    DRAIN_LIMIT,
    VALUE_COST,
    memory_estimate,
)
from pi_trio.testing import (
    FauxProvider,
    ServedRequest,
    SSEReply,
    faux_assistant_message,
    serve_sse,
)

from .fault_providers_support import PROVIDERS, Provider
from .fault_server import CountingTransport, FaultConn, head, serve_faults
from .proxy_memory_support import SHAPES, serve_discarding
from .proxy_memory_support import body_of as shape_body
from .test_fault_proxy_policy import catalog_model, keyed_registry

TOKEN = "proxy-token-0123456789"
SERVER_KEY = "sk-ant-server-secret-0123456789"
FIXTURES = Path(__file__).parent / "fixtures"
NETWORK_READ = 64 * 1024
# The size of the bodies measured: large enough for the server's fixed costs per request
# to be small beside what the body becomes.
MEASURED_SIZE = 128 * 1024


def serve_any(model: Model) -> Model:
    return model


def catalog_at(url: str) -> Any:
    """The default policy, serving the catalog entry at ``url`` (an operator's catalog)."""

    def policy(model: Model) -> Model | str:
        served = catalog_models_only(model)
        return served if isinstance(served, str) else msgspec.structs.replace(served, base_url=url)

    return policy


def hello() -> Context:
    return Context(messages=[UserMessage(content="hello", timestamp=1)])


async def start(nursery: trio.Nursery, **options: Any) -> tuple[str, ProxyApp]:
    options.setdefault("model_policy", serve_any)
    app = create_app(tokens=[TOKEN], **options)
    url = await nursery.start(partial(serve, "127.0.0.1", 0, app=app))
    return url, app


def faux_registry(text: str = "ok") -> tuple[ProviderRegistry, Model]:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message(text)] * 8)
    registry = ProviderRegistry(builtins=False)
    faux.register(registry)
    model = faux.get_model()
    assert model is not None
    return registry, model


def body_for(model: Model, **options: Any) -> bytes:
    return msgspec.json.encode(
        {"model": model, "context": {"messages": hello().messages}, "options": options}
    )


async def exchange(url: str, data: bytes) -> bytes:
    """Send raw bytes to the server and read until it closes the connection."""
    host, port = url.removeprefix("http://").split(":")
    received = b""
    with anyio.fail_after(120):
        async with await anyio.connect_tcp(host, int(port)) as stream:
            await stream.send(data)
            while True:
                try:
                    received += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return received


def statuses(raw: bytes) -> list[int]:
    return [int(code) for code in re.findall(rb"HTTP/1\.1 (\d{3}) ", raw)]


async def until(condition: Any) -> None:
    with trio.fail_after(30):
        while not condition():  # noqa: ASYNC110 (the server's counters are plain ints)
            await trio.sleep(0.001)


def raw_request(path: str, body: bytes, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: proxy"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# --------------------------------------------------------------------------- smuggling


async def test_transfer_encoding_with_content_length_is_refused_and_closed(
    nursery: trio.Nursery,
) -> None:
    registry, _ = faux_registry()
    url, _ = await start(nursery, registry=registry)
    smuggled = b"GET /api/stream HTTP/1.1\r\nHost: proxy\r\n\r\n"
    attack = raw_request(
        "/api/stream",
        b"0\r\n\r\n" + smuggled,
        Authorization=f"Bearer {TOKEN}",
        Content_Length="5",
        Transfer_Encoding="chunked",
    )
    answer = await exchange(url, attack)
    assert statuses(answer) == [400]
    assert b"connection: close" in answer.lower()
    assert b"Transfer-Encoding and Content-Length together" in answer


async def test_a_plain_chunked_request_is_still_served(nursery: trio.Nursery) -> None:
    registry, model = faux_registry("chunked ok")
    url, _ = await start(nursery, registry=registry)
    body = body_for(model)
    request = raw_request(
        "/api/stream",
        b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body),
        Authorization=f"Bearer {TOKEN}",
        Transfer_Encoding="chunked",
        Connection="close",
    )
    answer = await exchange(url, request)
    assert statuses(answer) == [200]
    assert b"chunked ok" in answer


def endless_chunks(size: int) -> bytes:
    """Chunks of a chunked body holding more than ``size`` bytes, without its last chunk."""
    piece = b"x" * NETWORK_READ
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(size // len(piece) + 1))


async def test_a_body_declared_far_too_large_is_refused_before_it_is_read(
    nursery: trio.Nursery,
) -> None:
    registry, _ = faux_registry()
    url, _ = await start(nursery, registry=registry, max_body_bytes=4096, body_timeout=30)
    declared = str(4096 + DRAIN_LIMIT + 1)
    with trio.fail_after(10):  # well before the body timeout: no byte of it is awaited
        answer = await exchange(
            url,
            raw_request(
                "/api/stream", b"", Authorization=f"Bearer {TOKEN}", Content_Length=declared
            ),
        )
    assert statuses(answer) == [413]


async def test_an_endless_upload_is_refused_once_past_the_drain_limit(
    nursery: trio.Nursery,
) -> None:
    registry, _ = faux_registry()
    url, _ = await start(nursery, registry=registry, max_body_bytes=4096, body_timeout=30)
    upload = raw_request(
        "/api/stream",
        endless_chunks(4096 + DRAIN_LIMIT),
        Authorization=f"Bearer {TOKEN}",
        Transfer_Encoding="chunked",
    )
    with trio.fail_after(10):  # well before the body timeout: the rest is not awaited
        answer = await exchange(url, upload)
    assert statuses(answer) == [413]


async def test_a_smuggling_attempt_is_drained_only_up_to_the_drain_limit(
    nursery: trio.Nursery,
) -> None:
    registry, _ = faux_registry()
    url, _ = await start(nursery, registry=registry, body_timeout=30)
    attack = raw_request(
        "/api/stream",
        endless_chunks(DRAIN_LIMIT),
        Authorization=f"Bearer {TOKEN}",
        Content_Length="5",
        Transfer_Encoding="chunked",
    )
    with trio.fail_after(10):
        answer = await exchange(url, attack)
    assert statuses(answer) == [400]


# --------------------------------------------------------------------------- headers


async def test_only_allowed_headers_reach_the_provider_next_to_the_servers_key(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SERVER_KEY)
    recorded = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    hostile = {
        "Host": "evil.example",
        "Transfer-Encoding": "chunked",
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Authorization": "Bearer sk-client",
        "x-api-key": "sk-client",
        "Content-Length": "0",
        "anthropic-version": "1999-01-01",
    }
    async with serve_sse([SSEReply(recorded)]) as upstream:
        base = get_model("anthropic", "claude-haiku-4-5")
        assert base is not None
        # the client's copy of the model: its headers are never read
        model = msgspec.structs.replace(base, headers={**hostile, "X-Title": "from the model"})
        registry = ProviderRegistry()
        url, _ = await start(nursery, registry=registry, model_policy=catalog_at(upstream.url))
        options = {**hostile, "anthropic-beta": "from-the-options", "X-Title": "from the options"}
        body = body_for(model, headers=options)
        try:
            async with httpx2.AsyncClient() as http:
                response = await http.post(
                    f"{url}/api/stream",
                    content=body,
                    headers={"Authorization": f"Bearer {TOKEN}"},
                )
        finally:
            await registry.aclose()
    assert response.status_code == 200
    assert b'"type":"done"' in response.content
    (sent,) = upstream.requests
    assert sent.headers["host"] == upstream.url.removeprefix("http://")
    assert sent.headers["x-api-key"] == SERVER_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["x-title"] == "from the options"
    assert "from-the-options" in sent.headers["anthropic-beta"]
    for name in ("authorization", "transfer-encoding", "upgrade"):
        assert name not in sent.headers
    assert sent.headers.get("connection", "keep-alive") == "keep-alive"


async def test_a_trusting_policy_sends_the_clients_model_headers_but_never_framing_ones(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lambda model: model`` serves every field a client sends, its headers too; the
    headers that frame the HTTP message are dropped from any model."""
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SERVER_KEY)
    recorded = (FIXTURES / "anthropic" / "text.sse").read_bytes()
    async with serve_sse([SSEReply(recorded)]) as upstream:
        base = get_model("anthropic", "claude-haiku-4-5")
        assert base is not None
        framing = {"Host": "evil.example", "Transfer-Encoding": "chunked", "Connection": "close"}
        model = msgspec.structs.replace(
            base, base_url=upstream.url, headers={**framing, "X-Team": "blue"}
        )
        registry = ProviderRegistry()
        url, _ = await start(nursery, registry=registry)  # serve_any
        try:
            async with httpx2.AsyncClient() as http:
                fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
                result = await complete(model, hello(), stream_fn=fn)
        finally:
            await registry.aclose()
    assert result.stop_reason == "stop", result.error_message
    (sent,) = upstream.requests
    assert sent.headers["x-team"] == "blue"
    assert sent.headers["host"] == upstream.url.removeprefix("http://")
    assert "transfer-encoding" not in sent.headers
    assert sent.headers.get("connection", "keep-alive") == "keep-alive"


def test_a_policy_that_answers_neither_a_model_nor_a_reason_is_a_bug_named() -> None:
    with pytest.raises(TypeError, match=r"^the proxy's model_policy returned None: return the"):
        serve_model(lambda model: None, faux_registry()[1])  # type: ignore[arg-type, return-value]


# The headers the README says no client may have forwarded.
NEVER_FORWARDED = (
    "Authorization", "x-api-key", "x-goog-api-key", "api-key", "cf-aig-authorization",
    "Proxy-Authorization", "Cookie", "Host", "Content-Length", "Transfer-Encoding",
    "Connection", "Upgrade", "TE", "Trailer", "Keep-Alive",
)  # fmt: skip


def test_no_client_may_be_allowed_the_headers_of_the_key_or_the_message() -> None:
    for name in NEVER_FORWARDED:
        with pytest.raises(ValueError, match=rf"forward_headers may not name '{name.lower()}'"):
            create_app(tokens=[TOKEN], forward_headers=[*DEFAULT_FORWARD_HEADERS, name])
    with pytest.raises(TypeError, match=r"forward_headers must be a collection of names"):
        create_app(tokens=[TOKEN], forward_headers="x-title")


# --------------------------------------------------------------------------- uploads


async def test_stalled_uploads_hold_no_stream_slot(nursery: trio.Nursery) -> None:
    registry, model = faux_registry("served")
    url, app = await start(nursery, registry=registry, max_streams=2, body_timeout=3600)
    host, port = url.removeprefix("http://").split(":")
    stalled: list[Any] = []
    try:
        for _ in range(6):
            stream = await anyio.connect_tcp(host, int(port))
            stalled.append(stream)
            await stream.send(
                raw_request(
                    "/api/stream",
                    b'{"model": ',
                    Authorization=f"Bearer {TOKEN}",
                    Content_Length="999",
                )
            )
        await until(lambda: app.reading_bodies + app.active_streams == 6)
        async with httpx2.AsyncClient() as http:
            fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
            result = await complete(model, hello(), stream_fn=fn)
        assert result.stop_reason == "stop", result.error_message
        await until(lambda: app.active_streams == 0)
    finally:
        for stream in stalled:
            await stream.aclose()


async def test_a_stalled_upload_is_answered_408_and_closed(
    nursery: trio.Nursery, autojump_clock: trio.abc.Clock
) -> None:
    registry, _ = faux_registry()
    url, app = await start(nursery, registry=registry, body_timeout=30)
    started = trio.current_time()
    answer = await exchange(
        url,
        raw_request(
            "/api/stream", b'{"model": ', Authorization=f"Bearer {TOKEN}", Content_Length="999"
        ),
    )
    assert statuses(answer) == [408]
    assert b"Request body not received within 30 s" in answer
    assert 30 <= trio.current_time() - started < 31
    assert (app.reading_bodies, app.active_streams) == (0, 0)


# --------------------------------------------------------------------------- memory

BUDGET = 100_000


async def stall(url: str, declared: int, sent: bytes = b'{"model": ') -> anyio.abc.SocketStream:
    """A connection that declares a body of ``declared`` bytes and sends only ``sent``."""
    host, port = url.removeprefix("http://").split(":")
    stream = await anyio.connect_tcp(host, int(port))
    head = raw_request(
        "/api/stream", sent, Authorization=f"Bearer {TOKEN}", Content_Length=str(declared)
    )
    await stream.send(head)
    return stream


async def test_uploads_beyond_the_bytes_in_flight_are_answered_503(
    nursery: trio.Nursery,
) -> None:
    """Two stalled uploads hold 80 000 of the 100 000 bytes they declared; a third is
    answered 503 before any of its body is read; a small request still fits; when the
    stalled ones go, their bytes are free again."""
    registry, model = faux_registry("fits")
    url, app = await start(nursery, registry=registry, max_bytes_in_flight=BUDGET)
    stalled = [await stall(url, 40_000), await stall(url, 40_000)]
    try:
        await until(lambda: app.bytes_in_flight == 80_000)
        with trio.fail_after(10):
            answer = await exchange(
                url, raw_request("/api/stream", b"", Authorization=f"Bearer {TOKEN}",
                                 Content_Length="40000"),
            )  # fmt: skip
        assert statuses(answer) == [503]
        assert b"retry-after: 1" in answer.lower()
        assert b"(100000 bytes, max_bytes_in_flight); try again shortly" in answer
        small = body_for(model)
        assert memory_estimate(small) < BUDGET - 80_000
        async with httpx2.AsyncClient() as http:
            fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
            result = await complete(model, hello(), stream_fn=fn)
        assert result.stop_reason == "stop", result.error_message
    finally:
        for stream in stalled:
            await stream.aclose()
    await until(lambda: app.bytes_in_flight == 0)
    async with httpx2.AsyncClient() as http:
        fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
        assert (await complete(model, hello(), stream_fn=fn)).stop_reason == "stop"


async def test_a_chunked_upload_that_outgrows_the_budget_is_answered_503_and_closed(
    nursery: trio.Nursery,
) -> None:
    registry, _ = faux_registry()
    url, app = await start(nursery, registry=registry, max_bytes_in_flight=BUDGET)
    upload = raw_request(
        "/api/stream",
        endless_chunks(BUDGET),
        Authorization=f"Bearer {TOKEN}",
        Transfer_Encoding="chunked",
    )
    with trio.fail_after(10):
        answer = await exchange(url, upload)
    assert statuses(answer) == [503]
    assert b"connection: close" in answer.lower()
    await until(lambda: app.bytes_in_flight == 0)


async def test_a_body_that_would_take_more_than_the_whole_budget_is_413(
    nursery: trio.Nursery,
) -> None:
    """Under the body size limit, but its values would decode to more than the budget."""
    registry, model = faux_registry()
    url, app = await start(nursery, registry=registry, max_bytes_in_flight=BUDGET)
    dense = body_for(model, metadata=[{}] * 1000)  # 3 000 bytes, 1 000 values
    assert len(dense) < BUDGET < memory_estimate(dense)
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            f"{url}/api/stream", content=dense, headers={"Authorization": f"Bearer {TOKEN}"}
        )
    assert response.status_code == 413
    assert response.json()["error"] == (
        f"Request body too large: its {len(dense)} bytes would take about "
        f"{memory_estimate(dense)} bytes in memory once decoded, more than the {BUDGET} "
        "bytes this proxy holds for all requests (max_bytes_in_flight)"
    )
    await until(lambda: app.bytes_in_flight == 0)


def test_the_estimate_counts_text_at_its_widest_and_every_value() -> None:
    assert memory_estimate(b'"' + b"a" * 98 + b'"') == 100 * ASCII_BYTE_COST
    assert memory_estimate(rb'"\u00e9"') == 8 * BYTE_COST
    assert memory_estimate('"é"'.encode()) == 4 * BYTE_COST
    # four values, counted from above as five (two commas, three opening brackets)
    assert memory_estimate(b"[{},[],1]") == 9 * ASCII_BYTE_COST + 5 * VALUE_COST


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_what_a_body_becomes_in_memory_stays_under_its_estimate(
    nursery: trio.Nursery, provider: Provider
) -> None:
    """tracemalloc over a whole request through the server (receiving, decoding, the
    provider's request built, encoded and sent) for each of the costliest shapes of body
    per byte: the peak stays under ``memory_estimate``, which the budget counts."""
    model = catalog_model(provider)
    registry = keyed_registry(provider.api, provider.key)
    shown = []
    async with serve_discarding() as upstream:
        url, _ = await start(nursery, registry=registry, model_policy=catalog_at(upstream))
        try:
            async with httpx2.AsyncClient(timeout=60) as http:
                headers = {"Authorization": f"Bearer {TOKEN}"}
                warm = await http.post(
                    f"{url}/api/stream", content=body_for(model), headers=headers
                )
                assert warm.status_code == 200
                for name, shape in SHAPES.items():
                    body = shape_body(model, shape(MEASURED_SIZE))
                    gc.collect()
                    tracemalloc.start()
                    try:
                        response = await http.post(
                            f"{url}/api/stream", content=body, headers=headers
                        )
                        peak = tracemalloc.get_traced_memory()[1]
                    finally:
                        tracemalloc.stop()
                    assert response.status_code == 200, (name, response.text)
                    shown.append(f"{name}: {peak / len(body):.1f}x")
                    assert peak <= memory_estimate(body), (name, peak / len(body))
        finally:
            await registry.aclose()
    print(f"{provider.api}: " + ", ".join(shown))


# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("depth", [300, 5_000, 200_000])
async def test_deeply_nested_json_is_a_400_and_the_server_carries_on(
    nursery: trio.Nursery, depth: int
) -> None:
    registry, model = faux_registry("still here")
    url, _ = await start(nursery, registry=registry)
    nested = "[" * depth + "]" * depth
    body = body_for(model).replace(b'"options":{}', f'"options":{{"metadata":{nested}}}'.encode())
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient() as http:
        refused = await http.post(f"{url}/api/stream", content=body, headers=headers)
        served = await http.post(f"{url}/api/stream", content=body_for(model), headers=headers)
    assert refused.status_code == 400
    assert refused.json()["error"].startswith(f"Invalid request body: JSON nested {depth + 2}")
    assert "MAX_JSON_DEPTH" in refused.json()["error"]
    assert served.status_code == 200
    assert b"still here" in served.content


# --------------------------------------------------------------------------- the key


def echo_key(request: ServedRequest) -> SSEReply:
    key = request.headers["x-api-key"]
    shown = " ".join([key, json.dumps(key), quote(key, safe=""), key[:12]])
    return SSEReply(json.dumps({"error": {"message": f"bad key {shown}"}}).encode(), status=401)


async def ask_anthropic_through(url: str, upstream_url: str) -> AssistantMessage:
    base = get_model("anthropic", "claude-haiku-4-5")
    assert base is not None
    model = msgspec.structs.replace(base, base_url=upstream_url)
    async with httpx2.AsyncClient() as http:
        fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
        return await complete(model, hello(), stream_fn=fn)


async def test_the_servers_key_never_reaches_a_client(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"{SERVER_KEY}\n")
    registry = ProviderRegistry()
    async with serve_sse(echo_key) as upstream:
        url, _ = await start(nursery, registry=registry)
        try:
            result = await ask_anthropic_through(url, upstream.url)
        finally:
            await registry.aclose()
    assert upstream.requests[0].headers["x-api-key"] == SERVER_KEY
    assert result.stop_reason == "error"
    # the Anthropic SDK's wording, as pi 1.6 shows it: the whole JSON body (the escaped
    # key's backslash before its quote goes too: it starts the escaped newline of the key
    # file's "KEY\n", a form that is redacted as far as it matches)
    assert result.error_message == (
        '401 {"error":{"message":"bad key [redacted] \\"[redacted]" [redacted] [redacted]"}}'
    )


async def test_a_catalog_model_under_another_api_is_refused(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Azure reads its address from the server's environment: an OpenAI model relabelled
    as Azure would carry the server's OpenAI key to the Azure endpoint."""
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    recorded = (FIXTURES / "openai_responses" / "text.sse").read_bytes()
    async with serve_sse([SSEReply(recorded)]) as azure:
        monkeypatch.setenv("AZURE_OPENAI_BASE_URL", azure.url)
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "sk-azure-server-key-0123456789")
        base = get_model("openai", "gpt-5-mini")
        assert base is not None
        relabelled = msgspec.structs.replace(base, api="azure-openai-responses")
        registry = ProviderRegistry()
        url, _ = await start(nursery, registry=registry, model_policy=catalog_models_only)
        try:
            async with httpx2.AsyncClient() as http:
                fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
                result = await complete(relabelled, hello(), stream_fn=fn)
        finally:
            await registry.aclose()
    assert azure.requests == []
    assert result.error_message == (
        "Proxy error: Model openai/gpt-5-mini must use its catalog api 'openai-responses', "
        "got 'azure-openai-responses'"
    )


async def test_a_broken_server_key_is_named_but_not_shown(
    nursery: trio.Nursery, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-server\x01secret-0123456789")
    registry = ProviderRegistry()
    async with serve_sse(echo_key) as upstream:
        url, _ = await start(nursery, registry=registry)
        try:
            result = await ask_anthropic_through(url, upstream.url)
        finally:
            await registry.aclose()
    assert upstream.requests == []
    assert result.error_message is not None
    assert result.error_message.startswith(
        "The API key for provider 'anthropic' contains a control character (U+0001) at position 13"
    )
    assert "secret" not in result.error_message


# --------------------------------------------------------------------------- the client


async def client_call(
    url: str, token: str = TOKEN, transport: httpx2.AsyncBaseTransport | None = None
) -> AssistantMessage:
    _, model = faux_registry()
    async with httpx2.AsyncClient(transport=transport) as http:
        fn = stream_proxy(proxy_url=url, auth_token=token, http_client=http)
        with anyio.fail_after(30):
            return await complete(model, hello(), stream_fn=fn)


async def test_the_client_refuses_to_follow_a_redirect() -> None:
    async def elsewhere_script(conn: FaultConn) -> None:
        await conn.send(head(200, {"content-length": "0"}))

    async with serve_faults(elsewhere_script) as elsewhere:

        async def script(conn: FaultConn) -> None:
            await conn.send(head(302, {"location": elsewhere.url, "content-length": "0"}))

        async with serve_faults(script) as server:
            result = await client_call(server.url)
    assert result.error_message == (
        f"Proxy error: 302 Found (redirect to {elsewhere.url!r} not followed)"
    )
    assert elsewhere.requests == []


async def test_the_client_reads_a_huge_error_body_only_a_few_kb() -> None:
    size = 32 * 1024 * 1024

    async def script(conn: FaultConn) -> None:
        if await conn.send(head(500, {"content-length": str(size)})):
            await conn.send_until_closed(size)

    transport = CountingTransport()
    async with serve_faults(script) as server:
        result = await client_call(server.url, transport=transport)
    assert result.error_message == "Proxy error: 500 Internal Server Error"
    assert transport.bytes_pulled <= ERROR_BODY_READ_LIMIT + NETWORK_READ


async def test_the_client_strips_its_token_and_refuses_a_broken_one() -> None:
    async def script(conn: FaultConn) -> None:
        await conn.send(head(401, {"content-length": "0"}))

    async with serve_faults(script) as server:
        stripped = await client_call(server.url, token=f"{TOKEN}\r\n")
        broken = await client_call(server.url, token="proxy-token\n-0123456789")
    assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert stripped.error_message == "Proxy error: 401 Unauthorized"
    assert len(server.requests) == 1
    assert broken.error_message is not None
    assert broken.error_message.startswith(
        f"The auth token for the proxy '{server.url}/api/stream' contains whitespace (U+000A)"
    )
    assert "proxy-token" not in broken.error_message


async def test_the_client_refuses_an_endless_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proxy_rebuild, "MAX_PROXY_LINE_CHARS", 256 * 1024)
    size = 32 * 1024 * 1024

    async def script(conn: FaultConn) -> None:
        stream_head = {"content-type": "text/event-stream", "content-length": str(size + 6)}
        if await conn.send(head(200, stream_head) + b"data: "):
            await conn.send_until_closed(size)

    transport = CountingTransport()
    async with serve_faults(script) as server:
        result = await client_call(server.url, transport=transport)
    assert result.error_message == (
        "The proxy sent more than 262144 characters without a newline "
        "(MAX_PROXY_LINE_CHARS); the stream is broken, so it is not read further"
    )
    assert transport.bytes_pulled < 2 * 1024 * 1024
