"""The pi-messages provider (Radius and any backend speaking pi's own protocol).

What pi 1.6 itself sent and built against the same scripted server (tests/record_pi16.mjs,
``pimessages_*``) is compared first: the request, every event with the partial message
as it was when the event was pushed, the final message with its diagnostics. Then the
request in detail (options, key, headers, hooks), bad input (malformed data, unknown
types, broken indices, no terminal, 4xx/5xx bodies), retries, the loopback server end to
end and abort mid-stream.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pi_trio.agent import Agent, tool
from pi_trio.ai import (
    Context,
    Model,
    ProviderError,
    StreamOptions,
    StreamProtocolError,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
    from_json,
    get_model,
    get_models,
    get_providers,
    to_json,
)
from pi_trio.ai.json import extra_fields
from pi_trio.ai.providers import (
    MessageBuilder,
    MessageFold,
    ProviderRegistry,
    ResponseInfo,
    default_registry,
)
from pi_trio.ai.providers._pi_messages_events import PiMessagesMapper
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.testing import ReplayResponse, SSEReply, serve_sse, sse_body

from .provider_support import (
    UNFINISHED_REPLAY_WARNINGS,
    abort_at_first_text_delta,
    at_url,
    complete_with_fresh_registry,
    replay_stream,
)

pytestmark = UNFINISHED_REPLAY_WARNINGS

PI16 = Path(__file__).parent / "fixtures" / "pi16"
SCENARIOS = sorted(p.name.removesuffix(".sse") for p in PI16.glob("pimessages_*.sse"))
BALANCED = get_model("radius", "balanced")
assert BALANCED is not None
KEY = "radius-test-key-0123456789"
# Values that differ from run to run (clock readings), left out of comparisons.
VOLATILE = frozenset({"timestamp", "durationMs", "timestampMs"})
# Keys the 1.6 events carry from the wire beyond an assistant event's own fields.
WIRE_EXTRAS = {
    "toolcall_start": {"id", "toolName"},
    "text_end": {"contentSignature"},
    "thinking_end": {"contentSignature", "redacted"},
}
# The recorded options (camelCase) as pi_trio's options.
OPTION_NAMES = {
    "temperature": "temperature",
    "maxTokens": "max_tokens",
    "reasoning": "reasoning",
    "cacheRetention": "cache_retention",
    "sessionId": "session_id",
    "toolChoice": "tool_choice",
}


def recorded(name: str) -> dict[str, Any]:
    return json.loads((PI16 / f"{name}.json").read_text(encoding="utf-8"))


def body_of(name: str) -> bytes:
    return (PI16 / f"{name}.sse").read_bytes()


def lines(name: str, suffix: str) -> list[Any]:
    return [json.loads(line) for line in (PI16 / f"{name}.{suffix}").read_text().splitlines()]


def stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def model_of(meta: dict[str, Any]) -> Model:
    return from_json(
        json.dumps({**meta["model"], "baseUrl": f"https://pi16.test{meta['basePath']}"}), Model
    )


def options_of(meta: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in meta["options"].items():
        if key == "debug":
            options["extra"] = {"debug": value}
        else:
            options[OPTION_NAMES[key]] = value
    return options


async def replay_scenario(name: str) -> tuple[list[Any], Any]:
    meta = recorded(name)
    return await replay_stream(
        model_of(meta),
        from_json(json.dumps(meta["context"]), Context),
        ReplayResponse(body_of(name), status=meta["status"]),
        key="test-key",
        **options_of(meta),
    )


def fold(body: bytes, model: Model = BALANCED) -> list[Any]:
    """Every event the mapper makes of ``body`` as JSON, taken right after the consumer
    applied it (the partial as it was then)."""
    mapper = PiMessagesMapper(MessageBuilder(model))
    consumer = MessageFold()
    parser = SSEParser()
    out = []
    for sse in [*parser.feed(body), *parser.close()]:
        for event in mapper.feed(sse.data):
            consumer.apply(event)
            out.append(json.loads(to_json(event)))
    return out


def ctx(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(content=text, timestamp=1)])


async def replay(*replies: Any, model: Model = BALANCED, **options: Any) -> tuple[list[Any], Any]:
    return await replay_stream(model, ctx(), *replies, key=options.pop("key", KEY), **options)


def final(events: list[Any]) -> Any:
    return events[-1].message if events[-1].type == "done" else events[-1].error


START = {"type": "start"}
TEXT_START = {"type": "text_start", "contentIndex": 0}
DONE = {"type": "done", "reason": "stop"}


# =========================================================================== against 1.6


def test_every_api_of_the_catalog_is_served() -> None:
    apis = {model.api for provider in get_providers() for model in get_models(provider)}
    assert "pi-messages" in apis
    assert apis <= set(default_registry.apis())


@pytest.mark.parametrize("name", SCENARIOS)
async def test_the_request_is_what_1_6_sends(name: str) -> None:
    _, transport = await replay_scenario(name)
    want = recorded(name)["requests"][0]
    sent = transport.requests[0]
    assert sent.method == want["method"] == "POST"
    assert sent.url == f"https://pi16.test{want['path']}"
    assert sent.json() == want["body"]
    for header in ("accept", "authorization", "content-type"):
        assert sent.headers[header] == want["headers"][header], header


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n != "pimessages_no_terminal"])
async def test_the_message_is_what_1_6_builds(name: str) -> None:
    events, _ = await replay_scenario(name)
    want = json.loads((PI16 / f"{name}.message.json").read_bytes())
    assert stable(json.loads(to_json(final(events)))) == stable(want)
    assert [e.type for e in events] == [e["type"] for e in lines(name, "pushed.jsonl")]


@pytest.mark.parametrize(
    "name",
    ["pimessages_text", "pimessages_thinking_tools", "pimessages_error_event"],
)
def test_each_event_and_its_partial_is_what_1_6_pushed(name: str) -> None:
    """Streamed tool arguments included: each partial holds what the original's did when
    it pushed the event (for text_end and thinking_end, the block's whole content)."""
    got = fold(body_of(name), model_of(recorded(name)))
    want = lines(name, "pushed.jsonl")
    assert [e["type"] for e in got] == [e["type"] for e in want]
    for mine, theirs in zip(got, want, strict=True):
        assert set(theirs) - set(mine) <= WIRE_EXTRAS.get(theirs["type"], set())
        assert set(mine) <= set(theirs)
        assert stable(mine) == stable({k: theirs[k] for k in mine})


def test_streamed_tool_arguments_are_parsed_as_they_arrive() -> None:
    events = fold(body_of("pimessages_thinking_tools"))
    seen = [
        e["partial"]["content"][e["contentIndex"]]["arguments"]
        for e in events
        if e["type"] == "toolcall_delta"
    ]
    assert seen == [{"a": 2}, {"a": 2}, {"a": 2, "b": 3}, {"a": 4, "b": 5}]


async def test_a_stream_without_a_terminal_fails_with_1_6_s_text_keeping_its_text() -> None:
    events, _ = await replay_scenario("pimessages_no_terminal")
    want = json.loads((PI16 / "pimessages_no_terminal.message.json").read_bytes())
    message = final(events)
    assert (message.stop_reason, message.error_message) == (
        want["stopReason"],
        want["errorMessage"],
    )
    assert message.error_message == "radius stream ended without a terminal event"
    # the original starts its error message afresh; pi_trio keeps what arrived
    assert want["content"] == []
    assert message.content == [TextContent(text="Cut")]


async def test_an_http_error_carries_the_diagnostic_1_6_records() -> None:
    events, _ = await replay_scenario("pimessages_http_error")
    message = final(events)
    assert message.error_message == (
        "429 Too Many Requests: Rate limit exceeded for organization (rate_limited)"
    )
    (diagnostic,) = message.diagnostics
    assert diagnostic["error"] == {
        "name": "PiMessagesResponseError",
        "message": message.error_message,
        "code": "rate_limited",
    }
    assert diagnostic["details"]["url"] == "https://pi16.test/v1/messages"
    assert diagnostic["details"]["error"]["type"] == "rate_limit"
    assert "body" not in diagnostic["details"]


# =========================================================================== the request


async def test_unset_options_are_left_out_and_the_cache_preference_comes_from_the_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PI_CACHE_RETENTION", raising=False)
    _, transport = await replay(ReplayResponse(sse_body([START, DONE])))
    assert transport.requests[0].json()["options"] == {}
    _, transport = await replay(
        ReplayResponse(sse_body([START, DONE])), env={"PI_CACHE_RETENTION": "long"}
    )
    assert transport.requests[0].json()["options"] == {"cacheRetention": "long"}
    tool_choice = {"type": "function", "function": {"name": "add"}}
    _, transport = await replay(
        ReplayResponse(sse_body([START, DONE])),
        env={"PI_CACHE_RETENTION": "long"},
        cache_retention="none",
        tool_choice=tool_choice,
    )
    assert transport.requests[0].json()["options"] == {
        "cacheRetention": "none",
        "toolChoice": tool_choice,
    }


async def test_the_url_drops_trailing_slashes_and_debug_asks_for_metadata() -> None:
    model = msgspec.structs.replace(BALANCED, base_url="https://gw.example/v1//")
    _, transport = await replay(
        ReplayResponse(sse_body([START, DONE])), model=model, extra={"debug": True}
    )
    assert transport.requests[0].url == "https://gw.example/v1/messages?debug=1"


async def test_the_key_comes_from_radius_api_key_and_headers_layer_over_identity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RADIUS_API_KEY", raising=False)
    _, transport = await replay(
        ReplayResponse(sse_body([START, DONE])),
        key=None,
        env={"RADIUS_API_KEY": "from-env"},
        headers={"X-Trace": "t-1", "Accept": "text/event-stream; q=1"},
    )
    headers = transport.requests[0].headers
    assert headers["authorization"] == "Bearer from-env"
    assert headers["x-trace"] == "t-1"
    assert headers["accept"] == "text/event-stream; q=1"
    assert headers["user-agent"].startswith("pi-trio/")


async def test_a_missing_key_is_named_as_1_6_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RADIUS_API_KEY", raising=False)
    events, transport = await replay(key=None)
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message == (
        'No API key provided for provider "radius"'  # 1.6's words, then what to set
        "; set RADIUS_API_KEY, or pass api_key / get_api_key"
    )
    assert transport.requests == []


async def test_on_payload_sees_the_body_as_json_and_may_replace_it() -> None:
    seen: list[Any] = []

    def hook(payload: Any, model: Model) -> Any:
        seen.append(payload)
        return {**payload, "options": {"temperature": 0}}

    _, transport = await replay(ReplayResponse(sse_body([START, DONE])), on_payload=hook)
    assert seen[0]["model"] == "balanced"
    assert seen[0]["context"]["messages"][0] == {"role": "user", "content": "hi", "timestamp": 1}
    assert transport.requests[0].json()["options"] == {"temperature": 0}


async def test_a_lone_surrogate_is_sent_as_its_escape() -> None:
    context = Context(messages=[UserMessage(content="ls: caf\udce9.txt", timestamp=1)])
    _, transport = await replay_stream(
        BALANCED, context, ReplayResponse(sse_body([START, DONE])), key=KEY
    )
    sent = transport.requests[0]
    assert b"caf\\udce9.txt" in sent.content
    assert sent.json()["context"]["messages"][0]["content"] == "ls: caf\udce9.txt"


async def test_on_response_and_on_provider_stream_event_see_the_backend_as_it_is() -> None:
    body = sse_body([START, {"type": "ping", "at": 1}, TEXT_START, DONE], done=True)
    responses: list[ResponseInfo] = []
    raw: list[Any] = []
    events, _ = await replay(
        ReplayResponse(body),
        on_response=lambda info, model: responses.append(info),
        on_provider_stream_event=lambda event, model: raw.append(event),
    )
    assert [r.status for r in responses] == [200]
    # unknown types reach the hook and are skipped; [DONE] is no event
    assert raw == [START, {"type": "ping", "at": 1}, TEXT_START, DONE]
    # a block still open at ``done`` is sealed without an end event, as the original does
    assert [e.type for e in events] == ["start", "text_start", "done"]
    assert events[-1].message.content == [TextContent(text="")]


# =========================================================================== the stream


def test_start_is_sent_once_before_the_first_block_or_done_and_a_lone_error_alone() -> None:
    body = sse_body([TEXT_START, START, DONE])
    assert [e["type"] for e in fold(body)] == ["start", "text_start", "done"]
    assert [e["type"] for e in fold(sse_body([DONE]))] == ["start", "done"]
    failed = {"type": "error", "reason": "error", "errorMessage": "no capacity"}
    assert [e["type"] for e in fold(sse_body([failed]))] == ["error"]


def test_nothing_after_the_terminal_and_done_markers_are_read() -> None:
    body = sse_body([START, DONE, "[DONE]", TEXT_START, "not json"])
    assert [e["type"] for e in fold(body)] == ["start", "done"]


def test_the_terminal_takes_usage_ids_and_level_and_keeps_unknown_usage_fields() -> None:
    usage = {"input": 3, "output": 2, "totalTokens": 5, "cacheWrite5m": 7}
    done = {
        **DONE,
        "usage": usage,
        "responseId": "r-1",
        "responseModel": "kimi-k3",
        "providerThinkingLevel": "high",
    }
    message = from_json(json.dumps(fold(sse_body([START, done]))[-1]["message"]))
    assert (message.usage.input, message.usage.total_tokens) == (3, 5)
    assert extra_fields(message.usage) == {"cacheWrite5m": 7}
    assert (message.response_id, message.response_model) == ("r-1", "kimi-k3")
    assert message.provider_thinking_level == "high"


@pytest.mark.parametrize(
    ("terminal", "reason", "text"),
    [
        ({"type": "error", "reason": "error"}, "error", "An unknown error occurred"),
        (
            {"type": "error", "reason": "aborted", "errorMessage": "stopped upstream"},
            "aborted",
            "stopped upstream",
        ),
    ],
)
def test_the_backend_s_error_keeps_its_reason(terminal: Any, reason: str, text: str) -> None:
    error = fold(sse_body([START, terminal]))[-1]
    assert (error["reason"], error["error"]["errorMessage"]) == (reason, text)


def test_end_events_carry_the_final_block_over_what_was_streamed() -> None:
    events = fold(
        sse_body(
            [
                START,
                TEXT_START,
                {"type": "text_delta", "contentIndex": 0, "delta": "Helo"},
                {
                    "type": "text_end",
                    "contentIndex": 0,
                    "content": "Hello",
                    "contentSignature": "s",
                },
                {"type": "toolcall_start", "contentIndex": 1, "id": "tmp", "toolName": "add"},
                {"type": "toolcall_delta", "contentIndex": 1, "delta": '{"a": 1}'},
                {
                    "type": "toolcall_end",
                    "contentIndex": 1,
                    "toolCall": {
                        "type": "toolCall",
                        "id": "call_9",
                        "name": "add",
                        "arguments": {"a": 9},
                        "namespace": "math",
                    },
                },
                {**DONE, "reason": "toolUse"},
            ]
        )
    )
    assert [e["content"] for e in events if e["type"] == "text_end"] == ["Hello"]
    assert events[-1]["message"]["content"] == [
        {"type": "text", "text": "Hello", "textSignature": "s"},
        {
            "type": "toolCall",
            "id": "call_9",
            "name": "add",
            "arguments": {"a": 9},
            "namespace": "math",
        },
    ]


def test_a_tool_call_end_without_arguments_keeps_the_streamed_ones() -> None:
    events = fold(
        sse_body(
            [
                START,
                {"type": "toolcall_start", "contentIndex": 0, "id": "c1", "toolName": "add"},
                {"type": "toolcall_delta", "contentIndex": 0, "delta": '{"a": 1}'},
                {"type": "toolcall_end", "contentIndex": 0, "toolCall": {"name": "sum"}},
                {**DONE, "reason": "toolUse"},
            ]
        )
    )
    assert events[-1]["message"]["content"] == [
        {"type": "toolCall", "id": "c1", "name": "sum", "arguments": {"a": 1}}
    ]


def test_a_lone_surrogate_escape_in_a_delta_reads_as_a_replacement_character() -> None:
    delta = '{"type": "text_delta", "contentIndex": 0, "delta": "a\\ud83d"}'
    events = fold(sse_body([START, TEXT_START, delta, DONE]))
    assert events[-1]["message"]["content"] == [{"type": "text", "text": "a\ufffd"}]


def test_redacted_thinking_stays_redacted() -> None:
    end = {"type": "thinking_end", "contentIndex": 0, "content": "", "redacted": True}
    start = {"type": "thinking_start", "contentIndex": 0}
    message = fold(sse_body([START, start, end, DONE]))[-1]["message"]
    block = from_json(json.dumps(message)).content[0]
    assert block == ThinkingContent(thinking="", redacted=True)


@pytest.mark.parametrize(
    ("events", "error", "text"),
    [
        (["{nope"], ProviderError, "Could not parse pi-messages event: "),
        (["[1, 2]"], ProviderError, "Could not parse pi-messages event: "),
        (['"start"'], ProviderError, "Could not parse pi-messages event: "),
        (
            [TEXT_START, {"type": "text_delta", "contentIndex": 0, "delta": 5}],
            ProviderError,
            "Could not parse pi-messages event: Expected `str`, got `int` - at `$.delta`",
        ),
        (
            [{"type": "done", "reason": "error"}],
            ProviderError,
            "Could not parse pi-messages event: Invalid enum value 'error'",
        ),
        (
            [{"type": "done", "reason": "stop", "usage": {"input": "many"}}],
            ProviderError,
            "Could not parse pi-messages event: the usage of 'done' is no usage object",
        ),
        (
            [{"type": "text_delta", "contentIndex": "__proto__", "delta": "x"}],
            ProviderError,
            'Invalid contentIndex "__proto__" in pi-messages text_delta event',
        ),
        (
            [TEXT_START, {"type": "text_delta", "contentIndex": 1.5, "delta": "x"}],
            ProviderError,
            "Invalid contentIndex 1.5 in pi-messages text_delta event",
        ),
        (
            [{"type": "text_start", "contentIndex": 4000000000}],
            ProviderError,
            "Invalid contentIndex 4000000000 in pi-messages text_start event",
        ),
        (
            [TEXT_START, {"type": "text_end", "contentIndex": True}],
            ProviderError,
            "Invalid contentIndex true in pi-messages text_end event",
        ),
        (
            [{"type": "thinking_delta", "delta": "x"}],
            ProviderError,
            "Invalid contentIndex undefined in pi-messages thinking_delta event",
        ),
        (
            [TEXT_START, TEXT_START],
            ProviderError,
            "Invalid contentIndex 0 in pi-messages text_start event: block 0 was already "
            "started, and a start adds the next block (1)",
        ),
        (
            [TEXT_START, {"type": "toolcall_delta", "contentIndex": 0, "delta": "{"}],
            StreamProtocolError,
            "received toolcall_delta for content index 0, which is not an open ToolCall",
        ),
        (
            [
                TEXT_START,
                {"type": "text_end", "contentIndex": 0},
                {"type": "text_delta", "contentIndex": 0, "delta": "late"},
            ],
            StreamProtocolError,
            "received text_delta for content index 0, which is not an open Text",
        ),
    ],
)
def test_data_that_breaks_the_protocol_fails_naming_it(
    events: list[Any], error: type[Exception], text: str
) -> None:
    with pytest.raises(error) as caught:
        fold(sse_body([START, *events]))
    assert str(caught.value).startswith(text)


async def test_broken_data_ends_the_request_with_an_error_keeping_the_text() -> None:
    body = sse_body(
        [
            START,
            TEXT_START,
            {"type": "text_delta", "contentIndex": 0, "delta": "kept"},
            {"type": "telemetry", "tokens": 3},
            "{nope",
        ]
    )
    events, _ = await replay(ReplayResponse(body))
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    message = final(events)
    assert message.content == [TextContent(text="kept")]
    assert message.error_message.startswith("Could not parse pi-messages event: ")
    assert message.error_message.endswith("data={nope")


# =========================================================================== HTTP failures


@pytest.mark.parametrize(
    ("status", "body", "text"),
    [
        (
            401,
            b'{"error": {"message": "Invalid API key", "code": "unauthorized"}}',
            "401 Unauthorized: Invalid API key (unauthorized)",
        ),
        (400, b'{"error": {"message": "Unknown model"}}', "400 Bad Request: Unknown model"),
        (
            500,
            b'{"error": "boom"}',
            '500 Internal Server Error: {"error": "boom"}',
        ),
        (503, b"  upstream down \n", "503 Service Unavailable: upstream down"),
        (502, b"", "502 Bad Gateway: "),
    ],
)
async def test_http_failures_read_status_reason_message_and_code(
    status: int, body: bytes, text: str
) -> None:
    events, _ = await replay(ReplayResponse(body, status=status))
    message = final(events)
    assert message.error_message == text
    (diagnostic,) = message.diagnostics
    assert diagnostic["type"] == "pi_messages_response_failure"
    details = diagnostic["details"]
    assert (details["status"], details["provider"], details["model"]) == (
        status,
        "radius",
        "balanced",
    )
    assert ("error" in details) != ("body" in details)


async def test_a_long_error_body_is_cut_in_the_text_and_in_the_diagnostic() -> None:
    body = b"x" * 20_000
    events, _ = await replay(ReplayResponse(body, status=500))
    message = final(events)
    assert message.error_message.startswith("500 Internal Server Error: xxx")
    assert message.error_message.endswith("... [truncated 4192+ chars]")
    assert message.diagnostics[0]["details"]["body"] == "x" * 8192 + "…"


async def test_a_key_echoed_by_the_backend_is_redacted_everywhere() -> None:
    body = json.dumps({"error": {"message": f"bad key {KEY}", "code": "auth"}}).encode()
    events, _ = await replay(ReplayResponse(body, status=403))
    message = final(events)
    assert KEY not in to_json(message).decode()
    assert message.error_message == "403 Forbidden: bad key [redacted] (auth)"
    streamed = sse_body([START, {"type": "error", "reason": "error", "errorMessage": KEY}])
    events, _ = await replay(ReplayResponse(streamed))
    assert final(events).error_message == "[redacted]"


async def test_a_503_is_retried_when_asked_and_the_last_failure_is_the_one_recorded() -> None:
    busy = ReplayResponse(b"busy", status=503, headers={"retry-after-ms": "1"})
    ok = ReplayResponse(body_of("pimessages_text"))
    events, transport = await replay(busy, ok, max_retries=1)
    assert len(transport.requests) == 2
    assert events[-1].type == "done"
    assert events[-1].message.diagnostics is None
    again = ReplayResponse(b"still busy", status=503, headers={"retry-after-ms": "1"})
    events, transport = await replay(busy, again, max_retries=1)
    assert len(transport.requests) == 2
    message = final(events)
    assert message.error_message == "503 Service Unavailable: still busy"
    assert message.diagnostics[0]["details"]["body"] == "still busy"


async def test_no_retry_without_max_retries() -> None:
    busy = ReplayResponse(b"busy", status=503)
    events, transport = await replay(busy)
    assert len(transport.requests) == 1
    assert final(events).error_message == "503 Service Unavailable: busy"


# =========================================================================== loopback


async def test_end_to_end_against_a_loopback_server() -> None:
    async with serve_sse([SSEReply(body_of("pimessages_thinking_tools"))]) as server:
        model = at_url(BALANCED, f"{server.url}/v1")
        message = await complete_with_fresh_registry(model, ctx("2 + 3 and 4 + 5?"), key=KEY)
        request = server.requests[0]
        assert request.path == "/v1/messages"
        assert request.json()["context"]["messages"][-1]["content"] == "2 + 3 and 4 + 5?"
    assert message.stop_reason == "toolUse"
    assert message.content[3:] == [
        ToolCall(id="call_r1", name="add", arguments={"a": 2, "b": 3}),
        ToolCall(id="call_r2", name="add", arguments={"a": 4, "b": 5}, thought_signature="ts_r2"),
    ]
    assert message.diagnostics[0]["type"] == "pi_messages_rewrite"


async def test_an_agent_runs_the_tools_a_radius_model_calls_and_answers() -> None:
    @tool
    async def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    answer = sse_body(
        [
            START,
            TEXT_START,
            {"type": "text_delta", "contentIndex": 0, "delta": "5 and 9."},
            {"type": "text_end", "contentIndex": 0, "content": "5 and 9."},
            DONE,
        ]
    )
    replies = [SSEReply(body_of("pimessages_thinking_tools")), SSEReply(answer)]
    registry = ProviderRegistry()
    try:
        async with serve_sse(replies) as server:
            agent = Agent(
                model=at_url(BALANCED, server.url),
                tools=[add],
                registry=registry,
                stream_options=StreamOptions(api_key=KEY),
            )
            await agent.prompt("2 + 3 and 4 + 5?")
            second = server.requests[1].json()["context"]["messages"]
    finally:
        await registry.aclose()
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [(r.tool_call_id, r.content[0].text) for r in results] == [
        ("call_r1", "5"),
        ("call_r2", "9"),
    ]
    # the second request carries the first answer and the results, in the original's JSON
    assert [m["role"] for m in second[-3:]] == ["assistant", "toolResult", "toolResult"]
    assert second[-3]["content"][3]["arguments"] == {"a": 2, "b": 3}
    assert agent.state.messages[-1].content == [TextContent(text="5 and 9.")]


async def test_abort_mid_stream_closes_the_server_side_stream() -> None:
    body = body_of("pimessages_text")
    head = body[: body.index(b'data: {"type":"text_end"')]
    seen, message = await abort_at_first_text_delta(BALANCED, ctx(), head, key=KEY)
    assert seen[-1] == "error"
    assert message.stop_reason == "aborted"
    assert message.content[0].text.startswith("Bonjour")
