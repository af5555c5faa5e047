"""Streamed tool-call arguments: the incremental parser with the original's (1.6) rules and
costs, and the one parse of the finished text (`parse_tool_call_arguments`).

Expected values marked "1.6" were produced by the original's ``StreamingJsonParser`` and
``parseToolCallArguments``; tests/fixtures/pi16/streaming_json.json holds a larger corpus.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import ToolCall, parse_streaming_json
from pi_trio.ai.json import StreamingJsonParser, ToolCallArguments, parse_tool_call_arguments
from pi_trio.ai.providers import MessageBuilder, MessageFold

from .helpers import MOCK_MODEL

TAB = "\t"


def feed_all(text: str, size: int) -> StreamingJsonParser:
    parser = StreamingJsonParser()
    for start in range(0, len(text), size):
        parser.feed(text[start : start + size])
    return parser


def snapshots(chunks: list[str]) -> list[dict[str, Any]]:
    parser = StreamingJsonParser()
    seen = []
    for chunk in chunks:
        parser.feed(chunk)
        seen.append(parser.value())
    return seen


def test_a_fresh_parser_is_empty() -> None:
    parser = StreamingJsonParser()
    assert (parser.text, parser.value(), parser.final()) == ("", {}, {})


def test_the_snapshot_is_the_same_object_until_the_value_changes() -> None:
    parser = StreamingJsonParser()
    parser.feed('{"a":[1,')
    first = parser.value()
    assert parser.value() is first
    assert first == {"a": [1]}
    parser.feed("  ")
    assert parser.value() is first
    parser.feed("2")
    assert parser.value() is not first
    assert parser.value() == {"a": [1, 2]}


def test_snapshots_never_change_and_share_completed_containers() -> None:
    parser = StreamingJsonParser()
    parser.feed('{"a":{"b":[1]},"c":"x')
    first = parser.value()
    parser.feed('yz","d":[2')
    second = parser.value()
    assert first == {"a": {"b": [1]}, "c": "x"}
    assert second == {"a": {"b": [1]}, "c": "xyz", "d": [2]}
    assert second["a"] is first["a"]  # completed: shared, not copied
    parser.feed(",3]}")
    third = parser.value()
    assert second == {"a": {"b": [1]}, "c": "xyz", "d": [2]}
    assert third == {"a": {"b": [1]}, "c": "xyz", "d": [2, 3]}
    assert third["d"] is not second["d"]  # was open: copied


def test_text_is_everything_fed() -> None:
    parser = feed_all('{"a": "b"}', 3)
    assert parser.text == '{"a": "b"}'
    parser.feed(" ")
    assert parser.text == '{"a": "b"} '


def test_escapes_and_surrogate_pairs_split_across_chunks() -> None:
    text = '{"a":"caf\\u00e9 \\ud83d\\ude00 \\n\\"q\\""}'
    for size in range(1, 8):
        parser = feed_all(text, size)
        assert parser.value() == parser.final() == {"a": 'café \U0001f600 \n"q"'}


def test_an_unfinished_escape_or_surrogate_pair_is_held_back() -> None:
    assert snapshots(['{"a":"x\\u00', "e9", "\\ud83d", "\\ude00", "\\ud83d!"]) == [
        {"a": "x"},
        {"a": "xé"},
        {"a": "xé"},
        {"a": "xé\U0001f600"},
        {"a": "xé\U0001f600\ufffd!"},
    ]


def test_partial_values_follow_the_stream() -> None:
    assert snapshots(['{"path": "a.t', 'xt", "n": 1', "2, ", '"flag": t', "rue}"]) == [
        {"path": "a.t"},
        {"path": "a.txt", "n": 1},
        {"path": "a.txt", "n": 12},
        {"path": "a.txt", "n": 12, "flag": True},
        {"path": "a.txt", "n": 12, "flag": True},
    ]


def test_streamed_invalid_escapes_and_raw_tabs_stay_as_text() -> None:
    assert snapshots(['{"path":"A\\', 'H","text":"col1' + TAB, 'col2"}']) == [
        {"path": "A"},
        {"path": "A\\H", "text": "col1\t"},
        {"path": "A\\H", "text": "col1\tcol2"},
    ]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [  # 1.6
        (['{"a":1 "b":2}'], [{"a": 1, "b": 2}]),
        (['{"a" 1}'], [{"a": 1}]),
        (['{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1}'], [{"d": 1}]),
        (['}{"a":1]'], [{"a": 1}]),
        (['{"a":[1}, "b":2}'], [{"a": [1], "b": 2}]),
        (['{"a":1} {"b":2}'], [{"a": 1}]),
        (['{1, "a": 2, [3], "b": {"c": true}}'], [{"a": 2, "b": {"c": True}}]),
        (['{"a": 12.', "5"], [{}, {"a": 12.5}]),
        (['{"a":1,"b":tx'], [{"a": 1}]),
        (['{"a": "x" "y", "b": 1}'], [{"a": "x", "b": 1}]),
        (['{"a":,"b":2}'], [{"b": 2}]),
        (['{"a": -'], [{}]),
        (['{"a": 1e'], [{"a": 1}]),
        (['{"a": nul'], [{"a": None}]),
        (['[{"a":1}]'], [{}]),
    ],
)
def test_malformed_text_is_read_as_the_original_reads_it(
    chunks: list[str], expected: list[dict[str, Any]]
) -> None:
    assert snapshots(chunks) == expected


def test_feeding_something_other_than_a_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="takes a str chunk, got bytes"):
        StreamingJsonParser().feed(b"{")  # type: ignore[arg-type]


@pytest.mark.parametrize("mib", [1, 4])
def test_megabyte_arguments_stream_in_small_chunks(mib: int) -> None:
    content = ('line "one"\twith \\ escapes é 😀\n' * (mib << 16))[: mib << 20]
    expected = {"path": "big.txt", "content": content, "mode": [1, 2.5, None, True]}
    text = json.dumps(expected)
    parser = feed_all(text, 64)
    assert parser.value() == parser.final() == expected
    assert len(parser.value()["content"]) == mib << 20


def test_reading_after_every_chunk_shows_a_preview_that_lags_a_few_percent_at_most() -> None:
    text = '{"content": "' + "x" * (2 << 20) + '"}'
    parser = StreamingJsonParser()
    fresh = 0
    previous = None
    for start in range(0, len(text), 64):
        parser.feed(text[start : start + 64])
        value = parser.value()
        if value is not previous:
            fresh += 1
            previous = value
        shown = len(value.get("content", ""))
        assert shown >= (start - 13) * 0.97 - 1024
    assert parser.value() == {"content": "x" * (2 << 20)}
    # fresh copies of the growing string get rarer as it grows: far fewer than the chunks
    assert fresh < len(text) // 64 // 10


def test_a_large_open_array_previews_with_a_bounded_lag() -> None:
    parser = StreamingJsonParser()
    parser.feed('{"items": [')
    for index in range(20_000):
        parser.feed(f"{index},")
        shown = len(parser.value().get("items", []))
        assert shown >= index * 0.9 - 64
    parser.feed("0]}")
    assert len(parser.value()["items"]) == 20_001


# -- properties


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=5)
PROPERTY_SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# The original shows no value for a number that ends in its decimal point ("12."), where
# the one-shot parse keeps the whole part.
_OPEN_FRACTION = re.compile(r"-?[0-9]+\.$")


def one_shot(prefix: str) -> dict[str, Any]:
    return parse_streaming_json(_OPEN_FRACTION.sub("", prefix))


@PROPERTY_SETTINGS
@given(json_objects, st.booleans(), st.lists(st.integers(min_value=0), max_size=8))
def test_streamed_pieces_match_the_one_shot_parse_on_the_way(
    value: dict[str, Any], ascii_only: bool, cuts: list[int]
) -> None:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {len(text)})
    parser = StreamingJsonParser()
    start = 0
    for point in points:
        parser.feed(text[start:point])
        start = point
        assert parser.value() == one_shot(text[:point])
    assert parser.final() == parser.value() == value


@settings(PROPERTY_SETTINGS, max_examples=40)
@given(json_objects)
def test_every_prefix_matches_the_one_shot_parse(value: dict[str, Any]) -> None:
    text = json.dumps(value, ensure_ascii=True)
    parser = StreamingJsonParser()
    for index, char in enumerate(text, 1):
        parser.feed(char)
        assert parser.value() == one_shot(text[:index])
    assert parser.final() == value


@PROPERTY_SETTINGS
@given(st.text(alphabet='{}[]":,\\ \t\nntrufalseNIy-0123456789.eE\ud83d\x01', max_size=40))
def test_arbitrary_text_never_raises_and_always_gives_an_encodable_dict(text: str) -> None:
    parser = feed_all(text, 3)
    for parsed in (parser.value(), parser.final()):
        assert type(parsed) is dict
        msgspec.json.encode(parsed)


# -- parse_tool_call_arguments


def test_blank_text_is_no_arguments() -> None:
    assert parse_tool_call_arguments("") == ToolCallArguments({}, None)
    assert parse_tool_call_arguments(" \n") == ({}, None)
    assert parse_tool_call_arguments(None) == ({}, None)


def test_an_object_parses_whole() -> None:
    assert parse_tool_call_arguments('{"a": [1, {"b": null}]}') == ({"a": [1, {"b": None}]}, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [  # 1.6 (Node 20's JSON.parse)
        ('{"a": ', "Unexpected end of JSON input"),
        ('{"a": "abc', "Unterminated string in JSON at position 10"),
        ('{"a":1', "Expected ',' or '}' after property value in JSON at position 6"),
        ('{"a": }', 'Unexpected token \'}\', "{"a": }" is not valid JSON'),
        ('{"a":1}x', "Unexpected non-whitespace character after JSON at position 7"),
        ("{'a': 1}", "Expected property name or '}' in JSON at position 1"),
        ('{"a": 01}', "Unexpected number in JSON at position 7"),
        ('{"a": 1.}', "Unterminated fractional number in JSON at position 8"),
        ("[1]", "Tool arguments must be a JSON object"),
        ('"text"', "Tool arguments must be a JSON object"),
        (
            '{"path": "/tmp/x", "content": "hello world, this is long", "z": }',
            'Unexpected token \'}\', ..."ng", "z": }" is not valid JSON',
        ),
    ],
)
def test_text_that_is_not_an_object_gives_no_arguments_and_the_error(
    text: str, problem: str
) -> None:
    parsed = parse_tool_call_arguments(text)
    assert parsed.arguments == {}
    assert parsed.arguments_error == f"{problem}\n\nReceived arguments:\n{text}"


def test_raw_control_characters_and_invalid_escapes_are_repaired() -> None:
    assert parse_tool_call_arguments('{"a": "x\ty\\q"}') == ({"a": "x\ty\\q"}, None)


def test_a_lone_surrogate_escape_parses_as_the_replacement_character() -> None:
    assert parse_tool_call_arguments('{"a": "\\ud83d!"}') == ({"a": "\ufffd!"}, None)


# -- the builder: arguments at toolcall_end


def streamed_call(*deltas: str) -> tuple[MessageBuilder, MessageFold, int]:
    """A tool call whose argument text arrived as ``deltas``, applied as a stream would."""
    builder = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    fold.apply(builder.start())
    start = builder.toolcall_start("c1", "write")
    fold.apply(start)
    for delta in deltas:
        fold.apply(builder.toolcall_delta(start.content_index, delta))
    return builder, fold, start.content_index


def test_a_finished_tool_call_with_malformed_arguments_gets_arguments_error() -> None:
    builder, fold, index = streamed_call('{"path": "a.txt", "content": "trunc')
    assert builder.tool_call(index).arguments == {"path": "a.txt", "content": "trunc"}
    end = builder.toolcall_end(index)
    fold.apply(end)
    assert end.tool_call == ToolCall(
        id="c1",
        name="write",
        arguments={},
        arguments_error=(
            "Unterminated string in JSON at position 35\n\nReceived arguments:\n"
            '{"path": "a.txt", "content": "trunc'
        ),
    )
    assert builder.message.content[0] is end.tool_call


def test_a_finished_tool_call_with_good_arguments_has_no_error() -> None:
    builder, fold, index = streamed_call('{"a":', " 1}")
    end = builder.toolcall_end(index)
    fold.apply(end)
    assert (end.tool_call.arguments, end.tool_call.arguments_error) == ({"a": 1}, None)


def test_an_aborted_tool_call_keeps_what_parsed_without_an_error() -> None:
    builder, fold, _ = streamed_call('{"path": "a.txt", "content": "trunc')
    event = builder.error("Request was aborted", reason="aborted")
    fold.apply(event)
    [call] = event.error.content
    assert isinstance(call, ToolCall)
    assert (call.arguments, call.arguments_error) == ({"path": "a.txt", "content": "trunc"}, None)
