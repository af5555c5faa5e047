"""Lossless JSON: fields pi_trio does not know are kept in place, ``exact=True`` keeps the
key order of known fields too, and ``strict=True`` refuses unknown fields.

A newer line of the original adds fields; a transcript it wrote must load in pi_trio and
re-encode with those fields unchanged and where they were.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    from_json,
    messages_from_json,
    messages_to_json,
    to_json,
)
from pi_trio.ai._json._jsnum import js_number_text
from pi_trio.ai.json import extra_fields

from .test_json_model import TS_TRANSCRIPT, messages

ZERO_COST = '{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}'
USAGE = (
    '{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":' + ZERO_COST + "}"
)

# Unknown fields on every kind of object, at the start, in the middle and at the end.
FUTURE_TRANSCRIPT = (
    b"["
    b'{"role":"system","content":"s","toolsAdded":[{"name":"t","description":"d","parameters":'
    b'{"type":"object"},"label":"T","strictness":{"level":2}}],"timestamp":0,"origin":"host"},'
    b'{"v":2,"role":"user","content":[{"type":"text","text":"hi","lang":"en"},{"type":"image",'
    b'"data":"AA==","mimeType":"image/png","alt":null}],"timestamp":1},'
    b'{"role":"assistant","content":[{"type":"thinking","thinking":"t","budget":[1,2.5,"x"]},'
    b'{"type":"toolCall","id":"c1","name":"t","arguments":{"b":1,"a":{"z":null}},"risk":0.5}],'
    b'"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,'
    b'"output":2,"cacheRead":0,"cacheWrite":0,"serviceTier":"flex","totalTokens":3,"cost":'
    b'{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"totalFromProvider":false,'
    b'"currency":"USD"}},"stopReason":"toolUse","timestamp":2,"responseId":"r1","durationMs":5,'
    b'"thinkingLevel":"high","trace":{"spans":[{"id":"s1"}]}},'
    b'{"role":"toolResult","toolCallId":"c1","toolName":"t","content":[{"type":"text","text":'
    b'"ok"}],"details":{"k":1},"nestedCalls":{"calls":[{"id":"n1","name":"u","arguments":{},'
    b'"status":"ok","durationMs":1,"attempt":3}],"complete":true,"dropped":0},"isError":false,'
    b'"durationMs":4,"timestamp":3,"replayed":true}'
    b"]"
)


def test_a_transcript_from_a_newer_line_keeps_its_unknown_fields_in_place() -> None:
    transcript = messages_from_json(FUTURE_TRANSCRIPT)
    assert messages_to_json(transcript) == FUTURE_TRANSCRIPT
    system, user, assistant, result = transcript
    assert extra_fields(system) == {"origin": "host"}
    assert extra_fields(user) == {"v": 2}
    assert isinstance(user.content, list)
    assert extra_fields(user.content[1]) == {"alt": None}
    assert isinstance(assistant, AssistantMessage)
    assert extra_fields(assistant) == {"trace": {"spans": [{"id": "s1"}]}}
    assert extra_fields(assistant.usage) == {"serviceTier": "flex"}
    assert extra_fields(assistant.usage.cost) == {"currency": "USD"}
    assert extra_fields(assistant.content[1]) == {"risk": 0.5}
    assert isinstance(result, ToolResultMessage)
    assert result.nested_calls is not None
    assert extra_fields(result.nested_calls) == {"dropped": 0}
    assert extra_fields(result.nested_calls.calls[0]) == {"attempt": 3}
    # the known fields read as usual
    assert (assistant.response_id, assistant.duration_ms, assistant.thinking_level) == (
        "r1",
        5,
        "high",
    )


def test_structs_with_unknown_fields_equal_the_plain_structs_with_the_same_fields() -> None:
    kept = from_json(b'{"role":"user","content":"hi","timestamp":1,"mood":"happy"}')
    plain = UserMessage(content="hi", timestamp=1)
    other = UserMessage(content="ho", timestamp=1)
    # both operators, both ways (``!=`` and a reflected ``==`` take other paths than ``==``)
    assert (kept == plain, plain == kept, kept != plain, plain != kept) == (
        True,
        True,
        False,
        False,
    )
    assert (kept == other, other == kept, kept != other, other != kept) == (
        False,
        False,
        True,
        True,
    )
    assert isinstance(kept, UserMessage)
    assert repr(kept) == repr(plain)
    assert extra_fields(plain) == {}


def test_changing_known_fields_keeps_the_unknown_ones_and_the_order() -> None:
    [_, _, assistant, _] = messages_from_json(FUTURE_TRANSCRIPT)
    assert isinstance(assistant, AssistantMessage)
    assistant.response_id = "r2"  # changed in place
    assistant.duration_ms = None  # removed
    assistant.error_message = "late"  # set: takes its place among its neighbours
    wire = json.loads(to_json(assistant), object_pairs_hook=list)
    keys = [key for key, _ in wire]
    assert keys == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "errorMessage",
        "timestamp",
        "responseId",
        "thinkingLevel",
        "trace",
    ]
    assert dict(wire)["responseId"] == "r2"


@pytest.mark.parametrize(
    "clone",
    [copy.copy, copy.deepcopy, lambda value: pickle.loads(pickle.dumps(value))],
    ids=["copy", "deepcopy", "pickle"],
)
def test_copies_keep_the_unknown_fields(clone: Any) -> None:
    transcript = messages_from_json(FUTURE_TRANSCRIPT)
    assert messages_to_json([clone(message) for message in transcript]) == FUTURE_TRANSCRIPT


def test_msgspec_replace_gives_a_copy_without_the_unknown_fields() -> None:
    kept = from_json(b'{"role":"user","content":"hi","mood":"happy","timestamp":1}')
    plain = msgspec.structs.replace(kept, content="ho")
    assert to_json(plain) == b'{"role":"user","content":"ho","timestamp":1}'
    assert to_json(kept) == b'{"role":"user","content":"hi","mood":"happy","timestamp":1}'


def test_unknown_fields_in_events_models_and_single_blocks_are_kept() -> None:
    event = (
        b'{"type":"toolcall_end","contentIndex":0,"toolCall":{"type":"toolCall","id":"c",'
        b'"name":"t","arguments":{},"argumentsError":"bad","risk":1},"partial":{"role":'
        b'"assistant","content":[],"api":"a","provider":"p","model":"m","usage":'
        + USAGE.encode()
        + b',"stopReason":"pending","timestamp":1,"futureFlag":true}}'
    )
    decoded = from_json(event, AssistantMessageEvent)
    assert decoded.type == "toolcall_end"
    assert to_json(decoded) == event
    block = b'{"type":"toolCall","id":"c","name":"t","arguments":{"x":1},"risk":1}'
    assert to_json(from_json(block, TextContent | ToolCall)) == block
    model = (
        b'{"id":"m","name":"M","api":"openai-completions","provider":"p","baseUrl":"http://x",'
        b'"reasoning":false,"input":["text"],"futureLimits":{"maxImages":4},"cost":{"input":1,'
        b'"output":2,"cacheRead":0,"cacheWrite":0,"futureRate":3},"contextWindow":8,'
        b'"maxTokens":4}'
    )
    assert to_json(from_json(model, Model)) == model


def test_the_slow_path_still_names_wrong_types_and_missing_timestamps() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$\[1\]"):
        messages_from_json(
            b'[{"role":"user","content":"a","timestamp":1,"mood":1},'
            b'{"role":"user","content":"b","timestamp":"2"}]'
        )
    with pytest.raises(msgspec.ValidationError, match=r"`timestamp` - at `\$\[1\]`"):
        messages_from_json(
            b'[{"role":"user","content":"a","timestamp":1,"mood":1},{"role":"user","content":"b"}]'
        )
    with pytest.raises(msgspec.ValidationError, match=r"'video'.*at `\$\.content\[0\]\.type`"):
        from_json(b'{"role":"user","content":[{"type":"video"}],"timestamp":1,"mood":1}')


# The original's providers add responseId and errorMessage after the message was built.
TS_ABORTED = (
    b'{"role":"assistant","content":[{"type":"text","text":"Partial"}],"api":"openai-responses",'
    b'"provider":"openai","model":"gpt-5","usage":' + USAGE.encode() + b',"stopReason":"aborted",'
    b'"timestamp":1730000000600,"responseId":"resp_1","errorMessage":"Request was aborted",'
    b'"durationMs":812,"thinkingLevel":"off"}'
)


def test_exact_mode_keeps_the_order_of_known_fields() -> None:
    canonical = from_json(TS_ABORTED)
    assert json.loads(to_json(canonical)) == json.loads(TS_ABORTED)
    assert to_json(canonical) != TS_ABORTED  # known fields in pi_trio's order
    exact = from_json(TS_ABORTED, exact=True)
    assert exact == canonical
    assert to_json(exact) == TS_ABORTED
    assert messages_to_json(messages_from_json(b"[" + TS_ABORTED + b"]", exact=True)) == (
        b"[" + TS_ABORTED + b"]"
    )


def test_exact_mode_keeps_an_explicit_null_of_an_optional_field() -> None:
    wire = (
        b'{"role":"user","content":[{"type":"text","text":"a","textSignature":null}],"timestamp":1}'
    )
    assert to_json(from_json(wire)) != wire
    assert to_json(from_json(wire, exact=True)) == wire


def test_exact_mode_gives_plain_structs_for_json_in_pi_trios_own_order() -> None:
    transcript = messages_from_json(TS_TRANSCRIPT, exact=True)
    assert all(not extra_fields(m) for m in transcript)
    assert [type(m) for m in transcript] == [type(m) for m in messages_from_json(TS_TRANSCRIPT)]


def test_exact_mode_keeps_javascripts_spelling_of_numbers_in_free_form_values() -> None:
    arguments = (
        b'{"small":0.000003,"neg":-0.0000095,"big":1e+21,"huge":-1.5e+300,"plain":0.1,'
        b'"tiny":1e-7,"s":"0.000003 e+ \\" 3e-6","n":[0.00001,2]}'
    )
    wire = (
        b'{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"t","arguments":'
        + arguments
        + b'}],"api":"a","provider":"p","model":"m","usage":'
        + USAGE.encode()
        + b',"stopReason":"toolUse","timestamp":1}'
    )
    message = from_json(wire, exact=True)
    assert to_json(message) == wire
    assert isinstance(message, AssistantMessage)
    call = message.content[0]
    assert isinstance(call, ToolCall)
    assert call.arguments["small"] == 3e-6
    # a value changed or added since decoding is written in the same spelling
    call.arguments["added"] = 2e-6
    assert to_json(message) == wire.replace(b"2]}}]", b'2],"added":0.000002}}]')
    for clone in (copy.deepcopy, lambda value: pickle.loads(pickle.dumps(value))):
        assert to_json(clone(message)) == to_json(message)
    # without exact=True: the same JSON, msgspec's spelling
    plain = to_json(from_json(wire))
    assert b'"small":3e-6' in plain
    assert b'"big":1e21' in plain
    assert json.loads(plain) == json.loads(wire)


def test_strict_mode_refuses_what_the_default_keeps() -> None:
    with pytest.raises(
        msgspec.ValidationError, match=r"unknown field `label` - at `\$\[0\]\.toolsAdded\[0\]`"
    ):
        messages_from_json(FUTURE_TRANSCRIPT, strict=True)


# --------------------------------------------------------------------------- properties


def _insert_unknown_fields(value: Any, rng: random.Random) -> Any:
    """``value`` (generic JSON) with a new string field at a random place of each object."""
    if isinstance(value, list):
        return [_insert_unknown_fields(item, rng) for item in value]
    if not isinstance(value, dict):
        return value
    items = [(key, _insert_unknown_fields(item, rng)) for key, item in value.items()]
    name = f"future{rng.randrange(1000)}"
    if name not in value:
        items.insert(rng.randrange(len(items) + 1), (name, f"v{rng.randrange(10)}"))
    return dict(items)


def _pairs(data: bytes) -> Any:
    return json.loads(data, object_pairs_hook=lambda pairs: pairs)


def _without_future(pairs: Any) -> Any:
    if isinstance(pairs, list):
        return [
            _without_future(item)
            for item in pairs
            if not (isinstance(item, tuple) and item[0].startswith("future"))
        ]
    if isinstance(pairs, tuple):
        return (pairs[0], _without_future(pairs[1]))
    return pairs


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(messages, max_size=4), st.integers(min_value=0, max_value=2**32))
def test_unknown_fields_anywhere_survive_a_round_trip_in_place(
    transcript: list[Message], seed: int
) -> None:
    wire = messages_to_json(transcript)
    generic = msgspec.json.decode(wire)
    future = msgspec.json.encode(_insert_unknown_fields(generic, random.Random(seed)))
    for decoded in (messages_from_json(future), messages_from_json(future, exact=True)):
        out = messages_to_json(decoded)
        assert _pairs(out) == _pairs(future)  # every key kept, in place
        assert _without_future(_pairs(out)) == _pairs(wire)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=8))
def test_any_float_spelled_as_javascript_spells_it_comes_back_the_same(
    numbers: list[float],
) -> None:
    details = "[" + ",".join(js_number_text(n) for n in numbers) + "]"
    wire = (
        '{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":'
        + details
        + ',"isError":false,"timestamp":1}'
    ).encode()
    assert to_json(from_json(wire, exact=True)) == wire
