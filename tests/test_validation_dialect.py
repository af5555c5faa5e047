"""The original's dialect of JSON Schema, in the parts the differential test does not reach:
the stand-ins used without the ``ecma`` extra, exact ``multipleOf``, and coercion that a
recursive schema cannot send round forever."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import (
    Tool,
    ToolArgumentsError,
    validate_tool_arguments,
)
from pi_trio.ai._validation import _formats, _regex
from pi_trio.ai._validation._coerce import coerce
from pi_trio.ai._validation._dialect import is_multiple
from pi_trio.ai._validation._formats import FORMATS
from pi_trio.ai._validation._regex import regex_search

from .test_validation_pi16 import CASES, NEEDS_ECMA, _check


def tool(parameters: Any) -> Tool:
    return Tool(name="calc", description="test tool", parameters=parameters)


@pytest.fixture
def without_ecma(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if the ``ecma`` extra were not installed."""
    for loader in (_regex._regress, _formats._ada_url):
        loader.cache_clear()
    _regex._compiled.cache_clear()
    monkeypatch.setattr(_regex, "_regress", lambda: None)
    monkeypatch.setattr(_formats, "_ada_url", lambda: None)
    yield
    _regex._compiled.cache_clear()


def test_patterns_follow_javascript_with_the_ecma_extra() -> None:
    assert not regex_search("^[a-z]+$", "abc\n")  # $ ends the text
    assert not regex_search(r"^\d+$", "١٢٣")  # \d is ASCII
    assert regex_search(r"^\p{L}+$", "héllo")
    assert regex_search("a{", "a{")  # valid without the u flag only
    assert FORMATS["regex"]("(?<n>x)")
    assert not FORMATS["regex"]("(?i)a")


def test_without_the_ecma_extra_python_re_stands_in(
    without_ecma: None, caplog: pytest.LogCaptureFixture
) -> None:
    assert regex_search("^[a-z]+$", "abc")
    assert not regex_search("^[a-z]+$", "ABC")
    with caplog.at_level(logging.WARNING, logger="pi_trio"):
        assert regex_search(r"^\p{L}+$", "anything")  # not a Python pattern: not checked
        assert regex_search(r"^\p{L}+$", "anything else")
    assert len([r for r in caplog.records if "pi-trio[ecma]" in r.getMessage()]) == 1
    assert FORMATS["regex"]("(?i)a")
    assert FORMATS["regex"]("[[:alpha:]]")  # no FutureWarning (an error under -W error)


def test_without_the_ecma_extra_urls_are_read_by_urllib(without_ecma: None) -> None:
    assert FORMATS["url"]("https://example.com/a?b#c")
    assert FORMATS["url"]("mailto:a@b.c")
    assert not FORMATS["url"]("example.com")
    assert not FORMATS["url"]("http://exa mple.com")
    assert not FORMATS["url"]("http://[::1")
    assert FORMATS["iri-reference"]("/é")
    assert not FORMATS["iri"]("http://a b")


@pytest.mark.parametrize(
    ("value", "step", "expected"),
    [
        (0.0075, 0.0001, True),  # 74.99999999999999 in floating point
        (0.00075, 0.0001, False),
        (0.3, 0.1, True),
        (10, 3, False),
        (9, 3, True),
        (1e300, 1e-300, False),  # the quotient overflows; the remainder of floats decides
        (5, 0, False),
        (2**70, 2**68, True),
    ],
)
def test_multiple_of_is_exact_for_decimals(value: float, step: float, expected: bool) -> None:
    assert is_multiple(value, step) is expected


def test_a_recursive_schema_that_wraps_values_into_arrays_terminates() -> None:
    schema = {
        "$defs": {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}},
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/list"}},
    }
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool(schema), {"v": "x"})
    assert caught.value.errors[0][0].startswith("v.0")


def test_without_the_ecma_extra_only_javascript_patterns_differ_from_the_original(
    without_ecma: None,
) -> None:
    differences = [
        (case["group"], case["arguments"])
        for case in CASES
        if case["group"] not in NEEDS_ECMA and _check(case) is not None
    ]
    assert differences == []


# -- a value the schema accepts comes back unchanged (what a fast path that skips coercion
#    for valid values relies on), for schemas typed at every level


_TYPES = st.sampled_from(["string", "number", "integer", "boolean", "null"])


def _typed_schemas(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        _TYPES.map(lambda t: {"type": t}),
        st.lists(st.sampled_from(["a", "b", "1", "true", ""]), min_size=1, max_size=3).map(
            lambda e: {"type": "string", "enum": e}
        ),
        st.lists(_TYPES, min_size=2, max_size=3, unique=True).map(lambda t: {"type": t}),
    )
    if depth == 0:
        return leaf
    inner = _typed_schemas(depth - 1)
    objects = st.builds(
        lambda props, required, extra: {
            "type": "object",
            "properties": props,
            "required": [k for k in props if k in required],
            "additionalProperties": extra,
        },
        st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
        st.sets(st.sampled_from("abc")),
        st.booleans(),
    )
    arrays = inner.map(lambda items: {"type": "array", "items": items})
    unions = st.lists(inner, min_size=1, max_size=3).map(lambda branches: {"anyOf": branches})
    return st.one_of(leaf, objects, arrays, unions)


def _values_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "anyOf" in schema:
        return st.one_of([_values_for(branch) for branch in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if isinstance(kind, list):
        return st.one_of([_values_for({"type": t}) for t in kind])
    if kind == "object":
        properties = schema["properties"]
        required = {k: _values_for(properties[k]) for k in schema["required"]}
        optional = {k: _values_for(s) for k, s in properties.items() if k not in required}
        return st.fixed_dictionaries(required, optional=optional)
    if kind == "array":
        return st.lists(_values_for(schema["items"]), max_size=3)
    return {
        "string": st.sampled_from(["", "1", "true", "null", "a", "0x1"]),
        "number": st.one_of(st.integers(-3, 3), st.floats(-3, 3, allow_nan=False)),
        "integer": st.integers(-3, 3),
        "boolean": st.booleans(),
        "null": st.none(),
    }[kind]


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_coercion_leaves_a_value_the_schema_accepts_as_it_is(data: st.DataObject) -> None:
    schema = data.draw(_typed_schemas())
    value = data.draw(_values_for(schema))
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid(value)
    accepts = lambda node, v: validator.evolve(schema=node).is_valid(v)  # noqa: E731
    assert coerce(value, schema, accepts, lambda node: node) == (value, True)
    assert coerce(value, schema, accepts, lambda node: node)[0] is value
