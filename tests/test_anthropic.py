"""The anthropic-messages provider: request building, wire-event mapping, recorded bodies
replayed through httpx, a loopback server end to end, and an opt-in live test."""

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
    ProviderError,
    StreamOptions,
    SystemMessage,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    complete_simple,
    get_model,
)
from pi_trio.ai.failures import is_context_overflow
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._anthropic_events import AnthropicEventMapper
from pi_trio.ai.providers._anthropic_request import (
    BETA_FINE_GRAINED_TOOL_STREAMING,
    BETA_INTERLEAVED_THINKING,
    CLAUDE_CODE_IDENTITY,
    build_anthropic_request,
)
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.ai.providers._strict_limits import forget_strict_tool_limits
from pi_trio.ai.providers.anthropic import anthropic_error_text, anthropic_simple_options
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing._replay import (
    ReplayResponse,
    ReplayTransport,
    registry_with_transport,
    sse_body,
)
from pi_trio.testing._sse_server import SSEReply, serve_sse

from .helpers import applied
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

FIXTURES = Path(__file__).parent / "fixtures" / "anthropic"
SONNET = get_model("anthropic", "claude-sonnet-4-5")
OPUS_46 = get_model("anthropic", "claude-opus-4-6")
OPUS_47 = get_model("anthropic", "claude-opus-4-7")
assert SONNET is not None
assert OPUS_46 is not None
assert OPUS_47 is not None
PLAIN = msgspec.structs.replace(SONNET, id="claude-plain", reasoning=False)
KEY = "sk-ant-api03-test-key-0123456789"

WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
        "$defs": {"unused": {}},
    },
)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(messages=list(messages), system_prompt=system, tools=tools)


def body_of(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    return build_anthropic_request(model, normalize_context(context), StreamOptions(**options)).body


def assistant(*blocks: Any, model: Model = SONNET, stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=model.api,
        provider=model.provider,
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


# =========================================================================== request body


def test_body_has_model_max_tokens_stream_and_messages():
    body = body_of(SONNET, ctx(UserMessage(content="hi")))
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == SONNET.max_tokens
    assert body["stream"] is True
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert "system" not in body
    assert "tools" not in body
    assert "thinking" not in body


def test_explicit_max_tokens_is_sent():
    assert body_of(SONNET, ctx(UserMessage(content="hi")), max_tokens=333)["max_tokens"] == 333


def test_system_prompt_becomes_cached_text_blocks():
    body = body_of(SONNET, ctx(UserMessage(content="hi"), system="Be terse."))
    assert body["system"] == [
        {"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}
    ]


def test_every_system_message_folds_into_the_prompt_as_pi_16_folds_them():
    # pi 1.6's resolveTranscript: contents appended, sections patched by name, no turn
    context = ctx(
        SystemMessage(content="One.", timestamp=0),
        SystemMessage(content="Two.", sections={"style": "Short."}, timestamp=0),
        UserMessage(content="hi"),
        assistant(TextContent(text="hello")),
        SystemMessage(content="Now be formal.", sections={"style": None}),
        UserMessage(content="again"),
    )
    body = body_of(SONNET, context, cache_retention="none")
    assert body["system"] == [{"type": "text", "text": "One.\n\nTwo.\n\nNow be formal."}]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]


def test_a_model_that_takes_system_messages_mid_conversation_gets_them_in_place():
    # pi 1.6: a system message held back to just before the next assistant message (here:
    # the end), so a user message written after it comes first (tests/test_anthropic_changes.py)
    model = msgspec.structs.replace(SONNET, compat={"supportsMidConvoSystemMessages": True})
    context = ctx(
        SystemMessage(content="One.", timestamp=0),
        UserMessage(content="hi"),
        assistant(TextContent(text="hello")),
        SystemMessage(content="Now be formal.", sections={"style": None}),
        UserMessage(content="again"),
    )
    body = body_of(model, context, cache_retention="none")
    assert body["system"] == [{"type": "text", "text": "One."}]
    assert body["messages"][3] == {
        "role": "system",
        "content": [
            {
                "type": "text",
                "text": 'Now be formal.\n\nRemoved system prompt section "style".',
            }
        ],
    }
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "system"]


def test_a_later_system_message_that_only_declares_tools_adds_no_turn():
    context = ctx(UserMessage(content="hi"), SystemMessage(content="", tools_added=[WEATHER]))
    body = body_of(SONNET, context, cache_retention="none")
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert [t["name"] for t in body["tools"]] == ["get_weather"]


def test_cache_retention_none_puts_cache_control_nowhere():
    body = body_of(
        SONNET, ctx(UserMessage(content="hi"), system="S", tools=[WEATHER]), cache_retention="none"
    )
    assert "cache_control" not in msgspec.json.encode(body).decode()


def test_long_retention_adds_one_hour_ttl_everywhere():
    body = body_of(
        SONNET, ctx(UserMessage(content="hi"), system="S", tools=[WEATHER]), cache_retention="long"
    )
    control = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][0]["cache_control"] == control
    assert body["tools"][-1]["cache_control"] == control
    assert body["messages"][-1]["content"][-1]["cache_control"] == control


def test_long_retention_without_long_cache_support_has_no_ttl():
    model = msgspec.structs.replace(SONNET, compat={"supportsLongCacheRetention": False})
    body = body_of(model, ctx(UserMessage(content="hi"), system="S"), cache_retention="long")
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_pi_cache_retention_env_selects_long_retention():
    body = body_of(
        SONNET, ctx(UserMessage(content="hi"), system="S"), env={"PI_CACHE_RETENTION": "long"}
    )
    assert body["system"][0]["cache_control"]["ttl"] == "1h"


def test_cache_control_goes_on_the_last_block_of_a_final_user_message_only():
    blocks = [TextContent(text="look"), ImageContent(data="AAAA", mime_type="image/png")]
    body = body_of(SONNET, ctx(UserMessage(content=blocks)))
    assert body["messages"][0]["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["messages"][0]["content"][0]
    body = body_of(SONNET, ctx(UserMessage(content="hi"), assistant(TextContent(text="yo"))))
    assert "cache_control" not in msgspec.json.encode(body["messages"]).decode()


def test_cache_control_lands_on_the_last_tool_result():
    context = ctx(
        UserMessage(content="weather?"),
        assistant(
            ToolCall(id="t1", name="get_weather", arguments={"city": "A"}),
            ToolCall(id="t2", name="get_weather", arguments={"city": "B"}),
            stop="toolUse",
        ),
        result("t1", TextContent(text="sun")),
        result("t2", TextContent(text="rain")),
    )
    body = body_of(SONNET, context)
    last = body["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in last] == ["t1", "t2"]
    assert "cache_control" not in last[0]
    assert last[1]["cache_control"] == {"type": "ephemeral"}


def test_tool_schema_keeps_properties_required_and_the_root_keys_claude_reads():
    body = body_of(SONNET, ctx(UserMessage(content="hi"), tools=[WEATHER]), cache_retention="none")
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather of a city",
            "eager_input_streaming": True,
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
                "$defs": {"unused": {}},
            },
        }
    ]
    rooted = msgspec.structs.replace(
        WEATHER, parameters={**WEATHER.parameters, "anyOf": [{"required": ["city"]}]}
    )
    schema = body_of(SONNET, ctx(UserMessage(content="hi"), tools=[rooted]))["tools"][0]
    assert "anyOf" not in schema["input_schema"]


PREFER = Tool(
    name="pref",
    description="w",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["city"],
    },
    constrained_sampling={"type": "json_schema", "strict": "prefer"},
)
# what pi 1.6 sends for PREFER to a model with strict tools
PREFER_STRICT = {
    "name": "pref",
    "description": "w",
    "eager_input_streaming": True,
    "strict": True,
    "input_schema": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["city", "n"],
        "additionalProperties": False,
    },
}
PREFER_PLAIN = {
    "name": "pref",
    "description": "w",
    "eager_input_streaming": True,
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["city"],
    },
}


def test_tools_asking_for_constrained_sampling_go_strict_where_the_model_has_strict_tools():
    assert (SONNET.compat or {}).get("supportsStrictTools") is True
    request = build_anthropic_request(
        SONNET,
        normalize_context(ctx(UserMessage(content="hi"), tools=[PREFER])),
        StreamOptions(cache_retention="none"),
    )
    assert request.body["tools"] == [PREFER_STRICT]
    assert request.preferred_strict
    plain = msgspec.structs.replace(SONNET, compat={})
    context = ctx(UserMessage(content="hi"), tools=[PREFER])
    assert body_of(plain, context, cache_retention="none")["tools"] == [PREFER_PLAIN]
    require = msgspec.structs.replace(
        PREFER, constrained_sampling={"type": "json_schema", "strict": "require"}
    )
    with pytest.raises(ProviderError, match='Tool "pref" requires JSON-schema constrained'):
        body_of(plain, ctx(UserMessage(content="hi"), tools=[require]))
    required = build_anthropic_request(
        SONNET, normalize_context(ctx(UserMessage(content="hi"), tools=[require])), StreamOptions()
    )
    assert required.body["tools"][0]["strict"] is True
    assert not required.preferred_strict


def test_tool_schema_without_properties_gets_empty_ones():
    bare = Tool(name="now", description="time", parameters={"type": "object"})
    body = body_of(SONNET, ctx(UserMessage(content="hi"), tools=[bare]), cache_retention="none")
    assert body["tools"][0]["input_schema"] == {"type": "object", "properties": {}, "required": []}


def test_without_eager_input_streaming_the_fine_grained_beta_is_used():
    model = msgspec.structs.replace(SONNET, compat={"supportsEagerToolInputStreaming": False})
    request = build_anthropic_request(
        model,
        normalize_context(ctx(UserMessage(content="hi"), tools=[WEATHER])),
        StreamOptions(),
    )
    assert "eager_input_streaming" not in request.body["tools"][0]
    assert request.betas == [BETA_FINE_GRAINED_TOOL_STREAMING]


def test_no_cache_control_on_tools_when_the_model_refuses_it():
    model = msgspec.structs.replace(SONNET, compat={"supportsCacheControlOnTools": False})
    body = body_of(model, ctx(UserMessage(content="hi"), tools=[WEATHER]))
    assert "cache_control" not in body["tools"][0]


def test_budget_thinking_uses_the_budget_and_the_interleaved_beta():
    request = build_anthropic_request(
        SONNET,
        normalize_context(ctx(UserMessage(content="hi"))),
        StreamOptions(
            temperature=0.5, extra={"thinking_enabled": True, "thinking_budget_tokens": 4000}
        ),
    )
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "temperature" not in request.body
    assert request.betas == [BETA_INTERLEAVED_THINKING]


def test_budget_thinking_defaults_to_1024_tokens_and_keeps_a_display():
    body = body_of(
        SONNET,
        ctx(UserMessage(content="hi")),
        extra={"thinking_enabled": True, "thinking_display": "omitted"},
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024, "display": "omitted"}


def test_interleaved_thinking_can_be_switched_off():
    request = build_anthropic_request(
        SONNET,
        normalize_context(ctx(UserMessage(content="hi"))),
        StreamOptions(extra={"thinking_enabled": True, "interleaved_thinking": False}),
    )
    assert request.betas == []


def test_adaptive_thinking_sends_effort_in_output_config_without_beta():
    request = build_anthropic_request(
        OPUS_46,
        normalize_context(ctx(UserMessage(content="hi"))),
        StreamOptions(
            extra={"thinking_enabled": True, "effort": "max", "thinking_display": "summarized"}
        ),
    )
    assert request.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert request.body["output_config"] == {"effort": "max"}
    assert request.betas == []


def test_thinking_disabled_explicitly_only_on_reasoning_models():
    body = body_of(
        SONNET, ctx(UserMessage(content="hi")), temperature=0.2, extra={"thinking_enabled": False}
    )
    assert body["thinking"] == {"type": "disabled"}
    assert body["temperature"] == 0.2
    assert "thinking" not in body_of(
        PLAIN, ctx(UserMessage(content="hi")), extra={"thinking_enabled": True}
    )
    always = msgspec.structs.replace(SONNET, thinking_level_map={"off": None})
    assert "thinking" not in body_of(
        always, ctx(UserMessage(content="hi")), extra={"thinking_enabled": False}
    )


def test_temperature_is_dropped_for_models_without_temperature_support():
    assert "temperature" not in body_of(OPUS_47, ctx(UserMessage(content="hi")), temperature=1.0)
    assert body_of(PLAIN, ctx(UserMessage(content="hi")), temperature=1.0)["temperature"] == 1.0


def test_metadata_user_id_only_when_a_string():
    assert body_of(SONNET, ctx(UserMessage(content="hi")), metadata={"user_id": "u-1", "other": 1})[
        "metadata"
    ] == {"user_id": "u-1"}
    assert "metadata" not in body_of(
        SONNET, ctx(UserMessage(content="hi")), metadata={"user_id": 42}
    )


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"type": "auto"}),
        ("any", {"type": "any"}),
        ("none", {"type": "none"}),
        ({"type": "tool", "name": "get_weather"}, {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_strings_become_objects_and_objects_pass_through(choice, expected):
    body = body_of(
        SONNET, ctx(UserMessage(content="hi"), tools=[WEATHER]), extra={"tool_choice": choice}
    )
    assert body["tool_choice"] == expected


def test_unified_tool_choice_is_used_when_extra_has_none():
    body = body_of(SONNET, ctx(UserMessage(content="hi"), tools=[WEATHER]), tool_choice="none")
    assert body["tool_choice"] == {"type": "none"}


# --------------------------------------------------------------------------- messages


def test_blank_user_messages_and_blank_text_blocks_are_skipped():
    context = ctx(
        UserMessage(content="   "),
        UserMessage(
            content=[TextContent(text=" "), ImageContent(data="QUJD", mime_type="image/jpeg")]
        ),
        UserMessage(content=[TextContent(text="")]),
    )
    body = body_of(SONNET, context, cache_retention="none")
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"},
                }
            ],
        }
    ]


def test_assistant_blocks_replay_signatures_redacted_thinking_and_tool_use():
    message = assistant(
        ThinkingContent(thinking="plan", thinking_signature="sig-1"),
        ThinkingContent(
            thinking="[Reasoning redacted]", thinking_signature="opaque", redacted=True
        ),
        ThinkingContent(thinking="unsigned thought"),
        ThinkingContent(thinking="   "),
        TextContent(text=" "),
        TextContent(text="answer"),
        ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Oslo"}),
        stop="toolUse",
    )
    body = body_of(
        SONNET, ctx(UserMessage(content="q"), message, result("toolu_1")), cache_retention="none"
    )
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "unsigned thought"},
        {"type": "text", "text": "answer"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
    ]


def test_signed_thinking_with_blank_text_is_kept_for_encrypted_replay():
    message = assistant(
        ThinkingContent(thinking="", thinking_signature="enc"), TextContent(text="a")
    )
    body = body_of(SONNET, ctx(UserMessage(content="q"), message), cache_retention="none")
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "signature": "enc",
    }


def test_unsigned_thinking_may_be_replayed_as_thinking_with_an_empty_signature():
    model = msgspec.structs.replace(SONNET, compat={"allowEmptySignature": True})
    message = assistant(ThinkingContent(thinking="idea"), TextContent(text="a"), model=model)
    body = body_of(model, ctx(UserMessage(content="q"), message), cache_retention="none")
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "idea",
        "signature": "",
    }


def test_assistant_messages_without_blocks_are_skipped():
    body = body_of(
        SONNET,
        ctx(
            UserMessage(content="q"),
            assistant(TextContent(text="  ")),
            UserMessage(content="again"),
        ),
        cache_retention="none",
    )
    assert [m["role"] for m in body["messages"]] == ["user", "user"]


def test_consecutive_tool_results_share_one_user_turn():
    context = ctx(
        UserMessage(content="q"),
        assistant(
            ToolCall(id="a", name="get_weather", arguments={}),
            ToolCall(id="b", name="get_weather", arguments={}),
            ToolCall(id="c", name="get_weather", arguments={}),
            stop="toolUse",
        ),
        result("a", TextContent(text="one"), TextContent(text="two")),
        result("b", ImageContent(data="AAAA", mime_type="image/png")),
        result("c", TextContent(text="bad"), is_error=True),
        UserMessage(content="thanks"),
    )
    body = body_of(SONNET, context, cache_retention="none")
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "user"]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "a", "content": "one\ntwo", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "b",
            "is_error": False,
            "content": [
                {"type": "text", "text": "(see attached image)"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                },
            ],
        },
        {"type": "tool_result", "tool_use_id": "c", "content": "bad", "is_error": True},
    ]


def test_tool_call_ids_from_other_providers_are_normalized_with_their_results():
    foreign = AssistantMessage(
        content=[ToolCall(id="call_9|fc_abc+/=", name="get_weather", arguments={})],
        api="openai-responses",
        provider="openai",
        model="gpt-5.4",
        usage=Usage(),
        stop_reason="toolUse",
        timestamp=1,
    )
    body = body_of(
        SONNET,
        ctx(UserMessage(content="q"), foreign, result("call_9|fc_abc+/=")),
        cache_retention="none",
    )
    assert body["messages"][1]["content"][0]["id"] == "call_9_fc_abc___"
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_9_fc_abc___"


def test_unpaired_surrogates_are_removed_from_outgoing_text():
    body = body_of(
        SONNET, ctx(UserMessage(content="a\ud83db 😀"), system="s\udc00"), cache_retention="none"
    )
    assert body["messages"][0]["content"] == "ab 😀"
    assert body["system"][0]["text"] == "s"
    msgspec.json.encode(body)  # encodable


def test_oauth_requests_carry_the_identity_prompt_and_canonical_tool_names():
    read = Tool(name="read", description="read a file", parameters={"type": "object"})
    request = build_anthropic_request(
        SONNET,
        normalize_context(
            ctx(
                UserMessage(content="q"),
                assistant(ToolCall(id="t", name="read", arguments={}), stop="toolUse"),
                result("t", TextContent(text="x")),
                system="Mine.",
                tools=[read],
            )
        ),
        StreamOptions(cache_retention="none"),
        oauth=True,
    )
    assert request.body["system"] == [
        {"type": "text", "text": CLAUDE_CODE_IDENTITY},
        {"type": "text", "text": "Mine."},
    ]
    assert request.body["tools"][0]["name"] == "Read"
    assert request.body["messages"][1]["content"][0]["name"] == "Read"
    assert request.betas[:2] == ["claude-code-20250219", "oauth-2025-04-20"]


# =========================================================================== simple options


def simple(model: Model, context: Context | None = None, **options: Any) -> StreamOptions:
    return anthropic_simple_options(
        model, context or ctx(UserMessage(content="hi")), StreamOptions(**options)
    )


def test_simple_without_reasoning_disables_thinking():
    options = simple(SONNET)
    assert options.extra == {"thinking_enabled": False}
    assert options.max_tokens == SONNET.max_tokens


def test_simple_budget_model_carves_the_budget_out_of_max_tokens():
    options = simple(SONNET, reasoning="medium", max_tokens=2000)
    assert options.max_tokens == 2000 + 8192
    assert options.extra == {
        "thinking_enabled": True,
        "thinking_display": "summarized",
        "thinking_budget_tokens": 8192,
    }


def test_simple_budget_shrinks_when_the_model_cap_leaves_no_answer_room():
    small = msgspec.structs.replace(SONNET, max_tokens=2000)
    options = simple(small, reasoning="high")
    assert options.max_tokens == 2000
    assert options.extra["thinking_budget_tokens"] == 2000 - 1024
    tiny = msgspec.structs.replace(SONNET, max_tokens=800)  # below the answer room: no budget
    options = simple(tiny, reasoning="high")
    assert (options.max_tokens, options.extra["thinking_budget_tokens"]) == (800, 0)


def test_simple_custom_budgets_and_xhigh_clamps_to_high():
    options = simple(
        SONNET, reasoning="xhigh", max_tokens=1000, thinking_budgets=ThinkingBudgets(high=3000)
    )
    assert options.max_tokens == 4000
    assert options.extra["thinking_budget_tokens"] == 4000 - 1024  # answer room kept


@pytest.mark.parametrize(
    ("model", "level", "effort"),
    [
        (OPUS_46, "xhigh", "max"),
        (OPUS_46, "max", "max"),
        (OPUS_47, "xhigh", "xhigh"),
        (OPUS_46, "minimal", "low"),
        (OPUS_46, "low", "low"),
        (OPUS_46, "medium", "medium"),
        (OPUS_46, "high", "high"),
    ],
)
def test_simple_adaptive_models_map_levels_to_effort(model, level, effort):
    options = simple(model, reasoning=level)
    assert options.extra == {
        "thinking_enabled": True,
        "thinking_display": "summarized",
        "effort": effort,
    }


def test_simple_keeps_a_chosen_display():
    assert (
        simple(OPUS_46, reasoning="low", extra={"thinking_display": "omitted"}).extra[
            "thinking_display"
        ]
        == "omitted"
    )


def test_simple_thinking_reaches_the_request_body():
    options = simple(SONNET, reasoning="low", max_tokens=500, temperature=0.7)
    body = build_anthropic_request(
        SONNET, normalize_context(ctx(UserMessage(content="hi"))), options
    ).body
    assert body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 2548 - 1024,
        "display": "summarized",
    }
    assert body["max_tokens"] == 2548
    assert "temperature" not in body


# =========================================================================== wire events


def feed_all(body: bytes, model: Model = SONNET, *, tool_names: tuple[str, ...] = ()):
    """The events of ``body`` through the parser and the mapper; a failure becomes the
    ``error`` terminal as in a provider run."""
    builder = MessageBuilder(model)
    mapper = AnthropicEventMapper(builder, model, tool_names=tool_names)
    parser = SSEParser()
    events: list[Any] = []
    try:
        for sse in [*parser.feed(body), *parser.close()]:
            events.extend(mapper.feed(sse.event, sse.data))
        events.append(mapper.finish())
    except ProviderError as exc:
        events.append(builder.error(str(exc)))
    return applied(builder, events)


def failure(events: list[Any]) -> str:
    assert events[-1].type == "error", events[-1]
    return events[-1].error.error_message


def test_text_stream_maps_to_text_events_usage_and_ids():
    events = feed_all(fixture("text.sse"))
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert events[3].content == "Héllo wörld 🌍!"
    message = events[-1].message
    assert events[-1].reason == "stop"
    assert message.response_id == "msg_01XFDUDYJgAACzvnptvVoYEL"
    assert message.response_model == "claude-sonnet-4-5-20250929"
    assert message.raw_stop_reason == "end_turn"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (25, 15, 40)
    assert message.usage.cost.total == pytest.approx((25 * 3 + 15 * 15) / 1e6)


def test_thinking_signatures_redacted_thinking_and_tool_calls_are_preserved():
    events = feed_all(fixture("thinking_tools.sse"))
    message = events[-1].message
    assert events[-1].reason == "toolUse"
    thinking, redacted, text, first, second = message.content
    assert thinking == ThinkingContent(
        thinking="The user wants the weather in two cities.",
        thinking_signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    )
    assert redacted.redacted is True
    assert redacted.thinking == "[Reasoning redacted]"
    assert redacted.thinking_signature.startswith("EmwKAhgB")
    assert text.text == "Checking both."
    assert first == ToolCall(
        id="toolu_01A", name="get_weather", arguments={"city": "Paris", "unit": "c"}
    )
    assert second.arguments == {"city": "Tōkyō"}
    deltas = [e.delta for e in events if e.type == "toolcall_delta" and e.content_index == 3]
    assert deltas == ["", '{"city": "Par', 'is", "unit": "c"}']
    assert [e.type for e in events if getattr(e, "content_index", None) == 1] == [
        "thinking_start",  # with the placeholder text, and no delta: the wire sends none
        "thinking_end",
    ]


def test_message_delta_nulls_do_not_overwrite_start_usage():
    usage = feed_all(fixture("thinking_tools.sse"))[-1].message.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.cache_write_1h) == (
        120,
        300,
        2000,
        500,
    )
    assert usage.output == 210
    assert usage.reasoning == 90
    assert usage.total_tokens == 120 + 210 + 300 + 2000
    expected = (120 * 3 + 210 * 15 + 300 * 0.3 + 1500 * 3.75 + 500 * 3 * 2) / 1e6
    assert usage.cost.total == pytest.approx(expected)


def events_for(*pairs: tuple[str, Any], model: Model = SONNET):
    return sse_body(pairs)


START = (
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_x",
            "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
)
STOP = ("message_stop", {"type": "message_stop"})


def stop_delta(reason: str, **delta: Any) -> tuple[str, Any]:
    return (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, **delta},
            "usage": {"output_tokens": 2},
        },
    )


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "toolUse"),
        ("pause_turn", "stop"),
        ("stop_sequence", "stop"),
    ],
)
def test_stop_reasons_map_to_done_reasons(wire, reason):
    events = feed_all(sse_body([START, stop_delta(wire), STOP]))
    assert events[-1].type == "done"
    assert events[-1].reason == reason
    assert events[-1].message.raw_stop_reason == wire


def test_refusal_ends_with_an_error_carrying_the_explanation():
    events = feed_all(fixture("refusal.sse"))
    assert events[-1].type == "error"
    assert events[-1].error.error_message == "This request would facilitate harm."
    assert events[-1].error.content == [TextContent(text="I can")]


def test_refusal_without_explanation_uses_the_default_text():
    events = feed_all(sse_body([START, stop_delta("refusal"), STOP]))
    assert events[-1].error.error_message == "The model refused to complete the request"


def test_sensitive_stop_is_an_error():
    events = feed_all(sse_body([START, stop_delta("sensitive"), STOP]))
    assert events[-1].error.error_message == "Provider stopped with: sensitive"


def test_unknown_stop_reason_is_an_unhandled_stop_reason_error():
    events = feed_all(sse_body([START, stop_delta("model_context_window_exceeded"), STOP]))
    assert failure(events) == "Unhandled stop reason: model_context_window_exceeded"
    assert is_context_overflow(events[-1].error)


def test_error_event_fails_with_its_raw_data():
    assert failure(feed_all(fixture("error.sse"))) == (
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    )


def test_stream_without_message_stop_fails():
    events = feed_all(fixture("truncated.sse"))
    assert failure(events) == "Anthropic stream ended before message_stop"
    assert events[-1].error.content == [TextContent(text="Half an ans")]


def test_empty_body_fails_like_a_cut_stream():
    assert failure(feed_all(b"")) == "Anthropic stream ended before message_stop"


def test_unknown_events_and_unknown_blocks_are_skipped():
    body = sse_body(
        [
            START,
            ("ping", {"type": "ping"}),
            ("done", "[DONE]"),
            ("proxy.stats", "not json at all"),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "server_tool_use", "id": "s"},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "{}"},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "text", "text": "Hi"},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 7,
                    "delta": {"type": "text_delta", "text": "lost"},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "citations_delta", "citation": {}},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            stop_delta("end_turn"),
            STOP,
        ]
    )
    events = feed_all(body)
    assert [(e.type, getattr(e, "content_index", None)) for e in events] == [
        ("text_start", 0),
        ("text_delta", 0),
        ("text_end", 0),
        ("done", None),
    ]
    assert events[-1].message.content == [TextContent(text="Hi")]


def test_malformed_tool_json_is_repaired():
    raw = '{"path":"A\\H","text":"col1\tcol2"}'
    body = sse_body(
        [
            START,
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "t", "name": "w", "input": {}},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": raw},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("tool_use"),
            STOP,
        ]
    )
    events = feed_all(body)
    assert events[-1].message.content[0].arguments == {"path": "A\\H", "text": "col1\tcol2"}


def test_slightly_broken_event_json_is_repaired_and_garbage_fails_clearly():
    broken = sse_body(
        [
            START,
            (
                "content_block_start",
                '{"type":"content_block_start","index":0,'
                '"content_block":{"type":"text","text":"a\tb"}}',
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("end_turn"),
            STOP,
        ]
    )
    assert feed_all(broken)[-1].message.content == [TextContent(text="a\tb")]
    text = failure(feed_all(sse_body([START, ("message_delta", "{oops")])))
    assert text.startswith("Could not parse Anthropic SSE event message_delta: ")
    assert text.endswith("; data={oops")


def text_block_start(index: int = 0) -> tuple[str, Any]:
    return (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        },
    )


def test_a_field_of_the_wrong_type_fails_naming_the_field_and_the_data():
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 5}}
    text = failure(feed_all(sse_body([START, text_block_start(), ("content_block_delta", delta)])))
    assert text.startswith(
        "Could not parse Anthropic SSE event content_block_delta: "
        "Expected `str | null`, got `int` - at `$.delta.text`; data={"
    )


def test_event_data_that_is_json_but_not_an_object_is_skipped():
    body = sse_body(
        [
            START,
            text_block_start(),
            ("content_block_delta", "null"),
            ("content_block_delta", "[1, 2]"),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("end_turn"),
            STOP,
        ]
    )
    events = feed_all(body)
    assert [e.type for e in events] == ["text_start", "text_end", "done"]


def test_an_unknown_delta_type_is_skipped_even_when_its_fields_differ():
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "future", "text": 5}}
    body = sse_body(
        [
            START,
            text_block_start(),
            ("content_block_delta", delta),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("end_turn"),
            STOP,
        ]
    )
    assert [e.type for e in feed_all(body)] == ["text_start", "text_end", "done"]


def test_oauth_tool_names_map_back_to_the_callers_spelling():
    body = sse_body(
        [
            START,
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": "t",
                        "name": "Read",
                        "input": {"path": "x"},
                    },
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("tool_use"),
            STOP,
        ]
    )
    events = feed_all(body, tool_names=("read",))
    assert events[-1].message.content == [ToolCall(id="t", name="read", arguments={"path": "x"})]


# =========================================================================== replay over httpx


async def test_replayed_request_goes_to_messages_with_anthropic_headers():
    context = ctx(UserMessage(content="hi"), system="S", tools=[WEATHER])
    events, transport = await replay(
        SONNET,
        context,
        ReplayResponse(fixture("text.sse")),
        extra={"thinking_enabled": True},
        session_id="s1",
        headers={"x-extra": "1"},
    )
    request = transport.requests[0]
    assert request.url == "https://api.anthropic.com/v1/messages"
    headers = request.headers
    assert headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["accept"] == "application/json"
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"
    # a session on Anthropic's own endpoint uses message threads (test_anthropic_threads.py)
    assert headers["anthropic-beta"] == f"{BETA_INTERLEAVED_THINKING},message-threads-2026-08-12"
    assert request.json()["thread"] == {"type": "create"}
    assert headers["x-extra"] == "1"
    assert "authorization" not in headers
    assert "x-session-affinity" not in headers
    assert request.json()["thinking"]["type"] == "enabled"
    assert [e.type for e in events][:2] == ["start", "text_start"]
    assert events[-1].message.content == [TextContent(text="Héllo wörld 🌍!")]
    assert transport.closed_responses == 1


async def test_session_affinity_header_when_the_model_asks_for_it():
    model = msgspec.structs.replace(SONNET, compat={"sendSessionAffinityHeaders": True})
    _, transport = await replay(
        model,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        session_id="sess-9",
    )
    assert transport.requests[0].headers["x-session-affinity"] == "sess-9"


async def test_oauth_token_is_sent_as_bearer_with_claude_code_headers():
    read = Tool(name="read", description="r", parameters={"type": "object"})
    body = sse_body(
        [
            START,
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "t", "name": "Read", "input": {}},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            stop_delta("tool_use"),
            STOP,
        ]
    )
    events, transport = await replay(
        SONNET,
        ctx(UserMessage(content="hi"), tools=[read]),
        ReplayResponse(body),
        api_key="sk-ant-oat01-secret-token",
    )
    headers = transport.requests[0].headers
    assert headers["authorization"] == "Bearer sk-ant-oat01-secret-token"
    assert "x-api-key" not in headers
    assert headers["x-app"] == "cli"
    assert headers["user-agent"].startswith("claude-cli/")
    assert headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
    assert events[-1].message.content[0].name == "read"


async def test_on_payload_replacement_is_sent_with_stream_forced_on():
    def replace(payload: Any, model: Model) -> Any:
        return {**payload, "stream": False, "max_tokens": 7}

    _, transport = await replay(
        SONNET,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture("text.sse")),
        on_payload=replace,
    )
    sent = transport.requests[0].json()
    assert sent["max_tokens"] == 7
    assert sent["stream"] is True


async def test_simple_entry_point_maps_reasoning_into_the_sent_body():
    transport = ReplayTransport(ReplayResponse(fixture("text.sse")))
    registry = registry_with_transport(transport)
    try:
        message = await complete_simple(
            SONNET,
            ctx(UserMessage(content="hi")),
            registry=registry,
            api_key=KEY,
            reasoning="minimal",
            max_tokens=100,
        )
    finally:
        await registry.aclose()
    sent = transport.requests[0].json()
    assert sent["thinking"] == {
        "type": "enabled",
        "budget_tokens": 1124 - 1024,
        "display": "summarized",
    }
    assert sent["max_tokens"] == 1124
    assert message.stop_reason == "stop"


async def test_missing_key_is_an_error_event_without_start(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    events, transport = await replay(SONNET, ctx(UserMessage(content="hi")), api_key=None)
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error.error_message
        == "No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
    )
    assert transport.requests == []


async def test_http_error_status_becomes_an_error_with_the_provider_message():
    body = (
        b'{"type":"error","error":{"type":"invalid_request_error",'
        b'"message":"prompt is too long: 210000 tokens > 200000 maximum"}}'
    )
    events, _ = await replay(
        SONNET, ctx(UserMessage(content="hi")), ReplayResponse(body, status=400)
    )
    assert [e.type for e in events] == ["error"]
    message = events[0].error
    # as the Anthropic SDK words it and pi 1.6 shows it: the body as compact JSON
    assert message.error_message == (
        '400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"prompt is too long: 210000 tokens > 200000 maximum"}}'
    )
    assert is_context_overflow(message)


def _refused(message: str, kind: str = "invalid_request_error", status: int = 400) -> Any:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return ReplayResponse(msgspec.json.encode(body), status=status)


TOO_MANY = "Too many strict tools (21). The maximum is 20."
REFUSAL_JSON = (
    f'{{"type":"error","error":{{"type":"invalid_request_error","message":"{TOO_MANY}"}}}}'
)


async def test_a_refusal_for_the_strict_tool_limits_is_sent_again_without_strict_tools():
    forget_strict_tool_limits()
    context = ctx(UserMessage(content="hi"), tools=[WEATHER, PREFER])
    try:
        events, transport = await replay(
            SONNET,
            context,
            _refused(TOO_MANY),
            ReplayResponse(fixture("text.sse")),
            session_id="s-anthropic",
            cache_retention="none",
        )
        message = events[-1].message
        assert message.stop_reason == "stop"
        sent = [request.json()["tools"][1] for request in transport.requests]
        assert sent == [PREFER_STRICT, PREFER_PLAIN]
        [diagnostic] = message.diagnostics
        assert diagnostic["type"] == "anthropic_strict_tools_fallback"
        assert diagnostic["error"] == {"message": f"400 {REFUSAL_JSON}"}
        assert diagnostic["details"] == {"reason": "strict_tool_limits_exceeded"}
        _, transport = await replay(
            SONNET,
            context,
            ReplayResponse(fixture("text.sse")),
            session_id="s-anthropic",
            cache_retention="none",
        )
        assert transport.requests[0].json()["tools"][1] == PREFER_PLAIN
    finally:
        forget_strict_tool_limits()


@pytest.mark.parametrize(
    ("reply", "tools"),
    [
        (_refused("prompt is too long: 1 tokens > 0 maximum"), [PREFER]),
        (_refused(TOO_MANY, kind="api_error"), [PREFER]),
        (_refused(TOO_MANY, status=422), [PREFER]),
        (_refused(TOO_MANY), [WEATHER]),
    ],
)
async def test_other_refusals_are_not_sent_again(reply, tools):
    events, transport = await replay(SONNET, ctx(UserMessage(content="hi"), tools=tools), reply)
    assert [e.type for e in events] == ["error"]
    assert len(transport.requests) == 1
    assert events[0].error.diagnostics is None


async def test_a_second_refusal_after_the_fallback_ends_the_request():
    events, transport = await replay(
        SONNET,
        ctx(UserMessage(content="hi"), tools=[PREFER]),
        _refused(TOO_MANY),
        _refused(TOO_MANY),
    )
    assert len(transport.requests) == 2
    message = events[-1].error
    assert message.error_message == f"400 {REFUSAL_JSON}"
    assert [d["type"] for d in message.diagnostics] == ["anthropic_strict_tools_fallback"]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ('{"message":"m","type":"x"}', "400 m"),
        (
            '{"type":"error","error":{"type":"api_error"}}',
            '400 {"type":"error","error":{"type":"api_error"}}',
        ),
        ("{}", "400 {}"),
        ('"plain"', '400 "plain"'),
        ("null", "400 null"),
        ("<html>bad gateway</html>", "400 <html>bad gateway</html>"),
        ("", "400 status code (no body)"),
    ],
)
def test_failures_read_as_the_anthropic_sdk_words_them(body, text):
    assert anthropic_error_text(400, body) == text


@pytest.mark.parametrize("name", ["text.sse", "thinking_tools.sse", "refusal.sse"])
async def test_crlf_line_endings_give_the_same_events(name):
    plain, _ = await replay(SONNET, ctx(UserMessage(content="hi")), ReplayResponse(fixture(name)))
    crlf, _ = await replay(
        SONNET,
        ctx(UserMessage(content="hi")),
        ReplayResponse(fixture(name).replace(b"\n", b"\r\n")),
    )
    assert shape(crlf) == shape(plain)


async def test_comment_lines_between_every_event_are_ignored():
    body = fixture("thinking_tools.sse")
    commented = body.replace(b"\n\n", b"\n\n: keep-alive\n\n")
    plain, _ = await replay(SONNET, ctx(UserMessage(content="hi")), ReplayResponse(body))
    noisy, _ = await replay(SONNET, ctx(UserMessage(content="hi")), ReplayResponse(commented))
    assert shape(noisy) == shape(plain)


async def test_final_event_without_trailing_blank_line_is_delivered():
    body = fixture("text.sse").rstrip(b"\n")
    events, _ = await replay(SONNET, ctx(UserMessage(content="hi")), ReplayResponse(body))
    assert events[-1].type == "done"


async def test_error_event_mid_stream_keeps_the_partial_content():
    events, _ = await replay(
        SONNET, ctx(UserMessage(content="hi")), ReplayResponse(fixture("error.sse"))
    )
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    assert events[-1].error.content == [TextContent(text="Partial")]
    assert "overloaded_error" in events[-1].error.error_message


async def test_connection_reset_mid_stream_is_an_error_with_the_content_so_far():
    body = fixture("truncated.sse")
    events, _ = await replay(
        SONNET,
        ctx(UserMessage(content="hi")),
        ReplayResponse([body], error=httpx2.ReadError("connection reset")),
    )
    assert events[-1].type == "error"
    assert events[-1].error.content == [TextContent(text="Half an ans")]
    assert events[-1].error.error_message.startswith("Network error")


@pytest.mark.parametrize(("name", "step"), [("text.sse", 1), ("thinking_tools.sse", 13)])
async def test_the_stream_reads_the_same_however_the_network_cuts_it(name, step):
    context = ctx(UserMessage(content="hi"))
    whole, cut = await events_however_cut(SONNET, context, fixture(name), step=step, api_key=KEY)
    assert [shape(events) for events in cut] == [shape(whole)] * len(cut)


# =========================================================================== loopback server


local = at_url


async def local_complete(model: Model, context: Context, **options: Any) -> AssistantMessage:
    return await complete_with_fresh_registry(model, context, key=KEY, **options)


async def test_end_to_end_streaming_against_a_loopback_server():
    async with serve_sse([SSEReply(fixture("thinking_tools.sse"))]) as server:
        message = await local_complete(local(SONNET, server.url), ctx(UserMessage(content="hi")))
        assert server.requests[0].path == "/v1/messages"
        assert server.requests[0].headers["x-api-key"] == KEY
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == [
        "thinking",
        "thinking",
        "text",
        "toolCall",
        "toolCall",
    ]


async def test_end_to_end_http_error_never_shows_the_key():
    error = (
        f'{{"type":"error","error":{{"type":"authentication_error",'
        f'"message":"invalid x-api-key {KEY}"}}}}'
    )
    async with serve_sse([SSEReply(error.encode(), status=401)]) as server:
        message = await local_complete(local(SONNET, server.url), ctx(UserMessage(content="hi")))
    assert message.stop_reason == "error"
    assert message.error_message == (
        '401 {"type":"error","error":{"type":"authentication_error",'
        '"message":"invalid x-api-key [redacted]"}}'
    )


async def test_end_to_end_connection_reset_mid_stream():
    body = fixture("text.sse")
    cut = body.index(b"event: content_block_stop")
    async with serve_sse([SSEReply([body[:cut], body[cut:]], reset_after=1)]) as server:
        message = await local_complete(local(SONNET, server.url), ctx(UserMessage(content="hi")))
        assert server.resets == 1
    assert message.stop_reason == "error"
    assert message.content == [TextContent(text="Héllo wörld 🌍!")]
    assert message.error_message.startswith("Network error")


async def test_end_to_end_abort_closes_the_server_side_stream():
    body = fixture("truncated.sse")
    seen, final = await abort_at_first_text_delta(
        SONNET, ctx(UserMessage(content="hi")), body, key=KEY
    )
    assert seen[-1] == "error"
    assert final.stop_reason == "aborted"
    assert final.content == [TextContent(text="Half an ans")]


# =========================================================================== live


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY not set")
async def test_live_anthropic_streams_a_short_answer():
    model = get_model("anthropic", "claude-haiku-4-5")
    assert model is not None
    message = await complete_simple(
        model, ctx(UserMessage(content="Reply with exactly the word: pong")), max_tokens=50
    )
    assert message.stop_reason == "stop", message.error_message
    assert "pong" in "".join(b.text for b in message.content if isinstance(b, TextContent)).lower()
    assert message.usage.output > 0
    assert message.response_id
