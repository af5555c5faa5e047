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

Arguments the schema surely accepts take a fast path (``_validation_fast``): one compiled
walk checks and copies them, with nothing to drop or coerce, in a few microseconds
instead of jsonschema's hundred or more; anything it does not decide, every invalid value
included, goes the way described above.
"""

from __future__ import annotations

import contextlib
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
from ._validation_fast import DECLINED, compile_fast_path
from ._validation_refs import resolver_of

__all__ = ["ToolArgumentsError", "validate_tool_arguments", "validate_tool_call"]

_logger = logging.getLogger("pi_trio.ai")

_MISSING: Final[Any] = object()
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
        self.fast = compile_fast_path(schema, validator)
        self._accepts = accepts_of(validator)
        self._resolve = resolver_of(schema)

    def accepts(self, schema: Any, value: Any) -> bool:
        return self._accepts(schema, value)

    def resolve(self, schema: Any) -> Any:
        return self._resolve(schema)


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
    validator = compile_validator(schema)
    return None if validator is None else _Checker(validator.schema, validator)


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
