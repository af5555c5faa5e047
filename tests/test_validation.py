"""Tool-argument validation, as the original's ``validateToolArguments`` /
``validateToolCall`` (``src/utils/validation.ts``) and its ``validation.test.ts`` decide it."""

from __future__ import annotations

import copy
import logging
from typing import Any

import msgspec
import pytest

from pi_trio.ai import (
    Tool,
    ToolArgumentsError,
    ToolCall,
    validate_tool_arguments,
    validate_tool_call,
)
from pi_trio.ai._validation import _engine


class Inner(msgspec.Struct, frozen=True):
    n: int


class Args(msgspec.Struct):
    inner: Inner
    items: list[Inner]
    flag: bool = False


class OptionalArgs(msgspec.Struct):
    other: Inner = Inner(1)
    maybe: Inner | None = None


def tool(parameters: Any, name: str = "calc") -> Tool:
    return Tool(name=name, description="test tool", parameters=parameters)


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required is not None:
        schema["required"] = required
    return schema


def failure(parameters: Any, arguments: Any) -> ToolArgumentsError:
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(tool(parameters), arguments)
    return caught.value


# -- coercion on a copy, unknown tools, the error texts


def test_a_numeric_string_is_coerced_for_a_number_schema_on_a_copy() -> None:
    arguments = {"a": "42"}
    result = validate_tool_arguments(tool(obj({"a": {"type": "number"}})), arguments)
    assert result == {"a": 42}
    assert type(result["a"]) is int
    assert arguments == {"a": "42"}
    assert result is not arguments


def test_an_unknown_tool_name_is_reported() -> None:
    call = ToolCall(id="1", name="nope", arguments={})
    with pytest.raises(ToolArgumentsError, match=r'^Tool "nope" not found$') as caught:
        validate_tool_call([tool({"type": "object"})], call)
    assert caught.value.tool_name == "nope"


def test_the_failure_message_has_the_upstream_layout() -> None:
    error = failure(obj({"a": {"type": "number"}}, ["a", "b"]), {"a": "x", "é": [1]})
    assert str(error) == (
        'Validation failed for tool "calc":\n'
        "  - b: missing\n"
        "  - a: expected number, got string\n"
        "\n"
        "Received arguments:\n"
        "{\n"
        '  "a": "x",\n'
        '  "é": [\n'
        "    1\n"
        "  ]\n"
        "}"
    )
    assert error.errors == (("b", "missing"), ("a", "expected number, got string"))
    assert error.tool_name == "calc"
    assert error.arguments == {"a": "x", "é": [1]}
    assert isinstance(error, ValueError)


def test_validate_tool_call_finds_the_tool_by_exact_name() -> None:
    tools = [tool(obj({"n": {"type": "string"}}), "Calc"), tool(obj({"n": {"type": "integer"}}))]
    call = ToolCall(id="1", name="calc", arguments={"n": "7"})
    assert validate_tool_call(tools, call) == {"n": 7}
    assert call.arguments == {"n": "7"}


# -- coercion rules


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        ("number", "42", 42),
        ("number", "4.5", 4.5),
        ("number", " 7\n", 7),
        ("number", "0x10", 16),
        ("number", "1e3", 1000),
        ("number", ".5", 0.5),
        ("number", True, 1),
        ("number", False, 0),
        ("number", None, 0),
        ("integer", "42", 42),
        ("integer", "4.0", 4),
        ("integer", True, 1),
        ("integer", None, 0),
        ("integer", 3.0, 3.0),
        ("integer", "4.5", 4),
        ("integer", 4.5, 4),
        ("integer", "-3.7", -3),
        ("number", "", 0),
        ("number", "  ", 0),
        ("number", "TRUE", 1),
        ("number", "12n", 12),
        ("string", 5, "5"),
        ("string", 1.5, "1.5"),
        ("string", 2.0, "2"),
        ("string", 1e21, "1e+21"),
        ("string", 1.5e-7, "1.5e-7"),
        ("string", 0.000001, "0.000001"),
        ("string", True, "true"),
        ("string", None, "null"),
        ("boolean", "true", True),
        ("boolean", "false", False),
        ("boolean", 1, True),
        ("boolean", 0, False),
        ("boolean", None, False),
        ("boolean", "1", True),
        ("boolean", "False", False),
        ("null", "null", None),
        ("null", "0", None),
        ("array", "x", ["x"]),
        ("array", None, [None]),
        ("null", "", None),
        ("null", 0, None),
        ("null", False, None),
        ("number", 5, 5),
        ("string", "5", "5"),
    ],
)
def test_scalars_are_coerced_to_the_declared_type(type_: str, value: Any, expected: Any) -> None:
    result = validate_tool_arguments(tool(obj({"v": {"type": type_}}, ["v"])), {"v": value})
    assert result == {"v": expected}
    assert type(result["v"]) is type(expected)


@pytest.mark.parametrize(
    ("type_", "value", "got"),
    [
        ("number", "abc", "string"),
        ("number", "Infinity", "string"),
        ("number", "1e999", "string"),
        ("number", "1_000", "string"),
        ("number", "nan", "string"),
        ("number", [1], "array"),
        ("boolean", "yes", "string"),
        ("boolean", 2, "integer"),
        ("null", "x", "string"),
        ("object", "x", "string"),
    ],
)
def test_values_without_a_form_of_the_declared_type_fail(type_: str, value: Any, got: str) -> None:
    error = failure(obj({"v": {"type": type_}}, ["v"]), {"v": value})
    assert error.errors == (("v", f"expected {type_}, got {got}"),)


def test_a_value_matching_any_listed_type_is_left_alone() -> None:
    schema = obj({"v": {"type": ["integer", "string"]}})
    assert validate_tool_arguments(tool(schema), {"v": "5"}) == {"v": "5"}


def test_listed_types_are_tried_in_order_and_the_first_coercion_wins() -> None:
    schema = obj({"a": {"type": ["null", "integer"]}, "b": {"type": ["boolean", "integer"]}})
    assert validate_tool_arguments(tool(schema), {"a": "7", "b": "1"}) == {"a": 7, "b": 1}
    schema = obj({"c": {"type": ["string", "number"]}})
    assert validate_tool_arguments(tool(schema), {"c": 12}) == {"c": 12}
    schema = obj({"d": {"type": ["boolean", "string"]}})
    assert validate_tool_arguments(tool(schema), {"d": 1}) == {"d": True}


def test_coercion_recurses_into_properties_additional_properties_and_items() -> None:
    schema = obj(
        {
            "inner": obj({"n": {"type": "integer"}}),
            "list": {"type": "array", "items": {"type": "number"}},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}]},
        },
        additionalProperties={"type": "integer"},
    )
    arguments = {
        "inner": {"n": "3"},
        "list": ["1", "2.5"],
        "pair": [1, "true", "extra"],
        "other": "9",
    }
    assert validate_tool_arguments(tool(schema), arguments) == {
        "inner": {"n": 3},
        "list": [1, 2.5],
        "pair": ["1", True, "extra"],
        "other": 9,
    }


def test_draft_07_tuple_items_are_coerced_by_index() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "integer"}, {"type": "string"}],
        "additionalItems": False,
    }
    assert validate_tool_arguments(tool(schema), ["1", 2]) == [1, "2"]
    assert failure(schema, [1, "2", 3]).errors == (("2", "no value is allowed here"),)


def test_any_of_keeps_a_value_that_already_matches_a_member() -> None:
    schema = obj({"v": {"anyOf": [{"type": "integer"}, {"type": "string"}]}})
    assert validate_tool_arguments(tool(schema), {"v": "5"}) == {"v": "5"}


def test_any_of_and_one_of_take_the_first_member_that_validates_after_coercion() -> None:
    schema = obj(
        {
            "a": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
            "b": {"oneOf": [{"type": "object"}, {"type": "number", "minimum": 10}]},
        }
    )
    assert validate_tool_arguments(tool(schema), {"a": "true", "b": "12"}) == {"a": True, "b": 12}
    error = failure(schema, {"a": "x", "b": "3"})
    assert error.errors == (
        ("a", "expected integer, got string"),
        ("b", "expected object, got string"),
    )
    assert '"b": "3"' in str(error)


def test_all_of_members_coerce_one_after_another() -> None:
    schema = obj(
        {"v": {"allOf": [{"type": "string"}, {"type": ["string", "integer"], "maxLength": 3}]}}
    )
    assert validate_tool_arguments(tool(schema), {"v": 12}) == {"v": "12"}


def test_local_refs_are_followed_when_coercing() -> None:
    schema = msgspec.json.schema(Args)
    arguments = {"inner": {"n": "5"}, "items": [{"n": "1"}, {"n": 2}], "flag": "true"}
    result = validate_tool_arguments(tool(schema), arguments)
    assert result == {"inner": {"n": 5}, "items": [{"n": 1}, {"n": 2}], "flag": True}
    assert msgspec.convert(result, Args) == Args(Inner(5), [Inner(1), Inner(2)], True)


def test_refs_in_a_circle_without_a_check_leave_the_arguments_unvalidated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = {
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/a"}},
    }
    with caplog.at_level(logging.WARNING, logger="pi_trio"):
        assert validate_tool_arguments(tool(schema, name="circle"), {"v": "1"}) == {"v": "1"}
    assert any("circle" in r.getMessage() for r in caplog.records)


def test_a_recursive_tree_schema_coerces_at_every_level() -> None:
    schema = {
        "$ref": "#/$defs/node",
        "$defs": {
            "node": obj(
                {
                    "n": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                }
            )
        },
    }
    arguments = {"n": "1", "children": [{"n": "2", "children": [{"n": "3"}]}]}
    assert validate_tool_arguments(tool(schema), arguments) == {
        "n": 1,
        "children": [{"n": 2, "children": [{"n": 3}]}],
    }


# -- optional nulls


def test_optional_nulls_the_schema_rejects_are_deleted() -> None:
    schema = obj({"path": {"type": "string"}, "limit": {"type": "integer"}}, ["path"])
    arguments = {"path": "a.txt", "limit": None}
    assert validate_tool_arguments(tool(schema), arguments) == {"path": "a.txt"}
    assert arguments == {"path": "a.txt", "limit": None}


def test_optional_nulls_the_schema_accepts_are_kept() -> None:
    schema = obj(
        {"a": {"type": ["string", "null"]}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
    )
    assert validate_tool_arguments(tool(schema), {"a": None, "b": None}) == {"a": None, "b": None}


def test_a_required_null_stays_and_is_coerced_or_fails() -> None:
    schema = obj({"path": {"type": "string"}, "options": {"type": "object"}}, ["path", "options"])
    error = failure(schema, {"path": None, "options": None})
    assert error.errors == (("options", "expected object, got null"),)
    assert '"path": null' in str(error)
    # 1.6: null for a required string is the text "null" (TypeBox's Value.Convert)
    assert validate_tool_arguments(tool(schema), {"path": None, "options": {}}) == {
        "path": "null",
        "options": {},
    }


def test_optional_nulls_are_deleted_inside_nested_objects_and_arrays() -> None:
    entry = obj({"name": {"type": "string"}, "note": {"type": "string"}}, ["name"])
    schema = obj({"entries": {"type": "array", "items": entry}, "meta": entry})
    arguments = {"entries": [{"name": "a", "note": None}], "meta": {"name": "m", "note": None}}
    assert validate_tool_arguments(tool(schema), arguments) == {
        "entries": [{"name": "a"}],
        "meta": {"name": "m"},
    }


def test_optional_nulls_behind_a_local_ref_are_deleted() -> None:
    schema = msgspec.json.schema(OptionalArgs)
    assert validate_tool_arguments(tool(schema), {"other": None, "maybe": None}) == {"maybe": None}


# -- error paths and messages


def test_paths_use_dots_and_required_properties_join_their_parent() -> None:
    item = obj({"name": {"type": "string"}}, ["name"])
    schema = obj(
        {"items": {"type": "array", "items": item}, "deep": obj({"x": obj({}, ["y"])})}, ["top"]
    )
    error = failure(schema, {"items": [{"name": "ok"}, {"name": [5]}, {}], "deep": {"x": {}}})
    assert error.errors == (
        ("top", "missing"),
        ("items.1.name", "expected string, got array"),
        ("items.2.name", "missing"),
        ("deep.x.y", "missing"),
    )


def test_an_error_on_the_whole_value_has_the_path_root() -> None:
    error = failure({"type": "object"}, ["not", "an", "object"])
    assert error.errors == (("root", "expected object, got array"),)


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "number", "minimum": 1}, 0, "expected >= 1"),
        ({"type": "number", "maximum": 1.5}, 2, "expected <= 1.5"),
        ({"type": "number", "exclusiveMinimum": 0}, 0, "expected > 0"),
        ({"type": "number", "exclusiveMaximum": 0}, 0, "expected < 0"),
        ({"type": "number", "multipleOf": 2}, 3, "expected a multiple of 2"),
        ({"type": "string", "minLength": 2}, "a", "expected at least 2 characters"),
        ({"type": "string", "maxLength": 1}, "ab", "expected at most 1 characters"),
        ({"type": "string", "pattern": "^a"}, "b", "expected to match ^a"),
        ({"type": "string", "format": "ipv4"}, "999.1.1.1", "expected format ipv4"),
        ({"type": "array", "minItems": 1}, [], "expected at least 1 items"),
        ({"type": "array", "maxItems": 0}, [1], "expected at most 0 items"),
        ({"type": "array", "uniqueItems": True}, [1, 1], "expected unique items"),
        ({"enum": ["a", "b"]}, "c", 'expected one of ["a","b"]'),
        (
            {"enum": list(range(30))},
            99,
            "expected one of [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19, ... and 10 more]",
        ),
        ({"const": "add"}, "c", 'expected "add"'),
        ({"const": {"a": [1, "x"]}}, 1, 'expected {"a":[1,"x"]}'),
        ({"not": {"type": "string"}}, "c", "must not match the schema in not"),
        ({"type": ["string", "null"]}, [], "expected string or null, got array"),
        ({"type": "number", "minimum": 0.5}, 0.25, "expected >= 0.5"),
        ({"type": "object", "minProperties": 2}, {"a": 1}, "expected at least 2 properties"),
        (
            {"type": "array", "items": {"type": "integer"}, "contains": {"const": 3}},
            [1, 2],
            "expected at least 1 matching item",
        ),
        ({"type": "string", "minLength": 2}, "😀", "expected at least 2 characters"),
    ],
)
def test_messages_use_the_originals_wording(schema: Any, value: Any, message: str) -> None:
    # 1.6: the wording of @earendil-works/pi-schema
    assert failure(obj({"v": schema}), {"v": value}).errors == (("v", message),)


def test_a_false_schema_admits_no_value() -> None:
    assert failure(False, {"v": 1}).errors == (("root", "no value is allowed here"),)
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    assert failure(schema, [1, 2]).errors == (("1", "no value is allowed here"),)


def test_unknown_properties_are_reported_at_their_path_and_counts_on_the_object() -> None:
    schema = obj({"a": {"type": "integer"}}, additionalProperties=False, maxProperties=1)
    error = failure(schema, {"a": 1, "b": 2})
    assert error.errors == (("b", "unknown field"), ("root", "expected at most 1 properties"))


def test_a_dependency_is_reported_at_the_missing_property() -> None:
    schema = obj({}, dependentRequired={"a": ["b"]})
    assert failure(schema, {"a": 1}).errors == (("b", "required when a is present"),)


def test_a_tagged_union_names_the_tags_or_the_branch_the_tag_selects() -> None:
    add = obj({"op": {"const": "add"}, "a": {"type": "number"}}, ["op", "a"])
    neg = obj({"op": {"const": "neg"}, "x": {"type": "number"}}, ["op", "x"])
    schema = {"type": "object", "oneOf": [add, neg]}
    assert failure(schema, {"op": "mul", "a": 1}).errors == (
        ("op", 'expected one of ["add","neg"]'),
    )
    assert failure(schema, {"op": "add", "a": []}).errors == (("a", "expected number, got array"),)


def test_an_untagged_union_blames_the_branch_the_value_was_meant_for() -> None:
    number = obj({"a": {"type": "number"}}, ["a"])
    text = obj({"b": {"type": "string"}, "c": {"type": "string"}}, ["b"])
    schema = {"type": "object", "anyOf": [number, text]}
    assert failure(schema, {"b": [1], "c": "x"}).errors == (("b", "expected string, got array"),)
    two = obj({"v": {"oneOf": [{"type": "number"}, {"type": "integer"}]}})
    assert failure(two, {"v": 3}).errors == (("v", "matches more than one alternative"),)


def test_malformed_argument_text_fails_before_validation_with_the_originals_text() -> None:
    call = ToolCall(
        id="1",
        name="calc",
        arguments={},
        arguments_error='Unexpected end of JSON input\n\nReceived arguments:\n{"a": ',
    )
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_call([tool(obj({"a": {"type": "number"}}, ["a"]))], call)
    assert str(caught.value) == (
        'Invalid arguments for tool "calc": Unexpected end of JSON input\n\n'
        'Received arguments:\n{"a": '
    )


def test_received_arguments_are_the_ones_handed_in_before_coercion() -> None:
    schema = obj({"n": {"type": "integer"}, "s": {"type": "string"}, "o": {"type": "string"}})
    error = failure(schema, {"n": "7", "s": [], "o": None})
    assert error.errors == (("s", "expected string, got array"),)
    assert str(error).endswith('Received arguments:\n{\n  "n": "7",\n  "s": [],\n  "o": null\n}')


def test_received_arguments_that_are_not_json_are_shown_by_repr() -> None:
    error = failure(obj({"n": {"type": "integer"}}), {"n": {1, 2}})
    assert '"n": "{1, 2}"' in str(error)


# -- the arguments handed in


def test_the_arguments_handed_in_are_never_mutated() -> None:
    schema = obj(
        {
            "a": {"type": "integer"},
            "nested": obj({"b": {"type": "boolean"}, "c": {"type": "string"}}),
            "items": {"type": "array", "items": {"type": "number"}},
        }
    )
    arguments = {"a": "1", "nested": {"b": "true", "c": None}, "items": ["1", "2"]}
    before = copy.deepcopy(arguments)
    result = validate_tool_arguments(tool(schema), arguments)
    assert arguments == before
    assert result["nested"] is not arguments["nested"]
    failure({"type": "object", "properties": {"a": {"type": "object"}}}, arguments)
    assert arguments == before


def test_enormous_and_deeply_nested_arguments_validate() -> None:
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    big = "x" * (4 << 20)
    schema = obj({"big": {"type": "string"}, "deep": {"type": "array"}})
    result = validate_tool_arguments(tool(schema), {"big": big, "deep": deep})
    assert result["big"] is big
    assert result["deep"] is not deep


def test_arguments_with_a_cycle_are_reported_without_crashing() -> None:
    cycle: dict[str, Any] = {"n": "x"}
    cycle["self"] = cycle
    error = failure(obj({"n": {"type": "integer"}}), cycle)
    assert error.errors == (("n", "expected integer, got string"),)
    assert "Received arguments:\n{'n': 'x', 'self': {...}}" in str(error)


# -- schemas that cannot be used


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": 5}},
        {"type": "object", "properties": {"a": {"type": "string", "minLength": "1"}}},
        None,
        "not a schema",
    ],
)
def test_a_schema_that_cannot_be_used_leaves_the_arguments_unvalidated(schema: Any) -> None:
    arguments = {"a": "1", "b": [None]}
    result = validate_tool_arguments(tool(schema), arguments)
    assert result == arguments
    assert result is not arguments


@pytest.mark.parametrize(
    "ref", ["#/$defs/missing", "https://example.invalid/schema.json", "nonexistent"]
)
def test_a_ref_that_names_nothing_fails_only_the_values_at_its_place(ref: str) -> None:
    schema = obj({"a": {"$ref": ref}, "b": {"type": "integer"}})
    assert validate_tool_arguments(tool(schema), {"b": "1"}) == {"b": 1}
    assert failure(schema, {"a": 1}).errors == (("a", f"unresolved reference {ref}"),)


def test_an_unusable_schema_is_reported_once_not_on_every_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = tool({"type": "object", "properties": {"a": 7}}, name="warned_once")
    with caplog.at_level(logging.WARNING, logger="pi_trio"):
        for _ in range(3):
            validate_tool_arguments(broken, {"a": 1})
    warnings = [r.getMessage() for r in caplog.records if "warned_once" in r.getMessage()]
    assert len(warnings) == 1
    assert "passed through unvalidated" in warnings[0]


def test_every_schema_is_read_as_2020_12_with_draft_7_tuples_as_the_original_reads_it() -> None:
    draft_4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "number",
        "maximum": 5,
        "exclusiveMaximum": True,
    }
    assert validate_tool_arguments(tool(draft_4), 5) == 5  # a boolean bound is ignored
    draft_7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/n",
        "type": "integer",
        "maximum": 3,
        "definitions": {"n": {"type": "integer"}},
    }
    assert failure(draft_7, 5).errors == (("root", "expected <= 3"),)  # $ref siblings apply
    no_draft = {"type": "array", "items": [{"type": "integer"}], "additionalItems": False}
    assert validate_tool_arguments(tool(no_draft), ["1"]) == [1]
    assert failure(no_draft, [1, 2]).errors == (("1", "no value is allowed here"),)
    draft_2020 = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    assert failure(draft_2020, [1, 2]).errors == (("1", "no value is allowed here"),)
    assert validate_tool_arguments(tool(draft_2020), ["1"]) == [1]


# -- the validator cache


def test_validators_are_cached_by_schema_content() -> None:
    first = {"type": "object", "properties": {"cache_probe": {"type": "integer"}}}
    second = copy.deepcopy(first)
    assert _engine._checker(first) is _engine._checker(second)
    first["properties"]["cache_probe"]["type"] = "string"
    assert validate_tool_arguments(tool(second), {"cache_probe": "3"}) == {"cache_probe": 3}
    assert validate_tool_arguments(tool(first), {"cache_probe": 3}) == {"cache_probe": "3"}


def test_the_validator_cache_is_bounded() -> None:
    for index in range(_engine.CACHE_SIZE + 10):
        validate_tool_arguments(tool(obj({f"p{index}": {"type": "integer"}})), {})
    assert len(_engine._cache) <= _engine.CACHE_SIZE
