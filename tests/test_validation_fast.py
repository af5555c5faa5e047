"""The validation fast path never accepts what jsonschema rejects, copies what it accepts
as ``copy_json`` would, and accepts the valid values of the schemas msgspec generates."""

from __future__ import annotations

import enum
import math
from typing import Annotated, Any, Literal

import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pi_trio.agent import tool
from pi_trio.ai import ToolArgumentsError, validate_tool_arguments
from pi_trio.ai._arguments._partial import copy_json
from pi_trio.ai._validation._dialect import compile_validator
from pi_trio.ai._validation._fast import DECLINED, compile_fast_path

NAMES = "abc"
FORMATS = ["date", "uuid", "email", "ipv4"]
PATTERNS = ["^a", "b$", "[0-9]", "^$", "^[ab]+$"]
MEMBERS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, 1.0, 1.5, -2.5]),
    st.sampled_from(["a", "b", "1", "true", ""]),
)


def _fast(schema: Any) -> Any:
    """The fast path and the validator it stands in for, compiled as the slow path
    compiles them (pi 1.6's dialect, formats and patterns)."""
    validator = compile_validator(schema)
    assert validator is not None, schema
    return compile_fast_path(validator.schema, validator), validator


# -- schemas of the shapes msgspec generates


def _optional(schema: dict[str, Any], extra: dict[str, st.SearchStrategy[Any]]) -> Any:
    return st.fixed_dictionaries(schema, optional=extra)


def scalar_schemas() -> st.SearchStrategy[dict[str, Any]]:
    bound = st.integers(-3, 4) | st.sampled_from([-0.5, 1.5, 2.0])
    number_keywords = {
        "minimum": bound,
        "maximum": bound,
        "exclusiveMinimum": bound,
        "exclusiveMaximum": bound,
        "multipleOf": st.integers(1, 3) | st.sampled_from([0.5, 1.5]),
    }
    return st.one_of(
        _optional(
            {"type": st.just("string")},
            {
                "minLength": st.integers(0, 3),
                "maxLength": st.integers(0, 4),
                "pattern": st.sampled_from(PATTERNS),
                "format": st.sampled_from(FORMATS),
            },
        ),
        _optional({"type": st.sampled_from(["integer", "number"])}, number_keywords),
        st.sampled_from(["boolean", "null"]).map(lambda t: {"type": t}),
        st.lists(MEMBERS, min_size=1, max_size=4).map(lambda m: {"enum": m}),
        st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True).map(
            lambda m: {"type": "string", "enum": m}
        ),
        MEMBERS.map(lambda m: {"const": m}),
        st.sampled_from([{}, {"type": ["integer", "null"]}, {"type": ["string", "number"]}]),
        st.sampled_from([{"minLength": 1}, {"minimum": 0}, {"format": "date"}]),
    )


REFS = st.sampled_from(["A", "B"]).map(lambda name: {"$ref": f"#/$defs/{name}"})


def schemas(depth: int) -> st.SearchStrategy[Any]:
    """A schema; ``$ref``s only below an object or an array, so recursion is bounded by
    the value."""
    scalars = scalar_schemas()
    if depth == 0:
        return scalars
    inner = schemas(depth - 1) | REFS
    return st.one_of(
        scalars,
        objects(inner),
        arrays(inner),
        inner.map(lambda s: {"anyOf": [s, {"type": "null"}]}),
        st.lists(inner, min_size=2, max_size=3).map(lambda m: {"anyOf": m}),
        st.lists(inner, min_size=1, max_size=2).map(lambda m: {"allOf": m}),
    )


def objects(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    def build(props: dict[str, Any], required: set[str], extra: Any, more: dict[str, Any]) -> Any:
        schema: dict[str, Any] = {"type": "object", "properties": props, **more}
        schema["required"] = sorted(required & set(props))
        if extra is not None:
            schema["additionalProperties"] = extra
        return schema

    return st.builds(
        build,
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
        st.sets(st.sampled_from(NAMES)),
        st.none() | st.booleans() | inner,
        st.fixed_dictionaries(
            {},
            optional={
                "propertyNames": st.sampled_from([{"minLength": 1}, {"pattern": "^[ab]"}]),
                "minProperties": st.integers(0, 2),
                "maxProperties": st.integers(1, 3),
                "title": st.just("T"),
            },
        ),
    )


def arrays(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    plain = st.builds(lambda items: {"type": "array", "items": items}, inner)
    tuples = st.builds(
        lambda prefix, rest: (
            {"type": "array", "prefixItems": prefix} | ({} if rest is None else {"items": rest})
        ),
        st.lists(inner, min_size=1, max_size=2),
        st.none() | st.just(False) | inner,
    )
    sized = st.fixed_dictionaries(
        {},
        optional={
            "minItems": st.integers(0, 2),
            "maxItems": st.integers(1, 3),
            "uniqueItems": st.booleans(),
        },
    )
    return st.builds(lambda body, size: body | size, plain | tuples, sized)


def root_schemas() -> st.SearchStrategy[dict[str, Any]]:
    inner = schemas(1) | REFS
    body = objects(inner)
    defs = st.fixed_dictionaries({"A": objects(inner), "B": arrays(inner)})
    return st.builds(
        lambda top, d, wrapped: (
            {"$ref": "#/$defs/A", "$defs": {**d, "A": top}} if wrapped else {**top, "$defs": d}
        ),
        body,
        defs,
        st.booleans(),
    )


# -- values around a schema: mostly what it asks for, now and then a near miss

JSON = st.recursive(
    MEMBERS | st.text(alphabet="ab1-", max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from("abcd"), children, max_size=3)
    ),
    max_leaves=6,
)
NEAR = {
    "string": st.sampled_from(["", "a", "ab", "b1", "2024-02-30", "2024-01-02", "x@y", "1.2.3.4"]),
    "integer": st.integers(-4, 5) | st.sampled_from([2.0, -1.0, 0.5, True]),
    "number": st.integers(-4, 5) | st.sampled_from([-0.5, 1.5, 2.0, 3.25, math.inf, False]),
    "boolean": st.booleans() | st.sampled_from([0, 1]),
    "null": st.none() | st.just(0),
    "object": st.just({}),
    "array": st.just([]),
}


ROLL = st.integers(0, 19)
COIN = st.booleans()
INDEX = st.integers(0, 11)
COUNT = st.integers(0, 3)
EXTRA_KEY = st.sampled_from("abcd")
STEPS = [-1, -0.5, 0, 0.5, 1]
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
# (a member, values jsonschema tells apart from it though Python may not)
NEAR_MEMBERS = [(True, [1]), (False, [0]), (None, [0, ""]), (1, [True, "1"]), (0, [False, 0.0])]


def _pick(data: st.DataObject, options: list[Any]) -> Any:
    return options[data.draw(INDEX) % len(options)]


def _number_near(data: st.DataObject, schema: dict[str, Any], kind: Any) -> Any:
    """A number at, just inside or just outside one of the schema's bounds."""
    bounds = [schema[k] for k in NUMBER_KEYWORDS if k in schema]
    if not bounds or data.draw(ROLL) < 4:
        return data.draw(NEAR[kind if kind in ("integer", "number") else "number"])
    bound = _pick(data, bounds)
    if bound == schema.get("multipleOf"):
        return bound * _pick(data, [0, 1, 2, 3, 1.5, 2.0])
    return bound + _pick(data, STEPS)


def _string_near(data: st.DataObject, schema: dict[str, Any]) -> Any:
    """A string at, or one off, one of the schema's lengths, or one near its pattern."""
    lengths = [schema[k] + d for k in ("minLength", "maxLength") if k in schema for d in (-1, 0, 1)]
    if lengths and data.draw(COIN):
        return _pick(data, ["a", "b", "1"]) * max(0, _pick(data, lengths))
    return data.draw(NEAR["string"])


def value_for(data: st.DataObject, schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    if depth > 4 or data.draw(ROLL) == 0 or not isinstance(schema, dict):
        return data.draw(JSON)
    if "$ref" in schema:
        return value_for(data, root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root, depth + 1)
    for keyword in ("anyOf", "allOf"):
        if keyword in schema:
            return value_for(data, _pick(data, schema[keyword]), root, depth + 1)
    for keyword in ("enum", "const"):
        if keyword in schema:
            member = _pick(data, schema["enum"] if keyword == "enum" else [schema["const"]])
            near = next((n for m, n in NEAR_MEMBERS if m is member or m == member), [])
            return _pick(data, near) if near and data.draw(COIN) else member
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = _pick(data, kind)
    if kind == "object" or "properties" in schema:
        out = {}
        for name, sub in schema.get("properties", {}).items():
            if name in schema.get("required", []) or data.draw(COIN):
                out[name] = value_for(data, sub, root, depth + 1)
        if out and data.draw(ROLL) < 3:  # a required one missing, perhaps
            del out[_pick(data, list(out))]
        if data.draw(ROLL) < 3:
            out[data.draw(EXTRA_KEY)] = data.draw(JSON)
        return out
    if kind == "array" or "prefixItems" in schema:
        out = [value_for(data, sub, root, depth + 1) for sub in schema.get("prefixItems", [])]
        rest = schema.get("items", True)
        for _ in range(data.draw(COUNT)):
            out.append(value_for(data, rest if isinstance(rest, dict) else {}, root, depth + 1))
        if out and data.draw(ROLL) < 3:  # a repeated item
            out.append(out[-1])
        return out
    if kind in ("integer", "number") or any(k in schema for k in NUMBER_KEYWORDS):
        return _number_near(data, schema, kind)
    if kind == "string" or "minLength" in schema or "maxLength" in schema:
        return _string_near(data, schema)
    if kind in NEAR:
        return data.draw(NEAR[kind])
    return data.draw(JSON)


ROOT_SCHEMAS = root_schemas()
# One keyword or container at the top, so a single rule decides more values.
SMALL_SCHEMAS = schemas(1).map(
    lambda s: {**s, "$defs": {"A": {"type": "object"}, "B": {"type": "array"}}}
)


def _check_fast_path(data: st.DataObject, schema: dict[str, Any]) -> None:
    fast, validator = _fast(schema)
    assert fast is not None, schema
    value = value_for(data, schema, schema)
    copied = fast(value)
    event("accepted" if copied is not DECLINED else "declined")
    if copied is DECLINED:
        return
    assert validator.is_valid(value), (schema, value)
    assert copied == copy_json(value)
    _assert_fresh(copied, value)


@settings(
    max_examples=400, derandomize=True, suppress_health_check=[HealthCheck.too_slow], deadline=None
)
@given(st.data())
def test_the_fast_path_accepts_only_what_jsonschema_accepts_and_copies_it(
    data: st.DataObject,
) -> None:
    _check_fast_path(data, data.draw(ROOT_SCHEMAS))


@settings(max_examples=1000, derandomize=True, deadline=None)
@given(st.data())
def test_each_keyword_of_the_fast_path_decides_as_jsonschema_does(data: st.DataObject) -> None:
    _check_fast_path(data, data.draw(SMALL_SCHEMAS))


def _assert_fresh(copied: Any, value: Any) -> None:
    if isinstance(value, dict | list):
        assert copied is not value
        pairs = (
            zip(copied.values(), value.values(), strict=True)
            if isinstance(value, dict)
            else zip(copied, value, strict=True)
        )
        for a, b in pairs:
            _assert_fresh(a, b)


# -- what msgspec generates is decided without jsonschema


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Step(msgspec.Struct):
    name: Annotated[str, msgspec.Meta(min_length=1, pattern="^[a-z]")]
    minutes: Annotated[int, msgspec.Meta(ge=0, lt=600)]
    done: bool = False
    note: str | None = None


class Node(msgspec.Struct):
    label: str
    children: list[Node] = []


class Cat(msgspec.Struct, tag=True):
    lives: int


class Dog(msgspec.Struct, tag="dog"):
    good: bool


class Plan(msgspec.Struct, forbid_unknown_fields=True):
    title: str
    steps: list[Step]
    priority: Priority
    owner: str | None = None
    kind: Literal["task", "bug", 3] = "task"
    tags: set[str] = set()
    span: tuple[int, str] = (0, "")
    weights: dict[str, float] = {}
    pet: Cat | Dog | None = None
    tree: Node | None = None
    score: float | int = 0


def plans() -> st.SearchStrategy[Plan]:
    return st.builds(
        Plan,
        title=st.text(max_size=5),
        steps=st.lists(
            st.builds(
                Step,
                name=st.from_regex("^[a-z][a-z ]{0,4}$", fullmatch=True),
                minutes=st.integers(0, 599),
                done=st.booleans(),
                note=st.none() | st.text(max_size=3),
            ),
            max_size=3,
        ),
        priority=st.sampled_from(Priority),
        owner=st.none() | st.text(max_size=3),
        kind=st.sampled_from(["task", "bug", 3]),
        tags=st.sets(st.text(max_size=2), max_size=3),
        span=st.tuples(st.integers(), st.text(max_size=2)),
        weights=st.dictionaries(
            st.text(max_size=2), st.floats(allow_nan=False, allow_infinity=False), max_size=2
        ),
        pet=st.none()
        | st.builds(Cat, lives=st.integers(0, 9))
        | st.builds(Dog, good=st.booleans()),
        tree=st.none()
        | st.builds(
            Node,
            label=st.text(max_size=2),
            children=st.lists(st.builds(Node, label=st.just("leaf")), max_size=2),
        ),
        score=st.integers(-5, 5)
        | st.floats(-5, 5, allow_nan=False).filter(lambda f: not f.is_integer()),
    )


@tool
def make_plan(plan: Plan, urgent: bool = False) -> str:
    """Record a plan."""
    return "ok"


@settings(max_examples=200, derandomize=True, deadline=None)
@given(plans(), st.booleans())
def test_the_fast_path_decides_every_valid_value_of_a_msgspec_type(
    plan: Plan, urgent: bool
) -> None:
    fast, validator = _fast(make_plan.parameters)
    assert fast is not None
    value = msgspec.json.decode(msgspec.json.encode({"plan": plan, "urgent": urgent}))
    assert validator.is_valid(value)
    copied = fast(value)
    assert copied is not DECLINED, value
    assert copied == value
    assert validate_tool_arguments(make_plan, value) == value


def test_invalid_arguments_still_get_the_full_explanation() -> None:
    value = {"plan": {"title": "t", "steps": [{"name": "a", "minutes": -1}], "priority": "mid"}}
    fast, _ = _fast(make_plan.parameters)
    assert fast(value) is DECLINED
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(make_plan, value)
    assert str(caught.value).startswith(
        'Validation failed for tool "make_plan":\n'
        "  - plan.steps.0.minutes: expected >= 0\n"
        '  - plan.priority: expected one of ["high","low"]\n'
    )


def test_schemas_it_cannot_decide_get_no_fast_path() -> None:
    undecided = [
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"not": {"type": "string"}},
        {"type": "object", "patternProperties": {"^a": {}}},
        {"$ref": "https://example.com/schema"},
        {"$ref": "#/$defs/a%20b", "$defs": {"a b": {}}},
        {"$ref": "#anchor", "$defs": {"x": {"$anchor": "anchor"}}},
        {"$id": "https://example.com/s", "type": "object"},
        {"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}},
        {"type": "object", "dependentRequired": {"a": ["b"]}},
    ]
    for schema in undecided:
        assert _fast(schema)[0] is None, schema
    # tool schemas are read in the original's dialect, which ignores ``$schema``: a
    # draft-04 schema is a 2020-12 one there, and its fast path decides as that does
    fast, _ = _fast({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"})
    assert fast is not None
    assert fast(3) == 3
    assert fast("3") is DECLINED  # coerced by the slow path, never by this one


def test_values_of_no_json_type_and_subtle_rules_are_declined() -> None:
    from decimal import Decimal

    class Text(str):
        pass

    cases = [
        ({"type": "number"}, Decimal(1)),
        ({"minimum": 2}, Decimal(1)),
        ({"maxLength": 1}, Text("long")),
        ({"type": "integer", "multipleOf": 0.5}, 2),
        ({"enum": [[1], "a"]}, [1]),
        ({"type": "array", "uniqueItems": True}, [[1], [1]]),
    ]
    for schema, value in cases:
        fast, _ = _fast(schema)
        assert fast is not None
        assert fast(value) is DECLINED, (schema, value)


# (schema, a value just inside, a value just outside): each rule at its edge
EDGES = [
    ({"type": "string", "minLength": 2}, "ab", "a"),
    ({"type": "string", "maxLength": 2}, "ab", "abc"),
    ({"type": "string", "pattern": "^[ab]"}, "b1", "1b"),
    ({"type": "integer", "minimum": 2}, 2, 1),
    ({"type": "integer", "maximum": 2}, 2, 3),
    ({"type": "number", "exclusiveMinimum": 2}, 2.5, 2),
    ({"type": "number", "exclusiveMaximum": 2}, 1.5, 2),
    ({"type": "integer", "multipleOf": 3}, 6, 7),
    ({"type": "integer"}, 2.0, 2.5),
    ({"enum": [1, "a"]}, 1.0, True),
    ({"enum": [False, 0]}, 0, True),
    ({"const": False}, False, 0),
    ({"type": "array", "minItems": 2}, [1, 2], [1]),
    ({"type": "array", "maxItems": 2}, [1, 2], [1, 2, 3]),
    ({"type": "array", "uniqueItems": True}, [True, 1, "1"], [1, 1.0]),
    ({"type": "array", "items": {"type": "string"}}, ["a"], ["a", 1]),
    ({"type": "object", "required": ["a"]}, {"a": 1}, {"b": 1}),
    ({"type": "object", "minProperties": 2}, {"a": 1, "b": 2}, {"a": 1}),
    ({"type": "object", "maxProperties": 1}, {"a": 1}, {"a": 1, "b": 2}),
    ({"type": "object", "propertyNames": {"pattern": "^[ab]"}}, {"b": 1}, {"b": 1, "c": 2}),
    ({"type": "object", "propertyNames": {"minLength": 1}}, {"a": 1}, {"": 1}),
    (
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        {"a": 1},
        {"a": 1, "b": 2},
    ),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}},
        {"a": 1, "b": "x"},
        {"a": "1"},
    ),
]


@pytest.mark.parametrize(("schema", "inside", "outside"), EDGES)
def test_each_rule_decides_at_its_edge_as_jsonschema_does(
    schema: dict[str, Any], inside: Any, outside: Any
) -> None:
    fast, validator = _fast(schema)
    assert fast is not None
    assert validator.is_valid(inside)
    assert fast(inside) == inside
    assert not validator.is_valid(outside)
    assert fast(outside) is DECLINED


def test_a_recursive_schema_and_a_cyclic_value() -> None:
    schema = {
        "$ref": "#/$defs/N",
        "$defs": {"N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}}},
    }
    fast, _ = _fast(schema)
    assert fast is not None
    assert fast({"n": {"n": {}}}) == {"n": {"n": {}}}
    cyclic: dict[str, Any] = {}
    cyclic["n"] = cyclic
    assert fast(cyclic) is DECLINED


def test_a_tuple_checks_its_prefix_and_the_rest() -> None:
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}
    fast, _ = _fast(schema)
    assert fast([1, "a", "b"]) == [1, "a", "b"]
    assert fast(["a", "b"]) is DECLINED
    assert fast([1, 2]) is DECLINED
    closed, _ = _fast({"type": "array", "prefixItems": [{"type": "integer"}], "items": False})
    assert closed([1]) == [1]
    assert closed([1, 2]) is DECLINED


def test_a_schema_changed_in_place_is_compiled_anew() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool_ = make_plan.__class__(
        name="count", description="d", parameters=schema, execute=make_plan.execute
    )
    assert validate_tool_arguments(tool_, {"n": 1}) == {"n": 1}
    schema["properties"]["n"]["type"] = "string"
    assert validate_tool_arguments(tool_, {"n": 1}) == {"n": "1"}  # coerced: the new schema
    schema["properties"]["n"]["type"] = "boolean"
    with pytest.raises(ToolArgumentsError, match="n: expected boolean, got array"):
        validate_tool_arguments(tool_, {"n": []})


@pytest.mark.parametrize("text", ["abc\n", "ab1", ""])
def test_patterns_are_checked_by_the_slow_paths_engine(text: str) -> None:
    """``$`` matches only at the very end in JavaScript: Python's ``re`` would accept
    ``"abc\n"``; the fast path must not."""
    fast, validator = _fast({"type": "string", "pattern": "^[a-z]+$"})
    assert not validator.is_valid(text)
    assert fast(text) is DECLINED
    assert fast("abc") == "abc"
