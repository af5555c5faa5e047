"""The JSON Schema dialect tool arguments are checked in: the original's (pi-schema 1.6).

Every schema is read as draft 2020-12, whatever its ``$schema`` says (only which draft's
meta-schema it must satisfy follows ``$schema``), with draft 7's
``items`` arrays, ``additionalItems`` and ``dependencies`` understood too, as the original
reads them. On top of jsonschema's Draft 2020-12 validator:

- a ``$ref`` that names nothing (a missing definition, another document) fails only the
  values at its place, with ``unresolved reference <ref>``;
- ``pattern`` and ``patternProperties`` are ECMAScript patterns (``_regex``);
- ``format`` is checked for the formats of ``_formats``, in every draft;
- ``multipleOf`` is exact for decimals (0.0075 is a multiple of 0.0001);
- a keyword whose value is malformed is ignored, as the original ignores it: a bound or a
  length that is not a number (draft 4's ``exclusiveMaximum: true``), a ``required`` that is
  no list (draft 3's ``required: true``) or its entries that are no strings, an ``enum``
  that is no list; a ``type`` name that is not a JSON type matches nothing.

`compile_validator` returns None for a schema that is not a JSON Schema in its own draft
(nor, without ``$schema``, in draft 7) beyond such keywords, for example a property whose
schema is a number; the caller leaves the arguments unvalidated.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

import jsonschema
import referencing
import referencing.exceptions

from .._json._jsnum import js_number_text
from ._budget import step
from ._formats import FORMATS
from ._regex import regex_search

__all__ = ["DialectValidator", "accepts_of", "compile_validator", "is_multiple"]

_BASE: Final = jsonschema.Draft202012Validator.VALIDATORS
_LEGACY: Final = jsonschema.Draft7Validator.VALIDATORS

_FORMAT_CHECKER: Final = jsonschema.FormatChecker(formats=())
for _name, _check in FORMATS.items():
    _FORMAT_CHECKER.checks(_name)(
        lambda value, check=_check: not isinstance(value, str) or bool(check(value))
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_multiple(value: float, step: float) -> bool:
    """Whether ``value`` is a multiple of ``step``, exactly for decimals as written."""
    try:
        quotient = value / step
    except ZeroDivisionError:
        return False
    except OverflowError:
        quotient = math.nan
    if isinstance(quotient, float) and math.isfinite(quotient) and quotient.is_integer():
        return True
    if math.isinf(quotient):
        return math.fmod(value, step) == 0
    value_digits, value_exponent = _decimal(value)
    step_digits, step_exponent = _decimal(step)
    if value_exponent >= step_exponent:
        return bool(value_digits * 10 ** (value_exponent - step_exponent) % step_digits == 0)
    return bool(value_digits % (step_digits * 10 ** (step_exponent - value_exponent)) == 0)


def _decimal(number: float) -> tuple[int, int]:
    """``abs(number)`` as digits and a power of ten, from its shortest JavaScript text."""
    _, digits, exponent = Decimal(js_number_text(abs(number))).as_tuple()
    assert isinstance(exponent, int)
    return int("".join(map(str, digits)) or "0"), exponent


def _ref(validator: Any, ref: Any, instance: Any, schema: Any) -> Any:
    if not isinstance(ref, str):
        return
    try:
        errors = list(_BASE["$ref"](validator, ref, instance, schema))
    except referencing.exceptions.Unresolvable:
        yield jsonschema.ValidationError(f"unresolved reference {ref}")
        return
    yield from errors


def _items(validator: Any, items: Any, instance: Any, schema: Any) -> Any:
    keyword = _LEGACY["items"] if isinstance(items, list) else _BASE["items"]
    yield from keyword(validator, items, instance, schema)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    if (
        isinstance(instance, str)
        and isinstance(pattern, str)
        and not regex_search(pattern, instance)
    ):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not isinstance(instance, dict) or not isinstance(patterns, dict):
        return
    for pattern, sub in patterns.items():
        for key, value in instance.items():
            if regex_search(pattern, key):
                yield from validator.descend(value, sub, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    patterns = schema.get("patternProperties")
    patterns = list(patterns) if isinstance(patterns, dict) else []
    unknown = [
        key
        for key in instance
        if key not in properties and not any(regex_search(p, key) for p in patterns)
    ]
    if isinstance(extra, dict):
        for key in unknown:
            yield from validator.descend(instance[key], extra, path=key)
    elif extra is False and unknown:
        yield jsonschema.ValidationError(f"unknown properties {unknown!r}")


def _json_key(value: Any) -> Any:
    """A hashable key of ``value``, equal for values JSON Schema calls equal: ``1`` and
    ``1.0`` alike, ``true`` and ``1`` not, objects whatever their key order."""
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, dict):
        return (dict, frozenset((key, _json_key(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (list, tuple(_json_key(item) for item in value))
    return value


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    """``uniqueItems`` by hashing each item once: jsonschema compares every pair, which
    took minutes for a few thousand objects."""
    if unique is not True or not isinstance(instance, list):
        return
    seen = set()
    for item in instance:
        try:
            key = _json_key(item)
            known = key in seen
        except TypeError:  # not JSON: compared the slow way
            yield from _BASE["uniqueItems"](validator, unique, instance, schema)
            return
        if known:
            yield jsonschema.ValidationError("the items are not unique")
            return
        seen.add(key)


def _multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
    if _is_number(instance) and _is_number(step) and not is_multiple(instance, step):
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {step!r}")


def _when(keyword: str, well_formed: Callable[[Any], bool]) -> Any:
    """``keyword`` checked only when its value is ``well_formed``, else ignored."""
    check = _BASE[keyword]

    def guarded(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if well_formed(value):
            yield from check(validator, value, instance, schema)

    return guarded


def _type(validator: Any, types: Any, instance: Any, schema: Any) -> Any:
    """A type name jsonschema does not know (or a name that is no string) matches nothing."""
    names = types if isinstance(types, list) else [types]
    for name in names:
        try:
            if isinstance(name, str) and validator.is_type(instance, name):
                return
        except jsonschema.exceptions.UnknownType:
            continue
    yield jsonschema.ValidationError(f"{instance!r} is not of type {types!r}")


def _required(validator: Any, required: Any, instance: Any, schema: Any) -> Any:
    if isinstance(required, list):
        names = [name for name in required if isinstance(name, str)]
        yield from _BASE["required"](validator, names, instance, schema)


def _dependent_required(validator: Any, dependencies: Any, instance: Any, schema: Any) -> Any:
    if isinstance(dependencies, dict):
        lists = {key: needed for key, needed in dependencies.items() if isinstance(needed, list)}
        yield from _BASE["dependentRequired"](validator, lists, instance, schema)


def _contains(validator: Any, contains: Any, instance: Any, schema: Any) -> Any:
    bounds = ("minContains", "maxContains")
    if any(key in schema and not _is_number(schema[key]) for key in bounds):
        schema = {k: v for k, v in schema.items() if k not in bounds or _is_number(v)}
    yield from _BASE["contains"](validator, contains, instance, schema)


_NUMBER_KEYWORDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)

_KEYWORDS: Final = {
    **_BASE,
    **{
        "$ref": _ref,
        "type": _type,
        "items": _items,
        "additionalItems": _LEGACY["additionalItems"],
        "dependencies": _LEGACY["dependencies"],
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "multipleOf": _multiple_of,
        "required": _required,
        "dependentRequired": _dependent_required,
        "contains": _contains,
        "enum": _when("enum", lambda value: isinstance(value, list)),
        "uniqueItems": _unique_items,
        **{keyword: _when(keyword, _is_number) for keyword in _NUMBER_KEYWORDS},
    },
}


def _counted(check: Any) -> Any:
    """``check`` counting steps of the running validation's budget: one per call, one
    per entry of the keyword's value (an ``enum``'s values, ``required``'s names) and
    one per item of an array it checks."""

    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        size = len(value) if isinstance(value, list | dict) else 0
        step(1 + size + (len(instance) if isinstance(instance, list) else 0))
        return check(validator, value, instance, schema)

    return counted


# Every keyword is a step of the running validation (``_budget``), so that no
# schema and no arguments make one validation unbounded, and a cancelled one stops.
_Validator: Final = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    validators={keyword: _counted(check) for keyword, check in _KEYWORDS.items()},
)

DialectValidator: Final = _Validator
"""The validator class of the original's dialect (2020-12 with the exceptions above)."""

# A keyword the dialect ignores when its value is malformed, as the original does: a schema
# whose only faults are in these is usable.
_FORGIVEN: Final = frozenset(
    {
        *_NUMBER_KEYWORDS,
        "multipleOf",
        "minContains",
        "maxContains",
        "type",
        "required",
        "dependentRequired",
        "enum",
        "uniqueItems",
        "pattern",
        "format",
        "$ref",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentEncoding",
        "contentMediaType",
    }
)
# Keywords whose value holds subschemas: a map of them, a list of them, or one.
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES: Final = frozenset(
    {
        "additionalProperties",
        "propertyNames",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
        "contentSchema",
        "items",
    }
)


def _keyword_at(path: list[Any]) -> Any:
    """The keyword a meta-schema error at ``path`` (a place in a schema) is about; None
    when the place itself should hold a schema."""
    index = 0
    while index < len(path):
        key = path[index]
        following = path[index + 1] if index + 1 < len(path) else None
        tuple_items = key == "items" and isinstance(following, int)
        if key in _SCHEMA_MAPS or key in _SCHEMA_LISTS or tuple_items:
            index += 2
        elif key in _SCHEMA_VALUES:
            index += 1
        else:
            return key
    return None


def _is_schema(schema: Any) -> bool:
    """Whether ``schema`` is a JSON Schema, in its own draft or (without ``$schema``) in
    2020-12 or draft 7, forgiving the keywords the dialect ignores when malformed."""
    declared = jsonschema.validators.validator_for(schema, default=None)
    drafts = (
        [declared]
        if declared is not None
        else [jsonschema.Draft202012Validator, jsonschema.Draft7Validator]
    )
    for draft in drafts:
        errors = draft(draft.META_SCHEMA).iter_errors(schema)
        if all(_keyword_at(list(error.absolute_path)) in _FORGIVEN for error in errors):
            return True
    return False


_EVOLVED_KEPT: Final = 512
"""Validators of subschemas kept per compiled schema: a tool schema has far fewer nodes."""


def accepts_of(validator: Any) -> Callable[[Any, Any], bool]:
    """``accepts(node, value)``: whether ``node``, a subschema of ``validator``'s schema (or
    a schema on its own), accepts ``value``; one validator per node, built once."""
    evolved: dict[int, tuple[Any, Any]] = {}

    def accepts(node: Any, value: Any) -> bool:
        entry = evolved.get(id(node))
        if entry is None or entry[0] is not node:
            if len(evolved) >= _EVOLVED_KEPT:
                evolved.clear()
            entry = evolved[id(node)] = (node, validator.evolve(schema=node))
        return bool(entry[1].is_valid(value))

    return accepts


def compile_validator(schema: Any) -> Any:
    """A validator of ``schema`` in the original's dialect, or None when ``schema`` is not
    a JSON Schema. Its ``schema`` is ``schema`` without ``$schema`` (which would make
    jsonschema pick that draft's rules for checks against it): read it from there."""
    if not isinstance(schema, dict | bool) or not _is_schema(schema):
        return None
    if isinstance(schema, dict) and "$schema" in schema:
        schema = {key: value for key, value in schema.items() if key != "$schema"}
    return _Validator(schema, registry=referencing.Registry(), format_checker=_FORMAT_CHECKER)
