"""Tool-argument validation (reference/ai.md §8.2).

`validate_tool_arguments` copies the arguments, coerces the copy as upstream 1.6 does
(``_validation_coerce``: optional nulls dropped, ``"42"`` → 42 for a number, a single
value into a one-item array), validates it in upstream's dialect of JSON Schema
(``_validation_dialect``) and returns it; the arguments handed in are never mutated. A
tool call whose argument text was not a JSON object (``arguments_error``) fails before any
of that with ``Invalid arguments for tool "<name>": <arguments_error>``. A failure raises
`ToolArgumentsError` with upstream's text::

    Validation failed for tool "<name>":
      - <path>: <message>

    Received arguments:
    <the arguments as handed in, JSON with 2-space indentation>

Paths and messages are pi-schema's (upstream 1.6, see ``_validation_explain``): the
value's path joined with ``.``, ``root`` for the whole value; ``expected number, got
string``, ``missing`` at the path of a missing property, ``expected "add"``, ``unknown
field``. A ``$ref`` that names nothing fails the values at its place (``unresolved
reference <ref>``); remote references are never fetched. A schema that is not a JSON
Schema, or that recurses without end (``$ref``s in a circle without a check, or arguments
nested past Python's recursion limit), leaves the arguments unvalidated and logs a warning
on the ``pi_trio.ai`` logger naming the tool.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final, Protocol

import msgspec

from ._errors import PiError
from ._jsnum import js_number_text
from ._json_parse import copy_json
from ._types import ToolCall
from ._validation_coerce import coerce
from ._validation_dialect import accepts_of, compile_validator
from ._validation_explain import explain
from ._validation_refs import resolver_of

__all__ = ["ToolArgumentsError", "validate_tool_arguments", "validate_tool_call"]

_logger = logging.getLogger("pi_trio.ai")

_CACHE_SIZE: Final = 256
"""Compiled validators kept (least recently used dropped first): more distinct tool schemas
than one process normally declares, few enough that a schema generator cannot grow memory."""


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
    value = copy_json(arguments)
    checker = _checker(tool.parameters)
    if checker is None:
        _warn_unvalidated(tool.name, "the parameters are not a valid JSON Schema")
        return value  # type: ignore[no-any-return]
    fast = checker.fast
    if fast is not None and fast(value):
        # Already valid: nothing to drop or coerce (both only touch invalid values).
        return value  # type: ignore[no-any-return]
    try:
        value, valid = coerce(value, checker.schema, checker.accepts, checker.resolve)
        if valid:
            return value  # type: ignore[no-any-return]
    except RecursionError:
        _warn_unvalidated(
            tool.name,
            "checking recursed without end ($refs in a circle, or arguments nested too deep)",
        )
        return copy_json(arguments)  # type: ignore[no-any-return]
    details = explain(checker.schema, value, checker.accepts, checker.resolve)
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
        self.fast = _fast_check(schema)
        self._accepts = accepts_of(validator)
        self._resolve = resolver_of(schema)

    def accepts(self, schema: Any, value: Any) -> bool:
        return self._accepts(schema, value)

    def resolve(self, schema: Any) -> Any:
        return self._resolve(schema)


_cache: OrderedDict[bytes | str, _Checker | None] = OrderedDict()
_cache_lock = threading.Lock()


def _checker(schema: Any) -> _Checker | None:
    try:
        # insertion-ordered keys: the same schema reordered is only a second cache entry
        key: bytes | str = msgspec.json.encode(schema)
    except (TypeError, msgspec.EncodeError):
        try:
            key = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON: compile it, but not for the cache
            return _compile(schema)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    checker = _compile(copy_json(schema))
    with _cache_lock:
        _cache[key] = checker
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return checker


def _compile(schema: Any) -> _Checker | None:
    validator = compile_validator(schema)
    return None if validator is None else _Checker(validator.schema, validator)


# -- a fast structural check for the simple schemas most tools have

# Keywords the fast check understands; a schema using any other one is left to jsonschema.
_FAST_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "description",
        "title",
        "default",
        "$schema",
        "examples",
    }
)
_FAST_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def _fast_check(schema: Any) -> Any:
    """A predicate that is true only for values the schema accepts, for schemas made of
    plain types, properties, required, boolean additionalProperties, items and string
    enums; ``None`` for anything else. False means "ask jsonschema", never "invalid"."""
    if not isinstance(schema, dict) or not set(schema) <= _FAST_KEYWORDS:
        return None
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _FAST_TYPES:
        return None
    enum = schema.get("enum")
    if enum is not None:
        if (
            kind != "string"
            or not isinstance(enum, list)
            or not all(isinstance(e, str) for e in enum)
        ):
            return None
        allowed = frozenset(enum)
        return lambda value: isinstance(value, str) and value in allowed
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        extra = schema.get("additionalProperties", True)
        if not isinstance(properties, dict) or not isinstance(required, list):
            return None
        if not isinstance(extra, bool) or not all(isinstance(r, str) for r in required):
            return None
        checks = {}
        for name, sub in properties.items():
            check = _fast_check(sub)
            if check is None:
                return None
            checks[name] = check

        def check_object(value: Any) -> bool:
            if type(value) is not dict:
                return False
            for name in required:
                if name not in value:
                    return False
            for name, item in value.items():
                check = checks.get(name)
                if check is None:
                    if not extra:
                        return False
                elif not check(item):
                    return False
            return True

        return check_object
    if kind == "array":
        items = schema.get("items")
        check_item = (lambda _: True) if items is None else _fast_check(items)
        if check_item is None:
            return None
        return lambda value: type(value) is list and all(check_item(v) for v in value)
    return lambda value: _has_type(value, kind)


# -- JSON types


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
