"""Tool spans as the current span while a tool executes, so that spans a tool makes nest
under its ``execute_tool`` span.

The agent's events tell when a tool call starts and ends, but a listener cannot make a
span current inside the task that runs the tool. So the agent's tools are replaced, in
``agent.state.tools``, by copies whose ``execute`` makes the call's span current around
the original ``execute`` (and notes the exception it raised, or a cancellation). The
copies are made when the agent is instrumented and, for tools added later, when a run
ends; ``uninstrument()`` puts the originals back. A tool the agent runs without such a
copy still gets its span, only not as the current span.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context

from ._listener import AgentTelemetry

__all__ = ["ToolWrapping"]

# ``execute(tool_call_id, params, signal, on_update)``: what the agent passes at most.
_EXECUTE_ARGS = 4


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many of the agent's arguments ``fn`` takes (the agent passes only those)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return _EXECUTE_ARGS
    arity = 0
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            return _EXECUTE_ARGS
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            arity += 1
    return min(arity, _EXECUTE_ARGS)


def _traced_execute(original: Callable[..., Any], telemetry: AgentTelemetry) -> Callable[..., Any]:
    arity = _positional_arity(original)

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        arguments = (tool_call_id, params, signal, on_update)[:arity]
        record = telemetry.tool_call(tool_call_id, signal)
        if record is None:
            value = original(*arguments)
            return await value if inspect.isawaitable(value) else value
        token = otel_context.attach(record.context)
        try:
            value = original(*arguments)
            return await value if inspect.isawaitable(value) else value
        except Exception as exc:
            record.raised = type(exc).__qualname__
            record.span.record_exception(exc)
            raise
        except BaseException:
            record.cancelled = True  # its timeout, an abort or the caller's cancellation
            raise
        finally:
            otel_context.detach(token)

    return execute


class ToolWrapping:
    """One agent's traced tool copies: made once per original tool, recognised by
    identity, undone by ``restore``."""

    __slots__ = ("_by_copy", "_by_original", "_telemetry")

    def __init__(self, telemetry: AgentTelemetry) -> None:
        self._telemetry = telemetry
        self._by_original: dict[int, tuple[Any, Any]] = {}  # id(original) -> (original, copy)
        self._by_copy: dict[int, tuple[Any, Any]] = {}  # id(copy) -> (copy, original)

    def _is_copy(self, tool: Any) -> bool:
        entry = self._by_copy.get(id(tool))
        return entry is not None and entry[0] is tool

    def _copy_of(self, tool: Any) -> Any | None:
        entry = self._by_original.get(id(tool))
        if entry is not None and entry[0] is tool:
            return entry[1]
        execute = getattr(tool, "execute", None)
        if not callable(execute):
            return None
        try:
            traced = copy.copy(tool)
            traced.execute = _traced_execute(execute, self._telemetry)
        except (AttributeError, TypeError):
            return None  # an immutable tool object: it runs as it is
        self._by_original[id(tool)] = (tool, traced)
        self._by_copy[id(traced)] = (traced, tool)
        return traced

    def wrap(self, tools: list[Any]) -> None:
        """Replace, in place, every tool of ``tools`` that is not a traced copy yet."""
        for i, tool in enumerate(tools):
            if self._is_copy(tool):
                continue
            traced = self._copy_of(tool)
            if traced is not None:
                tools[i] = traced
        # forget the tools that left the list
        self._by_copy = {id(t): self._by_copy[id(t)] for t in tools if self._is_copy(t)}
        self._by_original = {id(o): (o, c) for c, o in self._by_copy.values()}

    def restore(self, tools: list[Any]) -> None:
        """Put the originals back, in place, and forget the copies."""
        for i, tool in enumerate(tools):
            if self._is_copy(tool):
                tools[i] = self._by_copy[id(tool)][1]
        self._by_copy.clear()
        self._by_original.clear()
