"""The proxy client (``stream_proxy``) against recorded responses: request shape, rebuilding
the message from partial-less events, and every way a response can go wrong (the original's
``proxy.test.ts``, numbered P*, PD* in the comments as the port's catalogue of it did). No
network: httpx's MockTransport answers."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
import msgspec
import pytest

from pi_trio.agent import Agent, stream_proxy
from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    ThinkingBudgets,
    ToolCall,
    UserMessage,
    complete,
    open_stream,
)
from pi_trio.ai._stream._open import AFTER_TERMINAL_GRACE_S
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageFold, ProviderRegistry
from pi_trio.proxy._client import ERROR_BODY_LIMIT
from pi_trio.proxy._rebuild import EOF_TEXT, LineSplitter, ProxyRebuilder

MODEL = Model(
    id="gpt-5.4",
    name="GPT-5.4",
    api="openai-responses",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    input=["text", "image"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=400000,
    max_tokens=128000,
)
URL = "https://proxy.example.com"
TOKEN = "test-token"
USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


Handler = Callable[[httpx2.Request], Any]


def client_for(handler: Handler) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def replay(body: bytes, status: int = 200, **kwargs: Any) -> httpx2.AsyncClient:
    return client_for(lambda request: httpx2.Response(status, content=body, **kwargs))


async def run(
    client: httpx2.AsyncClient,
    context: Context | None = None,
    **options: Any,
) -> tuple[list[Any], AssistantMessage]:
    fn = stream_proxy(proxy_url=URL, auth_token=TOKEN, http_client=client)
    events = []
    async with open_stream(MODEL, context or Context(), stream_fn=fn, **options) as stream:
        async for event in stream:
            events.append(event)
    return events, stream.result()


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


# --------------------------------------------------------------------------- request


class Recorder:
    def __init__(self, response: httpx2.Response | None = None) -> None:
        self.requests: list[httpx2.Request] = []
        self.response = response or httpx2.Response(500, text="proxy failed")

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.response

    @property
    def body(self) -> Any:
        return json.loads(self.requests[0].content)


async def test_request_is_a_bearer_authenticated_json_post_to_api_stream() -> None:
    recorder = Recorder()
    await run(client_for(recorder))
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == "https://proxy.example.com/api/stream"
    assert request.headers["authorization"] == "Bearer test-token"
    assert request.headers["content-type"] == "application/json"
    assert list(recorder.body) == ["model", "context", "options"]


async def test_request_body_carries_the_model_the_messages_and_the_option_subset() -> None:
    recorder = Recorder()
    context = Context(messages=[UserMessage(content="hello", timestamp=1)])
    await run(
        client_for(recorder),
        context,
        temperature=0.5,
        max_tokens=100,
        reasoning="high",
        cache_retention="long",
        session_id="s1",
        headers={"X-Trace": "1"},
        metadata={"user_id": "u"},
        thinking_budgets=ThinkingBudgets(high=2048),
        max_retry_delay_ms=1000,
        sampling_params={"top_p": 0.9},
        api_key="sk-secret",
        on_payload=lambda body, model: None,
    )
    body = recorder.body
    assert body["model"] == msgspec.to_builtins(MODEL)
    assert body["context"] == {"messages": [{"role": "user", "content": "hello", "timestamp": 1}]}
    assert body["options"] == {
        "temperature": 0.5,
        "maxTokens": 100,
        "reasoning": "high",
        "cacheRetention": "long",
        "sessionId": "s1",
        "headers": {"X-Trace": "1"},
        "metadata": {"user_id": "u"},
        "thinkingBudgets": {"high": 2048},
        "maxRetryDelayMs": 1000,
        "samplingParams": {"top_p": 0.9},
    }
    assert b"sk-secret" not in recorder.requests[0].content


async def test_unset_options_are_omitted_from_the_request() -> None:
    recorder = Recorder()
    await run(client_for(recorder))
    assert recorder.body["options"] == {}


async def test_system_prompt_shorthand_travels_as_a_system_message() -> None:
    recorder = Recorder()
    await run(client_for(recorder), Context(system_prompt="Be brief.", messages=[]))
    (message,) = recorder.body["context"]["messages"]
    assert message["role"] == "system"
    assert message["content"] == "Be brief."
    assert set(recorder.body["context"]) == {"messages"}


async def test_overrides_given_to_stream_proxy_apply_to_every_request() -> None:
    recorder = Recorder()
    fn = stream_proxy(
        proxy_url=URL, auth_token=TOKEN, http_client=client_for(recorder), temperature=0.1
    )
    await complete(MODEL, Context(), stream_fn=fn, temperature=0.9, max_tokens=7)
    assert recorder.body["options"] == {"temperature": 0.1, "maxTokens": 7}


async def test_a_lone_surrogate_in_the_context_is_sent_escaped_like_json_stringify() -> None:
    recorder = Recorder()
    await run(client_for(recorder), Context(messages=[UserMessage(content="a\ud800b")]))
    assert b'"a\\ud800b"' in recorder.requests[0].content


async def test_auth_token_may_be_an_async_function_called_per_request() -> None:
    recorder = Recorder()
    calls = 0

    async def token() -> str:
        nonlocal calls
        calls += 1
        return f"t{calls}"

    fn = stream_proxy(proxy_url=URL, auth_token=token, http_client=client_for(recorder))
    await complete(MODEL, Context(), stream_fn=fn)
    await complete(MODEL, Context(), stream_fn=fn)
    assert [r.headers["authorization"] for r in recorder.requests] == ["Bearer t1", "Bearer t2"]


async def test_stream_proxy_called_with_the_four_stream_arguments_runs_one_request() -> None:
    client = replay(sse({"type": "start"}, {"type": "done", "reason": "stop", "usage": USAGE}))
    send, receive = anyio.create_memory_object_stream[Any](10)
    with send, receive:
        await stream_proxy(
            MODEL,
            Context(),
            StreamOptions(),
            send,
            proxy_url=URL,
            auth_token=TOKEN,
            http_client=client,
        )
        assert [receive.receive_nowait().type for _ in range(2)] == ["start", "done"]


async def test_without_an_http_client_the_registry_shared_client_is_used() -> None:
    recorder = Recorder()

    class Registry(ProviderRegistry):
        def http_client(self) -> httpx2.AsyncClient:
            return client_for(recorder)

    fn = stream_proxy(proxy_url=URL + "/", auth_token=TOKEN)
    await complete(MODEL, Context(), stream_fn=fn, registry=Registry(builtins=False))
    assert str(recorder.requests[0].url) == "https://proxy.example.com/api/stream"


def test_stream_proxy_rejects_bad_arguments_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"proxy_url must be an http:// or https:// URL"):
        stream_proxy(proxy_url="proxy.example.com", auth_token=TOKEN)
    with pytest.raises(ValueError, match=r"auth_token must be a non-empty bearer token"):
        stream_proxy(proxy_url=URL, auth_token="")
    with pytest.raises(TypeError, match=r"unknown stream option\(s\) temprature"):
        stream_proxy(proxy_url=URL, auth_token=TOKEN, temprature=0.5)
    with pytest.raises(TypeError, match=r"either no positional arguments"):
        stream_proxy(MODEL, proxy_url=URL, auth_token=TOKEN)
    assert "test-token" not in repr(stream_proxy(proxy_url=URL, auth_token=TOKEN))


# --------------------------------------------------------------------------- rebuilding


async def test_text_and_thinking_are_rebuilt_with_signatures() -> None:
    body = sse(
        {"type": "start"},
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Let me "},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "think."},
        {"type": "thinking_end", "contentIndex": 0, "contentSignature": "sig-think"},
        {"type": "text_start", "contentIndex": 1},
        {"type": "text_delta", "contentIndex": 1, "delta": "Hello"},
        {"type": "text_delta", "contentIndex": 1, "delta": " world"},
        {"type": "text_end", "contentIndex": 1, "contentSignature": "sig-text"},
        {"type": "done", "reason": "stop", "usage": USAGE, "providerThinkingLevel": "high"},
    )
    events, result = await run(replay(body))
    assert types(events) == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert events[4].content == "Let me think."
    assert events[8].content == "Hello world"
    assert events[7].partial.content[1].text == "Hello world"
    assert msgspec.to_builtins(result.content) == [
        {"type": "thinking", "thinking": "Let me think.", "thinkingSignature": "sig-think"},
        {"type": "text", "text": "Hello world", "textSignature": "sig-text"},
    ]
    assert result.stop_reason == "stop"
    assert result.usage.total_tokens == 15
    assert result.provider_thinking_level == "high"
    assert (result.api, result.provider, result.model) == ("openai-responses", "openai", "gpt-5.4")


async def test_tool_call_arguments_are_rebuilt_from_the_deltas() -> None:
    body = sse(
        {"type": "start"},
        {"type": "toolcall_start", "contentIndex": 0, "id": "call_1", "toolName": "lookup"},
        {"type": "toolcall_delta", "contentIndex": 0, "delta": '{"city": "Par'},
        {"type": "toolcall_delta", "contentIndex": 0, "delta": 'is", "days": 3}'},
        {"type": "toolcall_end", "contentIndex": 0},
        {"type": "done", "reason": "toolUse", "usage": USAGE},
    )
    events, result = await run(replay(body))
    assert events[-2].tool_call == result.content[0]
    assert result.content == [
        ToolCall(id="call_1", name="lookup", arguments={"city": "Paris", "days": 3})
    ]
    assert result.stop_reason == "toolUse"


def test_partial_tool_call_arguments_grow_with_each_delta() -> None:
    rebuilder = ProxyRebuilder(MODEL)
    fold = MessageFold()
    seen = []
    for line in (
        sse(
            {"type": "start"},
            {"type": "toolcall_start", "contentIndex": 0, "id": "call_1", "toolName": "lookup"},
            {"type": "toolcall_delta", "contentIndex": 0, "delta": '{"city": "Par'},
            {"type": "toolcall_delta", "contentIndex": 0, "delta": 'is", "days": 3}'},
        )
        .decode()
        .split("\n")
    ):
        event = rebuilder.feed_line(line)
        if event is not None:
            fold.apply(event)
            if event.type == "toolcall_delta":
                seen.append(dict(event.partial.content[0].arguments))
    assert seen == [{"city": "Par"}, {"city": "Paris", "days": 3}]


async def test_tool_call_metadata_that_arrives_only_on_toolcall_end_is_kept() -> None:
    # P4
    server_call = {
        "type": "toolCall",
        "id": "call_test|fc_test",
        "name": "lookup",
        "arguments": {"value": "hello"},
        "namespace": "dynamic_tools",
    }
    body = sse(
        {"type": "start"},
        {"type": "toolcall_start", "contentIndex": 0, "id": "call_test|fc_test",
         "toolName": "lookup"},
        {"type": "toolcall_delta", "contentIndex": 0, "delta": '{"value":"hello"}'},
        {"type": "toolcall_end", "contentIndex": 0, "toolCall": server_call},
        {"type": "done", "reason": "toolUse", "usage": USAGE},
    )  # fmt: skip
    events, result = await run(replay(body))
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call.namespace == "dynamic_tools"
    assert msgspec.to_builtins(result.content[0]) == server_call
    assert types(events).count("done") == 1
    assert "error" not in types(events)


async def test_terminal_diagnostics_from_the_server_are_kept() -> None:
    # P3
    diagnostics = [
        {
            "type": "bedrock_response_failure",
            "timestamp": 123,
            "details": {
                "phase": "stream_event",
                "failureClass": "ModelStreamErrorException",
                "requestId": "request-123",
            },
        }
    ]
    body = sse(
        {"type": "start"},
        {"type": "error", "reason": "error", "errorMessage": "Model stream error",
         "usage": USAGE, "diagnostics": diagnostics},
    )  # fmt: skip
    events, result = await run(replay(body))
    assert types(events) == ["start", "error"]
    assert result.stop_reason == "error"
    assert result.error_message == "Model stream error"
    assert result.diagnostics == diagnostics
    assert result.usage.total_tokens == 15


async def test_an_aborted_reason_from_the_server_is_kept() -> None:
    body = sse(
        {"type": "start"},
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "partial"},
        {"type": "error", "reason": "aborted", "errorMessage": "Request was aborted",
         "usage": USAGE},
    )  # fmt: skip
    _, result = await run(replay(body))
    assert result.stop_reason == "aborted"
    assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "partial"}]


@pytest.mark.parametrize(
    ("block", "event", "text"),
    [
        ("thinking", {"type": "text_delta", "delta": "x"}, "Received text_delta for non-text content"),
        ("thinking", {"type": "text_end"}, "Received text_end for non-text content"),
        ("text", {"type": "thinking_delta", "delta": "x"},
         "Received thinking_delta for non-thinking content"),
        ("text", {"type": "thinking_end"}, "Received thinking_end for non-thinking content"),
        ("text", {"type": "toolcall_delta", "delta": "{"},
         "Received toolcall_delta for non-toolCall content"),
    ],
)  # fmt: skip
async def test_an_event_for_a_block_of_another_type_fails_with_the_original_text(
    block: str, event: dict[str, Any], text: str
) -> None:
    body = sse(
        {"type": "start"},
        {"type": f"{block}_start", "contentIndex": 0},
        {**event, "contentIndex": 0},
        {"type": "done", "reason": "stop", "usage": USAGE},
    )
    events, result = await run(replay(body))
    assert types(events)[-1] == "error"
    assert result.stop_reason == "error"
    assert result.error_message == text


async def test_a_delta_for_a_missing_block_fails_like_a_mismatched_one() -> None:
    body = sse({"type": "start"}, {"type": "text_delta", "contentIndex": 3, "delta": "x"})
    _, result = await run(replay(body))
    assert result.error_message == "Received text_delta for non-text content"


async def test_toolcall_end_for_another_block_type_is_ignored() -> None:
    body = sse(
        {"type": "start"},
        {"type": "text_start", "contentIndex": 0},
        {"type": "toolcall_end", "contentIndex": 0},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "reason": "stop", "usage": USAGE},
    )
    events, result = await run(replay(body))
    assert types(events) == ["start", "text_start", "text_end", "done"]
    assert result.stop_reason == "stop"


async def test_a_block_started_out_of_order_is_a_protocol_error() -> None:
    body = sse({"type": "start"}, {"type": "text_start", "contentIndex": 2})
    _, result = await run(replay(body))
    assert result.stop_reason == "error"
    assert result.error_message is not None
    assert "text_start for content index 2, expected 0" in result.error_message


async def test_content_received_before_a_protocol_error_is_kept() -> None:
    body = sse(
        {"type": "start"},
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "kept"},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "x"},
    )
    _, result = await run(replay(body))
    assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "kept"}]


# --------------------------------------------------------------------------- SSE framing


async def test_only_lines_starting_with_data_and_a_space_are_read() -> None:
    body = (
        b": a comment\n"
        b"event: message\n"
        b'data:{"type":"text_start","contentIndex":0}\n'
        b"data: \n"
        b"\n" + sse({"type": "start"}, {"type": "done", "reason": "stop", "usage": USAGE})
    )
    events, result = await run(replay(body))
    assert types(events) == ["start", "done"]
    assert result.stop_reason == "stop"


async def test_crlf_line_endings_are_tolerated() -> None:
    body = sse({"type": "start"}, {"type": "done", "reason": "stop", "usage": USAGE})
    _, result = await run(replay(body.replace(b"\n", b"\r\n")))
    assert result.stop_reason == "stop"


async def test_a_final_line_without_a_newline_is_processed() -> None:
    body = (
        sse({"type": "start"})
        + b'data: {"type":"done","reason":"stop","usage":'
        + json.dumps(USAGE).encode()
        + b"}"
    )
    events, result = await run(replay(body))
    assert types(events) == ["start", "done"]
    assert result.stop_reason == "stop"


async def test_chunk_boundaries_anywhere_give_the_same_message() -> None:
    body = sse(
        {"type": "start"},
        {"type": "text_start", "contentIndex": 0},
        {"type": "text_delta", "contentIndex": 0, "delta": "héllo — 👋"},
        {"type": "text_end", "contentIndex": 0},
        {"type": "done", "reason": "stop", "usage": USAGE},
    )

    def chunked(cut: int) -> httpx2.AsyncClient:
        async def parts() -> AsyncIterator[bytes]:
            yield body[:cut]
            yield body[cut:]

        return client_for(lambda request: httpx2.Response(200, content=parts()))

    for cut in range(0, len(body), 7):
        _, result = await run(chunked(cut))
        assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "héllo — 👋"}]


def test_line_splitter_joins_lines_split_across_many_chunks() -> None:
    splitter = LineSplitter()
    lines: list[str] = []
    for byte in "data: €x\nrest".encode():
        lines += splitter.feed(bytes([byte]))
    assert lines == ["data: €x"]
    assert splitter.flush() == ["rest"]
    assert splitter.flush() == []


async def test_events_after_the_terminal_event_are_ignored() -> None:
    body = (
        sse(
            {"type": "start"},
            {"type": "done", "reason": "stop", "usage": USAGE},
            {"type": "text_start", "contentIndex": 0},
            {"type": "error", "reason": "error", "usage": USAGE},
        )
        + b"data: not json\n\n"
    )
    events, result = await run(replay(body))
    assert types(events) == ["start", "done"]
    assert result.stop_reason == "stop"


async def test_a_malformed_line_becomes_an_error_naming_the_data() -> None:
    body = sse({"type": "start"}) + b"data: {not json\n\n"
    events, result = await run(replay(body))
    assert types(events) == ["start", "error"]
    assert result.stop_reason == "error"
    assert result.error_message is not None
    assert result.error_message.startswith("Malformed proxy event '{not json'")


async def test_a_known_event_with_wrong_fields_is_malformed() -> None:
    body = sse({"type": "start"}, {"type": "text_delta", "contentIndex": "0", "delta": 1})
    _, result = await run(replay(body))
    assert result.error_message is not None
    assert "Malformed proxy event" in result.error_message


async def test_an_unknown_event_type_is_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = sse(
        {"type": "start"},
        {"type": "heartbeat", "at": 1},
        {"type": "done", "reason": "stop", "usage": USAGE},
    )
    with caplog.at_level(logging.WARNING, logger="pi_trio.proxy"):
        events, _ = await run(replay(body))
    assert types(events) == ["start", "done"]
    assert "Unhandled proxy event type: heartbeat" in caplog.text


def test_rebuilder_is_usable_without_an_event_loop() -> None:
    rebuilder = ProxyRebuilder(MODEL, timestamp=5)
    assert rebuilder.feed_line('data: {"type":"start"}') is not None
    assert rebuilder.feed_line("id: 1") is None
    done = rebuilder.feed_line('data: {"type":"done","reason":"length"}')
    assert done is not None
    assert done.type == "done"
    assert done.message.stop_reason == "length"
    assert done.message.timestamp == 5
    assert rebuilder.terminal


def test_a_lone_surrogate_escape_in_a_delta_is_kept_as_json_stringify_wrote_it() -> None:
    rebuilder = ProxyRebuilder(MODEL)
    rebuilder.feed_line('data: {"type":"start"}')
    rebuilder.feed_line('data: {"type":"text_start","contentIndex":0}')
    delta = rebuilder.feed_line('data: {"type":"text_delta","contentIndex":0,"delta":"a\\ud800b"}')
    assert delta is not None
    assert delta.type == "text_delta"
    assert delta.delta == "a\ud800b"


# --------------------------------------------------------------------------- failures


async def test_clean_eof_without_a_terminal_event_is_a_transport_failure() -> None:
    # P1
    events, result = await run(replay(sse({"type": "start"})))
    assert types(events) == ["start", "error"]
    assert result.stop_reason == "error"
    assert result.error_message == EOF_TEXT == "Proxy stream ended without a terminal event"
    assert result.diagnostics == [
        {
            "type": "bedrock_response_failure",
            "details": {
                "phase": "stream_completion",
                "failureClass": "transient_transport_failure",
            },
        }
    ]


async def test_an_empty_body_is_a_transport_failure() -> None:
    events, result = await run(replay(b""))
    assert types(events) == ["error"]
    assert result.error_message == EOF_TEXT


async def test_abort_while_reading_yields_aborted_without_diagnostics() -> None:
    # P2, PD4
    closed = anyio.Event()

    async def open_body() -> AsyncIterator[bytes]:
        try:
            yield sse({"type": "start"}, {"type": "text_start", "contentIndex": 0})
            yield sse({"type": "text_delta", "contentIndex": 0, "delta": "so far"})
            await anyio.sleep_forever()
        finally:
            closed.set()

    client = client_for(lambda request: httpx2.Response(200, content=open_body()))
    controller = AbortController()
    events = []
    fn = stream_proxy(proxy_url=URL, auth_token=TOKEN, http_client=client)
    async with open_stream(MODEL, Context(), stream_fn=fn, signal=controller.signal) as stream:
        async for event in stream:
            events.append(event)
            if event.type == "text_delta":
                controller.abort()
    result = stream.result()
    assert types(events) == ["start", "text_start", "text_delta", "error"]
    assert result.stop_reason == "aborted"
    assert result.diagnostics is None
    assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "so far"}]
    assert closed.is_set()


@pytest.mark.parametrize(
    ("status", "body", "text"),
    [
        (500, b'{"error": "Upstream exploded"}', "Proxy error: Upstream exploded"),
        (401, b'{"error": "Unauthorized"}', "Proxy error: Unauthorized"),
        (502, b"<html>bad gateway</html>", "Proxy error: 502 Bad Gateway"),
        (429, b'{"message": "slow down"}', "Proxy error: 429 Too Many Requests"),
        (503, b'{"error": ""}', "Proxy error: 503 Service Unavailable"),
        (400, b'{"error": {"code": 7}}', 'Proxy error: {"code":7}'),
    ],
)
async def test_http_errors_become_error_outcomes_with_the_original_text(
    status: int, body: bytes, text: str
) -> None:
    events, result = await run(replay(body, status))
    assert types(events) == ["error"]
    assert result.stop_reason == "error"
    assert result.error_message == text


async def test_a_transport_failure_is_an_error_outcome_without_the_token() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    events, result = await run(client_for(refuse))
    assert types(events) == ["error"]
    assert result.error_message == (
        "Proxy request to https://proxy.example.com/api/stream failed: "
        "ConnectError: connection refused"
    )
    assert TOKEN not in result.error_message


async def test_a_connection_lost_mid_stream_keeps_the_content_so_far() -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield sse({"type": "start"}, {"type": "text_start", "contentIndex": 0},
                  {"type": "text_delta", "contentIndex": 0, "delta": "half"})  # fmt: skip
        raise httpx2.ReadError("connection reset")

    events, result = await run(client_for(lambda request: httpx2.Response(200, content=broken())))
    assert types(events)[-1] == "error"
    assert result.error_message is not None
    assert result.error_message.endswith("ReadError: connection reset")
    assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "half"}]


# --------------------------------------------------------------------------- agent


async def test_an_agent_runs_its_turns_through_the_proxy() -> None:
    recorder = Recorder(
        httpx2.Response(
            200,
            content=sse(
                {"type": "start"},
                {"type": "text_start", "contentIndex": 0},
                {"type": "text_delta", "contentIndex": 0, "delta": "Hi there"},
                {"type": "text_end", "contentIndex": 0},
                {"type": "done", "reason": "stop", "usage": USAGE},
            ),
        )
    )
    agent = Agent(
        model=MODEL,
        system_prompt="Be brief.",
        stream_fn=stream_proxy(proxy_url=URL, auth_token=TOKEN, http_client=client_for(recorder)),
    )
    await agent.prompt("hello")
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert msgspec.to_builtins(last.content) == [{"type": "text", "text": "Hi there"}]
    roles = [m["role"] for m in recorder.body["context"]["messages"]]
    assert roles == ["system", "user"]


async def test_a_server_keeping_the_body_open_after_the_terminal_event_cannot_hold_up_a_run(
    autojump_clock: Any,
) -> None:
    # The agent awaits the stream function itself, so only the client bounds this.
    from pi_trio.agent import Agent

    async def open_body() -> AsyncIterator[bytes]:
        yield sse({"type": "start"}, {"type": "done", "reason": "stop", "usage": USAGE})
        while True:
            await anyio.sleep(1)
            yield b": keep-alive\n\n"

    client = client_for(lambda request: httpx2.Response(200, content=open_body()))
    agent = Agent(
        model=MODEL, stream_fn=stream_proxy(proxy_url=URL, auth_token=TOKEN, http_client=client)
    )
    start = anyio.current_time()
    with anyio.fail_after(60):
        await agent.prompt("hi")
    assert anyio.current_time() - start <= AFTER_TERMINAL_GRACE_S + 1
    assert agent.state.messages[-1].stop_reason == "stop"


async def test_an_error_body_past_the_limit_is_not_read_to_its_end() -> None:
    chunks_read = [0]

    async def endless_error_body() -> AsyncIterator[bytes]:
        yield b'{"error": "'
        while True:  # like a network body: each chunk waits for the socket
            await anyio.lowlevel.checkpoint()
            chunks_read[0] += 1
            yield b"x" * 16384

    client = client_for(lambda request: httpx2.Response(500, content=endless_error_body()))
    with anyio.fail_after(10):
        events, result = await run(client)
    assert types(events) == ["error"]
    assert result.error_message == "Proxy error: 500 Internal Server Error"
    assert chunks_read[0] * 16384 <= ERROR_BODY_LIMIT + 2 * 16384
