"""The openai-responses and azure-openai-responses providers: input items and request
rules, stream-event mapping, recorded bodies replayed through httpx, a loopback server end
to end, and an opt-in live test."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
    complete_simple,
    get_model,
)
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._responses_events import ResponsesEventMapper
from pi_trio.ai.providers._responses_shared import (
    encode_text_signature,
    parse_text_signature,
    short_hash,
)
from pi_trio.ai.providers._simple import RESPONSES_OWNED_KEYS
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.ai.providers.openai_responses import (
    azure_base_url,
    azure_deployment_name,
    azure_error_text,
    azure_responses_url,
    build_responses_body,
    is_chatgpt_sign_in,
    openai_error_text,
    responses_simple_options,
    with_usage_hint,
)
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing._replay import (
    ReplayResponse,
    ReplayTransport,
    registry_with_transport,
    sse_body,
)
from pi_trio.testing._sse_server import SSEReply, serve_sse

from .helpers import MessageFold, applied
from .provider_support import (
    UNFINISHED_REPLAY_WARNINGS,
    abort_at_first_text_delta,
    at_url,
    complete_with_fresh_registry,
    event_shape,
    events_however_cut,
    replay_stream,
)

pytestmark = UNFINISHED_REPLAY_WARNINGS

FIXTURES = Path(__file__).parent / "fixtures" / "openai_responses"
GPT54 = get_model("openai", "gpt-5.4")
GPT5 = get_model("openai", "gpt-5")
GPT51 = get_model("openai", "gpt-5.1")
GPT41 = get_model("openai", "gpt-4.1")
GPT55 = get_model("openai", "gpt-5.5")
assert GPT54 is not None
assert GPT5 is not None
assert GPT51 is not None
assert GPT41 is not None
assert GPT55 is not None
AZURE = msgspec.structs.replace(
    GPT54,
    api="azure-openai-responses",
    provider="azure-openai-responses",
    base_url="https://model-base.openai.azure.com/openai/v1",
)
KEY = "sk-proj-test-key-0123456789abcdef"

WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(messages=list(messages), system_prompt=system, tools=tools)


def body_of(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    return build_responses_body(model, normalize_context(context), StreamOptions(**options))


def assistant(
    *blocks: Any,
    model: Model = GPT54,
    stop: str = "stop",
    provider: str | None = None,
    api: str | None = None,
) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=api or model.api,
        provider=provider or model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason=stop,
        timestamp=1,  # type: ignore[arg-type]
    )


def result(call_id: str, *content: Any, is_error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="get_weather", content=list(content), is_error=is_error
    )


async def replay(model: Model, context: Context, *replies: Any, **options: Any):
    return await replay_stream(model, context, *replies, key=KEY, **options)


shape = event_shape


# =========================================================================== ids and signatures


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "k4n83c7h0j2b"),
        ("abc", "y0biex7f9bbh"),
        ("fc_0123456789abcdef", "1qbwa93h73gwl"),
        ("héllo 😀", "1t90xbiinqdrp"),
    ],
)
def test_short_hash_matches_the_original_runtime(text, expected):
    assert short_hash(text) == expected


def test_text_signatures_round_trip_v1_json_and_accept_legacy_ids():
    assert encode_text_signature("msg_1") == '{"v":1,"id":"msg_1"}'
    assert encode_text_signature("msg_1", "commentary") == (
        '{"v":1,"id":"msg_1","phase":"commentary"}'
    )
    assert encode_text_signature("msg_1", "bogus") == '{"v":1,"id":"msg_1"}'
    assert parse_text_signature('{"v":1,"id":"msg_1","phase":"final_answer"}') == (
        "msg_1",
        "final_answer",
    )
    assert parse_text_signature("msg_legacy") == ("msg_legacy", None)
    # as pi 1.6: a signature that is not v1 JSON is a legacy id, whole
    assert parse_text_signature('{"v":2,"id":"x"}') == ('{"v":2,"id":"x"}', None)
    assert parse_text_signature(None) is None


# =========================================================================== request body


def test_body_basics_for_a_reasoning_model():
    body = body_of(GPT54, ctx(UserMessage(content="hi")))
    assert body == {
        "model": "gpt-5.4",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "reasoning": {"effort": "none"},
    }


def test_non_reasoning_models_get_no_reasoning_and_a_system_role():
    body = body_of(GPT41, ctx(UserMessage(content="hi"), system="Be brief."))
    assert "reasoning" not in body
    assert body["input"][0] == {"role": "system", "content": "Be brief."}


def test_reasoning_models_get_the_prompt_as_developer_unless_unsupported():
    assert body_of(GPT54, ctx(UserMessage(content="hi"), system="S"))["input"][0] == {
        "role": "developer",
        "content": "S",
    }
    model = msgspec.structs.replace(GPT54, compat={"supportsDeveloperRole": False})
    assert body_of(model, ctx(UserMessage(content="hi"), system="S"))["input"][0]["role"] == (
        "system"
    )


def test_later_system_messages_become_instruction_items_in_place():
    context = ctx(
        SystemMessage(content="Lead.", timestamp=0),
        UserMessage(content="hi"),
        SystemMessage(content="Update.", sections={"tone": "dry"}),
        UserMessage(content="again"),
    )
    items = body_of(GPT54, context)["input"]
    assert [item.get("role") for item in items] == ["developer", "user", "developer", "user"]
    assert items[2]["content"] == 'Update.\n\nUpdated system prompt section "tone":\n\ndry'


def test_user_images_become_data_url_input_images():
    message = UserMessage(
        content=[TextContent(text="look"), ImageContent(data="QUJD", mime_type="image/png")]
    )
    assert body_of(GPT54, ctx(message))["input"][0]["content"] == [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"},
    ]


def test_prompt_cache_key_is_the_session_clamped_to_64_code_points():
    session = "😀" * 70
    body = body_of(GPT54, ctx(UserMessage(content="hi")), session_id=session)
    assert body["prompt_cache_key"] == "😀" * 64
    assert "prompt_cache_key" not in body_of(
        GPT54, ctx(UserMessage(content="hi")), session_id="s", cache_retention="none"
    )


def test_long_retention_asks_for_24h_unless_unsupported():
    assert (
        body_of(GPT54, ctx(UserMessage(content="hi")), cache_retention="long")[
            "prompt_cache_retention"
        ]
        == "24h"
    )
    model = msgspec.structs.replace(GPT54, compat={"supportsLongCacheRetention": False})
    assert "prompt_cache_retention" not in body_of(
        model, ctx(UserMessage(content="hi")), cache_retention="long"
    )
    assert "prompt_cache_retention" not in body_of(
        AZURE, ctx(UserMessage(content="hi")), cache_retention="long"
    )


def test_max_output_tokens_is_at_least_16_and_omitted_when_unset():
    assert body_of(GPT54, ctx(UserMessage(content="hi")), max_tokens=5)["max_output_tokens"] == 16
    assert (
        body_of(GPT54, ctx(UserMessage(content="hi")), max_tokens=900)["max_output_tokens"] == 900
    )
    assert "max_output_tokens" not in body_of(GPT54, ctx(UserMessage(content="hi")), max_tokens=0)


def test_temperature_service_tier_tools_and_tool_choice():
    body = body_of(
        GPT41,
        ctx(UserMessage(content="hi"), tools=[WEATHER]),
        temperature=0.4,
        extra={"service_tier": "flex", "tool_choice": "required"},
    )
    assert body["temperature"] == 0.4
    assert body["service_tier"] == "flex"
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": WEATHER.parameters,
            "strict": False,
        }
    ]
    assert body["tool_choice"] == "required"
    assert body_of(GPT41, ctx(UserMessage(content="hi")), tool_choice="none")["tool_choice"] == (
        "none"
    )


def test_reasoning_effort_and_summary_ask_for_encrypted_reasoning():
    body = body_of(
        GPT54,
        ctx(UserMessage(content="hi")),
        extra={"reasoning_effort": "high", "reasoning_summary": "detailed"},
    )
    assert body["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert body["include"] == ["reasoning.encrypted_content"]
    body = body_of(GPT54, ctx(UserMessage(content="hi")), extra={"reasoning_summary": "concise"})
    assert body["reasoning"] == {"effort": "medium", "summary": "concise"}
    body = body_of(GPT54, ctx(UserMessage(content="hi")), extra={"reasoning_effort": "low"})
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}


def test_thinking_off_uses_the_models_off_value_or_sends_nothing():
    assert "reasoning" not in body_of(GPT5, ctx(UserMessage(content="hi")))  # off unsupported
    mapped = msgspec.structs.replace(GPT54, thinking_level_map={"off": "minimal"})
    assert body_of(mapped, ctx(UserMessage(content="hi")))["reasoning"] == {"effort": "minimal"}
    copilot = msgspec.structs.replace(GPT54, provider="github-copilot")
    assert "reasoning" not in body_of(copilot, ctx(UserMessage(content="hi")))
    assert "include" not in body_of(GPT54, ctx(UserMessage(content="hi")))


@pytest.mark.parametrize(
    ("compat", "retention", "expected"),
    [
        ({}, "short", {"prompt_cache_key": "s1"}),
        ({}, "long", {"prompt_cache_key": "s1", "prompt_cache_retention": "24h"}),
        ({"supportsLongCacheRetention": False}, "long", {"prompt_cache_key": "s1"}),
        ({}, "none", {}),
        ({"promptCacheKeyMode": "disabled"}, "short", {}),
        ({"supportsExplicitPromptCacheMode": True}, "short", {"prompt_cache_key": "s1"}),
        (
            {"supportsExplicitPromptCacheMode": True},
            "long",
            {"prompt_cache_key": "s1", "prompt_cache_options": {"ttl": "30m"}},
        ),
        (
            {"supportsExplicitPromptCacheMode": True},
            "none",
            {"prompt_cache_options": {"mode": "explicit"}},
        ),
        (
            {"supportsExplicitPromptCacheMode": True, "supportsLongCacheRetention": False},
            "long",
            {"prompt_cache_key": "s1"},
        ),
    ],
)
def test_prompt_cache_fields_follow_the_retention_and_the_explicit_cache_mode(
    compat, retention, expected
):
    model = msgspec.structs.replace(GPT54, compat=compat)
    body = body_of(
        model, ctx(UserMessage(content="hi")), session_id="s1", cache_retention=retention
    )
    fields = ("prompt_cache_key", "prompt_cache_retention", "prompt_cache_options")
    assert {name: body[name] for name in fields if name in body} == expected


def test_a_chatgpt_token_leaves_out_the_fields_such_requests_are_refused_for():
    assert is_chatgpt_sign_in(GPT54, "eyJhbGciOi.token")
    assert not is_chatgpt_sign_in(GPT54, KEY)
    assert not is_chatgpt_sign_in(msgspec.structs.replace(GPT54, base_url="http://x/v1"), "t")
    model = msgspec.structs.replace(
        GPT54, compat={"supportsExplicitPromptCacheMode": True, "supportsMidConvoEffort": True}
    )
    options: dict[str, Any] = {
        "session_id": "s1",
        "cache_retention": "long",
        "max_tokens": 500,
        "temperature": 0.3,
        "extra": {"reasoning_effort": "high"},
    }
    signed = build_responses_body(
        model,
        normalize_context(ctx(UserMessage(content="hi"))),
        StreamOptions(**options),
        sign_in=True,
    )
    assert signed["prompt_cache_key"] == "s1"
    for name in ("prompt_cache_options", "max_output_tokens", "temperature"):
        assert name not in signed
    assert signed["reasoning"] == {"effort": "high", "summary": "auto"}
    assert all(item.get("type") != "configuration_update" for item in signed["input"])
    plain = body_of(model, ctx(UserMessage(content="hi")), **options)
    assert plain["max_output_tokens"] == 500
    assert plain["temperature"] == 0.3
    assert plain["prompt_cache_options"] == {"ttl": "30m"}


async def test_a_chatgpt_token_is_detected_from_the_key_the_request_carries():
    token = "eyJhbGciOi.payload.signature"
    _, transport = await replay(
        GPT54,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        ReplayResponse(fixture("text.sse")),
        api_key=token,
        max_tokens=100,
    )
    assert "max_output_tokens" not in transport.requests[0].json()
    _, transport = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(fixture("text.sse")), max_tokens=100
    )
    assert transport.requests[0].json()["max_output_tokens"] == 100


def test_models_without_max_output_tokens_never_get_it():
    model = msgspec.structs.replace(GPT54, compat={"supportsMaxOutputTokens": False})
    assert "max_output_tokens" not in body_of(model, ctx(UserMessage(content="hi")), max_tokens=99)


async def test_mid_conversation_effort_travels_in_configuration_update_items():
    model = msgspec.structs.replace(
        GPT54,
        compat={"supportsMidConvoEffort": True},
        thinking_level_map={"off": "none", "high": "xhigh"},
    )
    events, transport = await replay(
        model,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        extra={"reasoning_effort": "high"},
    )
    sent = transport.requests[0].json()
    assert sent["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert sent["input"][-1] == {"type": "configuration_update", "reasoning": {"effort": "xhigh"}}
    assert events[-1].message.provider_thinking_level == "xhigh"
    _, transport = await replay(
        GPT54,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        extra={"reasoning_effort": "high"},
    )
    sent = transport.requests[0].json()
    assert sent["reasoning"] == {"effort": "high", "summary": "auto"}
    assert all(item.get("type") != "configuration_update" for item in sent["input"])


def test_xai_reasoning_models_always_ask_for_encrypted_reasoning():
    model = msgspec.structs.replace(GPT54, provider="xai")
    body = body_of(model, ctx(UserMessage(content="hi")))
    assert body["reasoning"] == {"effort": "none"}
    assert body["include"] == ["reasoning.encrypted_content"]


@pytest.mark.parametrize(
    ("provider", "status", "body", "text"),
    [
        (
            "openai",
            400,
            '{"error":{"message":"Bad thing","type":"invalid_request_error","code":"x"}}',
            'OpenAI API error (400): {"message":"Bad thing","type":"invalid_request_error",'
            '"code":"x"}',
        ),
        (
            "opencode",
            429,
            '{"error":{"message":"slow down"}}',
            ('opencode API error (429): {"message":"slow down"}'),
        ),
        ("openai", 500, "oops", "OpenAI API error (500): 500 oops"),
    ],
)
def test_failures_read_as_1_6_words_them(provider, status, body, text):
    model = msgspec.structs.replace(GPT54, provider=provider)
    assert openai_error_text(model)(status, httpx2.Headers(), body, False) == text


async def test_a_chatgpt_usage_limit_says_where_to_check_it():
    body = b'{"error":{"message":"x","code":"subscription_sharing_usage_limit_exceeded"}}'
    events, _ = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(body, status=429), max_retries=0
    )
    assert events[-1].error.error_message == (
        'OpenAI API error (429): {"message":"x","code":"subscription_sharing_usage_limit_exceeded"}'
        "\nCheck your ChatGPT usage: https://chatgpt.com/settings/usage"
    )
    workspace = with_usage_hint("subscription_sharing_workplace_individual_usage_limit_exceeded")
    assert workspace.endswith("Workspace → Usage limits.")


# --------------------------------------------------------------------------- replayed items


def test_same_model_assistant_turns_replay_reasoning_items_text_ids_and_calls():
    reasoning_item = {
        "id": "rs_1",
        "type": "reasoning",
        "encrypted_content": "enc",
        "summary": [{"type": "summary_text", "text": "plan"}],
    }
    message = assistant(
        ThinkingContent(
            thinking="plan", thinking_signature=msgspec.json.encode(reasoning_item).decode()
        ),
        ThinkingContent(thinking="no signature, not replayed"),
        TextContent(text="first", text_signature='{"v":1,"id":"msg_a","phase":"commentary"}'),
        TextContent(text="second", text_signature="msg_legacy"),
        TextContent(text="third"),
        TextContent(text="fourth"),
        ToolCall(id="call_1|fc_1", name="get_weather", arguments={"city": "Rome"}),
        stop="toolUse",
    )
    items = body_of(
        GPT54,
        ctx(UserMessage(content="q"), message, result("call_1|fc_1", TextContent(text="hot"))),
    )
    items = items["input"][1:]
    assert items[0] == reasoning_item
    assert items[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "first", "annotations": []}],
        "status": "completed",
        "id": "msg_a",
        "phase": "commentary",
    }
    # a text without an id is named after its message and its place among the texts
    assert [item.get("id") for item in items[1:5]] == [
        "msg_a",
        "msg_legacy",
        "msg_pi_1_2",
        "msg_pi_1_3",
    ]
    assert items[5] == {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city":"Rome"}',
    }
    assert items[6] == {"type": "function_call_output", "call_id": "call_1", "output": "hot"}


def test_text_ids_longer_than_64_are_hashed():
    long_id = "msg_" + "x" * 80
    message = assistant(TextContent(text="a", text_signature=encode_text_signature(long_id)))
    items = body_of(GPT54, ctx(UserMessage(content="q"), message))["input"]
    assert items[1]["id"] == f"msg_{short_hash(long_id)}"


def test_another_model_of_the_same_api_omits_fc_item_ids():
    message = assistant(
        ToolCall(id="call_1|fc_1", name="get_weather", arguments={}), model=GPT51, stop="toolUse"
    )
    items = body_of(GPT54, ctx(UserMessage(content="q"), message, result("call_1|fc_1")))["input"]
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "{}",
    }


def test_tool_call_ids_from_other_providers_are_normalized():
    anthropic_model = get_model("anthropic", "claude-sonnet-4-5")
    assert anthropic_model is not None
    message = assistant(
        ToolCall(id="toolu_01.x", name="get_weather", arguments={}),
        ToolCall(id="call+9|item/1", name="get_weather", arguments={}),
        model=anthropic_model,
        stop="toolUse",
    )
    context = ctx(UserMessage(content="q"), message, result("toolu_01.x"), result("call+9|item/1"))
    items = body_of(GPT54, context)["input"]
    assert items[1]["call_id"] == "toolu_01_x"
    assert "id" not in items[1]
    assert items[2]["call_id"] == "call_9"
    assert items[2]["id"] == f"fc_{short_hash('item/1')}"
    assert [items[3]["call_id"], items[4]["call_id"]] == ["toolu_01_x", "call_9"]


def test_same_api_ids_get_an_fc_prefix_and_lose_trailing_underscores():
    message = assistant(
        ToolCall(id="call_1|item_x.", name="get_weather", arguments={}), model=GPT51, stop="toolUse"
    )
    items = body_of(GPT54, ctx(UserMessage(content="q"), message, result("call_1|item_x.")))
    assert items["input"][1]["call_id"] == "call_1"
    assert items["input"][2]["call_id"] == "call_1"


def test_tool_outputs_use_a_placeholder_when_empty_and_images_for_vision_models():
    message = assistant(
        ToolCall(id="a|fc_a", name="get_weather", arguments={}),
        ToolCall(id="b|fc_b", name="get_weather", arguments={}),
        stop="toolUse",
    )
    context = ctx(
        UserMessage(content="q"),
        message,
        result("a|fc_a"),
        result("b|fc_b", TextContent(text="see"), ImageContent(data="AAAA", mime_type="image/png")),
    )
    items = body_of(GPT54, context)["input"]
    assert items[3]["output"] == "(no tool output)"
    assert items[4]["output"] == [
        {"type": "input_text", "text": "see"},
        {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"},
    ]


# =========================================================================== simple options


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        (GPT54, "medium", "medium"),
        (GPT54, "xhigh", "xhigh"),
        (GPT54, "max", "xhigh"),
        (GPT51, "minimal", "low"),
        (GPT5, "high", "high"),
    ],
)
def test_simple_maps_the_clamped_level_through_the_level_map(model, level, effort):
    options = responses_simple_options(
        model, ctx(UserMessage(content="hi")), StreamOptions(reasoning=level)
    )
    assert options.extra == {"reasoning_effort": effort}
    body = build_responses_body(model, normalize_context(ctx(UserMessage(content="hi"))), options)
    assert body["reasoning"] == {"effort": effort, "summary": "auto"}
    assert body["max_output_tokens"] == model.max_tokens


def test_simple_without_reasoning_leaves_thinking_off():
    options = responses_simple_options(GPT54, ctx(UserMessage(content="hi")), StreamOptions())
    assert options.extra == {}
    body = build_responses_body(GPT54, normalize_context(ctx(UserMessage(content="hi"))), options)
    assert body["reasoning"] == {"effort": "none"}


def test_simple_ignores_the_level_on_non_reasoning_models():
    options = responses_simple_options(
        GPT41, ctx(UserMessage(content="hi")), StreamOptions(reasoning="high")
    )
    assert options.extra == {}


# =========================================================================== stream events


def feed_all(body: bytes, model: Model = GPT54, **kwargs: Any) -> list[Any]:
    """The events of ``body`` through the parser and the mapper; a failure becomes the
    ``error`` terminal as in a provider run."""
    builder = MessageBuilder(model)
    mapper = ResponsesEventMapper(builder, model, **kwargs)
    parser = SSEParser()
    events: list[Any] = []
    try:
        for sse in [*parser.feed(body), *parser.close()]:
            events.extend(mapper.feed_data(sse.data))
        events.append(mapper.finish())
    except ProviderError as exc:
        events.append(builder.error(str(exc)))
    return applied(builder, events)


def failure(events: list[Any]) -> str:
    assert events[-1].type == "error", events[-1]
    return events[-1].error.error_message


def test_text_stream_maps_to_text_events_with_a_v1_signature():
    events = feed_all(fixture("text.sse"))
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    message = events[-1].message
    assert message.content == [
        TextContent(
            text="Héllo wörld 🌍!",
            text_signature='{"v":1,"id":"msg_0a1b2c","phase":"final_answer"}',
        )
    ]
    assert message.response_id == "resp_0a1b2c"
    assert message.response_model is None  # pi 1.6 records it for Anthropic and Completions only
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (37, 11, 48)
    assert message.usage.reasoning == 0
    assert message.raw_stop_reason == "completed"
    assert events[-1].reason == "stop"


def test_reasoning_and_parallel_tool_calls_finishing_out_of_order():
    events = feed_all(fixture("reasoning_tools.sse"))
    message = events[-1].message
    assert events[-1].reason == "toolUse"
    thinking, first, second = message.content
    assert thinking.thinking == "**Planning**\n\nTwo cities, two calls."
    item = msgspec.json.decode(thinking.thinking_signature)
    assert item["id"] == "rs_01"
    assert item["encrypted_content"] == "gAAAAABoENCRYPTED=="
    assert first == ToolCall(id="call_A|fc_01", name="get_weather", arguments={"city": "Paris"})
    assert second == ToolCall(id="call_B|fc_02", name="get_weather", arguments={"city": "Tokyo"})
    thinking_deltas = [e.delta for e in events if e.type == "thinking_delta"]
    assert thinking_deltas == ["**Planning**", "\n\n", "Two cities, two calls.", "\n\n"]
    thinking_end = next(e for e in events if e.type == "thinking_end")
    assert thinking_end.content == "**Planning**\n\nTwo cities, two calls."
    assert [e.delta for e in events if e.type == "toolcall_delta" and e.content_index == 2] == [
        '{"city":"Tok',
        'yo"}',
    ]
    ends = [e.content_index for e in events if e.type == "toolcall_end"]
    assert ends == [2, 1]


def test_usage_subtracts_cached_tokens_and_applies_the_priority_multiplier():
    usage = feed_all(fixture("reasoning_tools.sse"))[-1].message.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.output) == (500, 1000, 0, 300)
    assert usage.reasoning == 200
    assert usage.total_tokens == 1800
    base = (500 * 2.5 + 300 * 15 + 1000 * 0.25) / 1e6
    assert usage.cost.total == pytest.approx(base * 2)
    assert usage.cost.input == pytest.approx(500 * 2.5 / 1e6 * 2)


def completed(status: str = "completed", **response: Any) -> dict[str, Any]:
    return {
        "type": f"response.{'incomplete' if status == 'incomplete' else 'completed'}",
        "response": {
            "id": "r",
            "status": status,
            "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110},
            **response,
        },
    }


def test_flex_tier_halves_the_cost_and_gpt55_priority_is_two_and_a_half():
    flex = feed_all(sse_body([completed(service_tier="flex")]))[-1].message.usage.cost
    assert flex.total == pytest.approx((100 * 2.5 + 10 * 15) / 1e6 * 0.5)
    requested = feed_all(sse_body([completed()]), service_tier="flex")[-1].message.usage.cost
    assert requested.total == pytest.approx(flex.total)
    gpt55 = feed_all(sse_body([completed(service_tier="priority")]), GPT55)[-1].message.usage
    assert gpt55.cost.total == pytest.approx((100 * 5 + 10 * 30) / 1e6 * 2.5)


@pytest.mark.parametrize(
    ("status", "reason"),
    [("completed", "stop"), ("in_progress", "stop"), ("queued", "stop")],
)
def test_response_status_maps_to_the_stop_reason(status, reason):
    events = feed_all(sse_body([completed(status)]))
    assert events[-1].type == "done"
    assert events[-1].reason == reason


def test_incomplete_is_length_only_for_max_output_tokens():
    cut = completed("incomplete", incomplete_details={"reason": "max_output_tokens"})
    events = feed_all(sse_body([cut]))
    assert events[-1].reason == "length"
    assert events[-1].message.raw_stop_reason == "incomplete.max_output_tokens"
    filtered = feed_all(sse_body([completed("incomplete", incomplete_details={"reason": "x"})]))
    assert failure(filtered) == "Response incomplete: x"
    assert filtered[-1].error.raw_stop_reason == "incomplete.x"
    assert failure(feed_all(sse_body([completed("incomplete")]))) == (
        "Response incomplete without a provider reason"
    )


def test_incomplete_response_keeps_the_text_and_stops_for_length():
    events = feed_all(fixture("incomplete.sse"))
    assert events[-1].reason == "length"
    assert events[-1].message.content[0].text == "Once upon a"


def test_cancelled_or_failed_status_in_a_completed_event_is_an_error():
    assert failure(feed_all(sse_body([completed("cancelled")]))) == "An unknown error occurred"
    text = failure(feed_all(sse_body([completed("failed", error={"code": "x", "message": "y"})])))
    assert text == "x: y"


def test_refusal_text_is_streamed_as_text():
    events = feed_all(fixture("refusal.sse"))
    assert events[-1].reason == "stop"
    assert events[-1].message.content[0].text == "I can't help with that."


def test_error_event_fails_with_code_and_message():
    events = feed_all(fixture("error.sse"))
    assert failure(events) == (
        "Error Code server_error: The server had an error while processing your request."
    )
    assert events[-1].error.content == [TextContent(text="Partial")]


def test_response_failed_texts():
    assert failure(feed_all(fixture("failed.sse"))) == (
        "rate_limit_exceeded: Rate limit reached for gpt-5.4."
    )
    assert (
        failure(
            feed_all(
                sse_body([{"type": "response.failed", "response": {"error": {"message": "boom"}}}])
            )
        )
        == "unknown: boom"
    )
    assert (
        failure(
            feed_all(
                sse_body(
                    [
                        {
                            "type": "response.failed",
                            "response": {"incomplete_details": {"reason": "content_filter"}},
                        }
                    ]
                )
            )
        )
        == "incomplete: content_filter"
    )
    assert failure(feed_all(sse_body([{"type": "response.failed", "response": {}}]))) == (
        "Unknown error (no error details in response)"
    )


def test_stream_without_a_terminal_event_fails():
    body = fixture("text.sse")
    cut = body[: body.index(b"event: response.completed")]
    assert failure(feed_all(cut)) == (
        "OpenAI Responses stream ended before a terminal response event"
    )


def test_unknown_events_and_item_types_are_skipped():
    body = sse_body(
        [
            {"type": "response.web_search_call.in_progress", "output_index": 0},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "ws_1", "type": "web_search_call"},
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"id": "ws_1", "type": "web_search_call"},
            },
            {"type": "response.future_thing", "anything": [1, 2]},
            "[DONE]",
            completed(),
        ]
    )
    events = feed_all(body)
    assert [e.type for e in events] == ["done"]


def test_arguments_only_in_the_finished_item_are_parsed():
    body = sse_body(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "id": "fc_9",
                    "type": "function_call",
                    "call_id": "c9",
                    "name": "w",
                    "arguments": "",
                },
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "id": "fc_9",
                    "type": "function_call",
                    "call_id": "c9",
                    "name": "w",
                    "arguments": '{"a":1}',
                },
            },
            completed(),
        ]
    )
    events = feed_all(body)
    assert events[-1].message.content == [ToolCall(id="c9|fc_9", name="w", arguments={"a": 1})]
    assert events[-1].reason == "toolUse"


def test_final_arguments_that_contradict_the_stream_win():
    body = sse_body(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "fc_9", "type": "function_call", "call_id": "c9", "name": "w"},
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "delta": '{"a":"wrong"',
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"a":"right"}',
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"id": "fc_9", "type": "function_call", "call_id": "c9", "name": "w"},
            },
            completed(),
        ]
    )
    assert feed_all(body)[-1].message.content[0].arguments == {"a": "right"}


def test_reasoning_text_deltas_and_content_texts():
    body = sse_body(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"id": "rs", "type": "reasoning"},
            },
            {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "raw "},
            {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "thought"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "id": "rs",
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": "raw thought"}],
                },
            },
            completed(),
        ]
    )
    assert feed_all(body)[-1].message.content[0].thinking == "raw thought"


def test_a_field_of_the_wrong_type_fails_naming_the_field():
    wrong = {"type": "response.output_text.delta", "output_index": "0", "delta": "x"}
    assert failure(feed_all(sse_body([wrong]))).startswith(
        "Could not parse OpenAI Responses SSE event: "
        "Expected `int | null`, got `str` - at `$.output_index`; data={"
    )
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": "m", "type": "message"},
    }
    done = {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {"id": 7, "type": "message"},
    }
    assert failure(feed_all(sse_body([added, done]))).startswith(
        "Could not parse OpenAI Responses SSE event: Expected `str | null`, got `int` - at `$.id`"
    )


def test_data_that_is_json_but_not_an_object_is_skipped():
    assert [e.type for e in feed_all(sse_body(["null", "42", [1], completed()]))] == ["done"]


def test_the_reasoning_signature_is_the_item_as_sent_with_fields_the_mapper_never_reads():
    item = {
        "id": "rs",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "hm"}],
        "encrypted_content": "gAAA",
        "future_field": {"nested": [1, "é"]},
    }
    body = sse_body(
        [
            {"type": "response.output_item.added", "output_index": 0, "item": {**item}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            completed(),
        ]
    )
    thinking = feed_all(body)[-1].message.content[0]
    assert thinking.thinking == "hm"
    assert msgspec.json.decode(thinking.thinking_signature) == item


def test_malformed_event_json_fails_clearly():
    text = failure(feed_all(b"data: {nope\n\n"))
    assert text.startswith("Could not parse OpenAI Responses SSE event: ")
    assert text.endswith("; data={nope")


# =========================================================================== replay over httpx


async def test_replayed_request_goes_to_responses_with_bearer_and_session_headers():
    events, transport = await replay(
        GPT54,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        session_id="sess-1",
    )
    request = transport.requests[0]
    assert request.url == "https://api.openai.com/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["session-id"] == "sess-1"
    assert "session_id" not in request.headers
    assert request.headers["x-client-request-id"] == "sess-1"
    assert request.json()["prompt_cache_key"] == "sess-1"
    assert [e.type for e in events][:2] == ["start", "text_start"]
    assert events[-1].message.content[0].text == "Héllo wörld 🌍!"
    assert transport.closed_responses == 1


@pytest.mark.parametrize(
    ("provider", "compat", "expected"),
    [
        ("openai", {"sessionAffinityFormat": "openai-nosession"}, {"x-client-request-id"}),
        ("openai", {"sessionAffinityFormat": "openrouter"}, {"x-session-id"}),
        ("openrouter", None, {"x-session-id"}),
        ("opencode", None, {"session-id", "x-client-request-id"}),
    ],
)
async def test_session_headers_follow_the_session_affinity_format(provider, compat, expected):
    model = msgspec.structs.replace(GPT54, provider=provider, compat=compat)
    _, transport = await replay(
        model,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        session_id="sess-1",
    )
    headers = transport.requests[0].headers
    names = {"session-id", "session_id", "x-session-id", "x-client-request-id"}
    assert {name for name in names if name in headers} == expected
    assert all(headers[name] == "sess-1" for name in expected)
    assert transport.requests[0].json()["prompt_cache_key"] == "sess-1"


async def test_missing_key_names_the_provider(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    events, transport = await replay(GPT54, ctx(UserMessage(content="hi")), api_key=None)
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error.error_message
        == "No API key for provider: openai; set OPENAI_API_KEY, or pass api_key / get_api_key"
    )
    assert transport.requests == []


async def test_azure_url_key_header_and_deployment_name():
    env = {
        "AZURE_OPENAI_RESOURCE_NAME": "myres",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-4o=a, gpt-5.4 = prod-54",
    }
    events, transport = await replay(
        AZURE, ctx(UserMessage(content="hi")), ReplayResponse(fixture("text.sse")), env=env
    )
    request = transport.requests[0]
    assert request.url == "https://myres.openai.azure.com/openai/v1/responses?api-version=v1"
    assert request.headers["api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.json()["model"] == "prod-54"
    assert events[-1].type == "done"


def test_azure_url_and_deployment_precedence():
    options = StreamOptions(
        env={
            "AZURE_OPENAI_BASE_URL": "https://proxy.example/v1/",
            "AZURE_OPENAI_RESOURCE_NAME": "ignored",
            "AZURE_OPENAI_API_VERSION": "preview",
        }
    )
    assert azure_responses_url(AZURE, options) == (
        "https://proxy.example/v1/responses?api-version=preview"
    )
    assert azure_responses_url(AZURE, StreamOptions(env={"AZURE_OPENAI_BASE_URL": ""})) == (
        "https://model-base.openai.azure.com/openai/v1/responses?api-version=v1"
    )
    explicit = StreamOptions(
        extra={"azure_deployment_name": "d1"},
        env={"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-5.4=d2"},
    )
    assert azure_deployment_name(AZURE, explicit) == "d1"
    assert azure_deployment_name(AZURE, StreamOptions(env={})) == "gpt-5.4"


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://res.openai.azure.com", "https://res.openai.azure.com/openai/v1"),
        ("https://res.openai.azure.com/openai/", "https://res.openai.azure.com/openai/v1"),
        (
            "https://res.cognitiveservices.azure.com/openai/v1/responses?x=1",
            "https://res.cognitiveservices.azure.com/openai/v1",
        ),
        ("https://gateway.example/azure/", "https://gateway.example/azure"),
    ],
)
def test_azure_hosts_get_the_openai_v1_path(base, url):
    assert azure_base_url(AZURE, StreamOptions(extra={"azure_base_url": base})) == url


async def test_azure_without_any_base_url_says_where_to_set_one():
    model = msgspec.structs.replace(AZURE, base_url="")
    events, transport = await replay(model, ctx(UserMessage(content="hi")), env={})
    assert events[-1].error.error_message.startswith(
        "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"
    )
    assert transport.requests == []


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ('{"error":{"message":"m","code":"c"}}', '{"message":"m","code":"c"}'),
        ('{"error":"plain"}', '400 "plain"'),
        ('{"detail":"x"}', "400 status code (no body)"),
        ("<html>gateway</html>", "400 <html>gateway</html>"),
        ("", "400 status code (no body)"),
    ],
)
def test_azure_failures_read_as_the_openai_sdk_and_pi_1_6_word_them(body, text):
    assert azure_error_text(400, httpx2.Headers(), body, False) == (
        f"Azure OpenAI API error (400): {text}"
    )


async def test_azure_sends_the_cache_key_always_no_session_headers_and_the_sampling_params():
    model = msgspec.structs.replace(AZURE, sampling_params={"top_p": 0.5})
    _, transport = await replay(
        model,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        session_id="sess-1",
        cache_retention="none",
    )
    request = transport.requests[0]
    assert request.json()["prompt_cache_key"] == "sess-1"
    assert request.json()["top_p"] == 0.5
    assert "session_id" not in request.headers
    assert "x-client-request-id" not in request.headers


def test_azure_rewrites_tool_call_ids_of_its_own_turns_into_the_call_item_form():
    message = assistant(
        ToolCall(id="call+1|item.1", name="get_weather", arguments={}),
        model=AZURE,
        provider="azure",
        stop="toolUse",
    )
    model = msgspec.structs.replace(AZURE, provider="azure", id="gpt-5.5")
    items = body_of(model, ctx(UserMessage(content="q"), message, result("call+1|item.1")))
    assert items["input"][1]["call_id"] == "call_1"
    assert "id" not in items["input"][1]  # another model of the same api: no item id


def test_encrypted_reasoning_sent_only_at_the_end_reaches_a_block_already_sealed():
    reasoning = {"id": "rs_1", "type": "reasoning", "summary": []}
    body = sse_body(
        [
            {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
            completed(output=[{**reasoning, "encrypted_content": "enc"}]),
        ]
    )
    builder = MessageBuilder(AZURE)
    mapper = ResponsesEventMapper(builder, AZURE)
    fold = MessageFold()
    fold.apply(builder.start())
    for sse in SSEParser().feed(body):
        for event in mapper.feed_data(sse.data):
            fold.apply(event)  # the consumer keeps up: the block is sealed before the end
    fold.apply(mapper.finish())
    assert fold.result is not None
    signature = msgspec.json.decode(fold.result.content[0].thinking_signature)
    assert signature == {**reasoning, "encrypted_content": "enc"}


async def test_simple_entry_point_sends_the_mapped_effort():
    transport = ReplayTransport(ReplayResponse(fixture("text.sse")))
    registry = registry_with_transport(transport)
    try:
        message = await complete_simple(
            GPT51,
            ctx(UserMessage(content="hi")),
            registry=registry,
            api_key=KEY,
            reasoning="minimal",
        )
    finally:
        await registry.aclose()
    sent = transport.requests[0].json()
    assert sent["reasoning"] == {"effort": "low", "summary": "auto"}
    assert sent["include"] == ["reasoning.encrypted_content"]
    assert message.stop_reason == "stop"


async def test_http_error_status_becomes_an_error_with_the_provider_message():
    body = (
        b'{"error":{"message":"Rate limit reached for gpt-5.4","type":"requests",'
        b'"code":"rate_limit_exceeded"}}'
    )
    events, _ = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(body, status=429)
    )
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message == (
        'OpenAI API error (429): {"message":"Rate limit reached for gpt-5.4","type":"requests",'
        '"code":"rate_limit_exceeded"}'
    )


@pytest.mark.parametrize("name", ["text.sse", "reasoning_tools.sse", "error.sse"])
async def test_crlf_line_endings_give_the_same_events(name):
    plain, _ = await replay(GPT54, ctx(UserMessage(content="hi")), ReplayResponse(fixture(name)))
    crlf, _ = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(fixture(name).replace(b"\n", b"\r\n"))
    )
    assert shape(crlf) == shape(plain)


async def test_comment_lines_and_a_missing_final_blank_line_change_nothing():
    body = fixture("reasoning_tools.sse")
    noisy = b": OPENROUTER PROCESSING\n\n" + body.replace(b"\n\n", b"\n\n: ping\n\n")
    plain, _ = await replay(GPT54, ctx(UserMessage(content="hi")), ReplayResponse(body))
    commented, _ = await replay(GPT54, ctx(UserMessage(content="hi")), ReplayResponse(noisy))
    unterminated, _ = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(body.rstrip(b"\n"))
    )
    assert shape(commented) == shape(plain)
    assert shape(unterminated) == shape(plain)


async def test_error_event_and_connection_reset_keep_the_partial_content():
    events, _ = await replay(
        GPT54, ctx(UserMessage(content="hi")), ReplayResponse(fixture("error.sse"))
    )
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    body = fixture("text.sse")
    cut = body.index(b"event: response.output_text.done")
    events, _ = await replay(
        GPT54,
        ctx(UserMessage(content="hi")),
        ReplayResponse([body[:cut]], error=httpx2.ReadError("reset")),
    )
    assert events[-1].type == "error"
    assert events[-1].error.content == [TextContent(text="Héllo wörld 🌍!")]
    assert events[-1].error.error_message.startswith("Network error")


@pytest.mark.parametrize(("name", "step"), [("text.sse", 1), ("reasoning_tools.sse", 13)])
async def test_the_stream_reads_the_same_however_the_network_cuts_it(name, step):
    context = ctx(UserMessage(content="hi"))
    whole, cut = await events_however_cut(GPT54, context, fixture(name), step=step, api_key=KEY)
    assert [shape(events) for events in cut] == [shape(whole)] * len(cut)


# =========================================================================== loopback server


local = at_url


async def local_complete(model: Model, context: Context, **options: Any) -> AssistantMessage:
    return await complete_with_fresh_registry(model, context, key=KEY, **options)


async def test_end_to_end_streaming_against_a_loopback_server():
    async with serve_sse([SSEReply(fixture("reasoning_tools.sse"))]) as server:
        message = await local_complete(local(GPT54, server.url), ctx(UserMessage(content="hi")))
        assert server.requests[0].path == "/responses"
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == ["thinking", "toolCall", "toolCall"]


async def test_end_to_end_http_error():
    error = b'{"error":{"message":"The server is overloaded","type":"server_error"}}'
    async with serve_sse([SSEReply(error, status=503)]) as server:
        message = await local_complete(local(GPT54, server.url), ctx(UserMessage(content="hi")))
    assert message.stop_reason == "error"
    assert message.error_message == (
        'OpenAI API error (503): {"message":"The server is overloaded","type":"server_error"}'
    )


async def test_end_to_end_connection_reset_mid_stream():
    body = fixture("text.sse")
    cut = body.index(b"event: response.output_text.done")
    async with serve_sse([SSEReply([body[:cut], body[cut:]], reset_after=1)]) as server:
        message = await local_complete(local(GPT54, server.url), ctx(UserMessage(content="hi")))
        assert server.resets == 1
    assert message.stop_reason == "error"
    assert message.content == [TextContent(text="Héllo wörld 🌍!")]
    assert message.error_message.startswith("Network error")


async def test_end_to_end_abort_closes_the_server_side_stream():
    body = fixture("text.sse")
    head = body[: body.index(b"event: response.output_text.done")]
    seen, final = await abort_at_first_text_delta(
        GPT54, ctx(UserMessage(content="hi")), head, key=KEY
    )
    assert seen[-1] == "error"
    assert final.stop_reason == "aborted"
    assert final.content[0].text.startswith("Héllo")  # what was received before the abort


# =========================================================================== live


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY not set")
async def test_live_openai_responses_streams_a_short_answer():
    model = get_model("openai", "gpt-5-nano")
    assert model is not None
    message = await complete_simple(
        model,
        ctx(UserMessage(content="Reply with exactly the word: pong")),
        reasoning="minimal",
        max_tokens=400,
    )
    assert message.stop_reason == "stop", message.error_message
    assert "pong" in "".join(b.text for b in message.content if isinstance(b, TextContent)).lower()
    assert message.usage.output > 0
    assert message.response_id


# --------------------------------------------------------------------------- sampling params


@pytest.mark.parametrize("key", sorted(RESPONSES_OWNED_KEYS))
def test_a_sampling_parameter_may_not_set_a_key_the_builder_owns(key: str) -> None:
    with pytest.raises(
        ProviderError,
        match=rf"^sampling_params may not set '{key}': the openai-responses request builder",
    ):
        body_of(GPT54, ctx(UserMessage(content="q")), sampling_params={"top_p": 1, key: 0})


def test_a_models_own_sampling_parameters_are_held_to_it_too() -> None:
    hostile = msgspec.structs.replace(
        GPT54, sampling_params_by_thinking_level={"high": {"store": True}}
    )
    body_of(hostile, ctx(UserMessage(content="q")), extra={"reasoning_effort": "low"})
    with pytest.raises(ProviderError, match=r"^sampling_params may not set 'store'"):
        body_of(hostile, ctx(UserMessage(content="q")), extra={"reasoning_effort": "high"})


def test_sampling_parameters_are_added_last_and_tune_what_they_name() -> None:
    body = body_of(
        GPT41,
        ctx(UserMessage(content="q")),
        temperature=0.2,
        sampling_params={"temperature": 0.7, "top_p": 0.5},
    )
    assert (body["temperature"], body["top_p"], body["model"]) == (0.7, 0.5, "gpt-4.1")


def test_every_key_the_builder_writes_besides_tuning_is_owned() -> None:
    tool = Tool(name="echo", description="Echo", parameters={"type": "object"})
    body = body_of(
        GPT54,
        ctx(UserMessage(content="q"), tools=[tool]),
        max_tokens=100,
        session_id="s",
        cache_retention="long",
        tool_choice="auto",
        output_format=OutputFormat(schema={"type": "object", "properties": {}}),
        extra={"reasoning_effort": "high", "service_tier": "flex"},
    )
    tuning = {"temperature", "reasoning"}
    assert set(body) - tuning <= RESPONSES_OWNED_KEYS, set(body) - RESPONSES_OWNED_KEYS
    assert {"tools", "tool_choice", "text", "include", "service_tier"} <= set(body)
