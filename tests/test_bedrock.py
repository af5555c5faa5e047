"""The bedrock-converse-stream provider over real AWS event-stream frames: the request
body and its reasoning fields per model family, the frame mapping, SigV4 signatures that
botocore's own signer verifies, credentials and regions from a test-controlled
environment, broken frames, exceptions, HTTP failures, retries, abort, and catalog models
through the registry."""

from __future__ import annotations

import base64
import re
import sys
from typing import Any

import anyio
import httpx2
import msgspec
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    OutputFormat,
    ProviderError,
    StreamOptions,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    complete,
    complete_simple,
    get_model,
    get_models,
    open_stream,
)
from pi_trio.ai.providers import ProviderRegistry, default_registry
from pi_trio.ai.providers._bedrock_request import build_bedrock_body
from pi_trio.ai.providers._strict_limits import forget_strict_tool_limits
from pi_trio.ai.providers.bedrock import MISSING_EXTRA_TEXT, bedrock_simple_options
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing._replay import (
    ReplayResponse,
    ReplayTransport,
    registry_with_transport,
)
from pi_trio.testing._sse_server import SSEReply, serve_sse

from . import eventstream_support as es
from .provider_support import (
    UNFINISHED_BODY_WARNINGS,
    at_url,
    events_however_cut,
)

pytestmark = UNFINISHED_BODY_WARNINGS


def _model(model_id: str) -> Model:
    model = get_model("amazon-bedrock", model_id)
    assert model is not None, model_id
    return model


OPUS47 = _model("anthropic.claude-opus-4-7")
OPUS46 = _model("anthropic.claude-opus-4-6-v1")
SONNET45 = _model("anthropic.claude-sonnet-4-5-20250929-v1:0")
NOVA = _model("amazon.nova-pro-v1:0")
GPT_OSS = msgspec.structs.replace(
    NOVA, id="openai.gpt-oss-120b-1:0", name="gpt-oss", reasoning=True
)
GPT = msgspec.structs.replace(NOVA, id="openai.gpt-5.6", name="GPT-5.6", reasoning=True)
ACCESS, SECRET, TOKEN = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-tok"
KEYS = {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET}
WEATHER = Tool(
    name="get_weather",
    description="Weather of a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
PNG = base64.b64encode(b"\x89PNG fake").decode()
TEXT_BODY = es.body(
    es.event("messageStart", {"role": "assistant"}),
    es.text_delta(0, "Héllo "),
    es.text_delta(0, "wörld 🌍"),
    es.block_stop(0),
    es.message_stop("end_turn"),
    es.metadata(inputTokens=12, outputTokens=4, totalTokens=16),
)
TOOL_BODY = es.body(
    es.event("messageStart", {"role": "assistant"}),
    es.event(
        "contentBlockDelta",
        {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Think"}}},
    ),
    es.event(
        "contentBlockDelta",
        {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}},
    ),
    es.block_stop(0),
    es.text_delta(1, "Let me look."),
    es.block_stop(1),
    es.event(
        "contentBlockStart",
        {
            "contentBlockIndex": 2,
            "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}},
        },
    ),
    es.event(
        "contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"city":'}}}
    ),
    es.event(
        "contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '"Paris"}'}}}
    ),
    es.block_stop(2),
    es.message_stop("tool_use"),
    es.metadata(
        inputTokens=100,
        outputTokens=20,
        totalTokens=1320,
        cacheReadInputTokens=1000,
        cacheWriteInputTokens=200,
        cacheDetails=[{"ttl": "1h", "inputTokens": 150}, {"ttl": "5m", "inputTokens": 50}],
    ),
)


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(
        messages=list(messages) or [UserMessage(content="hi")], system_prompt=system, tools=tools
    )


def body_of(model: Model, context: Context, **options: Any) -> dict[str, Any]:
    return build_bedrock_body(model, normalize_context(context), StreamOptions(**options))


def assistant(*blocks: Any, model: Model = OPUS47, stop: str = "stop") -> AssistantMessage:
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
        tool_call_id=call_id, tool_name="get_weather", content=list(content), is_error=is_error
    )


def reply(data: bytes | list[bytes], **kwargs: Any) -> ReplayResponse:
    headers = {"content-type": es.CONTENT_TYPE, "x-amzn-requestid": "req-1"}
    return ReplayResponse(data, headers=headers | kwargs.pop("headers", {}), **kwargs)


async def replay(model: Model, *replies: Any, context: Context | None = None, **options: Any):
    transport = ReplayTransport(*replies)
    registry = registry_with_transport(transport)
    options.setdefault("env", dict(KEYS))
    try:
        async with open_stream(model, context or ctx(), registry=registry, **options) as stream:
            events = [event async for event in stream]
    finally:
        await registry.aclose()
    return events, transport


def final(events: list[Any]) -> AssistantMessage:
    last = events[-1]
    return last.message if last.type == "done" else last.error


_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/bedrock/"
    r"aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<sig>[0-9a-f]{64})"
)


def verify_sigv4(
    url: str,
    headers: dict[str, str],
    content: bytes,
    *,
    secret: str = SECRET,
    token: str | None = None,
) -> dict[str, str]:
    """Check the request's signature with botocore's signer for the same request, time
    and credentials; returns the parts of the Authorization header."""
    match = _AUTH.fullmatch(headers["authorization"])
    assert match is not None, headers["authorization"]
    signed = match["signed"].split(";")
    assert {"host", "x-amz-date", "content-type"} <= set(signed)
    request = AWSRequest(
        method="POST", url=url, data=content, headers={h: headers[h] for h in signed}
    )
    request.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(match["key"], secret, token), "bedrock", match["region"])
    expected = signer.signature(
        signer.string_to_sign(request, signer.canonical_request(request)), request
    )
    assert expected == match["sig"], "the signature does not cover what was sent"
    return match.groupdict()


# =========================================================================== request body


def test_body_of_a_plain_model_and_of_claude():
    assert body_of(NOVA, ctx()) == {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "inferenceConfig": {},
    }
    body = body_of(SONNET45, ctx(system="Be brief."), temperature=0.2)
    assert body == {
        "messages": [
            {"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}
        ],
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        "inferenceConfig": {"maxTokens": SONNET45.max_tokens, "temperature": 0.2},
    }


def test_cache_retention_long_and_none_and_forced_cache_points():
    long = body_of(OPUS47, ctx(system="s"), cache_retention="long")
    assert long["system"][1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    assert long["messages"][-1]["content"][-1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    none = body_of(OPUS47, ctx(system="s"), cache_retention="none")
    assert none["system"] == [{"text": "s"}]
    assert none["messages"][-1]["content"] == [{"text": "hi"}]
    profile = msgspec.structs.replace(
        NOVA, id="arn:aws:bedrock:us-east-1:1:application-inference-profile/x"
    )
    assert "cachePoint" not in str(body_of(profile, ctx()))
    forced = body_of(profile, ctx(), env={"AWS_BEDROCK_FORCE_CACHE": "1"})
    assert forced["messages"][0]["content"][-1] == {"cachePoint": {"type": "default"}}


def test_blank_user_text_becomes_the_empty_placeholder_and_images_get_a_format():
    body = body_of(
        NOVA,
        ctx(
            UserMessage(content="  "),
            UserMessage(
                content=[TextContent(text=" "), ImageContent(data=PNG, mime_type="image/png")]
            ),
        ),
    )
    assert body["messages"][0]["content"] == [{"text": "<empty>"}]
    assert body["messages"][1]["content"] == [
        {"image": {"format": "png", "source": {"bytes": PNG}}}
    ]
    with pytest.raises(ValueError, match="not 'image/bmp'"):
        body_of(NOVA, ctx(UserMessage(content=[ImageContent(data=PNG, mime_type="image/bmp")])))


def test_assistant_replay_per_block_kind():
    redacted = base64.b64encode(b"\x00secret").decode()
    history = assistant(
        ThinkingContent(thinking="signed", thinking_signature="sig"),
        ThinkingContent(thinking="unsigned"),
        ThinkingContent(
            thinking="[Reasoning redacted]", thinking_signature=redacted, redacted=True
        ),
        ThinkingContent(thinking="x", thinking_signature="not base64!", redacted=True),
        TextContent(text=" "),
        TextContent(text="answer"),
        ToolCall(
            id="t1", name="get_weather", arguments={"city": "Paris", "": 1, "n": [{"": 2, "a": 3}]}
        ),
    )
    blocks = body_of(OPUS47, ctx(UserMessage(content="q"), history))["messages"][1]["content"]
    assert blocks == [
        {"reasoningContent": {"reasoningText": {"text": "signed", "signature": "sig"}}},
        {"text": "unsigned"},
        {"reasoningContent": {"redactedContent": redacted}},
        {"text": "answer"},
        {
            "toolUse": {
                "toolUseId": "t1",
                "name": "get_weather",
                "input": {"city": "Paris", "n": [{"a": 3}]},
            }
        },
    ]
    # other families take reasoning text without a signature
    nova_history = assistant(ThinkingContent(thinking="plan", thinking_signature="sig"), model=NOVA)
    blocks = body_of(NOVA, ctx(UserMessage(content="q"), nova_history))["messages"][1]["content"]
    assert blocks == [{"reasoningContent": {"reasoningText": {"text": "plan"}}}]


def test_empty_and_failed_assistant_turns_are_left_out():
    messages = body_of(
        NOVA,
        ctx(
            UserMessage(content="a"),
            assistant(model=NOVA),
            assistant(TextContent(text="partial"), model=NOVA, stop="error"),
            UserMessage(content="b"),
        ),
    )["messages"]
    assert [m["role"] for m in messages] == ["user", "user"]


def test_tool_results_share_one_turn_and_claude_moves_error_images_after_them():
    call = assistant(
        ToolCall(id="a", name="get_weather", arguments={}),
        ToolCall(id="b", name="get_weather", arguments={}),
    )
    image = ImageContent(data=PNG, mime_type="image/png")
    context = ctx(
        UserMessage(content="q"),
        call,
        result("a", TextContent(text="sunny")),
        result("b", TextContent(text="failed"), image, image, is_error=True),
    )
    turn = body_of(OPUS47, context, cache_retention="none")["messages"][-1]
    assert turn == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": "sunny"}], "status": "success"}},
            {
                "toolResult": {
                    "toolUseId": "b",
                    "content": [
                        {"text": "failed"},
                        {"text": "(image attached after the tool results)"},
                    ],
                    "status": "error",
                }
            },
            {"text": "Images from the error result of tool call b (get_weather):"},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
        ],
    }
    nova_call = assistant(ToolCall(id="b", name="get_weather", arguments={}), model=NOVA)
    nova = body_of(
        NOVA,
        ctx(UserMessage(content="q"), nova_call, result("b", image, is_error=True), result("x")),
    )
    assert nova["messages"][-1]["content"][0]["toolResult"]["content"] == [
        {"image": {"format": "png", "source": {"bytes": PNG}}}
    ]


def test_tool_config_choices_and_strict_tools():
    tools = [WEATHER]
    assert body_of(NOVA, ctx(tools=tools))["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "inputSchema": {"json": WEATHER.parameters},
                }
            }
        ]
    }
    assert body_of(NOVA, ctx(tools=tools), tool_choice="any")["toolConfig"]["toolChoice"] == {
        "any": {}
    }
    assert body_of(
        NOVA, ctx(tools=tools), extra={"tool_choice": {"type": "tool", "name": "get_weather"}}
    )["toolConfig"]["toolChoice"] == {"tool": {"name": "get_weather"}}
    assert "toolConfig" not in body_of(NOVA, ctx(tools=tools), tool_choice="none")
    with pytest.raises(ValueError, match="unknown Bedrock tool_choice 'sometimes'"):
        body_of(NOVA, ctx(tools=tools), tool_choice="sometimes")
    prefer = msgspec.structs.replace(
        WEATHER, constrained_sampling={"type": "json_schema", "strict": "prefer"}
    )
    spec = body_of(OPUS47, ctx(tools=[prefer]))["toolConfig"]["tools"][0]["toolSpec"]
    assert spec["strict"] is True
    assert spec["inputSchema"]["json"]["additionalProperties"] is False
    assert "strict" not in body_of(NOVA, ctx(tools=[prefer]))["toolConfig"]["tools"][0]["toolSpec"]
    require = msgspec.structs.replace(
        prefer, constrained_sampling={"type": "json_schema", "strict": "require"}
    )
    with pytest.raises(
        ProviderError, match="requires JSON-schema constrained sampling, but strict tools"
    ):
        body_of(NOVA, ctx(tools=[require]))


def test_output_format_and_request_metadata():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    body = body_of(
        OPUS47,
        ctx(),
        output_format=OutputFormat(schema=schema, name="count", description="How many"),
        extra={"request_metadata": {"team": "a"}},
    )
    definition = body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert body["outputConfig"]["textFormat"]["type"] == "json_schema"
    assert msgspec.json.decode(definition["schema"]) == {
        **schema,
        "required": ["n"],
        "additionalProperties": False,
    }
    assert (definition["name"], definition["description"]) == ("count", "How many")
    assert body["requestMetadata"] == {"team": "a"}


@pytest.mark.parametrize(
    ("model", "options", "fields"),
    [
        (
            OPUS47,
            {},
            {
                "thinking": {
                    "type": "adaptive",
                    "display": "summarized",
                    "block_binding": {"prefix_mismatch_behavior": "drop_block"},
                },
                "output_config": {"effort": "medium"},
                "anthropic_beta": ["thinking-binding-controls-2026-08-01"],
            },
        ),
        (
            OPUS46,
            {},
            {
                "thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": "medium"},
            },
        ),
        (
            OPUS46,
            {"env": {"AWS_REGION": "us-gov-west-1"}},
            {"thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"}},
        ),
        (
            SONNET45,
            {},
            {
                "thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"],
            },
        ),
        (
            SONNET45,
            {
                "thinking_budgets": ThinkingBudgets(medium=3000),
                "extra": {"interleaved_thinking": False, "thinking_display": "omitted"},
            },
            {"thinking": {"type": "enabled", "budget_tokens": 3000, "display": "omitted"}},
        ),
        (GPT_OSS, {}, {"reasoning_effort": "medium"}),
        (GPT, {}, {"reasoning": {"effort": "medium"}}),
        (NOVA, {}, None),
    ],
)
def test_reasoning_fields_per_family(model, options, fields):
    body = body_of(model, ctx(), reasoning="medium", **options)
    assert body.get("additionalModelRequestFields") == fields
    assert "additionalModelRequestFields" not in body_of(model, ctx())


def test_xhigh_effort_only_where_native():
    assert body_of(OPUS47, ctx(), reasoning="xhigh")["additionalModelRequestFields"][
        "output_config"
    ] == {"effort": "xhigh"}
    assert body_of(GPT_OSS, ctx(), reasoning="xhigh")["additionalModelRequestFields"] == {
        "reasoning_effort": "high"
    }


def test_simple_options_make_room_for_a_claude_thinking_budget():
    options = bedrock_simple_options(
        SONNET45, ctx(), StreamOptions(reasoning="high", max_tokens=4000)
    )
    assert options.max_tokens == 4000 + 16384
    assert options.thinking_budgets == ThinkingBudgets(high=16384)
    tight = bedrock_simple_options(
        SONNET45,
        ctx(),
        StreamOptions(reasoning="max", max_tokens=500, thinking_budgets=ThinkingBudgets(high=1500)),
    )
    assert tight.max_tokens == 2000
    assert tight.thinking_budgets == ThinkingBudgets(high=2000 - 1024)
    adaptive = bedrock_simple_options(OPUS47, ctx(), StreamOptions(reasoning="low"))
    assert (adaptive.reasoning, adaptive.max_tokens) == ("low", OPUS47.max_tokens)
    assert bedrock_simple_options(OPUS47, ctx(), StreamOptions()).reasoning is None


# =========================================================================== streams


async def test_text_stream_signed_request_to_the_standard_endpoint():
    events, transport = await replay(NOVA, reply(TEXT_BODY))
    request = transport.requests[0]
    assert (
        request.url
        == "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse-stream"
    )
    assert request.headers["accept"] == es.CONTENT_TYPE
    parts = verify_sigv4(request.url, request.headers, request.content)
    assert (parts["key"], parts["region"]) == (ACCESS, "us-east-1")
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    message = final(events)
    assert message.content == [TextContent(text="Héllo wörld 🌍")]
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (12, 4, 16)
    assert message.usage.cost.total > 0
    assert transport.closed_responses == 1


async def test_reasoning_and_tool_call_with_cache_usage():
    events, _ = await replay(OPUS47, reply(TOOL_BODY), context=ctx(tools=[WEATHER]))
    message = final(events)
    assert message.stop_reason == "toolUse"
    assert message.raw_stop_reason == "tool_use"
    assert message.content == [
        ThinkingContent(thinking="Think", thinking_signature="c2ln"),
        TextContent(text="Let me look."),
        ToolCall(id="tooluse_1", name="get_weather", arguments={"city": "Paris"}),
    ]
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.cache_write_1h) == (
        100,
        1000,
        200,
        150,
    )
    assert usage.total_tokens == 1320
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert deltas == ['{"city":', '"Paris"}']


async def test_encrypted_reasoning_is_kept_as_base64_and_shown_as_redacted():
    chunks = [b"\x01\x02", b"\x03"]
    frames = [
        es.event(
            "contentBlockDelta",
            {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": base64.b64encode(c).decode()}},
            },
        )
        for c in chunks
    ]
    events, _ = await replay(
        GPT, reply(es.body(*frames, es.block_stop(0), es.message_stop("end_turn")))
    )
    block = final(events).content[0]
    assert block == ThinkingContent(
        thinking="[Reasoning redacted]",
        thinking_signature=base64.b64encode(b"\x01\x02\x03").decode(),
        redacted=True,
    )
    bad = es.event(
        "contentBlockDelta",
        {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "%%%"}}},
    )
    events, _ = await replay(GPT, reply(bad))
    assert "redactedContent that is not base64" in final(events).error_message


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "toolUse"),
    ],
)
async def test_stop_reasons(reason, stop):
    events, _ = await replay(NOVA, reply(es.body(es.text_delta(0, "x"), es.message_stop(reason))))
    assert (events[-1].type, final(events).stop_reason) == ("done", stop)


async def test_failure_stop_reasons_and_a_missing_stop_are_errors():
    events, _ = await replay(
        NOVA, reply(es.body(es.text_delta(0, "partial"), es.message_stop("guardrail_intervened")))
    )
    message = final(events)
    assert (message.stop_reason, message.error_message) == (
        "error",
        "Provider stopped with: guardrail_intervened",
    )
    assert message.raw_stop_reason == "guardrail_intervened"
    assert message.content == [TextContent(text="partial")]
    events, _ = await replay(NOVA, reply(es.body(es.text_delta(0, "cut"))))
    assert final(events).error_message == "Bedrock stream ended without a stop reason"


async def test_unknown_events_are_skipped_and_malformed_ones_fail_naming_them():
    noisy = es.body(
        es.event("citationsDelta", {"x": 1}), es.text_delta(0, "ok"), es.message_stop("end_turn")
    )
    events, _ = await replay(NOVA, reply(noisy))
    assert final(events).content == [TextContent(text="ok")]
    broken = es.frame(
        {":message-type": "event", ":event-type": "contentBlockDelta"},
        b'{"contentBlockIndex": "zero"}',
    )
    events, _ = await replay(NOVA, reply(broken))
    assert final(events).error_message.startswith("Could not parse contentBlockDelta: ")
    user = es.event("messageStart", {"role": "user"})
    events, _ = await replay(NOVA, reply(user))
    assert "expected 'assistant'" in final(events).error_message


@pytest.mark.parametrize(
    ("kind", "prefix"),
    [
        ("modelStreamErrorException", "Model stream error"),
        ("throttlingException", "Throttling error"),
        ("validationException", "Validation error"),
        ("internalServerException", "Internal server error"),
        ("serviceUnavailableException", "Service unavailable"),
    ],
)
async def test_exceptions_mid_stream_keep_the_content_and_name_the_kind(kind, prefix):
    events, _ = await replay(
        NOVA, reply(es.body(es.text_delta(0, "so far"), es.exception(kind, "it broke")))
    )
    message = final(events)
    assert message.error_message == f"{prefix}: it broke"
    assert message.content == [TextContent(text="so far")]
    code = kind[0].upper() + kind[1:]
    assert message.diagnostics[0]["type"] == "bedrock_response_failure"
    assert message.diagnostics[0]["details"] == {"errorCode": code, "requestId": "req-1"}


async def test_error_frames_and_the_data_retention_hint():
    events, _ = await replay(NOVA, reply(es.error("InternalFailure", "the backend fell over")))
    assert final(events).error_message == "InternalFailure: the backend fell over"
    retention = es.exception(
        "validationException", "data retention mode 'default' is not available for this model"
    )
    events, _ = await replay(NOVA, reply(retention))
    assert final(events).error_message.endswith("for supported data retention modes.")


async def test_truncated_frames_and_crc_mismatches_fail_clearly():
    whole = es.body(
        es.text_delta(0, "Hello"), es.text_delta(0, " there"), es.message_stop("end_turn")
    )
    first = es.text_delta(0, "Hello")
    events, _ = await replay(NOVA, reply(whole[: len(first) + 10]))
    message = final(events)
    assert (
        message.error_message
        == "Network error: the Bedrock event stream ended inside a message (10 bytes of an unfinished frame)"
    )
    assert message.content == [TextContent(text="Hello")]
    payload_flip = bytearray(whole)
    payload_flip[len(first) + 40] ^= 0x01
    events, _ = await replay(NOVA, reply(bytes(payload_flip)))
    assert final(events).error_message.startswith(
        "Bedrock event stream is corrupt: Checksum mismatch"
    )
    assert final(events).content == [TextContent(text="Hello")]
    prelude_flip = bytearray(whole)
    prelude_flip[2] ^= 0x01
    events, _ = await replay(NOVA, reply(bytes(prelude_flip)))
    assert final(events).error_message.startswith(
        "Bedrock event stream is corrupt: Checksum mismatch"
    )


async def test_a_body_that_is_not_an_event_stream_is_an_error():
    events, _ = await replay(
        NOVA,
        ReplayResponse(
            b'{"message":"hi from a proxy"}', headers={"content-type": "application/json"}
        ),
    )
    assert (
        final(events).error_message
        == "200 status code: expected an event stream, got content-type 'application/json': hi from a proxy"
    )


async def test_the_stream_reads_the_same_however_the_network_cuts_it():
    whole, cut = await events_however_cut(OPUS47, ctx(), TOOL_BODY, step=37, reply=reply, env=KEYS)
    for events in cut:
        assert [(e.type, getattr(e, "delta", None)) for e in events] == [
            (e.type, getattr(e, "delta", None)) for e in whole
        ]
        assert final(events) == msgspec.structs.replace(
            final(whole), timestamp=final(events).timestamp, duration_ms=final(events).duration_ms
        )


async def test_connection_reset_mid_stream_keeps_the_partial_content():
    events, _ = await replay(
        NOVA, reply([es.text_delta(0, "Hel")], error=httpx2.ReadError("reset"))
    )
    message = final(events)
    assert message.content == [TextContent(text="Hel")]
    assert message.error_message.startswith("Network error")


# =========================================================================== HTTP failures, retries


async def test_http_errors_use_the_error_type_header_and_record_a_diagnostic():
    failure = ReplayResponse(
        b'{"message":"Input is too long for requested model."}',
        status=400,
        headers={
            "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            "x-amzn-requestid": "req-9",
        },
    )
    events, _ = await replay(NOVA, failure)
    message = final(events)
    assert [e.type for e in events] == ["error"]
    assert message.error_message == "Validation error: Input is too long for requested model."
    assert message.diagnostics[0]["details"] == {
        "status": 400,
        "errorCode": "ValidationException",
        "requestId": "req-9",
    }
    events, _ = await replay(
        NOVA,
        ReplayResponse(
            b"<html>Bad Gateway</html>", status=502, headers={"content-type": "text/html"}
        ),
    )
    assert final(events).error_message == "502 <html>Bad Gateway</html>"
    events, _ = await replay(
        NOVA,
        ReplayResponse(
            b'{"Message":"User is not authorized"}',
            status=403,
            headers={"x-amzn-errortype": "AccessDeniedException"},
        ),
    )
    assert final(events).error_message == "AccessDeniedException: User is not authorized"


async def test_throttling_is_retried_and_every_attempt_is_signed_anew(monkeypatch):
    import datetime

    import botocore.auth

    times = iter([datetime.datetime(2026, 1, 2, 3, 4, s, tzinfo=datetime.UTC) for s in (5, 9)])
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: next(times))
    throttled = ReplayResponse(
        b'{"message":"Too many requests"}',
        status=429,
        headers={"x-amzn-errortype": "ThrottlingException", "retry-after-ms": "0"},
    )
    events, transport = await replay(NOVA, throttled, reply(TEXT_BODY), max_retries=1)
    assert final(events).stop_reason == "stop"
    dates = [r.headers["x-amz-date"] for r in transport.requests]
    assert dates == ["20260102T030405Z", "20260102T030409Z"]
    for request in transport.requests:
        verify_sigv4(request.url, request.headers, request.content)
    assert (
        transport.requests[0].headers["authorization"]
        != transport.requests[1].headers["authorization"]
    )


def _strict_limit_refusal(text: str = "Too many strict tools (21). The maximum is 20.") -> Any:
    return ReplayResponse(
        msgspec.json.encode({"message": text}),
        status=400,
        headers={"x-amzn-errortype": "ValidationException", "x-amzn-requestid": "req-s"},
    )


PREFER = msgspec.structs.replace(
    WEATHER, name="pref", constrained_sampling={"type": "json_schema", "strict": "prefer"}
)


def _strict_flags(request: Any) -> list[bool]:
    tools = request.json()["toolConfig"]["tools"]
    return [tool["toolSpec"].get("strict", False) for tool in tools]


async def test_a_refusal_for_the_strict_tool_limits_is_sent_again_without_strict_tools():
    forget_strict_tool_limits()
    try:
        events, transport = await replay(
            OPUS47,
            _strict_limit_refusal(),
            reply(TEXT_BODY),
            reply(TEXT_BODY),
            context=ctx(tools=[PREFER, WEATHER]),
            session_id="s-strict",
        )
        message = final(events)
        assert message.stop_reason == "stop"
        assert [_strict_flags(r) for r in transport.requests] == [[True, False], [False, False]]
        relaxed = transport.requests[1].json()["toolConfig"]["tools"][0]["toolSpec"]
        assert relaxed["inputSchema"]["json"] == WEATHER.parameters
        [diagnostic] = message.diagnostics
        assert diagnostic["type"] == "bedrock_strict_tools_fallback"
        assert diagnostic["error"] == {"message": "Too many strict tools (21). The maximum is 20."}
        assert diagnostic["details"] == {"reason": "strict_tool_limits_exceeded"}
        # the session's next request sends them non-strict at once
        events, transport = await replay(
            OPUS47, reply(TEXT_BODY), context=ctx(tools=[PREFER]), session_id="s-strict"
        )
        assert final(events).diagnostics is None
        assert _strict_flags(transport.requests[0]) == [False]
        # another session starts strict
        _, transport = await replay(
            OPUS47, reply(TEXT_BODY), context=ctx(tools=[PREFER]), session_id="s-other"
        )
        assert _strict_flags(transport.requests[0]) == [True]
    finally:
        forget_strict_tool_limits()


async def test_other_refusals_and_required_strict_tools_are_not_sent_again():
    other = _strict_limit_refusal("Input is too long for requested model.")
    events, transport = await replay(OPUS47, other, context=ctx(tools=[PREFER]))
    assert final(events).error_message == "Validation error: Input is too long for requested model."
    assert len(transport.requests) == 1
    require = msgspec.structs.replace(
        WEATHER, constrained_sampling={"type": "json_schema", "strict": "require"}
    )
    events, transport = await replay(
        OPUS47,
        _strict_limit_refusal("The compiled grammar is too large"),
        context=ctx(tools=[require]),
    )
    message = final(events)
    assert message.error_message == "Validation error: The compiled grammar is too large"
    assert len(transport.requests) == 1
    assert [d["type"] for d in message.diagnostics] == ["bedrock_response_failure"]
    # a second refusal after the fallback ends the request
    events, transport = await replay(
        OPUS47, _strict_limit_refusal(), _strict_limit_refusal(), context=ctx(tools=[PREFER])
    )
    assert len(transport.requests) == 2
    assert [d["type"] for d in final(events).diagnostics] == [
        "bedrock_strict_tools_fallback",
        "bedrock_response_failure",
    ]


# =========================================================================== credentials, regions


async def test_session_token_region_and_arn_ids():
    arn = msgspec.structs.replace(
        NOVA, id="arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.amazon.nova-pro-v1:0"
    )
    _events, transport = await replay(
        arn, reply(TEXT_BODY), env={**KEYS, "AWS_SESSION_TOKEN": TOKEN, "AWS_REGION": "us-west-2"}
    )
    request = transport.requests[0]
    assert request.url == (
        "https://bedrock-runtime.eu-west-3.amazonaws.com/model/"
        "arn%3Aaws%3Abedrock%3Aeu-west-3%3A123456789012%3Ainference-profile%2Feu.amazon.nova-pro-v1%3A0/converse-stream"
    )
    assert request.headers["x-amz-security-token"] == TOKEN
    assert (
        verify_sigv4(request.url, request.headers, request.content, token=TOKEN)["region"]
        == "eu-west-3"
    )
    _events, transport = await replay(
        NOVA, reply(TEXT_BODY), env={**KEYS, "AWS_REGION": "cn-north-1"}
    )
    assert transport.requests[0].url.startswith(
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn/"
    )
    _events, transport = await replay(NOVA, reply(TEXT_BODY), extra={"region": "ap-south-1"})
    assert transport.requests[0].url.startswith("https://bedrock-runtime.ap-south-1.amazonaws.com/")


def test_a_tampered_request_fails_the_signature_check():
    request = AWSRequest(
        method="POST",
        url="https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
        data=b"{}",
        headers={
            "content-type": "application/json",
            "host": "bedrock-runtime.us-east-1.amazonaws.com",
        },
    )
    SigV4Auth(Credentials(ACCESS, SECRET), "bedrock", "us-east-1").add_auth(request)
    headers = {k.lower(): v for k, v in request.headers.items()}
    verify_sigv4(request.url, headers, b"{}")
    with pytest.raises(AssertionError, match="does not cover"):
        verify_sigv4(request.url, headers, b'{"x":1}')


async def test_bearer_tokens_and_placeholders():
    events, transport = await replay(
        NOVA, reply(TEXT_BODY), env={"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-abc"}
    )
    assert transport.requests[0].headers["authorization"] == "Bearer bedrock-api-key-abc"
    assert "x-amz-date" not in transport.requests[0].headers
    events, transport = await replay(NOVA, reply(TEXT_BODY), api_key="<authenticated>")
    verify_sigv4(
        transport.requests[0].url, transport.requests[0].headers, transport.requests[0].content
    )
    events, transport = await replay(
        NOVA, reply(TEXT_BODY), env={"AWS_BEDROCK_SKIP_AUTH": "1", "AWS_BEARER_TOKEN_BEDROCK": "x"}
    )
    verify_sigv4(
        transport.requests[0].url,
        transport.requests[0].headers,
        transport.requests[0].content,
        secret="dummy-secret-key",
    )
    failure = ReplayResponse(
        b'{"message":"bad token bedrock-api-key-abc"}',
        status=403,
        headers={"x-amzn-errortype": "AccessDeniedException"},
    )
    events, _ = await replay(NOVA, failure, api_key="bedrock-api-key-abc")
    assert final(events).error_message == "AccessDeniedException: bad token [redacted]"


async def test_reserved_headers_are_never_overridden():
    _events, transport = await replay(
        NOVA, reply(TEXT_BODY), headers={"Authorization": "x", "X-Amz-Date": "y", "x-team": "a"}
    )
    headers = transport.requests[0].headers
    assert headers["x-team"] == "a"
    verify_sigv4(transport.requests[0].url, headers, transport.requests[0].content)


@pytest.fixture
def aws_files(tmp_path, monkeypatch):
    """An AWS config of the test's own: two profiles, no instance metadata lookups."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[work]\naws_access_key_id = AKIDWORK\naws_secret_access_key = {SECRET}\n"
        f"[bare]\naws_access_key_id = AKIDBARE\naws_secret_access_key = {SECRET}\n"
    )
    config = tmp_path / "config"
    config.write_text("[profile work]\nregion = eu-central-1\n[profile bare]\noutput = json\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    return tmp_path


async def test_a_profile_from_the_aws_files_signs_for_its_region(aws_files, monkeypatch):
    _events, transport = await replay(NOVA, reply(TEXT_BODY), env={**KEYS, "AWS_PROFILE": "work"})
    request = transport.requests[0]
    assert verify_sigv4(request.url, request.headers, request.content)["key"] == "AKIDWORK"
    # the catalog's endpoint pins us-east-1 unless a region or an ambient profile is set
    assert request.url.startswith("https://bedrock-runtime.us-east-1.amazonaws.com/")
    monkeypatch.setenv("AWS_PROFILE", "work")
    _events, transport = await replay(NOVA, reply(TEXT_BODY), env={})
    request = transport.requests[0]
    assert request.url.startswith("https://bedrock-runtime.eu-central-1.amazonaws.com/")
    assert verify_sigv4(request.url, request.headers, request.content)["region"] == "eu-central-1"


async def test_bearer_tokens_take_the_ambient_profiles_region_and_none_is_an_error(
    aws_files, monkeypatch
):
    monkeypatch.setenv("AWS_PROFILE", "work")
    _events, transport = await replay(NOVA, reply(TEXT_BODY), api_key="bedrock-api-key-abc", env={})
    request = transport.requests[0]
    assert request.url.startswith("https://bedrock-runtime.eu-central-1.amazonaws.com/")
    assert request.headers["authorization"] == "Bearer bedrock-api-key-abc"
    monkeypatch.setenv("AWS_PROFILE", "bare")
    events, transport = await replay(NOVA, env={})
    assert final(events).error_message.startswith(
        "No AWS region for Amazon Bedrock: set AWS_REGION"
    )
    assert transport.requests == []


async def test_no_credentials_and_unknown_profiles_are_one_line_errors(aws_files):
    events, transport = await replay(NOVA, env={})
    assert final(events).error_message.startswith(
        "No AWS credentials found for Amazon Bedrock: set AWS_PROFILE"
    )
    events, transport = await replay(NOVA, extra={"profile": "nope"}, env={})
    assert final(events).error_message.startswith(
        "AWS profile 'nope' is not in the AWS config files"
    )
    assert transport.requests == []


async def test_without_the_extra_one_line_names_it(monkeypatch):
    for name in (
        "botocore",
        "botocore.auth",
        "botocore.eventstream",
        "pi_trio.ai.providers._bedrock_auth",
        "pi_trio.ai.providers._eventstream",
    ):
        monkeypatch.setitem(sys.modules, name, None)
    events, _transport = await replay(NOVA)
    assert [e.type for e in events] == ["error"]
    assert final(events).error_message == MISSING_EXTRA_TEXT
    assert "pip install 'pi-trio[bedrock]'" in MISSING_EXTRA_TEXT


# =========================================================================== loopback server


async def test_end_to_end_catalog_model_through_the_registry():
    for model in get_models("amazon-bedrock"):
        assert default_registry.get(model.api) is not None
    async with serve_sse(
        [SSEReply(TOOL_BODY, headers={"content-type": es.CONTENT_TYPE})]
    ) as server:
        registry = ProviderRegistry()
        try:
            message = await complete_simple(
                at_url(OPUS47, server.url),
                ctx(tools=[WEATHER]),
                registry=registry,
                env=KEYS,
                reasoning="high",
            )
        finally:
            await registry.aclose()
        served = server.requests[0]
    assert served.path == "/model/anthropic.claude-opus-4-7/converse-stream"
    parts = verify_sigv4(server.url + served.path, served.headers, served.content)
    assert parts["region"] == "us-east-1"
    assert served.json()["additionalModelRequestFields"]["output_config"] == {"effort": "high"}
    assert message.stop_reason == "toolUse"


async def test_aws_credentials_ending_in_a_newline_are_sent_stripped_and_signed_right():
    # values read from files or Kubernetes secrets: the newline would end up in a header
    # (the session token, the key id in the Authorization) or break the signature
    keys = {
        "AWS_ACCESS_KEY_ID": f"{ACCESS}\n",
        "AWS_SECRET_ACCESS_KEY": f"{SECRET}\n",
        "AWS_SESSION_TOKEN": f"{TOKEN}-0123456789\n",
    }
    reply = SSEReply(TEXT_BODY, headers={"content-type": es.CONTENT_TYPE})
    async with serve_sse([reply]) as server:
        registry = ProviderRegistry()
        try:
            message = await complete(at_url(NOVA, server.url), ctx(), registry=registry, env=keys)
        finally:
            await registry.aclose()
    assert message.stop_reason == "stop", message.error_message
    served = server.requests[0]
    assert served.headers["x-amz-security-token"] == f"{TOKEN}-0123456789"
    parts = verify_sigv4(
        server.url + served.path, served.headers, served.content, token=f"{TOKEN}-0123456789"
    )
    assert parts["key"] == ACCESS


@pytest.mark.parametrize(
    ("variable", "what"),
    [
        ("AWS_ACCESS_KEY_ID", "AWS access key id"),
        ("AWS_SECRET_ACCESS_KEY", "AWS secret access key"),
        ("AWS_SESSION_TOKEN", "AWS session token"),
    ],
)
async def test_aws_credentials_with_a_control_character_inside_are_refused_unshown(
    variable: str, what: str
):
    keys = {**KEYS, "AWS_SESSION_TOKEN": "session-token-0123456789"}
    keys[variable] = "leaked-\x01-credential-0123456789"
    async with serve_sse([]) as server:
        registry = ProviderRegistry()
        try:
            message = await complete(at_url(NOVA, server.url), ctx(), registry=registry, env=keys)
        finally:
            await registry.aclose()
    assert server.requests == []
    assert message.error_message is not None
    assert message.error_message.startswith(
        f"The {what} for provider 'amazon-bedrock' contains a control character (U+0001) "
        f"at position 7; a key is visible ASCII without spaces"
    )
    assert variable in message.error_message
    assert "leaked" not in message.error_message
    assert "credential" not in message.error_message


async def test_end_to_end_http_error_and_retry():
    throttled = SSEReply(
        b'{"message":"Rate exceeded"}',
        status=429,
        headers={"x-amzn-errortype": "ThrottlingException", "retry-after": "0"},
    )
    async with serve_sse(
        [throttled, SSEReply(TEXT_BODY, headers={"content-type": es.CONTENT_TYPE})]
    ) as server:
        registry = ProviderRegistry()
        try:
            failed = await complete(at_url(NOVA, server.url), ctx(), registry=registry, env=KEYS)
            server.add(throttled, SSEReply(TEXT_BODY, headers={"content-type": es.CONTENT_TYPE}))
            retried = await complete(
                at_url(NOVA, server.url), ctx(), registry=registry, env=KEYS, max_retries=1
            )
        finally:
            await registry.aclose()
    assert failed.error_message == "Throttling error: Rate exceeded"
    assert retried.content == [TextContent(text="Héllo wörld 🌍")]


async def test_end_to_end_abort_mid_stream_closes_the_server_side_stream():
    controller = AbortController()
    registry = ProviderRegistry()
    seen: list[str] = []
    first = es.body(es.event("messageStart", {"role": "assistant"}), es.text_delta(0, "Hel"))
    with anyio.fail_after(10):
        async with serve_sse(
            [SSEReply([first], headers={"content-type": es.CONTENT_TYPE}, hold_open=True)]
        ) as server:
            try:
                async with open_stream(
                    at_url(NOVA, server.url),
                    ctx(),
                    registry=registry,
                    env=KEYS,
                    signal=controller.signal,
                ) as stream:
                    async for event in stream:
                        seen.append(event.type)
                        if event.type == "text_delta":
                            controller.abort()
                await server.wait_until(lambda s: s.client_closed == 1)
            finally:
                await registry.aclose()
            await server.wait_until(lambda s: s.open_connections == 0)
    message = stream.result()
    assert seen[-1] == "error"
    assert message.stop_reason == "aborted"
    assert message.content == [TextContent(text="Hel")]
    assert message.diagnostics is None


async def test_provider_stream_events_are_the_frames_as_the_sdk_gives_them():
    seen: list[Any] = []
    events, _ = await replay(
        NOVA,
        reply(TEXT_BODY),
        on_provider_stream_event=lambda event, model: seen.append(event),
    )
    assert events[-1].type == "done"
    assert seen == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Héllo "}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "wörld 🌍"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {
            "metadata": {
                "usage": {"inputTokens": 12, "outputTokens": 4, "totalTokens": 16},
                "metrics": {"latencyMs": 12},
            }
        },
    ]
