"""The fast structural check never accepts what jsonschema rejects."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_trio.ai._validation import _fast_check

scalar_types = st.sampled_from(["string", "number", "integer", "boolean", "null"])


def schemas(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(
        scalar_types.map(lambda t: {"type": t}),
        st.lists(st.text(max_size=3), min_size=1, max_size=3).map(
            lambda e: {"type": "string", "enum": e}
        ),
    )
    if depth == 0:
        return leaf
    inner = schemas(depth - 1)
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
    return st.one_of(leaf, objects, arrays)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from("abcd"), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=400, derandomize=True)
@given(schemas(), json_values)
def test_the_fast_check_accepts_only_values_jsonschema_accepts(
    schema: dict[str, Any], value: Any
) -> None:
    fast = _fast_check(schema)
    assert fast is not None
    if fast(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(value)


def test_the_fast_check_declines_schemas_it_does_not_understand() -> None:
    assert _fast_check({"type": "string", "format": "date"}) is None
    assert _fast_check({"type": ["string", "null"]}) is None
    assert _fast_check({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}) is None
    assert _fast_check({"anyOf": [{"type": "string"}]}) is None
