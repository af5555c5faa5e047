"""The nesting limit of JSON decoding: ``from_json`` / ``messages_from_json`` refuse
documents deeper than ``MAX_JSON_DEPTH`` with ``msgspec.DecodeError``, never
``RecursionError``; the depth is counted outside strings only."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_trio.ai import from_json, messages_from_json
from pi_trio.ai._json._depth import check_json_depth, decode_checked, json_depth
from pi_trio.ai.json import MAX_JSON_DEPTH


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _reference_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_reference_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_reference_depth(v) for v in value.values()), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=4), inner, max_size=3)
    ),
    max_leaves=30,
)


@given(_JSON)
def test_json_depth_counts_brackets_outside_strings_only(value: Any) -> None:
    text = json.dumps(value)
    assert json_depth(text) == _reference_depth(value)
    assert json_depth(text.encode()) == _reference_depth(value)


def _message_with_arguments(arguments: str) -> str:
    return (
        '{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"x",'
        f'"arguments":{{"a":{arguments}}}}}],"api":"x","provider":"p","model":"m",'
        '"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,'
        '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},'
        '"stopReason":"stop","timestamp":1}'
    )


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 4, MAX_JSON_DEPTH - 5])
def test_json_at_the_depth_limit_decodes(depth: int) -> None:
    # the message, its content list, the block and the arguments object add 4 levels
    message = from_json(_message_with_arguments(_nested(depth)))
    assert message.role == "assistant"
    assert len(messages_from_json(f"[{_message_with_arguments(_nested(depth - 1))}]")) == 1


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH - 3, 1_000, 100_000])
def test_deeper_json_is_a_decode_error_not_a_recursion_error(depth: int) -> None:
    deep = _message_with_arguments(_nested(depth))
    with pytest.raises(msgspec.DecodeError, match=r"^JSON nested \d+ levels deep; .*256"):
        from_json(deep)
    with pytest.raises(msgspec.DecodeError, match=r"MAX_JSON_DEPTH"):
        messages_from_json(f"[{deep}]".encode())


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 5000 + '\\"{' * 100, "t": "]]]"})
    check_json_depth(text)
    assert json_depth(text) == 1


def test_a_recursion_error_of_a_shallow_document_is_a_decode_error() -> None:
    def decode(data: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    with pytest.raises(msgspec.DecodeError, match=r"too deeply for the remaining"):
        decode_checked(decode, b"[1]")
