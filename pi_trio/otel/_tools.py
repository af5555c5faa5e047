"""Tool spans as the current span while a tool executes, so that spans a tool makes nest
under its ``execute_tool`` span.

The agent's events tell when a tool call starts and ends, but a listener cannot make a
span current inside the task that runs the tool. So the agent's tools are replaced, in
``agent.state.tools``, by copies whose ``execute`` runs the original ``execute`` in a
context of its own where the call's span is current (and notes the exception it raised,
or a cancellation). The
copies are made when the agent is instrumented and, for tools added later, when a run
ends; ``uninstrument()`` puts the originals back. A tool the agent runs without such a
copy still gets its span, only not as the current span.
"""

from __future__ import annotations

import contextvars
import copy
import inspect
from collections.abc import Callable, Generator
from typing import Any

from opentelemetry import context as otel_context

from ..agent.extend import positional_arity
from ._listener import AgentTelemetry
from ._semconv import EXCEPTION_TYPE

__all__ = ["ToolWrapping"]


class _InContext:
    """``await _InContext(awaitable, context)`` is ``await awaitable`` with each of its
    steps run in ``context`` (as a task runs its coroutine): what the tool sets there
    stays there. A parallel batch runs its first call in the agent's own task and starts
    the other calls as tasks once that one waits; those tasks copy the agent task's
    context, which thus never holds another call's span."""

    __slots__ = ("_awaitable", "_context")

    def __init__(self, awaitable: Any, context: contextvars.Context) -> None:
        self._awaitable = awaitable
        self._context = context

    def __await__(self) -> Generator[Any, Any, Any]:
        steps = self._awaitable.__await__()
        run = self._context.run
        try:
            request = run(steps.send, None)
        except StopIteration as stop:
            return stop.value
        while True:
            try:
                reply = yield request
            except GeneratorExit:
                run(steps.close)
                raise
            except BaseException as exc:
                try:
                    request = run(steps.throw, exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    request = run(steps.send, reply)
                except StopIteration as stop:
                    return stop.value


def _traced_execute(original: Callable[..., Any], telemetry: AgentTelemetry) -> Callable[..., Any]:
    arity = positional_arity(original)

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        arguments = (tool_call_id, params, signal, on_update)[:arity]
        record = telemetry.tool_call(tool_call_id, signal)
        if record is None:
            value = original(*arguments)
            return await value if inspect.isawaitable(value) else value
        context = contextvars.copy_context()
        context.run(otel_context.attach, record.context)  # this context only: no detach
        try:
            value = context.run(original, *arguments)
            return await _InContext(value, context) if inspect.isawaitable(value) else value
        except Exception as exc:
            record.raised = type(exc).__qualname__
            if telemetry.capture_content:
                record.span.record_exception(exc)
            else:  # the message and the traceback's last line often quote the arguments
                record.span.add_event("exception", {EXCEPTION_TYPE: record.raised})
            raise
        except BaseException:
            record.cancelled = True  # its timeout, an abort or the caller's cancellation
            raise

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
