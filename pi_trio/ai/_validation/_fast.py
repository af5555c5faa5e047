"""The fast path of tool-argument validation: a compiled check that copies what it accepts.

`compile_fast_path` turns a tool's JSON Schema into a function that returns a copy of a
value the schema surely accepts (dicts and lists copied, everything else shared, as
``copy_json`` copies), or `DECLINED`, which means "ask jsonschema", never "invalid":
``_validate`` then coerces, validates and explains as before. One walk over the value
both checks and copies it.

It understands what msgspec (and so ``@tool``) generates: local ``$ref``s into ``$defs``
(recursive ones too), ``anyOf`` (nullable fields, unions), ``allOf``, ``enum`` and
``const`` with or without a ``type``, objects (``properties``, ``required``,
``additionalProperties``, ``propertyNames``, sizes), arrays (``items``, ``prefixItems``,
sizes, ``uniqueItems``), string lengths, ``pattern``, ``format`` (through the validator's
own format checker) and number bounds. A schema using any other assertion keyword
(``oneOf``, ``not``, ``if``…), an ``$id`` or an ``$anchor`` anywhere, a remote or
percent-encoded ``$ref``, or a draft older than 6 gets no fast path (``None``).

Each keyword is decided as jsonschema decides it, or the value is declined: a value of a
type JSON does not have (a ``Decimal``, a ``str`` subclass) wherever a keyword could apply
to it, an integral float where an integer is expected, a float ``multipleOf``, an
``enum`` value that is an array or an object, a value nested deeper than Python recurses.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import jsonschema

from ._checks import (
    DECLINED,
    LEAVES,
    NONE,
    SINGLE,
    FastPath,
    accept,
    all_of,
    array_check,
    copy_value,
    decline,
    enum_check,
    is_integer,
    is_null,
    number_check,
    object_check,
    string_check,
)
from ._dialect import DialectValidator
from ._regex import is_linear, regex_search

__all__ = ["DECLINED", "FastPath", "compile_fast_path"]

# The assertion keywords compiled here; a schema using another one that its validator
# knows (``type(validator).VALIDATORS``) gets no fast path.
_SUPPORTED: Final = frozenset(
    {
        "$ref",
        "additionalProperties",
        "allOf",
        "anyOf",
        "const",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "pattern",
        "prefixItems",
        "properties",
        "propertyNames",
        "required",
        "type",
        "uniqueItems",
    }
)
# Keywords that change how references resolve: a schema holding one anywhere (even as a
# property's name) gets no fast path.
_SCOPE_KEYWORDS: Final = frozenset({"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"})
# Drafts whose keywords mean here what they mean in 2020-12 (older ones differ on
# ``integer`` and ``exclusiveMinimum``); a ``$ref``'s siblings are checked even where the
# draft ignores them, which only declines more. The original's dialect, which tool
# validation uses, is 2020-12 where the fast path decides anything: its exceptions
# (tuple ``items``, ``dependencies``, malformed keyword values ignored, exact decimal
# ``multipleOf``) are all keywords or values compiled here as "decline".
_DRAFTS: Final = (
    DialectValidator,
    jsonschema.Draft202012Validator,
    jsonschema.Draft201909Validator,
    jsonschema.Draft7Validator,
    jsonschema.Draft6Validator,
)
_OBJECT_KEYWORDS: Final = (
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
)
_ARRAY_KEYWORDS: Final = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")
_STRING_KEYWORDS: Final = ("minLength", "maxLength", "pattern")
_NUMBER_KEYWORDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)
_TYPES: Final = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (NONE,),
}


class _Unsupported(Exception):
    """The schema uses something the fast path does not decide."""


def compile_fast_path(schema: Any, validator: Any) -> FastPath | None:
    """The fast path of ``schema`` (see the module docstring), whose jsonschema
    ``validator`` is given; ``None`` when the schema uses what it cannot decide."""
    if type(validator) not in _DRAFTS:
        return None
    known = frozenset(type(validator).VALIDATORS)
    try:
        if _declares_scope(schema):
            return None
        check = _Compiler(schema, known - _SUPPORTED, validator.format_checker).compile(schema)
    except (_Unsupported, RecursionError):
        return None

    def fast(value: Any) -> Any:
        try:
            return check(value)
        except RecursionError:  # nested deeper than Python recurses (or a cycle)
            return DECLINED

    return fast


class _Compiler:
    """Compiles one schema; ``$ref`` targets are compiled once each (recursive ones
    through a slot filled when their compilation ends). ``leaves`` maps the checks that
    only test a scalar value's type to the exact types they accept."""

    def __init__(self, root: Any, unsupported: frozenset[str], format_checker: Any) -> None:
        self.root = root
        self.unsupported = unsupported
        self.format_checker = format_checker
        self.refs: dict[str, FastPath] = {}
        self.compiling: dict[str, list[FastPath]] = {}
        self.leaves: dict[FastPath, frozenset[type]] = dict(LEAVES)

    def compile(self, schema: Any) -> FastPath:
        if schema is True:
            return accept
        if schema is False:
            return decline
        if not isinstance(schema, dict):
            raise _Unsupported
        if not self.unsupported.isdisjoint(schema.keys()):
            raise _Unsupported
        kinds = _kinds(schema.get("type"))
        checks: list[FastPath] = []
        strict: tuple[type, ...] = ()  # the one type a group below already insists on
        for group, compile_group, kind in (
            (_OBJECT_KEYWORDS, self._object, dict),
            (_ARRAY_KEYWORDS, self._array, list),
            (_STRING_KEYWORDS, self._string, str),
        ):
            if any(k in schema for k in group):
                only = kinds == (kind,)
                checks.append(compile_group(schema, only))
                if only:
                    strict = (kind,)
        if any(k in schema for k in _NUMBER_KEYWORDS):
            checks.append(self._number(schema))
        if kinds is not None and kinds != strict:
            checks.insert(0, self._type(kinds, schema["type"]))
        if "enum" in schema:
            checks.append(enum_check(_members(schema["enum"])))
        if "const" in schema:
            checks.append(enum_check([schema["const"]]))
        if "format" in schema and self.format_checker is not None:
            checks.append(self._format(schema["format"]))
        if "$ref" in schema:
            checks.append(self._ref(schema["$ref"]))
        if "allOf" in schema:
            checks.extend(self.compile(sub) for sub in _members(schema["allOf"]))
        if "anyOf" in schema:
            checks.append(self._any([self.compile(sub) for sub in _members(schema["anyOf"])]))
        return all_of(checks)

    def _leaf(self, kinds: frozenset[type]) -> FastPath:
        if not kinds.isdisjoint((dict, list)):
            return lambda value: copy_value(value) if type(value) in kinds else DECLINED

        def check_type(value: Any) -> Any:
            return value if type(value) in kinds else DECLINED

        self.leaves[check_type] = kinds
        return check_type

    def _type(self, kinds: tuple[type, ...], declared: Any) -> FastPath:
        names = [declared] if isinstance(declared, str) else declared
        if len(names) == 1 and names[0] in SINGLE:
            return SINGLE[names[0]]
        if "integer" in names and "number" not in names:  # integral floats are integers
            exact = self._leaf(frozenset(kinds))
            return lambda value: value if is_integer(value) is value else exact(value)
        return self._leaf(frozenset(kinds))

    def _any(self, checks: list[FastPath]) -> FastPath:
        if len(checks) == 1:
            return checks[0]
        leaves = self.leaves
        if all(check in leaves for check in checks):  # a nullable scalar, ``float | int``
            return self._leaf(frozenset().union(*(leaves[check] for check in checks)))
        others = [check for check in checks if check is not is_null]
        if len(others) == 1 and len(checks) == 2:  # a nullable object, array or enum
            other = others[0]
            return lambda value: None if value is None else other(value)
        members = tuple(checks)

        def check_any(value: Any) -> Any:
            for check in members:
                result = check(value)
                if result is not DECLINED:
                    return result
            return DECLINED

        return check_any

    def _format(self, name: Any) -> FastPath:
        conforms = self.format_checker.conforms
        return lambda value: copy_value(value) if conforms(value, name) else DECLINED

    def _ref(self, ref: Any) -> FastPath:
        if not isinstance(ref, str) or not ref.startswith("#") or "%" in ref:
            raise _Unsupported
        done = self.refs.get(ref)
        if done is not None:
            return done
        pending = self.compiling.get(ref)
        if pending is not None:  # a recursive reference: resolved when its target is done
            later = pending
            return lambda value: later[0](value)
        target = _resolve(self.root, ref[1:])
        slot: list[FastPath] = [decline]
        self.compiling[ref] = slot
        try:
            check = self.compile(target)
        finally:
            del self.compiling[ref]
        slot[0] = check
        self.refs[ref] = check
        return check

    # -- the keywords of one type

    def _object(self, schema: dict[str, Any], only: bool) -> FastPath:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        if not isinstance(properties, dict) or not isinstance(required, list):
            raise _Unsupported
        leaves: dict[str, frozenset[type]] = {}  # properties whose check is a type test
        checks: dict[str, FastPath] = {}
        for name, sub in properties.items():
            check = self.compile(sub)
            if check in self.leaves:
                leaves[name] = self.leaves[check]
            else:
                checks[name] = check
        required_names = frozenset(required)
        extra_check = None if extra is True else self.compile(extra)
        names_check = None if names is None else self.compile(names)
        low = _count(schema.get("minProperties", 0))
        high = schema.get("maxProperties")
        if high is not None:
            _count(high)
        return object_check(
            leaves, checks, required_names, extra_check, names_check, low, high, only=only
        )

    def _array(self, schema: dict[str, Any], only: bool) -> FastPath:
        items = schema.get("items", True)
        prefix = schema.get("prefixItems", [])
        if isinstance(items, list) or not isinstance(prefix, list):
            raise _Unsupported  # the tuple form of drafts before 2020-12
        item_check = accept if items is True else self.compile(items)
        prefix_checks = tuple(self.compile(sub) for sub in prefix)
        low = _count(schema.get("minItems", 0))
        high = schema.get("maxItems")
        if high is not None:
            _count(high)
        unique = schema.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise _Unsupported
        kinds = self.leaves.get(item_check)
        return array_check(prefix_checks, item_check, kinds, low, high, unique, only=only)

    def _string(self, schema: dict[str, Any], only: bool) -> FastPath:
        low = _count(schema.get("minLength", 0))
        high = schema.get("maxLength")
        if high is not None:
            _count(high)
        pattern = schema.get("pattern")
        if pattern is not None and (not isinstance(pattern, str) or not is_linear(pattern)):
            raise _Unsupported  # one that may backtrack runs in a child, on the slow path
        # the slow path's engine (ECMAScript when the extra is installed): the fast path
        # must never accept a string the schema's own check would reject
        search = functools.partial(regex_search, pattern) if pattern is not None else None
        return string_check(low, high, search, only=only)

    def _number(self, schema: dict[str, Any]) -> FastPath:
        bounds = []
        for keyword in _NUMBER_KEYWORDS:
            if keyword in schema:
                limit = schema[keyword]
                if type(limit) not in (int, float):
                    raise _Unsupported
                bounds.append((keyword, limit))

        return number_check(bounds)


def _kinds(declared: Any) -> tuple[type, ...] | None:
    if declared is None:
        return None
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not names:
        raise _Unsupported
    kinds: list[type] = []
    for name in names:
        if not isinstance(name, str) or name not in _TYPES:
            raise _Unsupported
        kinds.extend(k for k in _TYPES[name] if k not in kinds)
    return tuple(kinds)


def _resolve(root: Any, pointer: str) -> Any:
    """The JSON pointer ``pointer`` (a ``$ref``'s fragment) in ``root``."""
    if not pointer:
        return root
    if not pointer.startswith("/"):
        raise _Unsupported  # an anchor
    target = root
    for part in pointer[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise _Unsupported
    return target


def _declares_scope(value: Any) -> bool:
    if isinstance(value, dict):
        if not _SCOPE_KEYWORDS.isdisjoint(value.keys()):
            return True
        return any(_declares_scope(v) for v in value.values())
    if isinstance(value, list):
        return any(_declares_scope(v) for v in value)
    return False


def _members(value: Any) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _Unsupported
    return value


def _count(value: Any) -> int:
    if type(value) is not int:
        raise _Unsupported
    return value
