"""The lenient one-shot parse of tool-call arguments, as the original's ``parseStreamingJson``
(``src/utils/json-parse.ts``) and the JSON-repair test over it decide it."""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import parse_streaming_json
from pi_trio.ai._arguments._partial import MAX_DEPTH, copy_json
from pi_trio.ai.json import repair_json

TAB = "\t"


# -- parse_streaming_json: the original's examples and edge cases


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t "])
def test_missing_or_blank_text_is_an_empty_dict(text: str | None) -> None:
    assert parse_streaming_json(text) == {}


def test_conformance_examples_of_item_73() -> None:
    assert parse_streaming_json("") == {}
    assert parse_streaming_json('{"a":"b') == {"a": "b"}
    assert parse_streaming_json("garbage") == {}


def test_valid_json_parses_exactly() -> None:
    text = '{"a": [1, 2.5, -0.5e3, true, false, null], "b": {"c": "\\u00e9\\n"}, "d": ""}'
    assert parse_streaming_json(text) == json.loads(text)


@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "null", "42", "true", "[{", '"{"'])
def test_results_that_are_not_objects_become_empty_dicts(text: str) -> None:
    assert parse_streaming_json(text) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":"hel', {"a": "hel"}),
        ('{"a":"hello \\u12', {"a": "hello "}),
        ('{"a":"hello \\u', {"a": "hello "}),
        ('{"a":"x\\', {"a": "x"}),
        ('{"a":"x\\n', {"a": "x\n"}),
        ('{"a":123.', {"a": 123}),
        ('{"a":12', {"a": 12}),
        ('{"a":1.5e', {"a": 1.5}),
        ('{"a":1.5e+', {"a": 1.5}),
        ('{"a":-', {}),
        ('{"a":[1, 2,', {"a": [1, 2]}),
        ('{"a":[1, "tw', {"a": [1, "tw"]}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": 1, "b"', {"a": 1}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1,', {"a": 1}),
        ('{"a":nu', {"a": None}),
        ('{"a":n', {"a": None}),
        ('{"a":tr', {"a": True}),
        ('{"a":fa', {"a": False}),
        ('{"a":{', {"a": {}}),
        ('{"a":{"b":[1,{"c":', {"a": {"b": [1, {}]}}),
        ('{"a":[', {"a": []}),
        ("{", {}),
        ('  {"a" : 1 ,  "b" : [ true , ', {"a": 1, "b": [True]}),
    ],
)
def test_partial_text_keeps_what_is_complete(text: str, expected: dict[str, Any]) -> None:
    assert parse_streaming_json(text) == expected


def test_partial_nan_and_infinity_literals_complete() -> None:
    assert math.isnan(parse_streaming_json('{"a":Na')["a"])
    assert parse_streaming_json('{"a":Inf') == {"a": math.inf}
    assert parse_streaming_json('{"a":-Inf') == {"a": -math.inf}
    assert parse_streaming_json('{"a":-Infinity, "b": Infinity}') == {"a": -math.inf, "b": math.inf}
    assert math.isnan(parse_streaming_json('{"a": NaN}')["a"])


def test_upstream_example_invalid_escape_and_raw_tab_are_repaired() -> None:
    text = '{"path":"A\\H","text":"col1' + TAB + 'col2"}'
    assert parse_streaming_json(text) == {"path": "A\\H", "text": "col1\tcol2"}


def test_a_truncated_text_with_invalid_escapes_still_parses_partially() -> None:
    text = '{"path":"A\\H","text":"col1' + TAB + "co"
    assert parse_streaming_json(text) == {"path": "A\\H", "text": "col1\tco"}


@pytest.mark.parametrize(
    "text",
    [
        '{"a" 1}',
        '{"a":1,,"b":2}',
        '{"a":tx}',
        "{a:1}",
        '{"a":01}',
        '{"a":1.2.3}',
        '{"a":[1 2]}',
        '{"a":1]',
        '{"a":+1}',
        '{"a":.5}',
        '{"a":"x" "b"',
        "```json\n{}",
    ],
)
def test_structurally_malformed_text_gives_an_empty_dict(text: str) -> None:
    assert parse_streaming_json(text) == {}


def test_trailing_commas_before_a_closing_bracket_are_accepted() -> None:
    assert parse_streaming_json('{"a":[1,2,],}') == {"a": [1, 2]}
    assert parse_streaming_json('{"a":[1,,2]}') == {}
    assert parse_streaming_json('{,"a":1}') == {}


def test_text_after_a_complete_object_is_ignored() -> None:
    assert parse_streaming_json('{"a":1} trailing garbage') == {"a": 1}
    assert parse_streaming_json('{"a":1}{"b":2}') == {"a": 1}


def test_lone_surrogate_escapes_become_replacement_characters() -> None:
    assert parse_streaming_json('{"a":"\\ud83d"}') == {"a": "\ufffd"}
    assert parse_streaming_json('{"a":"x\\udc00y"}') == {"a": "x\ufffdy"}
    assert parse_streaming_json('{"a":"\\ud83d\\u0041"}') == {"a": "\ufffdA"}
    assert parse_streaming_json('{"a":"\\ud83d\\ud83d\\ude00"}') == {"a": "\ufffd\U0001f600"}
    assert parse_streaming_json('{"\\udc00":1}') == {"\ufffd": 1}


def test_surrogate_pair_escapes_decode_to_one_character() -> None:
    assert parse_streaming_json('{"a":"\\ud83d\\ude00"}') == {"a": "\U0001f600"}


def test_a_high_surrogate_at_the_end_of_partial_text_waits_for_its_pair() -> None:
    assert parse_streaming_json('{"a":"x\\ud83d') == {"a": "x"}
    assert parse_streaming_json('{"a":"x\\ud83d\\ude') == {"a": "x"}


def test_raw_surrogate_code_points_in_the_text_become_replacement_characters() -> None:
    assert parse_streaming_json('{"a":"x\ud83dy"}') == {"a": "x\ufffdy"}


def test_parsed_strings_can_always_be_encoded() -> None:
    for text in ['{"a":"\\ud83d"}', '{"\\udfff":"\\udbff"}', '{"a":"\ud800', '{"a":"\\ud83d\\"}']:
        msgspec.json.encode(parse_streaming_json(text))


def test_numbers_out_of_float_range_become_infinity() -> None:
    assert parse_streaming_json('{"a":1e400}') == {"a": math.inf}
    assert parse_streaming_json('{"a":-1e400,"b":1}') == {"a": -math.inf, "b": 1}


def test_very_long_integers_parse() -> None:
    digits = "9" * 6000
    value = parse_streaming_json('{"a":' + digits + "}")["a"]
    assert value == math.inf or value == int(digits)


def test_nesting_up_to_the_limit_parses_and_deeper_nesting_gives_an_empty_dict() -> None:
    allowed = '{"a":' + "[" * (MAX_DEPTH - 1)
    value: Any = parse_streaming_json(allowed)["a"]
    for _ in range(MAX_DEPTH - 2):
        value = value[0]
    assert value == []
    assert parse_streaming_json('{"a":' + "[" * MAX_DEPTH) == {}
    assert parse_streaming_json('{"a":' + "[" * 100_000) == {}
    assert parse_streaming_json("[" * 100_000 + "]" * 100_000) == {}


def test_enormous_strings_parse_whole_and_truncated() -> None:
    big = "x" * (4 << 20)
    assert parse_streaming_json(json.dumps({"a": big})) == {"a": big}
    assert parse_streaming_json('{"a":"' + big) == {"a": big}


def test_non_string_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="takes a str or None, got bytes"):
        parse_streaming_json(b"{}")  # type: ignore[arg-type]


# -- repair_json


def test_repair_leaves_valid_json_untouched() -> None:
    text = '{"a":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9","b":[1,2]}'
    assert repair_json(text) is text


def test_repair_escapes_raw_control_characters_inside_strings() -> None:
    raw = '{"a":"1\n2\t3\r4\b5\f6\x017\x1f"}'
    assert repair_json(raw) == '{"a":"1\\n2\\t3\\r4\\b5\\f6\\u00017\\u001f"}'
    assert json.loads(repair_json(raw)) == {"a": "1\n2\t3\r4\b5\f6\x017\x1f"}


def test_repair_doubles_backslashes_that_start_no_valid_escape() -> None:
    assert repair_json('{"a":"A\\H"}') == '{"a":"A\\\\H"}'
    assert repair_json('{"a":"\\u12x"}') == '{"a":"\\\\u12x"}'
    assert repair_json('{"a":"x\\') == '{"a":"x\\\\'
    assert repair_json('{"a":"\\\\H"}') == '{"a":"\\\\H"}'


def test_repair_leaves_text_outside_strings_alone() -> None:
    text = '{\n\t"a" :\x01 1}'
    assert repair_json(text) is text


# -- copy_json


def test_copy_json_copies_deep_nesting_without_recursion() -> None:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    copied = copy_json({"a": value})
    assert copied["a"] is not value
    assert copied["a"][0] is not value[0]


def test_copy_json_keeps_cycles() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    copied = copy_json(cycle)
    assert copied is not cycle
    assert copied["self"] is copied


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


@PROPERTY_SETTINGS
@given(st.text(alphabet='{}[]":,\\ \t\nntrufalseNIy-0123456789.eE\ud83d\x01', max_size=40))
def test_arbitrary_text_never_raises_and_always_gives_an_encodable_dict(text: str) -> None:
    result = parse_streaming_json(text)
    assert type(result) is dict
    msgspec.json.encode(result)
