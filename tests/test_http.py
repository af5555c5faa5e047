"""The shared HTTP plumbing: SSE framing, headers, keys, hooks, error texts, retries, the
run wrapper, the replay transport and the loopback server."""

from __future__ import annotations

import email.utils
import gzip
import inspect
import sys
from typing import Any

import anyio
import httpx2
import msgspec
import pytest
import trio

from pi_trio.ai import (
    AssistantMessage,
    Context,
    Model,
    ProviderError,
    StreamOptions,
    StreamProtocolError,
    Usage,
    open_stream,
)
from pi_trio.ai._http_body import ERROR_BODY_READ_LIMIT, read_body_prefix
from pi_trio.ai._stream._registry import BUILTIN_PROVIDER_MODULES
from pi_trio.ai.failures import is_retryable_assistant_error
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import ProviderRegistry, ResponseInfo, _sse
from pi_trio.ai.providers._http import (
    ERROR_BODY_LIMIT,
    ProviderRun,
    backoff_delay_s,
    format_http_error,
    merge_headers,
    provider_error_message,
    redact,
    requested_delay_s,
    resolve_api_key,
    run_provider,
    should_retry,
    transport_error,
)
from pi_trio.ai.providers._sse import SSEEvent, SSEParser
from pi_trio.testing import (
    ReplayResponse,
    ReplayTransport,
    SSEReply,
    registry_with_transport,
    serve_sse,
    split_bytes,
    sse_body,
)

from .provider_support import UNFINISHED_BODY_WARNINGS

KEY = "sk-test-secret-key-123456"

pytestmark = UNFINISHED_BODY_WARNINGS


def make_model(**changes: Any) -> Model:
    model = Model(
        id="m-1",
        name="M",
        api="test-http",
        provider="openai",
        base_url="http://replay",
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=1, output=2, cache_read=0, cache_write=0),
        context_window=100_000,
        max_tokens=1000,
    )
    return msgspec.structs.replace(model, **changes)


# --------------------------------------------------------------------------- SSE framing


def parse_all(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    return events


def test_sse_parses_data_and_event_names() -> None:
    body = b'event: message_start\ndata: {"a":1}\n\ndata: two\n\n'
    assert parse_all([body]) == [SSEEvent("message_start", '{"a":1}'), SSEEvent("", "two")]


@pytest.fixture
def small_event_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_sse, "MAX_SSE_EVENT_BYTES", 100)
    return 100


def test_sse_a_line_that_never_ends_is_refused_past_the_event_limit(
    small_event_limit: int,
) -> None:
    parser = SSEParser()
    parser.feed(b"data: " + b"x" * 90)
    with pytest.raises(ProviderError, match="MAX_SSE_EVENT_BYTES"):
        parser.feed(b"x" * 20)


def test_sse_an_event_whose_data_lines_never_end_is_refused_past_the_limit(
    small_event_limit: int,
) -> None:
    parser = SSEParser()
    for _ in range(9):
        parser.feed(b"data: " + b"y" * 10 + b"\n")
    with pytest.raises(ProviderError, match="MAX_SSE_EVENT_BYTES"):
        parser.feed(b"data: " + b"y" * 20 + b"\n")


def test_sse_many_events_below_the_limit_pass_whatever_their_total(
    small_event_limit: int,
) -> None:
    body = b"".join(b"data: " + b"z" * 80 + b"\n\n" for _ in range(50))
    events = parse_all([body[i : i + 7] for i in range(0, len(body), 7)])
    assert len(events) == 50
    assert all(e.data == "z" * 80 for e in events)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_sse_accepts_every_line_ending(newline: bytes) -> None:
    body = b"event: e\ndata: 1\n\ndata: 2\n\n".replace(b"\n", newline)
    assert parse_all([body]) == [SSEEvent("e", "1"), SSEEvent("", "2")]


def test_sse_joins_multiple_data_lines_with_newlines() -> None:
    assert parse_all([b"data: a\ndata: b\ndata:\n\n"]) == [SSEEvent("", "a\nb\n")]


def test_sse_skips_comments_ids_retries_and_unknown_fields() -> None:
    body = b": keep-alive\n: OPENROUTER PROCESSING\n\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n"
    assert parse_all([body]) == [SSEEvent("", "x")]


def test_sse_data_without_space_and_bare_data_line() -> None:
    assert parse_all([b"data:{}\n\ndata\n\n"]) == [SSEEvent("", "{}"), SSEEvent("", "")]


def test_sse_padding_blank_and_whitespace_lines_between_events() -> None:
    body = b"\n\n\ndata: 1\n\n   \n\t\n\ndata: 2\n \n"
    assert parse_all([body]) == [SSEEvent("", "1"), SSEEvent("", "2")]


def test_sse_event_name_without_data_is_not_dispatched_and_does_not_leak() -> None:
    assert parse_all([b"event: ping\n\ndata: 1\n\n"]) == [SSEEvent("", "1")]


def test_sse_final_event_without_trailing_blank_line_is_delivered_on_close() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: 1\n\ndata: last") == [SSEEvent("", "1")]
    assert parser.close() == [SSEEvent("", "last")]
    assert parser.close() == []


def test_sse_drops_a_leading_byte_order_mark() -> None:
    assert parse_all([b"\xef\xbb", b"\xbfdata: 1\n\n"]) == [SSEEvent("", "1")]


def test_sse_replaces_invalid_utf8_instead_of_raising() -> None:
    assert parse_all([b"data: \xff\xfe\n\n"]) == [SSEEvent("", "\ufffd\ufffd")]


def test_sse_feed_after_close_is_refused() -> None:
    parser = SSEParser()
    parser.close()
    with pytest.raises(RuntimeError, match="after close"):
        parser.feed(b"data: 1\n\n")


def test_sse_split_at_every_byte_boundary_gives_identical_events() -> None:
    body = (
        b'\xef\xbb\xbf: comment\r\nevent: a\r\ndata: {"t":"h\xc3\xa9llo \xf0\x9f\x98\x80"}\r\n\r\n'
        b"data: x\rdata: y\r\r\n\ndata: [DONE]"
    )
    expected = parse_all([body])
    assert expected == [
        SSEEvent("a", '{"t":"héllo 😀"}'),
        SSEEvent("", "x\ny"),
        SSEEvent("", "[DONE]"),
    ]
    for i in range(len(body) + 1):
        assert parse_all([body[:i], body[i:]]) == expected, i
    for j in range(1, len(body)):
        assert parse_all(split_bytes(body, j)) == expected, j


# --------------------------------------------------------------------------- headers, keys


@pytest.mark.parametrize("api", sorted(BUILTIN_PROVIDER_MODULES))
def test_each_builtin_stream_function_keeps_the_name_and_docstring_its_module_gives_it(
    api: str,
) -> None:
    """Error texts and task names name a stream function by its ``__qualname__``; the
    stream functions ``provider_stream`` makes keep the name, module and docstring of the
    coroutine a provider module wrote, with the stream-function signature."""
    provider = ProviderRegistry().get(api)
    assert provider is not None
    for guarded in (provider.stream, provider.stream_simple):
        fn = guarded.__wrapped__  # type: ignore[attr-defined]
        module = sys.modules[fn.__module__]
        assert fn.__qualname__ in module.__all__
        assert getattr(module, fn.__qualname__) is fn
        assert fn.__doc__.strip()
        assert list(inspect.signature(fn).parameters) == ["model", "context", "options", "send"]


def test_merge_headers_later_layers_win_case_insensitively_and_none_removes() -> None:
    merged = merge_headers(
        {"Authorization": "Bearer a", "User-Agent": "x", "X-Keep": "1"},
        {"user-agent": "y"},
        None,
        {"AUTHORIZATION": None, "X-New": "2"},
    )
    assert merged == {"user-agent": "y", "X-Keep": "1", "X-New": "2"}


def test_api_key_comes_from_options_then_options_env_then_process_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = make_model(provider="groq")
    monkeypatch.setenv("GROQ_API_KEY", "from-process")
    assert resolve_api_key(model, StreamOptions(api_key="explicit")) == "explicit"
    assert resolve_api_key(model, StreamOptions(env={"GROQ_API_KEY": "from-env"})) == "from-env"
    assert resolve_api_key(model, StreamOptions()) == "from-process"
    monkeypatch.delenv("GROQ_API_KEY")
    assert resolve_api_key(model, StreamOptions()) is None


def test_missing_api_key_fails_with_the_upstream_text_unless_headers_authenticate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    send, receive = anyio.create_memory_object_stream[Any](1)
    send.close()
    receive.close()
    model = make_model(provider="groq")
    run = ProviderRun(model, StreamOptions(), send)
    with pytest.raises(
        ProviderError,
        match=r"^No API key for provider: groq; set GROQ_API_KEY, or pass api_key / get_api_key$",
    ):
        run.api_key()
    run = ProviderRun(model, StreamOptions(headers={"authorization": "Bearer x"}), send)
    assert run.api_key() is None
    run = ProviderRun(
        make_model(provider="groq", headers={"x-api-key": "k"}), StreamOptions(), send
    )
    assert run.api_key() is None


# --------------------------------------------------------------------------- error texts


def test_http_error_text_uses_the_provider_message() -> None:
    body = '{"error": {"message": "Invalid model", "type": "invalid_request_error"}}'
    assert format_http_error(400, body, provider_error_message(body)) == "400 Invalid model"


def test_http_error_text_falls_back_to_the_trimmed_body_or_no_body() -> None:
    assert format_http_error(502, "  <html>bad gateway</html>\n") == "502 <html>bad gateway</html>"
    assert format_http_error(400, "   ") == "400 status code (no body)"


def test_http_error_text_is_truncated_with_the_count_of_dropped_chars() -> None:
    text = format_http_error(500, "x" * (ERROR_BODY_LIMIT + 123))
    assert text == f"500 {'x' * ERROR_BODY_LIMIT}... [truncated 123 chars]"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('{"error": {"message": "m"}}', "m"),
        (
            '{"error": {"message": "Provider returned error", "metadata": {"raw": "upstream"}}}',
            "Provider returned error\nupstream",
        ),
        ('{"error": "plain"}', "plain"),
        ('{"message": "top"}', "top"),
        ('[{"error": {"code": 400, "message": "google"}}]', "google"),
        ('{"error": {"type": "x"}}', None),
        ("not json", None),
        ("42", None),
    ],
)
def test_provider_error_message_shapes(body: str, expected: str | None) -> None:
    assert provider_error_message(body) == expected


def test_stream_options_repr_hides_the_key_header_values_and_environment() -> None:
    options = StreamOptions(
        api_key="sk-live-secret-1234567890",
        headers={"Authorization": "Bearer sk-header-secret"},
        env={"OPENAI_API_KEY": "sk-env-secret"},
        max_tokens=5,
    )
    text = repr(options)
    assert "secret" not in text
    assert "max_tokens=5" in text
    assert "'Authorization': <hidden>" in text
    assert "'OPENAI_API_KEY': <hidden>" in text
    assert repr(StreamOptions()) == "StreamOptions()"


def test_redact_hides_secrets_but_not_short_strings() -> None:
    assert redact(f"bad key {KEY}!", {KEY, "abc"}) == "bad key [redacted]!"
    assert redact("abc", {"abc"}) == "abc"


@pytest.mark.parametrize(
    ("exc", "prefix"),
    [
        (httpx2.ConnectError("[Errno 111] Connection refused"), "Connection error: "),
        (httpx2.ConnectTimeout("timed out"), "Request timed out while connecting"),
        (httpx2.ReadTimeout(""), "Request timed out while waiting for data (ReadTimeout)"),
        (httpx2.PoolTimeout("x"), "Request timed out while waiting for a free connection"),
        (httpx2.ReadError("connection reset"), "Network error: connection reset"),
        (
            httpx2.RemoteProtocolError("peer closed"),
            "Network error: the server closed the connection mid-response",
        ),
        (httpx2.DecodingError("bad gzip"), "Request failed: bad gzip"),
    ],
)
def test_transport_errors_map_to_texts_the_retry_classifier_recognises(
    exc: httpx2.RequestError, prefix: str
) -> None:
    error = transport_error(exc)
    assert str(error).startswith(prefix)
    assert error.retryable
    if not isinstance(exc, httpx2.DecodingError):
        message = AssistantMessage(
            content=[],
            api="a",
            provider="p",
            model="m",
            usage=Usage(),
            stop_reason="error",
            error_message=str(error),
            timestamp=0,
        )
        assert is_retryable_assistant_error(message)


# --------------------------------------------------------------------------- retry rules


@pytest.mark.parametrize(
    ("status", "headers", "expected"),
    [
        (None, None, True),
        (408, {}, True),
        (409, {}, True),
        (429, {}, True),
        (500, {}, True),
        (503, {}, True),
        (400, {}, False),
        (401, {}, False),
        (404, {}, False),
        (503, {"x-should-retry": "false"}, False),
        (400, {"x-should-retry": "true"}, True),
    ],
)
def test_should_retry(status: int | None, headers: dict[str, str] | None, expected: bool) -> None:
    assert should_retry(status, headers) is expected


def test_requested_delay_reads_ms_seconds_and_http_dates() -> None:
    assert requested_delay_s({"retry-after-ms": "1500"}) == 1.5
    assert requested_delay_s({"retry-after-ms": "x", "retry-after": "3"}) == 3.0
    date = email.utils.formatdate(1_000_010, usegmt=True)
    assert requested_delay_s({"retry-after": date}, now=1_000_000) == 10.0
    assert requested_delay_s({"retry-after": date}, now=2_000_000) == 0.0
    assert requested_delay_s({"retry-after": "soon"}) is None
    assert requested_delay_s({}) is None


def test_backoff_doubles_from_half_a_second_caps_at_eight_and_jitters_down() -> None:
    assert [backoff_delay_s(i, 0.0) for i in range(6)] == [0.5, 1, 2, 4, 8, 8]
    assert backoff_delay_s(1, 0.999) == pytest.approx(0.75, abs=0.001)


# --------------------------------------------------------------------------- the run


async def demo_body(run: ProviderRun, url: str = "http://replay/v1/stream") -> None:
    """A minimal provider: each SSE data line is one text delta."""
    key = run.api_key()
    payload = await run.on_payload({"input": "hi"})
    headers = run.headers({"Authorization": f"Bearer {key}", "User-Agent": "demo"})
    async with run.open_sse(url, headers, payload) as sse:
        await run.emit(run.builder.start())
        index: int | None = None
        async for batch in sse:
            for event in batch:
                if index is None:
                    start = run.builder.text_start()
                    index = start.content_index
                    await run.emit(start)
                await run.emit(run.builder.text_delta(index, event.data))


async def demo_stream(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
    await run_provider(model, options, send, demo_body)


async def run_demo(
    transport: ReplayTransport, **options: Any
) -> tuple[list[Any], AssistantMessage]:
    registry = registry_with_transport(transport)
    options.setdefault("api_key", KEY)
    try:
        async with open_stream(
            make_model(), Context(), registry=registry, stream_fn=demo_stream, **options
        ) as events:
            seen = [event async for event in events]
        return seen, events.result()
    finally:
        await registry.aclose()


OK_BODY = sse_body(["a", "b"])


async def test_streams_and_closes_the_response() -> None:
    transport = ReplayTransport(ReplayResponse(split_bytes(OK_BODY, 3)))
    events, message = await run_demo(transport)
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert message.content[0].text == "ab"  # type: ignore[union-attr]
    assert message.stop_reason == "stop"
    assert transport.closed_responses == 1


async def test_a_gzip_encoded_body_is_decoded_before_framing() -> None:
    packed = gzip.compress(sse_body(["a", "b"]))
    transport = ReplayTransport(
        ReplayResponse(split_bytes(packed, 7), headers={"content-encoding": "gzip"})
    )
    _, message = await run_demo(transport)
    assert message.content[0].text == "ab"  # type: ignore[union-attr]


async def test_request_headers_layer_defaults_model_and_options() -> None:
    transport = ReplayTransport(ReplayResponse(OK_BODY))
    registry = registry_with_transport(transport)
    model = make_model(headers={"X-Model": "m", "User-Agent": "model-agent"})
    async with open_stream(
        model,
        Context(),
        api_key=KEY,
        registry=registry,
        stream_fn=demo_stream,
        headers={"x-option": "o", "user-agent": None},
    ) as events:
        async for _ in events:
            pass
    await registry.aclose()
    headers = transport.requests[0].headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["x-model"] == "m"
    assert headers["x-option"] == "o"
    assert "model-agent" not in headers.get("user-agent", "")
    assert headers["content-type"] == "application/json"


@pytest.mark.parametrize("is_async", [False, True])
async def test_on_payload_replaces_the_body_and_none_keeps_it(is_async: bool) -> None:
    seen: list[Any] = []

    def replace(payload: Any, model: Model) -> Any:
        seen.append((payload, model.id))
        return {**payload, "extra": 1}

    async def replace_async(payload: Any, model: Model) -> Any:
        return replace(payload, model)

    transport = ReplayTransport(ReplayResponse(OK_BODY), ReplayResponse(OK_BODY))
    await run_demo(transport, on_payload=replace_async if is_async else replace)
    await run_demo(transport, on_payload=lambda payload, model: None)
    assert transport.requests[0].json() == {"input": "hi", "extra": 1}
    assert transport.requests[1].json() == {"input": "hi"}
    assert seen == [({"input": "hi"}, "m-1")]


async def test_on_response_sees_status_and_headers_before_the_body() -> None:
    infos: list[ResponseInfo] = []

    async def on_response(info: ResponseInfo, model: Model) -> None:
        infos.append(info)

    transport = ReplayTransport(ReplayResponse(OK_BODY, headers={"X-Request-Id": "r1"}))
    await run_demo(transport, on_response=on_response)
    assert infos[0].status == 200
    assert infos[0].headers["x-request-id"] == "r1"


async def test_http_error_becomes_one_error_event_without_start_and_hides_the_key() -> None:
    body = f'{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}'.encode()
    transport = ReplayTransport(ReplayResponse(body, status=401))
    events, message = await run_demo(transport, max_retries=3)
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.error_message == "401 Incorrect API key provided: [redacted]"
    assert len(transport.requests) == 1  # 401 is not retried
    assert transport.closed_responses == 1


async def test_a_credential_given_as_a_header_is_hidden_from_the_error_text() -> None:
    token = "gw-header-secret-0123456789"
    body = f'{{"error": {{"message": "token {token} revoked"}}}}'.encode()
    transport = ReplayTransport(ReplayResponse(body, status=403))
    _, message = await run_demo(
        transport, api_key=None, headers={"cf-aig-authorization": f"Bearer {token}"}
    )
    assert message.error_message == "403 token [redacted] revoked"


@pytest.mark.parametrize("size", [ERROR_BODY_READ_LIMIT, ERROR_BODY_READ_LIMIT + 1])
async def test_a_body_built_in_memory_is_cut_at_the_read_limit(size: int) -> None:
    prefix = await read_body_prefix(httpx2.Response(500, content=b"x" * size))
    assert prefix.text == "x" * ERROR_BODY_READ_LIMIT
    assert prefix.more == (size > ERROR_BODY_READ_LIMIT)


async def test_empty_error_body_says_no_body() -> None:
    transport = ReplayTransport(ReplayResponse(b"", status=413))
    _, message = await run_demo(transport)
    assert message.error_message == "413 status code (no body)"


async def test_server_errors_are_retried_with_backoff_before_the_first_byte(
    autojump_clock: trio.abc.Clock,
) -> None:
    transport = ReplayTransport(
        ReplayResponse(b'{"error":{"message":"overloaded"}}', status=503),
        httpx2.ConnectError("refused"),
        ReplayResponse(OK_BODY),
    )
    start = trio.current_time()
    _, message = await run_demo(transport, max_retries=2)
    assert message.stop_reason == "stop"
    assert len(transport.requests) == 3
    assert 0.375 + 0.75 <= trio.current_time() - start <= 0.5 + 1.0 + 0.01


async def test_retries_stop_at_max_retries_and_report_the_last_error(
    autojump_clock: trio.abc.Clock,
) -> None:
    transport = ReplayTransport(*[ReplayResponse(b"busy", status=500) for _ in range(3)])
    _, message = await run_demo(transport, max_retries=2)
    assert message.error_message == "500 busy"
    assert len(transport.requests) == 3
    assert transport.closed_responses == 3


async def test_no_retry_by_default() -> None:
    transport = ReplayTransport(ReplayResponse(b"busy", status=500), ReplayResponse(OK_BODY))
    _, message = await run_demo(transport)
    assert message.error_message == "500 busy"
    assert transport.pending == 1


@pytest.mark.parametrize(
    ("headers", "delay"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "2500"}, 2.5),
        ({"retry-after": "3", "retry-after-ms": "100"}, 0.1),
    ],
)
async def test_retry_honours_the_server_requested_delay(
    autojump_clock: trio.abc.Clock, headers: dict[str, str], delay: float
) -> None:
    transport = ReplayTransport(
        ReplayResponse(b"slow down", status=429, headers=headers), ReplayResponse(OK_BODY)
    )
    start = trio.current_time()
    _, message = await run_demo(transport, max_retries=1)
    assert message.stop_reason == "stop"
    assert trio.current_time() - start == pytest.approx(delay)


async def test_server_delay_above_the_cap_fails_at_once_with_the_upstream_text(
    autojump_clock: trio.abc.Clock,
) -> None:
    transport = ReplayTransport(
        ReplayResponse(
            b'{"error":{"message":"Rate limit reached"}}',
            status=429,
            headers={"retry-after": "30.2"},
        ),
        ReplayResponse(OK_BODY),
    )
    start = trio.current_time()
    _, message = await run_demo(transport, max_retries=1, max_retry_delay_ms=30_000)
    assert message.error_message == (
        "Server requested 31s retry delay (max: 30s). 429 Rate limit reached"
    )
    assert trio.current_time() == start
    assert transport.pending == 1


async def test_server_delay_at_the_cap_is_waited_for(autojump_clock: trio.abc.Clock) -> None:
    transport = ReplayTransport(
        ReplayResponse(b"x", status=429, headers={"retry-after": "30"}), ReplayResponse(OK_BODY)
    )
    start = trio.current_time()
    _, message = await run_demo(transport, max_retries=1, max_retry_delay_ms=30_000)
    assert message.stop_reason == "stop"
    assert trio.current_time() - start == pytest.approx(30.0)


async def test_zero_max_retry_delay_means_no_cap(autojump_clock: trio.abc.Clock) -> None:
    transport = ReplayTransport(
        ReplayResponse(b"x", status=429, headers={"retry-after": "600"}), ReplayResponse(OK_BODY)
    )
    _, message = await run_demo(transport, max_retries=1, max_retry_delay_ms=0)
    assert message.stop_reason == "stop"


async def test_x_should_retry_header_overrides_the_status(autojump_clock: trio.abc.Clock) -> None:
    transport = ReplayTransport(
        ReplayResponse(b"no", status=503, headers={"x-should-retry": "false"}),
        ReplayResponse(b"yes", status=400, headers={"x-should-retry": "true"}),
        ReplayResponse(OK_BODY),
    )
    _, first = await run_demo(transport, max_retries=3)
    assert first.error_message == "503 no"
    _, second = await run_demo(transport, max_retries=3)
    assert second.stop_reason == "stop"


async def test_a_transport_error_mid_body_is_not_retried_and_keeps_the_partial() -> None:
    transport = ReplayTransport(
        ReplayResponse(
            [b"data: a\n\n", b"data: b\n\n"], error=httpx2.ReadError("Connection reset")
        ),
        ReplayResponse(OK_BODY),
    )
    events, message = await run_demo(transport, max_retries=3)
    assert [e.type for e in events][-2:] == ["text_delta", "error"]
    assert message.error_message == "Network error: Connection reset"
    assert message.content[0].text == "ab"  # type: ignore[union-attr]
    assert transport.pending == 1
    assert transport.closed_responses == 1


async def test_a_connect_error_without_retries_is_an_error_event() -> None:
    transport = ReplayTransport(httpx2.ConnectError("[Errno 111] Connection refused"))
    events, message = await run_demo(transport)
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "Connection error: [Errno 111] Connection refused"


async def test_a_bug_in_the_wire_mapping_becomes_an_error_naming_the_exception() -> None:
    async def body(run: ProviderRun) -> None:
        await run.emit(run.builder.start())
        raise KeyError("choices")

    async def stream(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
        await run_provider(model, options, send, body)

    async with open_stream(make_model(), Context(), stream_fn=stream) as events:
        types = [e.type async for e in events]
    assert types == ["start", "error"]
    assert events.result().error_message == "KeyError: 'choices'"


async def test_returning_without_a_terminal_ends_open_blocks_then_done() -> None:
    async def body(run: ProviderRun) -> None:
        await run.emit(run.builder.start())
        start = run.builder.text_start()
        await run.emit_all([start, run.builder.text_delta(start.content_index, "x")])
        run.builder.message.stop_reason = "length"

    async def stream(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
        await run_provider(model, options, send, body)

    async with open_stream(make_model(), Context(), stream_fn=stream) as events:
        types = [e.type async for e in events]
    assert types == ["start", "text_start", "text_delta", "text_end", "done"]
    assert events.result().stop_reason == "length"


@pytest.mark.parametrize(
    ("text", "expected"), [("refused", "refused"), (None, "An unknown error occurred")]
)
async def test_an_error_stop_reason_at_the_end_becomes_the_error_terminal(
    text: str | None, expected: str
) -> None:
    async def body(run: ProviderRun) -> None:
        await run.emit(run.builder.start())
        run.builder.message.stop_reason = "error"
        run.builder.message.error_message = text

    async def stream(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
        await run_provider(model, options, send, body)

    async with open_stream(make_model(), Context(), stream_fn=stream) as events:
        types = [e.type async for e in events]
    assert types == ["start", "error"]
    assert events.result().error_message == expected


async def test_emitting_after_the_terminal_is_a_protocol_error() -> None:
    send, receive = anyio.create_memory_object_stream[Any](4)
    run = ProviderRun(make_model(), StreamOptions(), send)
    await run.emit(run.builder.done())
    with pytest.raises(StreamProtocolError, match="after the terminal event"):
        await run.emit(run.builder.start())
    send.close()
    receive.close()


async def test_cancellation_propagates_through_run_provider() -> None:
    started = trio.Event()

    async def body(run: ProviderRun) -> None:
        started.set()
        await trio.sleep_forever()

    send, receive = anyio.create_memory_object_stream[Any](4)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_provider, make_model(), StreamOptions(), send, body)
            await started.wait()
            scope.cancel()
    assert scope.cancelled_caught
    with pytest.raises(anyio.WouldBlock):
        receive.receive_nowait()  # nothing was sent: no error event on cancellation
    send.close()
    receive.close()


# --------------------------------------------------------------------------- loopback server


async def test_serve_sse_counts_connections_resets_and_client_closes() -> None:
    async with serve_sse(
        [
            SSEReply(b"data: 1\n\n"),
            SSEReply([b"data: 2\n\n", b"x"], reset_after=1),
            SSEReply(b"data: 3\n\n", hold_open=True),
        ]
    ) as server:
        async with httpx2.AsyncClient() as client:
            response = await client.post(f"{server.url}/a", content=b"{}")
            assert response.text == "data: 1\n\n"
            with pytest.raises(httpx2.TransportError):
                await client.post(f"{server.url}/b", content=b"{}")
            async with client.stream("POST", f"{server.url}/c", content=b"{}") as streamed:
                async for chunk in streamed.aiter_bytes():
                    assert chunk == b"data: 3\n\n"
                    break
        with trio.fail_after(5):
            await server.wait_until(lambda s: s.open_connections == 0 and s.client_closed == 1)
        assert server.resets == 1
        assert [r.path for r in server.requests] == ["/a", "/b", "/c"]
        assert server.requests[0].json() == {}
