"""The JSON model: round trips, the TypeScript runtime's exact format, and bad input.

``to_json`` / ``from_json`` / ``messages_to_json`` / ``messages_from_json`` write and read
the original runtime's JSON (camelCase keys, absent optional fields omitted, integer zero
costs as ``0``), so a transcript written by either side loads in the other.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import (
    AssistantMessage,
    Cost,
    ImageContent,
    Message,
    MessageDecodeError,
    MessageValidationError,
    Model,
    PiError,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    calculate_cost,
    from_json,
    messages_from_json,
    messages_to_json,
    to_json,
)
from pi_trio.ai.deferred import DeferredHandle
from pi_trio.ai.json import (
    extra_fields,
    messages_from_jsonl,
    messages_to_jsonl,
    sanitize_surrogates,
)
from pi_trio.ai.models import ModelCost
from pi_trio.ai.transcript import NestedToolCallRecord, NestedToolCalls, ToolRef

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- strategies

texts = st.text(max_size=20)  # no surrogates: JSON text is UTF-8
short_names = st.text(min_size=1, max_size=10)
timestamps = st.integers(min_value=0, max_value=2**53)
counts = st.integers(min_value=0, max_value=2**40)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(texts, children, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(texts, json_values, max_size=4)
dollars = st.integers(min_value=0, max_value=10**6) | st.floats(
    min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False
)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


costs = st.builds(
    Cost,
    input=dollars,
    output=dollars,
    cache_read=dollars,
    cache_write=dollars,
    total=dollars,
    total_from_provider=st.just(msgspec.UNSET) | st.booleans(),
)
usages = st.builds(
    Usage,
    input=counts,
    output=counts,
    cache_read=counts,
    cache_write=counts,
    cache_write_1h=st.just(msgspec.UNSET) | counts,
    reasoning=st.just(msgspec.UNSET) | counts,
    total_tokens=counts,
    cost=costs,
)
text_blocks = st.builds(TextContent, text=texts, text_signature=optional(texts))
thinking_blocks = st.builds(
    ThinkingContent,
    thinking=texts,
    thinking_signature=optional(texts),
    redacted=optional(st.booleans()),
)
image_blocks = st.builds(
    ImageContent,
    data=st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", max_size=24
    ),
    mime_type=st.sampled_from(["image/png", "image/jpeg", "image/gif", "image/webp"]),
)
tool_calls = st.builds(
    ToolCall,
    id=texts,
    name=texts,
    arguments=json_objects,
    thought_signature=optional(texts),
    namespace=optional(texts),
    arguments_error=optional(texts),
)
tools = st.builds(
    Tool,
    name=short_names,
    description=texts,
    parameters=json_objects,
    constrained_sampling=st.none() | st.just(False) | json_objects,
)
system_messages = st.builds(
    SystemMessage,
    content=texts | st.lists(text_blocks, max_size=3),
    sections=optional(st.dictionaries(texts, optional(texts), max_size=3)),
    tools_added=optional(st.lists(tools, max_size=2)),
    tools_removed=optional(st.lists(st.builds(ToolRef, name=short_names), max_size=2)),
    timestamp=timestamps,
)
user_messages = st.builds(
    UserMessage,
    content=texts | st.lists(text_blocks | image_blocks, max_size=3),
    timestamp=timestamps,
)
STOP_REASONS = ["stop", "length", "toolUse", "error", "aborted", "pending", "deferred"]
deferred_handles = st.builds(
    DeferredHandle,
    provider=short_names,
    model_id=short_names,
    api=short_names,
    id=texts,
    expires_at=optional(timestamps),
    poll_after_ms=optional(counts),
    data=st.just(msgspec.UNSET) | json_values,
)
nested_calls = st.builds(
    NestedToolCalls,
    calls=st.lists(
        st.builds(
            NestedToolCallRecord,
            id=texts,
            name=texts,
            arguments=optional(json_objects),
            arguments_bytes=optional(counts),
            status=st.sampled_from(["ok", "error", "unfinished"]),
            duration_ms=optional(counts),
            error=optional(texts),
        ),
        max_size=3,
    ),
    complete=st.booleans(),
)
assistant_messages = st.builds(
    AssistantMessage,
    content=st.lists(text_blocks | thinking_blocks | tool_calls, max_size=4),
    api=short_names,
    provider=short_names,
    model=short_names,
    response_model=optional(texts),
    response_id=optional(texts),
    provider_thinking_level=optional(texts),
    thinking_level=optional(st.sampled_from(["off", "minimal", "low", "medium", "high"])),
    diagnostics=optional(st.lists(json_values, max_size=2)),
    usage=usages,
    stop_reason=st.sampled_from(STOP_REASONS),
    error_message=optional(texts),
    raw_stop_reason=optional(texts),
    end_turn=optional(st.booleans()),
    deferred=optional(deferred_handles),
    timestamp=timestamps,
    duration_ms=optional(counts),
)
tool_result_messages = st.builds(
    ToolResultMessage,
    tool_call_id=texts,
    tool_name=texts,
    content=st.lists(text_blocks | image_blocks, max_size=3),
    details=st.just(msgspec.UNSET) | json_values,
    usage=optional(usages),
    nested_calls=optional(nested_calls),
    added_tool_names=optional(st.lists(short_names, max_size=3)),
    is_error=st.booleans(),
    duration_ms=optional(counts),
    timestamp=timestamps,
)
messages = system_messages | user_messages | assistant_messages | tool_result_messages


# --------------------------------------------------------------------------- round trips


@PROPERTY_SETTINGS
@given(messages)
def test_every_message_survives_a_round_trip_through_json(message: Message) -> None:
    wire = to_json(message)
    decoded = from_json(wire)
    assert decoded == message
    assert type(decoded) is type(message)
    assert to_json(decoded) == wire


@PROPERTY_SETTINGS
@given(st.lists(messages, max_size=5))
def test_every_transcript_survives_a_round_trip_through_json(transcript: list[Message]) -> None:
    wire = messages_to_json(transcript)
    decoded = messages_from_json(wire)
    assert decoded == transcript
    assert messages_to_json(decoded) == wire


@PROPERTY_SETTINGS
@given(text_blocks | thinking_blocks | image_blocks | tool_calls)
def test_every_content_block_survives_a_round_trip_through_json(block: Any) -> None:
    wire = to_json(block)
    decoded = from_json(wire, TextContent | ThinkingContent | ImageContent | ToolCall)
    assert decoded == block
    assert to_json(decoded) == wire


@PROPERTY_SETTINGS
@given(messages)
def test_the_wire_uses_camel_case_keys_and_omits_unset_optional_fields(message: Message) -> None:
    wire = json.loads(to_json(message))
    for field in msgspec.structs.fields(message):
        value = getattr(message, field.name)
        if value is None or value is msgspec.UNSET:
            assert field.encode_name not in wire
        else:
            assert field.encode_name in wire
    assert "_" not in "".join(wire)  # every key of a message is camelCase
    assert wire.get("role", wire.get("type")) == message.role


@PROPERTY_SETTINGS
@given(usages)
def test_usage_writes_the_optional_counts_only_when_set(usage: Usage) -> None:
    wire = json.loads(to_json(usage))
    assert ("cacheWrite1h" in wire) == (usage.cache_write_1h is not msgspec.UNSET)
    assert ("reasoning" in wire) == (usage.reasoning is not msgspec.UNSET)
    written = {"input", "output", "cacheRead", "cacheWrite", "total"}
    if usage.cost.total_from_provider is not msgspec.UNSET:
        written.add("totalFromProvider")
    assert set(wire["cost"]) == written
    assert from_json(to_json(usage), Usage) == usage


# --------------------------------------------------------------------------- TypeScript format

ZERO_USAGE = (
    '{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
)

# A transcript in the TypeScript runtime's exact format and key order.
TS_TRANSCRIPT = (
    "["
    '{"role":"system","content":"You are a careful assistant.","toolsAdded":[{"name":"calculate",'
    '"description":"Evaluate an arithmetic expression","parameters":{"type":"object","properties":'
    '{"expression":{"type":"string"}},"required":["expression"]}}],"timestamp":0},'
    '{"role":"user","content":"What is 123 * 456?","timestamp":1730000000000},'
    '{"role":"assistant","content":[{"type":"thinking","thinking":"Multiply them.",'
    '"thinkingSignature":"EqQBCkYIBRgCKkBsig=="},{"type":"thinking","thinking":'
    '"[Reasoning redacted]","thinkingSignature":"EmwKAhgBEgyRedacted","redacted":true},'
    '{"type":"text","text":"Let me calculate."},{"type":"toolCall","id":"toolu_01A",'
    '"name":"calculate","arguments":{"expression":"123 * 456"}}],"api":"anthropic-messages",'
    '"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":120,"output":45,'
    '"cacheRead":0,"cacheWrite":0,"totalTokens":165,"cost":{"input":0.00036,"output":0.000675,'
    '"cacheRead":0,"cacheWrite":0,"total":0.001035}},"stopReason":"toolUse",'
    '"timestamp":1730000000100},'
    '{"role":"toolResult","toolCallId":"toolu_01A","toolName":"calculate","content":'
    '[{"type":"text","text":"123 * 456 = 56088"}],"details":{"expression":"123 * 456",'
    '"result":56088},"isError":false,"durationMs":3,"timestamp":1730000000200},'
    '{"role":"user","content":[{"type":"text","text":"And this image?"},{"type":"image",'
    '"data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1730000000300},'
    '{"role":"assistant","content":[{"type":"text","text":"A red circle.","textSignature":'
    '"{\\"v\\":1,\\"id\\":\\"msg_1\\"}"},{"type":"toolCall","id":"call_1|fc_1","name":"calculate",'
    '"arguments":{},"thoughtSignature":"CiQB0e2Kb"}],"api":"openai-responses","provider":"openai",'
    '"model":"gpt-5","usage":' + ZERO_USAGE + ',"stopReason":"stop","timestamp":1730000000400},'
    '{"role":"toolResult","toolCallId":"call_1|fc_1","toolName":"calculate","content":[],'
    '"isError":true,"timestamp":1730000000500}'
    "]"
).encode()


def test_a_typescript_transcript_decodes_and_re_encodes_byte_for_byte() -> None:
    transcript = messages_from_json(TS_TRANSCRIPT)
    assert [m.role for m in transcript] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "toolResult",
    ]
    assistant = transcript[2]
    assert isinstance(assistant, AssistantMessage)
    thinking, redacted, text, call = assistant.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking_signature == "EqQBCkYIBRgCKkBsig=="
    assert isinstance(redacted, ThinkingContent)
    assert redacted.redacted is True
    assert text == TextContent(text="Let me calculate.")
    assert call == ToolCall(id="toolu_01A", name="calculate", arguments={"expression": "123 * 456"})
    assert assistant.usage.cost.total == 0.001035
    assert assistant.usage.cost.cache_read == 0
    assert type(assistant.usage.cost.cache_read) is int
    result = transcript[3]
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.is_error, result.duration_ms) == ("toolu_01A", False, 3)
    assert result.details == {"expression": "123 * 456", "result": 56088}
    assert messages_to_json(transcript) == TS_TRANSCRIPT
    for message, wire in zip(transcript, json.loads(TS_TRANSCRIPT), strict=True):
        assert json.loads(to_json(message)) == wire


# The TypeScript providers add responseId and errorMessage after the message was created,
# so they come last; pi_trio writes its fixed field order. The JSON is equal, not the bytes.
TS_FAILED_RESPONSE = (
    b'{"role":"assistant","content":[{"type":"text","text":"Partial answer"}],'
    b'"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":10,'
    b'"output":2,"cacheRead":1024,"cacheWrite":512,"cacheWrite1h":256,"reasoning":1,'
    b'"totalTokens":1548,"cost":{"input":0.0000125,"output":0.00002,"cacheRead":0.000128,'
    b'"cacheWrite":0.00096,"total":0.0011205}},"stopReason":"aborted","timestamp":1730000000600,'
    b'"responseId":"resp_0a1b2c","errorMessage":"Request was aborted"}'
)


def test_a_typescript_failed_response_decodes_and_re_encodes_to_equal_json() -> None:
    message = from_json(TS_FAILED_RESPONSE)
    assert isinstance(message, AssistantMessage)
    assert (message.stop_reason, message.response_id, message.error_message) == (
        "aborted",
        "resp_0a1b2c",
        "Request was aborted",
    )
    assert (message.usage.cache_write_1h, message.usage.reasoning) == (256, 1)
    assert json.loads(to_json(message)) == json.loads(TS_FAILED_RESPONSE)
    assert from_json(to_json(message)) == message


def test_integer_zero_costs_are_written_as_0_like_the_typescript_runtime() -> None:
    assert to_json(Usage()) == ZERO_USAGE.encode()
    free = Model(
        id="free",
        name="free",
        api="openai-completions",
        provider="local",
        base_url="http://localhost:0",
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=8192,
        max_tokens=1024,
    )
    usage = Usage(input=100, output=20, total_tokens=120)
    calculate_cost(free, usage)
    assert (
        b'"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,'
        b'"totalFromProvider":false}' in to_json(usage)
    )


def test_a_whole_dollar_cost_read_from_typescript_stays_an_integer() -> None:
    wire = b'{"input":1,"output":2.5,"cacheRead":0,"cacheWrite":0,"total":3.5}'
    cost = from_json(wire, Cost)
    assert type(cost.input) is int
    assert to_json(cost) == wire


def test_a_one_token_cost_is_written_as_javascript_writes_it() -> None:
    wire = b'{"input":0.000003,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.000003}'
    cost = from_json(wire, Cost)
    assert json.loads(to_json(cost)) == json.loads(wire)
    assert to_json(cost) == wire


def test_a_null_details_written_by_typescript_survives_a_round_trip() -> None:
    wire = (
        b'{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":null,'
        b'"isError":false,"timestamp":1}'
    )
    message = from_json(wire)
    assert isinstance(message, ToolResultMessage)
    assert message.details is None
    assert to_json(message) == wire
    absent = from_json(wire.replace(b'"details":null,', b""))
    assert isinstance(absent, ToolResultMessage)
    assert absent.details is msgspec.UNSET
    assert b"details" not in to_json(absent)


def test_details_none_when_building_a_result_means_no_details() -> None:
    built = ToolResultMessage(
        tool_call_id="c", tool_name="t", content=[], details=None, is_error=False, timestamp=1
    )
    assert built.details is msgspec.UNSET
    assert b"details" not in to_json(built)
    assert from_json(to_json(built)) == built


def test_costs_are_spelled_as_javascript_spells_them_and_the_value_is_kept() -> None:
    cost = Cost(input=3e-6, output=9.99e-6, cache_read=1e-6, cache_write=1e-5, total=2.3e-5)
    assert to_json(cost) == (
        b'{"input":0.000003,"output":0.00000999,"cacheRead":0.000001,"cacheWrite":0.00001,'
        b'"total":0.000023}'
    )
    assert cost.input == 3e-6
    assert type(cost.input) is float
    assert from_json(to_json(cost), Cost) == cost


# --------------------------------------------------------------------------- bad input


def validation_error(data: bytes) -> str:
    with pytest.raises(msgspec.ValidationError) as caught:
        from_json(data)
    return str(caught.value)


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b'{"role":"user"', b"not json", b'{"role":"user",}', b"[1,2", b"\xff\xfe"],
)
def test_malformed_json_is_a_decode_error(data: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        from_json(data)
    with pytest.raises(msgspec.DecodeError):
        messages_from_json(data)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b'{"role":"user","content":5,"timestamp":1}', "$.content"),
        (b'{"role":"user","content":"hi","timestamp":"yesterday"}', "$.timestamp"),
        (
            b'{"role":"user","content":[{"type":"text","text":7}],"timestamp":1}',
            "$.content[0].text",
        ),
        (
            b'{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],'
            b'"isError":"false","timestamp":1}',
            "$.isError",
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":'
            b'{"input":"3"},"stopReason":"stop","timestamp":1}',
            "$.usage.input",
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{},'
            b'"stopReason":"finished","timestamp":1}',
            "$.stopReason",
        ),
        (
            b'{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n",'
            b'"arguments":"{}"}],"api":"a","provider":"p","model":"m","usage":{},'
            b'"stopReason":"stop","timestamp":1}',
            "$.content[0].arguments",
        ),
    ],
)
def test_wrong_types_name_their_path(data: bytes, path: str) -> None:
    assert f"at `{path}`" in validation_error(data)


@pytest.mark.parametrize(
    ("data", "field", "path"),
    [
        (b'{"role":"user","content":"hi","timestamp":1,"mood":"happy"}', "mood", None),
        (
            b'{"role":"user","content":[{"type":"text","text":"hi","lang":"en"}],"timestamp":1}',
            "lang",
            "$.content[0]",
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":'
            b'{"inputTokens":1},"stopReason":"stop","timestamp":1}',
            "inputTokens",
            "$.usage",
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":'
            b'{"cost":{"tax":1}},"stopReason":"stop","timestamp":1}',
            "tax",
            "$.usage.cost",
        ),
        (
            b'{"role":"system","content":"s","toolsAdded":[{"name":"t","description":"d",'
            b'"parameters":{},"label":"T"}],"timestamp":0}',
            "label",
            "$.toolsAdded[0]",
        ),
        (
            b'{"role":"toolResult","tool_call_id":"c","toolCallId":"c","toolName":"t",'
            b'"content":[],"isError":false,"timestamp":1}',
            "tool_call_id",
            None,
        ),
    ],
)
def test_in_strict_mode_unknown_fields_are_refused_naming_the_field_and_path(
    data: bytes, field: str, path: str | None
) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        from_json(data, strict=True)
    text = str(caught.value)
    assert f"unknown field `{field}`" in text
    if path is not None:
        assert f"at `{path}`" in text
    with pytest.raises(msgspec.ValidationError, match=f"unknown field `{field}`"):
        messages_from_json(b"[" + data + b"]", strict=True)
    assert f'"{field}":'.encode() in to_json(from_json(data))  # kept by default


def test_an_unknown_block_type_is_refused_at_its_type() -> None:
    text = validation_error(b'{"role":"user","content":[{"type":"video","url":"x"}],"timestamp":1}')
    assert "'video'" in text
    assert "at `$.content[0].type`" in text
    text = validation_error(
        b'{"role":"assistant","content":[{"type":"image","data":"x","mimeType":"image/png"}],'
        b'"api":"a","provider":"p","model":"m","usage":{},"stopReason":"stop","timestamp":1}'
    )
    assert "'image'" in text
    assert "at `$.content[0].type`" in text


def test_an_unknown_role_is_refused_at_its_role() -> None:
    text = validation_error(b'{"role":"developer","content":"x","timestamp":1}')
    assert "'developer'" in text
    assert "at `$.role`" in text
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\[1\]\.role`"):
        messages_from_json(b'[{"role":"user","content":"x","timestamp":1},{"role":"bot"}]')


@pytest.mark.parametrize(
    ("data", "field", "path"),
    [
        (b'{"content":"hi","timestamp":1}', "role", None),
        (b'{"role":"user","timestamp":1}', "content", None),
        (b'{"role":"user","content":[{"type":"text"}],"timestamp":1}', "text", "$.content[0]"),
        (b'{"role":"user","content":[{"text":"hi"}],"timestamp":1}', "type", "$.content[0]"),
        (
            b'{"role":"assistant","content":[{"type":"toolCall","name":"n","arguments":{}}],'
            b'"api":"a","provider":"p","model":"m","usage":{},"stopReason":"stop","timestamp":1}',
            "id",
            "$.content[0]",
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m",'
            b'"stopReason":"stop","timestamp":1}',
            "usage",
            None,
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{},'
            b'"timestamp":1}',
            "stopReason",
            None,
        ),
        (
            b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{},'
            b'"stopReason":"stop"}',
            "timestamp",
            None,
        ),
        (
            b'{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"timestamp":1}',
            "isError",
            None,
        ),
        (
            b'{"role":"toolResult","toolName":"t","content":[],"isError":true,"timestamp":1}',
            "toolCallId",
            None,
        ),
        (
            b'{"role":"user","content":[{"type":"image","data":"x"}],"timestamp":1}',
            "mimeType",
            "$.content[0]",
        ),
    ],
)
def test_missing_required_fields_are_refused_naming_the_field_and_path(
    data: bytes, field: str, path: str | None
) -> None:
    text = validation_error(data)
    assert f"missing required field `{field}`" in text
    if path is not None:
        assert f"at `{path}`" in text


def test_a_message_without_a_timestamp_is_refused_naming_its_path() -> None:
    assert "missing required field `timestamp`" in validation_error(
        b'{"role":"user","content":"hi"}'
    )
    transcript = json.loads(TS_TRANSCRIPT)
    del transcript[3]["timestamp"]
    with pytest.raises(
        msgspec.ValidationError, match=r"missing required field `timestamp` - at `\$\[3\]`"
    ):
        messages_from_json(json.dumps(transcript))
    del transcript[0]["timestamp"]
    with pytest.raises(msgspec.ValidationError, match=r"`timestamp` - at `\$\[0\]`"):
        messages_from_json(json.dumps(transcript))
    # built in Python, a message still gets the current time
    assert UserMessage(content="hi").timestamp > 0


def test_a_bad_message_deep_in_a_transcript_names_its_index() -> None:
    transcript = json.loads(TS_TRANSCRIPT)
    transcript[5]["content"][1]["arguments"] = []
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\[5\]\.content\[1\]\.arguments`"):
        messages_from_json(json.dumps(transcript))


# --------------------------------------------------------------------------- surrogates


def user_json(escaped_text: str) -> bytes:
    return b'{"role":"user","content":"' + escaped_text.encode() + b'","timestamp":1}'


@pytest.mark.parametrize(
    ("escaped", "decoded"),
    [
        ("\\ud83d", "\ufffd"),
        ("a\\ud83db", "a\ufffdb"),
        ("\\udc00", "\ufffd"),
        ("\\udc00\\ud83d", "\ufffd\ufffd"),
        ("\\ud83d\\ud83d\\ude00", "\ufffd\U0001f600"),
        ("\\ud83d\\u0041", "\ufffdA"),
        ("\\ud83d\\ude00", "\U0001f600"),
        ("\\uD83D\\uDE00", "\U0001f600"),
        ("\\\\ud83d", "\\ud83d"),
        ("\\\\\\ud83d", "\\\ufffd"),
    ],
)
def test_lone_surrogate_escapes_decode_to_the_replacement_character(
    escaped: str, decoded: str
) -> None:
    message = from_json(user_json(escaped))
    assert message.content == decoded
    assert from_json(to_json(message)) == message
    [listed] = messages_from_json(b"[" + user_json(escaped) + b"]")
    assert listed.content == decoded
    assert from_json(user_json(escaped).decode(), UserMessage).content == decoded


def test_a_lone_surrogate_escape_keeps_the_other_errors_of_the_input() -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field `mood`"):
        from_json(b'{"role":"user","content":"\\ud83d","timestamp":1,"mood":1}', strict=True)
    kept = from_json(b'{"role":"user","content":"\\ud83d","timestamp":1,"mood":1}')
    assert (kept.content, extra_fields(kept)) == ("\ufffd", {"mood": 1})
    with pytest.raises(msgspec.ValidationError, match="Expected `int`"):
        from_json(b'{"role":"user","content":"\\ud83d","timestamp":"1","mood":1}')
    with pytest.raises(msgspec.DecodeError):
        from_json(b'{"role":"user","content":"\\ud83d","timestamp":1')


def test_a_str_holding_a_raw_surrogate_is_a_decode_error_that_says_what_to_do() -> None:
    with pytest.raises(
        msgspec.DecodeError,
        match=r"unpaired surrogate '\\ud83d' at index 27.*"
        r"sanitize_surrogates",
    ):
        from_json('{"role":"user","content":"a\ud83db","timestamp":1}')


def test_encoding_a_lone_surrogate_is_an_encode_error_naming_the_path() -> None:
    message = UserMessage(
        content=[TextContent(text="fine"), TextContent(text="cut emoji \ud83d")], timestamp=1
    )
    with pytest.raises(msgspec.EncodeError) as caught:
        to_json(message)
    text = str(caught.value)
    assert "unpaired surrogate '\\ud83d'" in text
    assert "$.content[1].text" in text
    assert "sanitize_surrogates" in text
    with pytest.raises(msgspec.EncodeError, match=r"\$\[1\]\.content\[1\]\.text"):
        messages_to_json([UserMessage(content="ok", timestamp=1), message])
    cleaned = UserMessage(
        content=[TextContent(text=sanitize_surrogates(b.text)) for b in message.content],
        timestamp=1,
    )
    assert from_json(to_json(cleaned)) == cleaned


def test_encoding_a_lone_surrogate_in_tool_arguments_names_the_key() -> None:
    call = ToolCall(id="c", name="n", arguments={"paths": ["ok", "bad\udc00"]})
    with pytest.raises(msgspec.EncodeError, match=r"\$\.arguments\['paths'\]\[1\]"):
        to_json(call)
    keyed = ToolCall(id="c", name="n", arguments={"k\udc00": 1})
    with pytest.raises(msgspec.EncodeError, match=r"the key 'k\\udc00'"):
        to_json(keyed)


# --------------------------------------------------------------------------- enormous strings

SIXTEEN_MIB = 16 * 1024 * 1024


def test_a_16_mib_text_survives_a_round_trip() -> None:
    text = ('0123456789abcdé\n"\\' * (SIXTEEN_MIB // 18))[:SIXTEEN_MIB]
    message = ToolResultMessage(
        tool_call_id="c",
        tool_name="read",
        content=[TextContent(text=text)],
        is_error=False,
        timestamp=1,
    )
    wire = to_json(message)
    assert len(wire) > SIXTEEN_MIB
    decoded = from_json(wire)
    assert decoded == message
    assert to_json(decoded) == wire


def test_16_mib_tool_arguments_survive_a_round_trip_in_a_transcript() -> None:
    call = ToolCall(id="c", name="write", arguments={"content": "x" * SIXTEEN_MIB})
    transcript: list[Message] = [
        UserMessage(content="write it", timestamp=1),
        AssistantMessage(
            content=[call],
            api="a",
            provider="p",
            model="m",
            usage=Usage(),
            stop_reason="toolUse",
            timestamp=2,
        ),
    ]
    wire = messages_to_json(transcript)
    assert messages_from_json(wire) == transcript


def test_decoding_errors_are_pi_errors_that_say_where() -> None:
    with pytest.raises(MessageValidationError, match=r"^Invalid value 'bot' - at `\$\[1\]\.role`$"):
        messages_from_json(b'[{"role":"user","content":"x","timestamp":1},{"role":"bot"}]')
    with pytest.raises(MessageDecodeError, match=r"^line 1, column 2: JSON is malformed"):
        from_json(b"{x")
    with pytest.raises(MessageValidationError, match=r"^mem, line 2: Expected `object`"):
        messages_from_jsonl(b'{"role":"user","content":"x","timestamp":1}\n5\n', source="mem")
    with pytest.raises(MessageValidationError) as caught:
        messages_from_jsonl(b"\n\n[]\n", source="chat.jsonl")
    error = caught.value
    assert isinstance(error, PiError)
    assert (error.source, error.line, error.column, error.path) == ("chat.jsonl", 3, None, "$")
    assert error.reason == "Expected `object`, got `array`"
    assert str(error) == "chat.jsonl, line 3: Expected `object`, got `array`"


def test_messages_to_jsonl_writes_one_line_per_message_that_reads_back() -> None:
    messages = [UserMessage(content="a", timestamp=1), UserMessage(content="b\nc", timestamp=2)]
    data = messages_to_jsonl(messages)
    assert data.count(b"\n") == 2
    assert to_json(messages_from_jsonl(data)) == to_json(messages)
    assert messages_from_jsonl(b"") == []
