"""Tool-argument validation (the original's ``validateToolArguments`` and
``validateToolCall``, ``src/utils/validation.ts``).

`validate_tool_arguments` copies the arguments, coerces the copy as upstream 1.6 does
(``_coerce``: optional nulls dropped, ``"42"`` → 42 for a number, a single
value into a one-item array), validates it in upstream's dialect of JSON Schema
(``_dialect``) and returns it; the arguments handed in are never mutated. A
tool call whose argument text was not a JSON object (``arguments_error``) fails before any
of that with ``Invalid arguments for tool "<name>": <arguments_error>``. A failure raises
`ToolArgumentsError` with upstream's text::

    Validation failed for tool "<name>":
      - <path>: <message>

    Received arguments:
    <the arguments as handed in, JSON with 2-space indentation>

Paths and messages are pi-schema's (upstream 1.6, see ``_explain``): the
value's path joined with ``.``, ``root`` for the whole value; ``expected number, got
string``, ``missing`` at the path of a missing property, ``expected "add"``, ``unknown
field``. A ``$ref`` that names nothing fails the values at its place (``unresolved
reference <ref>``); remote references are never fetched. A schema that is not a JSON
Schema, or that recurses without end (``$ref``s in a circle without a check, or arguments
nested past Python's recursion limit), leaves the arguments unvalidated and logs a warning
on the ``pi_trio.ai`` logger naming the tool.

Arguments the schema surely accepts take a fast path (``_fast``): one compiled
walk checks and copies them, with nothing to drop or coerce, in a few microseconds
instead of jsonschema's hundred or more; anything it does not decide, every invalid value
included, goes the way described above.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from typing import Any, Protocol

import anyio.to_thread

from .._errors import PiError
from .._json._jsnum import js_number_text
from .._types import ToolCall
from ._budget import MAX_ERROR_ARGUMENTS_CHARS, MAX_ERROR_DETAILS, Budget

__all__ = [
    "ToolArgumentsError",
    "validate_tool_arguments",
    "validate_tool_arguments_async",
    "validate_tool_call",
]


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
    arguments to take) or raise `ToolArgumentsError`. Runs in the calling thread, bounded
    by the limits of ``_budget``; `validate_tool_arguments_async` does the same
    without blocking an event loop."""
    arguments = _arguments(tool, arguments)
    value, details = _engine().check(tool.name, tool.parameters, arguments)
    return _outcome(tool, arguments, value, details)


async def validate_tool_arguments_async(tool: _ToolLike, arguments: Any) -> dict[str, Any]:
    """`validate_tool_arguments` for an event loop: arguments the schema's fast path
    accepts are checked in place (no checkpoint); anything else is checked in a worker
    thread. Cancelling the caller (an abort) returns at once and stops the worker at its
    next step, killing a pattern's child process."""
    arguments = _arguments(tool, arguments)
    engine = _engine()
    value = engine.check_fast(tool.parameters, arguments)
    if value is not engine.DECLINED:
        return value  # type: ignore[no-any-return]
    budget = Budget()
    check = functools.partial(engine.check, tool.name, tool.parameters, arguments, budget)
    try:
        value, details = await anyio.to_thread.run_sync(check, abandon_on_cancel=True)
    except BaseException:
        budget.cancel()
        raise
    return _outcome(tool, arguments, value, details)


def _arguments(tool: _ToolLike, arguments: Any) -> Any:
    if isinstance(arguments, ToolCall):
        if arguments.arguments_error:
            raise ToolArgumentsError(
                f'Invalid arguments for tool "{tool.name}": {arguments.arguments_error}',
                tool_name=tool.name,
                arguments=arguments.arguments,
            )
        return arguments.arguments
    return arguments


def _outcome(
    tool: _ToolLike, arguments: Any, value: Any, details: list[tuple[str, str]] | None
) -> dict[str, Any]:
    if details is None:
        return value  # type: ignore[no-any-return]
    shown = details[:MAX_ERROR_DETAILS]
    lines = "\n".join(f"  - {path}: {message}" for path, message in shown)
    if len(details) > len(shown):
        lines += f"\n  - ... more problems, not listed (MAX_ERROR_DETAILS: {MAX_ERROR_DETAILS})"
    received = _pretty_json(arguments)
    if len(received) > MAX_ERROR_ARGUMENTS_CHARS:
        cut = len(received) - MAX_ERROR_ARGUMENTS_CHARS
        received = received[:MAX_ERROR_ARGUMENTS_CHARS] + f"\n... ({cut} more characters)"
    raise ToolArgumentsError(
        f'Validation failed for tool "{tool.name}":\n{lines or "Unknown validation error"}'
        f"\n\nReceived arguments:\n{received}",
        tool_name=tool.name,
        errors=details,
        arguments=arguments,
    )


_engine_module: Any = None


def _engine() -> Any:
    """The compiled-schema machinery, imported on the first validation (see
    ``_engine``) and kept: an import statement per call costs more than a
    tenth of a fast-path validation."""
    global _engine_module
    if _engine_module is None:
        from . import _engine as engine_module

        _engine_module = engine_module
    return _engine_module


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
