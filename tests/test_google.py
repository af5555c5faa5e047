"""The google-generative-ai provider: contents and request rules, thinking configs per
model family, chunk mapping, recorded bodies replayed through httpx, a loopback server end
to end, and an opt-in live test."""

from __future__ import annotations

import os
import re
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
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._google_events import GoogleEventMapper
from pi_trio.ai.providers._google_request import build_google_body, is_valid_thought_signature
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.ai.providers.google import google_simple_options
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
    events_however_cut,
    final_json,
    replay_stream,
)

pytestmark = UNFINISHED_REPLAY_WARNINGS

FIXTURES = Path(__file__).parent / "fixtures" / "google"
FLASH = get_model("google", "gemini-2.5-flash")
PRO = get_model("google", "gemini-2.5-pro")
LITE = get_model("google", "gemini-2.5-flash-lite")
G31_PRO = get_model("google", "gemini-3.1-pro-preview")
G3_FLASH = get_model("google", "gemini-3-flash-preview")
assert FLASH is not None
assert PRO is not None
assert LITE is not None
assert G31_PRO is not None
assert G3_FLASH is not None
# Gemini 3 Pro left the catalog in pi-ai 1.6; its id still selects the Gemini 3 Pro rules.
G3_PRO = msgspec.structs.replace(
    G31_PRO,
    id="gemini-3-pro-preview",
    name="Gemini 3 Pro Preview",
    thinking_level_map={"off": None},
)
GEMMA4 = msgspec.structs.replace(FLASH, id="gemma-4-27b-it", name="Gemma 4")
CLAUDE = msgspec.structs.replace(FLASH, id="claude-sonnet-4-5", name="Claude via Google")
OTHER = msgspec.structs.replace(FLASH, id="gemini-exp-1206", name="Experimental")
PLAIN = msgspec.structs.replace(FLASH, id="gemini-2.0-flash", reasoning=False)
KEY = "AIzaSy-test-key-0123456789"
SIG = "Q2lZQnZqOTZ0aGlua2luZw=="

WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(messages=list(messages), system_prompt=system, tools=tools)


def body_of(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    return build_google_body(model, normalize_context(context), StreamOptions(**options))


def assistant(*blocks: Any, model: Model = FLASH, stop: str = "stop") -> AssistantMessage:
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


def shape(events: list[Any]) -> list[tuple[Any, ...]]:
    """What a consumer observes, without timestamps and generated tool-call ids."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        if e.type in ("done", "error"):
            text = final_json(e).decode()
            out.append((e.type, e.reason, re.sub(r"_\d+_\d+", "_<id>", text)))
        else:
            out.append(
                (
                    e.type,
                    getattr(e, "content_index", None),
                    getattr(e, "delta", None),
                    getattr(e, "content", None),
                )
            )
    return out


# =========================================================================== request body


def test_body_basics():
    assert body_of(PLAIN, ctx(UserMessage(content="hi"))) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}]
    }


def test_system_prompt_and_generation_config():
    body = body_of(
        PLAIN, ctx(UserMessage(content="hi"), system="Be brief."), temperature=0.3, max_tokens=100
    )
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 100}


def test_later_system_messages_fold_into_the_system_instruction_as_pi_16_folds_them():
    context = ctx(
        SystemMessage(content="Lead.", timestamp=0),
        UserMessage(content="hi"),
        SystemMessage(content="Later."),
        UserMessage(content="again"),
    )
    body = body_of(PLAIN, context)
    assert body["systemInstruction"] == {"parts": [{"text": "Lead.\n\nLater."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "user", "parts": [{"text": "again"}]},
    ]


def test_user_images_become_inline_data():
    message = UserMessage(
        content=[TextContent(text="look"), ImageContent(data="QUJD", mime_type="image/png")]
    )
    assert body_of(FLASH, ctx(message))["contents"][0]["parts"] == [
        {"text": "look"},
        {"inlineData": {"mimeType": "image/png", "data": "QUJD"}},
    ]


def test_tools_and_tool_config_only_with_tools():
    body = body_of(PLAIN, ctx(UserMessage(content="hi"), tools=[WEATHER]), tool_choice="any")
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "parametersJsonSchema": WEATHER.parameters,
                }
            ]
        }
    ]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "toolConfig" not in body_of(PLAIN, ctx(UserMessage(content="hi"), tools=[WEATHER]))
    assert "toolConfig" not in body_of(PLAIN, ctx(UserMessage(content="hi")), tool_choice="auto")
    body = body_of(
        PLAIN, ctx(UserMessage(content="hi"), tools=[WEATHER]), extra={"tool_choice": "none"}
    )
    assert body["toolConfig"]["functionCallingConfig"]["mode"] == "NONE"


CONSTS = Tool(
    name="t",
    description="d",
    parameters={
        "type": "object",
        "properties": {
            "kind": {"const": "a"},
            "n": {"const": 3},
            "b": {"const": True},
            "arr": {"type": "array", "items": {"const": "x"}},
            "props": {"type": "object", "properties": {"const": {"const": "k"}}},
            "e": {"const": "y", "enum": ["y"]},
            "lit": {"type": "string", "default": {"const": "z"}},
        },
    },
)
STRICT_PREFERRED = Tool(
    name="t",
    description="d",
    parameters={
        "type": "object",
        "properties": {"kind": {"type": "string", "const": "a"}, "n": {"type": "integer"}},
        "required": ["kind"],
    },
    constrained_sampling={"type": "json_schema", "strict": "prefer"},
)


def test_string_and_number_consts_go_as_one_value_enums_as_in_pi_1_6():
    declared = body_of(PLAIN, ctx(UserMessage(content="hi"), tools=[CONSTS]))["tools"]
    assert declared[0]["functionDeclarations"][0]["parametersJsonSchema"] == {
        "type": "object",
        "properties": {
            "kind": {"enum": ["a"]},
            "n": {"enum": [3]},
            "b": {"const": True},
            "arr": {"type": "array", "items": {"enum": ["x"]}},
            "props": {"type": "object", "properties": {"const": {"enum": ["k"]}}},
            "e": {"const": "y", "enum": ["y"]},
            "lit": {"type": "string", "default": {"const": "z"}},
        },
    }
    assert CONSTS.parameters["properties"]["kind"] == {"const": "a"}


@pytest.mark.parametrize(
    ("choice", "mode"),
    [(None, "VALIDATED"), ("auto", "VALIDATED"), ("none", "NONE"), ("any", "ANY")],
)
def test_gemini_3_declares_strict_tools_and_validates_their_calls(choice, mode):
    body = body_of(
        G3_FLASH, ctx(UserMessage(content="hi"), tools=[STRICT_PREFERRED]), tool_choice=choice
    )
    assert body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] == {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["a"]},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["kind", "n"],
        "additionalProperties": False,
    }
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": mode}}


def test_older_gemini_sends_strict_tools_as_they_are_and_refuses_required_ones():
    body = body_of(FLASH, ctx(UserMessage(content="hi"), tools=[STRICT_PREFERRED]))
    parameters = body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert parameters["required"] == ["kind"]
    assert "toolConfig" not in body
    required = msgspec.structs.replace(
        STRICT_PREFERRED, constrained_sampling={"type": "json_schema", "strict": "require"}
    )
    with pytest.raises(ProviderError, match="but strict tools are unsupported"):
        body_of(FLASH, ctx(UserMessage(content="hi"), tools=[required]))


def test_an_unknown_tool_choice_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r"unknown Google tool_choice 'sometimes'"):
        body_of(PLAIN, ctx(UserMessage(content="hi"), tools=[WEATHER]), tool_choice="sometimes")


def test_model_turns_replay_signed_parts_of_the_same_model_only():
    message = assistant(
        ThinkingContent(thinking="plan", thinking_signature=SIG),
        ThinkingContent(thinking="  ", thinking_signature=SIG),
        TextContent(text="answer", text_signature="bad signature!"),
        TextContent(text=" "),
        ToolCall(
            id="c1", name="get_weather", arguments={"city": "Rome"}, thought_signature="Y2FsbA=="
        ),
        stop="toolUse",
    )
    body = body_of(FLASH, ctx(UserMessage(content="q"), message, result("c1")))
    assert body["contents"][1] == {
        "role": "model",
        "parts": [
            {"thought": True, "text": "plan", "thoughtSignature": SIG},
            {"text": "answer"},
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                "thoughtSignature": "Y2FsbA==",
            },
        ],
    }


def test_signatures_of_another_model_are_not_replayed_and_its_thinking_is_dropped():
    message = assistant(
        ThinkingContent(thinking="plan", thinking_signature=SIG),
        TextContent(text="a", text_signature=SIG),
        model=PRO,
    )
    parts = body_of(FLASH, ctx(UserMessage(content="q"), message))["contents"][1]["parts"]
    assert parts == [{"text": "a"}]


def test_thought_signature_validation():
    assert is_valid_thought_signature("QUJD")
    assert is_valid_thought_signature("QQ==")
    assert not is_valid_thought_signature("QUJ")
    assert not is_valid_thought_signature("QU!D")
    assert not is_valid_thought_signature("")
    assert not is_valid_thought_signature(None)


def test_model_turns_without_parts_are_skipped():
    body = body_of(
        FLASH,
        ctx(
            UserMessage(content="q"), assistant(TextContent(text=" ")), UserMessage(content="again")
        ),
    )
    assert [c["role"] for c in body["contents"]] == ["user", "user"]


def test_tool_results_merge_into_one_turn_with_error_and_output_responses():
    message = assistant(
        ToolCall(id="a", name="get_weather", arguments={}),
        ToolCall(id="b", name="get_weather", arguments={}),
        stop="toolUse",
    )
    context = ctx(
        UserMessage(content="q"),
        message,
        result("a", TextContent(text="one"), TextContent(text="two")),
        result("b", TextContent(text="nope"), is_error=True),
    )
    contents = body_of(FLASH, context)["contents"]
    assert contents[2] == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "get_weather", "response": {"output": "one\ntwo"}}},
            {"functionResponse": {"name": "get_weather", "response": {"error": "nope"}}},
        ],
    }
    assert len(contents) == 3


def test_tool_result_images_nest_on_gemini_3_and_follow_on_older_models():
    image = ImageContent(data="AAAA", mime_type="image/png")
    for model in (G3_PRO, CLAUDE):
        message = assistant(
            ToolCall(id="a", name="get_weather", arguments={}), model=model, stop="toolUse"
        )
        contents = body_of(model, ctx(UserMessage(content="q"), message, result("a", image)))[
            "contents"
        ]
        response = contents[2]["parts"][0]["functionResponse"]
        assert response["response"] == {"output": "(see attached image)"}
        assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]
    message = assistant(
        ToolCall(id="a", name="get_weather", arguments={}),
        ToolCall(id="b", name="get_weather", arguments={}),
        stop="toolUse",
    )
    contents = body_of(
        FLASH,
        ctx(
            UserMessage(content="q"),
            message,
            result("a", image),
            result("b", TextContent(text="x")),
        ),
    )["contents"]
    assert [len(c["parts"]) for c in contents] == [1, 2, 2, 2]
    assert "parts" not in contents[2]["parts"][0]["functionResponse"]
    assert contents[3] == {
        "role": "user",
        "parts": [
            {"text": "Tool result image:"},
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        ],
    }


def test_claude_and_gpt_oss_models_get_call_ids_normalized():
    foreign = AssistantMessage(
        content=[ToolCall(id="call_1|fc+item", name="get_weather", arguments={})],
        api="openai-responses",
        provider="openai",
        model="gpt-5.4",
        usage=Usage(),
        stop_reason="toolUse",
        timestamp=1,
    )
    contents = body_of(CLAUDE, ctx(UserMessage(content="q"), foreign, result("call_1|fc+item")))[
        "contents"
    ]
    assert contents[1]["parts"][0]["functionCall"]["id"] == "call_1_fc_item"
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "call_1_fc_item"
    contents = body_of(FLASH, ctx(UserMessage(content="q"), foreign, result("call_1|fc+item")))[
        "contents"
    ]
    assert "id" not in contents[1]["parts"][0]["functionCall"]


# --------------------------------------------------------------------------- thinking


def test_raw_thinking_options():
    config = body_of(
        FLASH,
        ctx(UserMessage(content="hi")),
        extra={"thinking_enabled": True, "thinking_budget_tokens": 512},
    )
    assert config["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 512,
    }
    config = body_of(
        G3_PRO,
        ctx(UserMessage(content="hi")),
        extra={"thinking_enabled": True, "thinking_level": "HIGH"},
    )
    assert config["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "HIGH",
    }
    assert "generationConfig" not in body_of(
        PLAIN, ctx(UserMessage(content="hi")), extra={"thinking_enabled": True}
    )


@pytest.mark.parametrize(
    ("model", "config"),
    [
        (G3_PRO, {"thinkingLevel": "LOW"}),
        (G31_PRO, {"thinkingLevel": "LOW"}),
        (G3_FLASH, {"thinkingLevel": "MINIMAL"}),
        (GEMMA4, {"thinkingLevel": "MINIMAL"}),
        (FLASH, {"thinkingBudget": 0}),
        (PRO, {"thinkingBudget": 0}),
    ],
)
def test_simple_without_a_level_switches_thinking_off_per_family(model, config):
    options = google_simple_options(model, ctx(UserMessage(content="hi")), StreamOptions())
    body = build_google_body(model, normalize_context(ctx(UserMessage(content="hi"))), options)
    assert body["generationConfig"]["thinkingConfig"] == config
    assert body["generationConfig"]["maxOutputTokens"] == model.max_tokens


@pytest.mark.parametrize(
    ("model", "level", "key", "value"),
    [
        (G3_PRO, "minimal", "thinkingLevel", "LOW"),
        (G3_PRO, "low", "thinkingLevel", "LOW"),
        (G3_PRO, "medium", "thinkingLevel", "HIGH"),
        (G3_PRO, "xhigh", "thinkingLevel", "HIGH"),
        (G3_FLASH, "minimal", "thinkingLevel", "MINIMAL"),
        (G3_FLASH, "medium", "thinkingLevel", "MEDIUM"),
        (GEMMA4, "low", "thinkingLevel", "MINIMAL"),
        (GEMMA4, "medium", "thinkingLevel", "HIGH"),
        (PRO, "minimal", "thinkingBudget", 128),
        (PRO, "high", "thinkingBudget", 32768),
        (PRO, "max", "thinkingBudget", 32768),
        (LITE, "minimal", "thinkingBudget", 512),
        (LITE, "high", "thinkingBudget", 24576),
        (FLASH, "minimal", "thinkingBudget", 128),
        (FLASH, "medium", "thinkingBudget", 8192),
        (FLASH, "high", "thinkingBudget", 24576),
        (OTHER, "low", "thinkingBudget", -1),
    ],
)
def test_simple_levels_map_to_the_family_config(model, level, key, value):
    options = google_simple_options(
        model, ctx(UserMessage(content="hi")), StreamOptions(reasoning=level)
    )
    body = build_google_body(model, normalize_context(ctx(UserMessage(content="hi"))), options)
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, key: value}


def test_simple_custom_budgets_win_over_the_table():
    options = google_simple_options(
        FLASH,
        ctx(UserMessage(content="hi")),
        StreamOptions(reasoning="low", thinking_budgets=ThinkingBudgets(low=999)),
    )
    assert options.extra == {"thinking_enabled": True, "thinking_budget_tokens": 999}


def test_simple_on_a_model_without_reasoning_sends_no_thinking_config():
    options = google_simple_options(
        PLAIN, ctx(UserMessage(content="hi")), StreamOptions(reasoning="high")
    )
    body = build_google_body(PLAIN, normalize_context(ctx(UserMessage(content="hi"))), options)
    assert "thinkingConfig" not in body["generationConfig"]


# =========================================================================== chunk mapping


def feed_all(body: bytes, model: Model = FLASH) -> list[Any]:
    """The events of ``body`` through the parser and the mapper; a failure becomes the
    ``error`` terminal as in a provider run."""
    builder = MessageBuilder(model)
    mapper = GoogleEventMapper(builder, model)
    parser = SSEParser()
    events: list[Any] = []
    try:
        for sse in [*parser.feed(body), *parser.close()]:
            events.extend(mapper.feed_data(sse.data))
        events.extend(mapper.finish())
    except ProviderError as exc:
        events.append(builder.error(str(exc)))
    return applied(builder, events)


def failure(events: list[Any]) -> str:
    assert events[-1].type == "error", events[-1]
    return events[-1].error.error_message


def chunk(*parts: dict[str, Any], finish: str | None = None, **fields: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **fields}


def test_text_chunks_map_to_one_text_block_with_usage():
    events = feed_all(fixture("text.sse"))
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",  # the empty text part, forwarded as pi 1.6 forwards it
        "text_end",
        "done",
    ]
    message = events[-1].message
    assert message.content == [TextContent(text="Héllo wörld 🌍!")]
    assert message.response_id == "resp-g-1"
    assert message.response_model is None
    assert message.raw_stop_reason == "STOP"
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.total_tokens) == (8, 100, 5, 113)
    assert usage.reasoning == 0  # no thought tokens reported: 0, as pi 1.6 writes it
    assert usage.cost.total == pytest.approx((8 * 0.3 + 100 * 0.03 + 5 * 2.5) / 1e6)


def test_thinking_text_signatures_and_atomic_parallel_tool_calls():
    events = feed_all(fixture("thinking_tools.sse"), PRO)
    message = events[-1].message
    assert events[-1].reason == "toolUse"
    thinking, text, first, second = message.content
    assert thinking == ThinkingContent(
        thinking="**Planning** the lookups for both cities.", thinking_signature=SIG
    )
    assert text == TextContent(text="Looking them up.", text_signature="dGV4dHNpZw==")
    assert re.fullmatch(r"get_weather_\d+_\d+", first.id)
    assert re.fullmatch(r"get_weather_\d+_\d+", second.id)
    assert first.id != second.id
    assert first.arguments == {"city": "Paris"}
    assert first.thought_signature == "Y2FsbHNpZw=="
    assert second.arguments == {"city": "Tōkyō", "unit": "c"}
    assert second.thought_signature is None
    calls = [(e.type, e.content_index) for e in events if e.type.startswith("toolcall")]
    assert calls == [
        ("toolcall_start", 2),
        ("toolcall_delta", 2),
        ("toolcall_end", 2),
        ("toolcall_start", 3),
        ("toolcall_delta", 3),
        ("toolcall_end", 3),
    ]
    delta = next(e.delta for e in events if e.type == "toolcall_delta")
    assert msgspec.json.decode(delta) == {"city": "Paris"}
    assert (message.usage.output, message.usage.reasoning) == (100, 60)
    assert message.response_id == "resp-g-2"


def test_a_signature_without_thought_is_text_and_kind_changes_start_new_blocks():
    body = sse_body(
        [
            chunk({"text": "a", "thoughtSignature": "QUJD"}),
            chunk({"text": "b", "thought": True}),
            chunk({"text": "c"}, finish="STOP"),
        ]
    )
    content = feed_all(body)[-1].message.content
    assert content == [
        TextContent(text="a", text_signature="QUJD"),
        ThinkingContent(thinking="b"),
        TextContent(text="c"),
    ]


def test_provided_call_ids_are_kept_and_duplicates_replaced():
    body = sse_body(
        [
            chunk(
                {"functionCall": {"name": "f", "args": {}, "id": "x"}},
                {"functionCall": {"name": "f", "id": "x"}},
                finish="STOP",
            )
        ]
    )
    first, second = feed_all(body)[-1].message.content
    assert first.id == "x"
    assert re.fullmatch(r"f_\d+_\d+", second.id)
    assert second.arguments == {}


@pytest.mark.parametrize(
    ("finish", "reason"), [("STOP", "stop"), ("MAX_TOKENS", "length"), ("CONTINUATION", "length")]
)
def test_finish_reasons_map_to_done(finish, reason):
    events = feed_all(sse_body([chunk({"text": "x"}, finish=finish)]))
    assert events[-1].type == "done"
    assert events[-1].reason == reason


@pytest.mark.parametrize(
    "finish",
    [
        "SAFETY",
        "RECITATION",
        "PROHIBITED_CONTENT",
        "OTHER",
        "MALFORMED_FUNCTION_CALL",
        "FINISH_REASON_UNSPECIFIED",
    ],
)
def test_other_finish_reasons_are_errors(finish):
    events = feed_all(sse_body([chunk({"text": "x"}, finish=finish)]))
    assert failure(events) == f"Provider stopped with: {finish}"
    assert [e.type for e in events] == ["text_start", "text_delta", "text_end", "error"]


def test_safety_fixture_keeps_the_text_and_names_the_reason():
    events = feed_all(fixture("safety.sse"))
    assert failure(events) == "Provider stopped with: SAFETY"
    assert events[-1].error.content == [TextContent(text="Here is how")]
    assert events[-1].error.raw_stop_reason == "SAFETY"


def test_the_finish_message_stays_out_of_the_error_as_in_pi_16():
    candidate = chunk(finish="OTHER")
    candidate["candidates"][0]["finishMessage"] = "Malformed call: bad args"
    assert failure(feed_all(sse_body([candidate]))) == "Provider stopped with: OTHER"


def test_a_tool_call_turns_stop_into_tool_use_and_a_failing_reason_stays_a_failure():
    call = {"functionCall": {"name": "f", "args": {"a": 1}}}
    events = feed_all(sse_body([chunk(call, finish="STOP")]))
    assert (events[-1].type, events[-1].reason) == ("done", "toolUse")
    events = feed_all(sse_body([chunk(call, finish="MALFORMED_FUNCTION_CALL")]))
    assert failure(events) == "Provider stopped with: MALFORMED_FUNCTION_CALL"


def test_an_empty_text_part_is_forwarded_as_an_empty_delta():
    events = feed_all(
        sse_body([chunk({"text": "A"}), chunk({"text": ""}), chunk({"text": "B"}, finish="STOP")])
    )
    assert [(e.type, getattr(e, "delta", None)) for e in events if e.type == "text_delta"] == [
        ("text_delta", "A"),
        ("text_delta", ""),
        ("text_delta", "B"),
    ]


def test_error_chunk_and_blocked_prompt_fail_clearly():
    events = feed_all(fixture("error.sse"))
    assert failure(events) == "503 The model is overloaded. Please try again later."
    assert events[-1].error.content == [TextContent(text="Partial")]
    blocked = sse_body(
        [
            {
                "promptFeedback": {"blockReason": "SAFETY"},
                "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5},
            }
        ]
    )
    assert failure(feed_all(blocked)) == "Prompt blocked: SAFETY"


def test_chunks_without_candidates_or_parts_are_harmless():
    body = sse_body(
        [
            {"usageMetadata": {"promptTokenCount": 3}},
            {"candidates": []},
            chunk(),
            chunk({"inlineData": {}}, finish="STOP"),
        ]
    )
    events = feed_all(body)
    assert [e.type for e in events] == ["done"]
    assert events[-1].message.usage.input == 3


def test_a_field_of_the_wrong_type_fails_naming_the_field():
    assert failure(feed_all(sse_body([chunk({"text": 5})]))).startswith(
        "Could not parse Google SSE chunk: Expected `str | null`, got `int` - "
        "at `$.candidates[0].content.parts[0].text`; data={"
    )


def test_chunks_that_are_json_but_not_objects_are_skipped():
    body = sse_body(["null", [1], chunk({"text": "a"}, finish="STOP")])
    assert feed_all(body)[-1].message.content == [TextContent(text="a")]


# =========================================================================== replay over httpx


async def test_replayed_request_goes_to_stream_generate_content_with_the_key_header():
    events, transport = await replay(
        FLASH, ctx(UserMessage(content="hi")), ReplayResponse(fixture("text.sse"))
    )
    request = transport.requests[0]
    assert request.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert request.headers["x-goog-api-key"] == KEY
    assert request.json() == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert [e.type for e in events][:2] == ["start", "text_start"]
    assert events[-1].message.content == [TextContent(text="Héllo wörld 🌍!")]
    assert transport.closed_responses == 1


async def test_simple_entry_point_sends_the_thinking_config():
    transport = ReplayTransport(ReplayResponse(fixture("text.sse")))
    registry = registry_with_transport(transport)
    try:
        message = await complete_simple(
            FLASH,
            ctx(UserMessage(content="hi")),
            registry=registry,
            api_key=KEY,
            reasoning="medium",
        )
    finally:
        await registry.aclose()
    config = transport.requests[0].json()["generationConfig"]
    assert config["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}
    assert message.stop_reason == "stop"


async def test_missing_key_is_an_error_event(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    events, transport = await replay(FLASH, ctx(UserMessage(content="hi")), api_key=None)
    assert [e.type for e in events] == ["error"]
    assert (
        events[0].error.error_message
        == "No API key for provider: google; set GEMINI_API_KEY, or pass api_key / get_api_key"
    )
    assert transport.requests == []


async def test_http_error_status_becomes_an_error_with_the_provider_message():
    body = (
        b'{"error":{"code":400,"message":"The input token count (1200000) exceeds the '
        b'maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}'
    )
    events, _ = await replay(
        FLASH, ctx(UserMessage(content="hi")), ReplayResponse(body, status=400)
    )
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message.startswith("400 The input token count (1200000)")


@pytest.mark.parametrize("newline", [b"\n", b"\r"])
async def test_lf_and_cr_line_endings_give_the_same_events_as_crlf(newline):
    body = fixture("thinking_tools.sse")
    crlf, _ = await replay(PRO, ctx(UserMessage(content="hi")), ReplayResponse(body))
    other, _ = await replay(
        PRO, ctx(UserMessage(content="hi")), ReplayResponse(body.replace(b"\r\n", newline))
    )
    assert shape(other) == shape(crlf)


async def test_comment_lines_and_a_missing_final_blank_line_change_nothing():
    body = fixture("text.sse")
    noisy = b": keep-alive\r\n\r\n" + body.replace(b"\r\n\r\n", b"\r\n\r\n:\r\n\r\n")
    plain, _ = await replay(FLASH, ctx(UserMessage(content="hi")), ReplayResponse(body))
    commented, _ = await replay(FLASH, ctx(UserMessage(content="hi")), ReplayResponse(noisy))
    unterminated, _ = await replay(
        FLASH, ctx(UserMessage(content="hi")), ReplayResponse(body.rstrip(b"\r\n"))
    )
    assert shape(commented) == shape(plain)
    assert shape(unterminated) == shape(plain)


async def test_error_chunk_and_connection_reset_keep_the_partial_content():
    events, _ = await replay(
        FLASH, ctx(UserMessage(content="hi")), ReplayResponse(fixture("error.sse"))
    )
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "error"]
    first = fixture("text.sse").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    events, _ = await replay(
        FLASH,
        ctx(UserMessage(content="hi")),
        ReplayResponse([first], error=httpx2.ReadError("reset")),
    )
    assert events[-1].type == "error"
    assert events[-1].error.content == [TextContent(text="Héllo")]
    assert events[-1].error.error_message.startswith("Network error")


async def test_malformed_chunk_is_an_error():
    events, _ = await replay(
        FLASH, ctx(UserMessage(content="hi")), ReplayResponse(b"data: {not json\r\n\r\n")
    )
    assert events[-1].error.error_message.startswith("Could not parse Google SSE chunk: ")


@pytest.mark.parametrize(
    ("model", "name", "step"),
    [(FLASH, "text.sse", 1), (PRO, "thinking_tools.sse", 13)],
    ids=["text", "thinking_tools"],
)
async def test_the_stream_reads_the_same_however_the_network_cuts_it(model, name, step):
    context = ctx(UserMessage(content="hi"))
    whole, cut = await events_however_cut(model, context, fixture(name), step=step, api_key=KEY)
    assert [shape(events) for events in cut] == [shape(whole)] * len(cut)


# =========================================================================== loopback server


local = at_url


async def local_complete(model: Model, context: Context, **options: Any) -> AssistantMessage:
    return await complete_with_fresh_registry(model, context, key=KEY, **options)


async def test_end_to_end_streaming_against_a_loopback_server():
    async with serve_sse([SSEReply(fixture("thinking_tools.sse"))]) as server:
        message = await local_complete(local(PRO, server.url), ctx(UserMessage(content="hi")))
        assert server.requests[0].path == "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        assert server.requests[0].headers["x-goog-api-key"] == KEY
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]


async def test_end_to_end_http_error():
    error = b'{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}'
    async with serve_sse([SSEReply(error, status=429)]) as server:
        message = await local_complete(local(FLASH, server.url), ctx(UserMessage(content="hi")))
    assert message.stop_reason == "error"
    assert message.error_message == "429 Resource has been exhausted"


async def test_end_to_end_connection_reset_mid_stream():
    first, rest = fixture("text.sse").split(b"\r\n\r\n", 1)
    async with serve_sse([SSEReply([first + b"\r\n\r\n", rest], reset_after=1)]) as server:
        message = await local_complete(local(FLASH, server.url), ctx(UserMessage(content="hi")))
        assert server.resets == 1
    assert message.stop_reason == "error"
    assert message.content == [TextContent(text="Héllo")]
    assert message.error_message.startswith("Network error")


async def test_end_to_end_abort_closes_the_server_side_stream():
    first = fixture("text.sse").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    seen, final = await abort_at_first_text_delta(
        FLASH, ctx(UserMessage(content="hi")), first, key=KEY
    )
    assert seen[-1] == "error"
    assert final.stop_reason == "aborted"
    assert final.content == [TextContent(text="Héllo")]


# =========================================================================== live


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("GEMINI_API_KEY"), reason="GEMINI_API_KEY not set")
async def test_live_gemini_streams_a_short_answer():
    model = get_model("google", "gemini-2.5-flash")
    assert model is not None
    message = await complete_simple(
        model, ctx(UserMessage(content="Reply with exactly the word: pong")), max_tokens=50
    )
    assert message.stop_reason == "stop", message.error_message
    assert "pong" in "".join(b.text for b in message.content if isinstance(b, TextContent)).lower()
    assert message.usage.output > 0
    assert message.response_id


async def test_a_stream_cut_off_before_a_finish_reason_is_an_error_keeping_the_text():
    chunk = {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}}]}
    body = b"data: " + msgspec.json.encode(chunk) + b"\r\n\r\n"
    events, _ = await replay(FLASH, ctx(UserMessage(content="hi")), ReplayResponse(body))
    final = events[-1]
    assert final.type == "error"
    assert final.error.error_message == "Google stream ended without a finish reason"
    assert final.error.content == [TextContent(text="Hello")]
