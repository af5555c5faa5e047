"""Tool-argument validation (reference/ai.md §8.2).

`validate_tool_arguments` copies the arguments, deletes optional nulls the schema rejects,
coerces scalars the way upstream does (``"42"`` → 42 for a number), validates with
jsonschema and returns the copy; the arguments handed in are never mutated. A tool call
whose argument text was not a JSON object (``arguments_error``) fails before any of that
with ``Invalid arguments for tool "<name>": <arguments_error>``. A failure raises
`ToolArgumentsError` with upstream's text::

    Validation failed for tool "<name>":
      - <path>: <message>

    Received arguments:
    <the arguments as handed in, JSON with 2-space indentation>

Paths and messages are pi-schema's (upstream 1.6, see ``_validation_explain``): the
value's path joined with ``.``, ``root`` for the whole value; ``expected number, got
string``, ``missing`` at the path of a missing property, ``expected "add"``, ``unknown
field``. Unlike upstream, local ``$ref``s are followed when coercing and when deciding
whether an optional property accepts null, since msgspec-generated schemas put every
object behind one.

Arguments the schema surely accepts take a fast path (``_validation_fast``): one compiled
walk checks and copies them, with nothing to drop or coerce, in a few microseconds
instead of jsonschema's hundred or more; anything it does not decide, every invalid value
included, goes the way described above.
Schemas without ``$schema`` are Draft 2020-12; remote references are never fetched. A
schema that jsonschema cannot use (invalid, unresolvable ``$ref``) leaves the arguments
unvalidated, as upstream does when its compiler fails, and logs a warning on the
``pi_trio.ai`` logger naming the tool.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final, Protocol

import jsonschema
import msgspec
import referencing
import referencing.exceptions

from ._errors import PiError
from ._jsnum import js_number_text
from ._json_parse import copy_json
from ._types import ToolCall
from ._validation_explain import explain
from ._validation_fast import DECLINED, compile_fast_path

__all__ = ["ToolArgumentsError", "validate_tool_arguments", "validate_tool_call"]

_logger = logging.getLogger("pi_trio.ai")

_CACHE_SIZE: Final = 256
"""Compiled validators kept (least recently used dropped first): more distinct tool schemas
than one process normally declares, few enough that a schema generator cannot grow memory."""
_MAX_REF_HOPS: Final = 32  # $ref / allOf / anyOf / oneOf steps on one value (cycle guard)
_JS_WHITESPACE: Final = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
_RADIX: Final = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")
_UNCHANGED: Final[Any] = object()
_MISSING: Final[Any] = object()
_DRAFT_7_AND_OLDER: Final = (
    jsonschema.Draft7Validator,
    jsonschema.Draft6Validator,
    jsonschema.Draft4Validator,
    jsonschema.Draft3Validator,
)


class ToolArgumentsError(PiError, ValueError):
    """Tool arguments do not match the tool's schema, or the tool does not exist; the
    message is the text the model sees."""

    def __init__(
        self,
        message: str,
        *,
        tool_name: str,
        errors: Iterable[tuple[str, str]] = (),
        arguments: Any = None,
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.errors: tuple[tuple[str, str], ...] = tuple(errors)
        """``(path, message)`` per validation error."""
        self.arguments = arguments


class _ToolLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def parameters(self) -> Any: ...


class _ToolCallLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> Any: ...


def validate_tool_call(tools: Iterable[_ToolLike], tool_call: _ToolCallLike) -> dict[str, Any]:
    """Validate a tool call against the tool of the same name; see `validate_tool_arguments`."""
    for tool in tools:
        if tool.name == tool_call.name:
            if isinstance(tool_call, ToolCall):
                return validate_tool_arguments(tool, tool_call)
            return validate_tool_arguments(tool, tool_call.arguments)
    raise ToolArgumentsError(
        f'Tool "{tool_call.name}" not found',
        tool_name=tool_call.name,
        arguments=tool_call.arguments,
    )


def validate_tool_arguments(tool: _ToolLike, arguments: Any) -> dict[str, Any]:
    """Return a validated, coerced copy of ``arguments`` (a dict, or a `ToolCall` whose
    arguments to take) or raise `ToolArgumentsError`."""
    if isinstance(arguments, ToolCall):
        if arguments.arguments_error:
            raise ToolArgumentsError(
                f'Invalid arguments for tool "{tool.name}": {arguments.arguments_error}',
                tool_name=tool.name,
                arguments=arguments.arguments,
            )
        arguments = arguments.arguments
    checker = _checker(tool.parameters)
    if checker is None:
        _warn_unvalidated(tool.name, "the parameters are not a valid JSON Schema")
        return copy_json(arguments)  # type: ignore[no-any-return]
    fast = checker.fast
    if fast is not None:
        # a copy of arguments the schema surely accepts: nothing to drop or coerce (both
        # only touch invalid values)
        copied = fast(arguments)
        if copied is not DECLINED:
            return copied  # type: ignore[no-any-return]
    value = copy_json(arguments)
    try:
        checker.normalize_optional_nulls(value, checker.schema)
        value = checker.coerce(value, checker.schema, 0)
        errors = list(checker.validator.iter_errors(value))
    except referencing.exceptions.Unresolvable as exc:
        _warn_unvalidated(tool.name, f"unresolvable reference: {exc}")
        return copy_json(arguments)  # type: ignore[no-any-return]
    if not errors:
        return value  # type: ignore[no-any-return]
    details = explain(
        checker.schema, value, checker.accepts, checker.resolve, draft7=checker.draft7
    )
    lines = "\n".join(f"  - {path}: {message}" for path, message in details)
    raise ToolArgumentsError(
        f'Validation failed for tool "{tool.name}":\n{lines or "Unknown validation error"}'
        f"\n\nReceived arguments:\n{_pretty_json(arguments)}",
        tool_name=tool.name,
        errors=details,
        arguments=arguments,
    )


@functools.lru_cache(maxsize=256)
def _warn_unvalidated(tool_name: str, reason: str) -> None:
    """Log once per tool and reason, not on every call of that tool."""
    _logger.warning(
        'Schema compilation failed for tool "%s": %s; its arguments are passed through unvalidated',
        tool_name,
        reason,
    )


# -- compiled schemas


class _Checker:
    """A compiled schema plus the schema-guided passes that run before validation."""

    def __init__(self, schema: Any, validator: Any) -> None:
        self.schema = schema
        self.validator = validator
        self.fast = compile_fast_path(schema, validator)
        # drafts before 2019-09: a $ref replaces its siblings
        self.draft7 = type(validator) in _DRAFT_7_AND_OLDER

    def accepts(self, schema: Any, value: Any) -> bool:
        return bool(self.validator.evolve(schema=schema).is_valid(value))

    def resolve(self, schema: Any) -> Any:
        """Follow local ``$ref``s (``#`` and ``#/json/pointer``) from ``schema``."""
        for _ in range(_MAX_REF_HOPS):
            ref = schema.get("$ref") if isinstance(schema, dict) else None
            if not isinstance(ref, str) or not ref.startswith("#"):
                return schema
            target: Any = self.schema
            for part in ref[1:].split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    return schema
            schema = target
        return schema

    def normalize_optional_nulls(self, value: Any, schema: Any) -> None:
        schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return
        if type(value) is list:
            items = schema.get("prefixItems", schema.get("items"))
            if isinstance(items, list):
                for item, item_schema in zip(value, items, strict=False):
                    self.normalize_optional_nulls(item, item_schema)
            elif isinstance(items, dict):
                for item in value:
                    self.normalize_optional_nulls(item, items)
            return
        properties = schema.get("properties")
        if type(value) is not dict or not isinstance(properties, dict):
            return
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        for key, sub in properties.items():
            if key not in value:
                continue
            if value[key] is None and key not in required and not self.accepts(sub, None):
                del value[key]
            else:
                self.normalize_optional_nulls(value[key], sub)

    def coerce(self, value: Any, schema: Any, hops: int) -> Any:
        if not isinstance(schema, dict) or hops > _MAX_REF_HOPS:
            return value
        if "$ref" in schema:
            target = self.resolve(schema)
            if target is not schema:
                value = self.coerce(value, target, hops + 1)
        for sub in _list(schema.get("allOf")):
            value = self.coerce(value, sub, hops + 1)
        for keyword in ("anyOf", "oneOf"):
            members = _list(schema.get(keyword))
            if members and not any(self.accepts(member, value) for member in members):
                for member in members:
                    candidate = self.coerce(copy_json(value), member, hops + 1)
                    if self.accepts(member, candidate):
                        value = candidate
                        break
        types = _types(schema)
        if types and not any(_has_type(value, name) for name in types):
            for name in types:
                candidate = _coerce_scalar(value, name)
                if candidate is not _UNCHANGED:
                    value = candidate
                    break
        if "object" in types and type(value) is dict:
            properties = schema.get("properties")
            properties = properties if isinstance(properties, dict) else {}
            extra = schema.get("additionalProperties")
            for key in list(value):
                if key in properties:
                    value[key] = self.coerce(value[key], properties[key], 0)
                elif isinstance(extra, dict):
                    value[key] = self.coerce(value[key], extra, 0)
        if "array" in types and type(value) is list:
            prefix = schema.get("prefixItems", schema.get("items"))
            rest = schema.get("items") if "prefixItems" in schema else None
            if isinstance(prefix, dict):
                prefix, rest = [], prefix
            prefix = _list(prefix)
            for index, item in enumerate(value):
                sub = prefix[index] if index < len(prefix) else rest
                value[index] = self.coerce(item, sub, 0)
        return value


_cache: OrderedDict[bytes | str, _Checker | None] = OrderedDict()
_cache_lock = threading.Lock()
# The schema objects seen last, with their checkers: a schema asked for again is found by
# identity and a deep comparison with the checker's copy (cheaper than encoding it for the
# content key), so one changed in place since is compiled anew, as before.
_seen: dict[int, tuple[Any, _Checker]] = {}


def _checker(schema: Any) -> _Checker | None:
    seen = _seen.get(id(schema))
    if seen is not None and seen[0] is schema and seen[1].schema == schema:
        return seen[1]
    try:
        # insertion-ordered keys: the same schema reordered is only a second cache entry
        key: bytes | str = msgspec.json.encode(schema)
    except (TypeError, msgspec.EncodeError):
        try:
            key = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON: compile it, but not for the cache
            return _compile(schema)
    # a hit needs no lock: ``get`` and ``move_to_end`` are each atomic
    checker = _cache.get(key, _MISSING)
    if checker is not _MISSING:
        with contextlib.suppress(KeyError):  # evicted by another thread meanwhile
            _cache.move_to_end(key)
    else:
        checker = _compile(copy_json(schema))
        with _cache_lock:
            _cache[key] = checker
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    if checker is not None:
        with _cache_lock:
            _seen[id(schema)] = (schema, checker)
            while len(_seen) > _CACHE_SIZE:
                del _seen[next(iter(_seen))]
    return checker  # type: ignore[no-any-return]


def _compile(schema: Any) -> _Checker | None:
    if not isinstance(schema, dict | bool):
        return None
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    validator = cls(schema, registry=referencing.Registry(), format_checker=cls.FORMAT_CHECKER)
    return _Checker(schema, validator)


# -- coercion rules (the same for every keyword that reaches them)


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    return [name for name in _list(declared) if isinstance(name, str)]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _has_type(value: Any, name: str) -> bool:
    if name == "number":
        return _is_number(value)
    if name == "integer":
        return _is_number(value) and (isinstance(value, int) or value.is_integer())
    if name == "boolean":
        return isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    return True


def _coerce_scalar(value: Any, name: str) -> Any:
    """The converted value, or `_UNCHANGED` when ``value`` has no form of type ``name``."""
    if name in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, str):
            number = _js_number(value)
            if number is None or (name == "integer" and not isinstance(number, int)):
                return _UNCHANGED
            return number
    elif name == "boolean":
        if value is None:
            return False
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
        if _is_number(value) and value in (0, 1):
            return value == 1
    elif name == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if _is_number(value):
            return js_number_text(value)
    elif name == "null" and (value == "" or value is False or (_is_number(value) and value == 0)):
        return None
    return _UNCHANGED


def _js_number(text: str) -> int | float | None:
    """JavaScript's ``Number(text)`` for a non-blank, finite result (ints when integral)."""
    text = text.strip(_JS_WHITESPACE)
    if _RADIX.fullmatch(text):
        return int(text, 0)
    if not _DECIMAL.fullmatch(text):
        return None
    if _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # beyond int()'s digit limit
            pass
    number = float(text)
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() else number


# -- error text


def _pretty_json(value: Any) -> str:
    """``JSON.stringify(value, null, 2)``: numbers in JavaScript's spelling; a value that
    is not JSON shows by ``repr``."""
    try:
        return _pretty(value, "", set())
    except (ValueError, RecursionError):  # a cycle, or nesting deeper than Python recurses
        return repr(value)


def _pretty(value: Any, indent: str, seen: set[int]) -> str:
    if isinstance(value, float) and math.isfinite(value):
        return js_number_text(value)
    if not isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=repr)
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    if id(value) in seen:
        raise ValueError("a cycle")
    seen.add(id(value))
    inner = indent + "  "
    if isinstance(value, dict):
        items = [
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, inner, seen)}"
            for k, v in value.items()
        ]
        text = "{\n" + ",\n".join(items) + f"\n{indent}}}"
    else:
        items = [f"{inner}{_pretty(v, inner, seen)}" for v in value]
        text = "[\n" + ",\n".join(items) + f"\n{indent}]"
    seen.discard(id(value))
    return text
