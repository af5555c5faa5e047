"""The mistral-conversations provider: tool-call ids, the request body and headers, the
reasoning mapping, stream-chunk mapping, bodies recorded from pi 1.6 replayed through
httpx2, failures (malformed chunks, 4xx/5xx bodies, resets), a loopback server end to end
and abort mid-stream. (What pi 1.6 itself sends and builds for the same bodies is compared
in test_pi16_fixtures.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import msgspec
import pytest

from pi_trio.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    OutputFormat,
    ProviderError,
    StreamOptions,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    get_model,
)
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._mistral_events import MistralStreamMapper
from pi_trio.ai.providers._mistral_request import (
    MistralToolCallIds,
    build_mistral_body,
    derive_mistral_tool_call_id,
)
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.ai.providers.mistral import mistral_simple_params
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing import ReplayResponse, SSEReply, serve_sse, sse_body

from .helpers import applied
from .provider_support import (
    UNFINISHED_REPLAY_WARNINGS,
    abort_at_first_text_delta,
    at_url,
    complete_with_fresh_registry,
    replay_stream,
)

pytestmark = UNFINISHED_REPLAY_WARNINGS

PI16 = Path(__file__).parent / "fixtures" / "pi16"
SMALL = get_model("mistral", "mistral-small-latest")
assert SMALL is not None
MAGISTRAL = msgspec.structs.replace(SMALL, id="magistral-medium-2509", thinking_level_map=None)
PLAIN = msgspec.structs.replace(SMALL, reasoning=False, thinking_level_map=None, input=["text"])
KEY = "mistral-test-key-0123456789"
ADD = Tool(
    name="add",
    description="Add two numbers",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
)


def recorded(name: str) -> bytes:
    return (PI16 / f"{name}.sse").read_bytes()


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(messages=list(messages), system_prompt=system, tools=tools)


def body_of(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    native = {k: options.pop(k) for k in ("prompt_mode", "reasoning_effort") if k in options}
    return build_mistral_body(model, normalize_context(context), StreamOptions(**options), **native)


def assistant(*blocks: Any, model: Model = SMALL, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason=stop,  # type: ignore[arg-type]
        timestamp=1,
    )


def result(call_id: str, *content: Any, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="add", content=list(content), is_error=is_error
    )


def chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **more}


async def replay(model: Model, context: Context, *replies: Any, **options: Any):
    return await replay_stream(model, context, *replies, key=KEY, **options)


# =========================================================================== tool-call ids


def test_tool_call_ids_are_nine_alphanumerics_derived_as_the_original_derives_them():
    # the values pi 1.6 sent (tests/fixtures/pi16/mistral_thinking_tools.json)
    assert derive_mistral_tool_call_id("call_0|fc_0123456789", 0) == "1m3lc5m1p"
    assert derive_mistral_tool_call_id("toolcall:1", 0) == "toolcall1"
    assert derive_mistral_tool_call_id("Xb2mK9pQr", 0) == "Xb2mK9pQr"
    assert derive_mistral_tool_call_id("a-b-c-d-e-f-g-h-i", 0) == "abcdefghi"


def test_two_ids_that_derive_alike_get_different_ids_and_keep_them():
    ids = MistralToolCallIds()
    first, second = ids("abcdefghi"), ids("a.b.c.d.e.f.g.h.i")
    assert first == "abcdefghi"
    assert second != first
    assert len(second) == 9
    assert second.isalnum()
    assert ids("a.b.c.d.e.f.g.h.i") == second


# =========================================================================== request body


def test_body_basics_and_a_collapsed_system_prompt():
    context = ctx(
        UserMessage(content="hi"),
        SystemMessage(content="Be brief.", sections={"tone": "dry"}),
        UserMessage(content="again"),
        system="You are terse.",
    )
    body = body_of(PLAIN, context, temperature=0.2, max_tokens=64)
    assert body["model"] == PLAIN.id
    assert body["stream"] is True
    # the model takes no system message mid-conversation: one leading prompt
    assert body["messages"][0] == {
        "role": "system",
        "content": "You are terse.\n\nBe brief.\n\ndry",
    }
    assert [m["role"] for m in body["messages"]] == ["system", "user", "user"]
    assert (body["temperature"], body["max_tokens"]) == (0.2, 64)
    assert "tools" not in body


def test_a_model_that_takes_system_updates_gets_them_in_place():
    model = msgspec.structs.replace(PLAIN, compat={"supportsMidConvoSystemMessages": True})
    context = ctx(UserMessage(content="hi"), SystemMessage(content="Update."), system="Lead.")
    assert [m.get("content") for m in body_of(model, context)["messages"]] == [
        "Lead.",
        "hi",
        "Update.",
    ]


def test_images_go_as_data_urls_for_vision_models_and_as_a_note_otherwise():
    message = UserMessage(content=[ImageContent(data="QUJD", mime_type="image/png")])
    assert body_of(SMALL, ctx(message))["messages"][0]["content"] == [
        {"type": "image_url", "image_url": "data:image/png;base64,QUJD"}
    ]
    assert body_of(PLAIN, ctx(message))["messages"][0]["content"] == [
        {"type": "text", "text": "(image omitted: model does not support images)"}
    ]


def test_assistant_turns_replay_thinking_text_and_calls_with_prefix_false():
    message = assistant(
        ThinkingContent(thinking="plan"),
        ThinkingContent(thinking="  "),
        TextContent(text="answer"),
        TextContent(text=" "),
        ToolCall(id="Xb2mK9pQr", name="add", arguments={"a": 1, "b": 2}),
        stop="toolUse",
    )
    body = body_of(SMALL, ctx(UserMessage(content="q"), message, result("Xb2mK9pQr")))
    assert body["messages"][1] == {
        "role": "assistant",
        "prefix": False,
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "plan"}]},
            {"type": "text", "text": "answer"},
        ],
        "tool_calls": [
            {
                "id": "Xb2mK9pQr",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a":1,"b":2}'},
                "index": 0,
            }
        ],
    }


@pytest.mark.parametrize(
    ("content", "is_error", "model", "text"),
    [
        ([TextContent(text=" 3 ")], False, SMALL, "3"),
        ([TextContent(text="boom")], True, SMALL, "[tool error] boom"),
        ([], False, SMALL, "(no tool output)"),
        ([], True, SMALL, "[tool error] (no tool output)"),
        ([ImageContent(data="QQ==", mime_type="image/png")], False, SMALL, "(see attached image)"),
        (
            [TextContent(text="see"), ImageContent(data="QQ==", mime_type="image/png")],
            False,
            PLAIN,
            "see\n(tool image omitted: model does not support images)",
        ),
    ],
)
def test_tool_results_name_their_tool_and_say_what_they_hold(content, is_error, model, text):
    call = assistant(ToolCall(id="abcdefghi", name="add", arguments={}), model=model)
    body = body_of(
        model, ctx(UserMessage(content="q"), call, result("abcdefghi", *content, is_error=is_error))
    )
    tool = body["messages"][2]
    assert (tool["role"], tool["name"], tool["tool_call_id"]) == ("tool", "add", "abcdefghi")
    assert tool["content"][0] == {"type": "text", "text": text}


def test_tools_tool_choice_cache_key_and_json_schema_output():
    output = OutputFormat(
        name="Sum", schema={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    body = body_of(
        SMALL,
        ctx(UserMessage(content="q"), tools=[ADD]),
        tool_choice={"type": "function", "function": {"name": "add"}},
        session_id="s-1",
        output_format=output,
    )
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two numbers",
                "parameters": ADD.parameters,
                "strict": False,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["prompt_cache_key"] == "s-1"
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Sum",
            "schema": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }
    assert "prompt_cache_key" not in body_of(
        SMALL, ctx(UserMessage(content="q")), session_id="s-1", cache_retention="none"
    )


def test_strict_tools_are_opt_in_and_a_tool_that_requires_them_says_so():
    strict = msgspec.structs.replace(
        ADD, constrained_sampling={"type": "json_schema", "strict": "prefer"}
    )
    assert (
        body_of(SMALL, ctx(UserMessage(content="q"), tools=[strict]))["tools"][0]["function"][
            "strict"
        ]
        is False
    )
    opted_in = msgspec.structs.replace(SMALL, compat={"supportsStrictMode": True})
    function = body_of(opted_in, ctx(UserMessage(content="q"), tools=[strict]))["tools"][0][
        "function"
    ]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    required = msgspec.structs.replace(
        ADD, constrained_sampling={"type": "json_schema", "strict": "require"}
    )
    with pytest.raises(ProviderError, match='Tool "add" requires JSON-schema constrained sampling'):
        body_of(SMALL, ctx(UserMessage(content="q"), tools=[required]))


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        (SMALL, "high", (None, "high")),
        (SMALL, "low", (None, "high")),  # clamped to the model's one level
        (SMALL, None, (None, "none")),  # no level: the map's "off" entry
        (MAGISTRAL, "medium", ("reasoning", None)),
        (MAGISTRAL, None, (None, None)),
        (PLAIN, "high", (None, None)),
    ],
)
def test_simple_maps_the_level_to_reasoning_effort_or_prompt_mode(model, level, expected):
    assert mistral_simple_params(model, level) == expected


# =========================================================================== stream chunks


def feed_all(body: bytes, model: Model = SMALL) -> list[Any]:
    """The events of ``body`` through the parser and the mapper, ended as the provider
    ends them; a failure becomes the ``error`` terminal."""
    builder = MessageBuilder(model)
    mapper = MistralStreamMapper(builder, model)
    parser = SSEParser()
    events: list[Any] = []
    try:
        for sse in [*parser.feed(body), *parser.close()]:
            events.extend(mapper.feed(sse.data))
        events.extend(mapper.finish())
        if mapper.failure is not None:
            raise ProviderError(mapper.failure)
        message = builder.message
        if message.stop_reason == "error":
            events.append(builder.error(message.error_message))
        else:
            events.append(builder.done())
    except ProviderError as exc:
        events.append(builder.error(str(exc)))
    return applied(builder, events)


def final(events: list[Any]) -> AssistantMessage:
    return events[-1].message if events[-1].type == "done" else events[-1].error


def test_the_recorded_text_stream():
    events = feed_all(recorded("mistral_text"))
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    message = final(events)
    assert message.content == [TextContent(text="Bonjour le monde 🌍 !")]
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (76, 1024, 8)
    assert message.response_id == "cmpl-5e4f0c2a9b1d4e7f"


def test_thinking_and_text_alternate_in_blocks_and_empty_deltas_open_none():
    think = {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]}]}
    body = sse_body(
        [
            chunk({"content": ""}),
            chunk(think),
            chunk({"content": [{"type": "thinking", "thinking": []}]}),
            chunk({"content": [{"type": "reference", "reference_ids": [1]}]}),
            chunk(think),
            chunk({"content": "a"}),
            chunk(think),
            chunk({"content": ""}, "stop"),
        ],
        done=True,
    )
    message = final(feed_all(body))
    assert message.content == [
        ThinkingContent(thinking="hmhm"),
        TextContent(text="a"),
        ThinkingContent(thinking="hm"),
    ]


def test_tool_calls_end_after_the_stream_in_their_order_with_objects_and_missing_ids():
    events = feed_all(recorded("mistral_thinking_tools"), MAGISTRAL)
    ends = [e.type for e in events if e.type.endswith("_end")]
    # thinking ends when the text starts, the text when a call starts, calls at the end
    assert ends == ["thinking_end", "text_end", "toolcall_end", "toolcall_end"]
    message = final(events)
    assert message.content[2:] == [
        ToolCall(id="Xb2mK9pQr", name="add", arguments={"a": 2, "b": 3}),
        ToolCall(id="toolcall1", name="add", arguments={"a": 4, "b": 5}),
    ]
    assert message.stop_reason == "toolUse"


@pytest.mark.parametrize(
    ("reason", "stop", "error"),
    [
        ("stop", "stop", None),
        ("length", "length", None),
        ("model_length", "length", None),
        ("tool_calls", "toolUse", None),
        ("error", "error", "Provider stopped with: error (server error)"),
        ("content_filter", "error", "Provider stopped with: content_filter"),
    ],
)
def test_finish_reasons(reason, stop, error):
    message = final(feed_all(sse_body([chunk({"content": "x"}, reason)], done=True)))
    assert (message.stop_reason, message.error_message) == (stop, error)
    assert message.raw_stop_reason == reason


def test_a_stream_without_a_finish_reason_fails_keeping_its_text():
    message = final(feed_all(sse_body([chunk({"content": "half"})], done=True)))
    assert message.error_message == "Mistral stream ended without a finish reason"
    assert message.content == [TextContent(text="half")]


@pytest.mark.parametrize(
    ("usage", "cached"),
    [
        ({"promptTokensDetails": {"cachedTokens": 30}}, 30),
        ({"prompt_token_details": {"cached_tokens": 20}}, 20),
        ({"num_cached_tokens": 10}, 10),
        ({"num_cached_tokens": 500}, 100),  # never more than the prompt
        ({"num_cached_tokens": "7"}, 0),  # not a number
    ],
)
def test_cached_prompt_tokens_in_every_spelling(usage, cached):
    counts = {"prompt_tokens": 100, "completion_tokens": 5, **usage}
    message = final(feed_all(sse_body([chunk({}, "stop", usage=counts)], done=True)))
    assert (message.usage.cache_read, message.usage.input) == (cached, 100 - cached)
    assert message.usage.total_tokens == 105


def test_done_ends_the_stream_and_later_data_is_not_read():
    body = sse_body([chunk({"content": "a"}, "stop"), "[DONE]", chunk({"content": "late"})])
    assert final(feed_all(body)).content == [TextContent(text="a")]


@pytest.mark.parametrize(
    ("data", "start"),
    [
        ("{nope", "Could not parse Mistral SSE event: "),
        (
            '{"id": "x"}',
            "Could not parse Mistral SSE event: Object missing required field `choices`",
        ),
        ("[1, 2]", "Could not parse Mistral SSE event: "),
        (
            '{"object": "error", "message": "Service overloaded"}',
            "Mistral stream error: Service overloaded",
        ),
    ],
)
def test_data_that_is_no_chunk_fails_naming_it(data, start):
    message = final(feed_all(f"data: {data}\n\n".encode()))
    assert message.stop_reason == "error"
    assert message.error_message.startswith(start)


# =========================================================================== over httpx2


async def test_the_request_goes_to_v1_chat_completions_with_bearer_and_affinity():
    events, transport = await replay(
        SMALL,
        ctx(UserMessage(content="hi")),
        ReplayResponse(recorded("mistral_text")),
        session_id="s-9",
    )
    request = transport.requests[0]
    assert request.url == "https://api.mistral.ai/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["x-affinity"] == "s-9"
    assert events[-1].type == "done"
    assert transport.closed_responses == 1


async def test_an_explicit_affinity_header_wins():
    _, transport = await replay(
        SMALL,
        ctx(UserMessage(content="hi")),
        ReplayResponse(recorded("mistral_text")),
        session_id="s-9",
        headers={"X-Affinity": None},
    )
    assert "x-affinity" not in transport.requests[0].headers


async def test_missing_key_names_the_provider(monkeypatch):
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    events, transport = await replay(SMALL, ctx(UserMessage(content="hi")), api_key=None)
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error.error_message
        == "No API key for provider: mistral; set MISTRAL_API_KEY, or pass api_key / get_api_key"
    )
    assert transport.requests == []


@pytest.mark.parametrize(
    ("status", "body", "text"),
    [
        (
            429,
            b'{"message":"Requests rate limit exceeded"}',
            'Mistral API error (429): {"message":"Requests rate limit exceeded"}',
        ),
        (503, b"  upstream down \n", "Mistral API error (503): upstream down"),
        (500, b"", "Mistral API error (500): Internal Server Error"),
    ],
)
async def test_http_failures_name_the_status_and_the_body(status, body, text):
    events, _ = await replay(
        SMALL, ctx(UserMessage(content="hi")), ReplayResponse(body, status=status)
    )
    assert events[-1].error.error_message == text


async def test_retries_a_503_then_streams():
    events, transport = await replay(
        SMALL,
        ctx(UserMessage(content="hi")),
        ReplayResponse(b"busy", status=503, headers={"retry-after-ms": "1"}),
        ReplayResponse(recorded("mistral_text")),
        max_retries=1,
    )
    assert len(transport.requests) == 2
    assert events[-1].type == "done"


async def test_a_reset_mid_stream_keeps_the_text():
    body = recorded("mistral_text")
    cut = body.index(b'" !"')
    events, _ = await replay(
        SMALL,
        ctx(UserMessage(content="hi")),
        ReplayResponse([body[: body.rindex(b"data:", 0, cut)]], error=httpx2.ReadError("reset")),
    )
    assert events[-1].type == "error"
    assert events[-1].error.content == [TextContent(text="Bonjour le monde 🌍")]
    assert events[-1].error.error_message.startswith("Network error")


# =========================================================================== loopback


async def test_end_to_end_against_a_loopback_server():
    async with serve_sse([SSEReply(recorded("mistral_thinking_tools"))]) as server:
        message = await complete_with_fresh_registry(
            at_url(MAGISTRAL, server.url), ctx(UserMessage(content="hi"), tools=[ADD]), key=KEY
        )
        assert server.requests[0].path == "/v1/chat/completions"
        assert server.requests[0].json()["tools"][0]["function"]["name"] == "add"
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]


async def test_a_backend_that_holds_the_stream_open_after_done_still_ends_the_request():
    """Nothing after ``[DONE]`` is read: the request ends there, whether or not the server
    closes the stream."""
    with anyio.fail_after(10):
        async with serve_sse([SSEReply(recorded("mistral_text"), hold_open=True)]) as server:
            message = await complete_with_fresh_registry(
                at_url(SMALL, server.url), ctx(UserMessage(content="hi")), key=KEY
            )
            await server.wait_until(lambda s: s.open_connections == 0)
    assert message.stop_reason == "stop"
    assert message.content[0].text.startswith("Bonjour")


async def test_abort_mid_stream_closes_the_server_side_stream():
    body = recorded("mistral_text")
    head = body[: body.index(b"data: [DONE]")]
    head = head[: head.rindex(b"data:")]  # no finish reason: the server holds the stream open
    seen, message = await abort_at_first_text_delta(
        SMALL, ctx(UserMessage(content="hi")), head, key=KEY
    )
    assert seen[-1] == "error"
    assert message.stop_reason == "aborted"
    assert message.content[0].text.startswith("Bonjour")
