"""One batch of tool calls: preflight, execution, hooks, events and result messages.

Every call of a batch ends with exactly one outcome and one result message, whatever
happens: a call that is cancelled by an abort, or never started because of one, gets
``Operation aborted``. ``finish_aborted()`` writes those outcomes after the abort scope.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    validate_tool_arguments,
)
from ._dispatch import Dispatcher
from ._hooks import call_hook, coerce_result, positional_arity
from ._parallel import ToolGroup, run_concurrently
from ._types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)

__all__ = ["ABORTED_TOOL_TEXT", "ToolBatch", "error_result", "truncated_call_text"]

ABORTED_TOOL_TEXT = "Operation aborted"


def error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details={})


def truncated_call_text(name: str) -> str:
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, '
        "so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )


class _Outcome:
    __slots__ = ("duration_ms", "is_error", "result")

    def __init__(self, result: AgentToolResult, is_error: bool, duration_ms: int | None = None):
        self.result = result
        self.is_error = is_error
        self.duration_ms = duration_ms


def _immediate(text: str, terminate: bool | None = None) -> _Outcome:
    result = error_result(text)
    if terminate:
        result.terminate = True
    return _Outcome(result, True)


class _Prepared:
    __slots__ = ("adapted", "args", "tool")

    def __init__(self, tool: Any, args: Any, adapted: bool) -> None:
        self.tool = tool
        self.args = args
        self.adapted = adapted  # the tool's own prepare_arguments ran


def _normalize_result(tool_name: str, value: Any) -> AgentToolResult:
    if isinstance(value, AgentToolResult):
        return value
    if value is None:
        return AgentToolResult()
    if isinstance(value, str):
        return AgentToolResult(content=[TextContent(text=value)])
    if isinstance(value, dict):
        try:
            return msgspec.convert(value, AgentToolResult, from_attributes=True)
        except msgspec.ValidationError as exc:
            raise TypeError(
                f"Tool {tool_name} returned {value!r}, which is not a valid AgentToolResult: {exc}"
            ) from exc
    raise TypeError(
        f"Tool {tool_name} returned {value!r}; expected an AgentToolResult "
        "(or a dict of its fields, a str, or None)"
    )


class ToolBatch:
    """The tool calls of one assistant message. ``run()`` executes them; after an abort,
    ``finish_aborted()`` (called outside the cancelled scope) completes every call."""

    def __init__(
        self,
        *,
        message: AssistantMessage,
        calls: list[ToolCall],
        context: AgentContext,
        config: Any,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        call_hook: Callable[..., Awaitable[Any]],
        check: Callable[[], Awaitable[None]],
        tool_group: ToolGroup | None = None,
    ) -> None:
        self.message = message
        self.calls = calls
        self.context = context
        self.config = config
        self.dispatcher = dispatcher
        self.signal = signal
        self._call_hook = call_hook
        self._check = check
        n = len(calls)
        self.outcomes: list[_Outcome | None] = [None] * n
        # progress flags per call (0/1); bytearrays are not tracked by the garbage
        # collector, which matters with hundreds of runs in flight
        self.started = bytearray(n)
        self.ended = bytearray(n)
        self.results: list[ToolResultMessage | None] = [None] * n
        self.results_started = bytearray(n)
        self.results_emitted = bytearray(n)
        self._failure: BaseException | None = None
        self._tool_group = tool_group

    # ------------------------------------------------------------------ events

    async def _emit_start(self, i: int) -> None:
        call = self.calls[i]
        self.started[i] = 1
        await self.dispatcher.emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )

    async def _emit_end(self, i: int) -> None:
        call = self.calls[i]
        outcome = self.outcomes[i]
        assert outcome is not None
        self.ended[i] = 1
        await self.dispatcher.emit(
            ToolExecutionEndEvent(
                tool_call_id=call.id,
                tool_name=call.name,
                result=outcome.result,
                is_error=outcome.is_error,
                duration_ms=outcome.duration_ms,
            )
        )

    async def _emit_result_message(self, i: int) -> None:
        call = self.calls[i]
        outcome = self.outcomes[i]
        assert outcome is not None
        result = outcome.result
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(result.content) if result.content is not None else [],
            details=result.details,
            usage=result.usage,
            is_error=outcome.is_error,
            duration_ms=outcome.duration_ms,
        )
        self.results[i] = message
        self.results_started[i] = 1
        await self.dispatcher.emit(MessageStartEvent(message=message))
        await self._end_result_message(i)

    async def _end_result_message(self, i: int) -> None:
        self.results_emitted[i] = 1
        await self.dispatcher.emit(MessageEndEvent(message=self.results[i]))

    # ------------------------------------------------------------------ running

    def is_sequential(self) -> bool:
        if self.config.tool_execution == "sequential":
            return True
        names = {call.name for call in self.calls}
        return any(
            getattr(tool, "execution_mode", None) == "sequential"
            for tool in self.context.tools
            if tool.name in names
        )

    async def run(self) -> None:
        if self.is_sequential():
            for i in range(len(self.calls)):
                await self._emit_start(i)
                prepared = await self._preflight(i)
                if isinstance(prepared, _Prepared):
                    prepared = await self._execute(i, prepared)
                self.outcomes[i] = prepared
                await self._emit_end(i)
                await self._emit_result_message(i)
            return
        jobs: list[tuple[int, _Prepared]] = []
        for i in range(len(self.calls)):
            await self._emit_start(i)
            prepared = await self._preflight(i)
            if isinstance(prepared, _Prepared):
                jobs.append((i, prepared))
            else:
                self.outcomes[i] = prepared
                await self._emit_end(i)
        if len(jobs) == 1:
            await self._job(*jobs[0], None)
        elif jobs:
            await self._run_parallel(jobs)
        if self._failure is not None:
            raise self._failure
        for i in range(len(self.calls)):
            await self._emit_result_message(i)

    async def _run_parallel(self, jobs: list[tuple[int, _Prepared]]) -> None:
        limit = self.config.max_concurrent_tools
        limiter = anyio.CapacityLimiter(limit) if limit else None
        await run_concurrently(
            [
                (
                    partial(self._job, i, prepared, limiter),
                    f"tool {self.calls[i].name} {self.calls[i].id}",
                )
                for i, prepared in jobs
            ],
            self._tool_group,
        )

    async def _job(
        self, i: int, prepared: _Prepared, limiter: anyio.CapacityLimiter | None
    ) -> None:
        if limiter is None:
            outcome = await self._execute(i, prepared)
        else:
            async with limiter:
                outcome = await self._execute(i, prepared)
        self.outcomes[i] = outcome
        try:
            await self._emit_end(i)
        except Exception as exc:
            # A listener failed. Sibling tools keep running to completion; the batch
            # reports the failure once every call has settled.
            if self._failure is None:
                self._failure = exc

    def terminates(self) -> bool:
        outcomes = [o for o in self.outcomes if o is not None]
        return bool(outcomes) and all(o.result.terminate is True for o in outcomes)

    # ------------------------------------------------------------------ preflight

    async def _preflight(self, i: int) -> _Outcome | _Prepared:
        prepared = self._prepare(i)
        if isinstance(prepared, _Prepared) and prepared.adapted:
            await self._check()  # the tool's prepare_arguments ran
        if self.config.before_tool_call is None or not isinstance(prepared, _Prepared):
            return prepared
        return await self._before_tool_call(i, prepared)

    def _prepare(self, i: int) -> _Outcome | _Prepared:
        """Find the tool and validate the arguments (no hook involved)."""
        call = self.calls[i]
        tool = next((t for t in self.context.tools if t.name == call.name), None)
        if tool is None:
            return _immediate(f"Tool {call.name} not found")
        try:
            arguments = call.arguments
            prepare = getattr(tool, "prepare_arguments", None)
            if prepare is not None:
                prepared_args = prepare(arguments)
                if prepared_args is not arguments:
                    arguments = prepared_args
            args = validate_tool_arguments(tool, arguments)
        except Exception as exc:
            return _immediate(str(exc) or type(exc).__name__)
        return _Prepared(tool, args, prepare is not None)

    async def _before_tool_call(self, i: int, prepared: _Prepared) -> _Outcome | _Prepared:
        hook = self.config.before_tool_call
        try:
            raw = await self._call_hook(
                hook,
                BeforeToolCallContext(
                    assistant_message=self.message,
                    tool_call=self.calls[i],
                    args=prepared.args,
                    context=self.context,
                ),
                self.signal,
            )
            decision = coerce_result(raw, BeforeToolCallResult, "before_tool_call")
        except Exception as exc:
            return _immediate(str(exc) or type(exc).__name__)
        if decision is not None and decision.block:
            return _immediate(
                decision.reason or "Tool execution was blocked",
                terminate=decision.terminate is True,
            )
        return prepared

    # ------------------------------------------------------------------ execution

    async def _execute(self, i: int, prepared: _Prepared) -> _Outcome:
        call = self.calls[i]
        tool = prepared.tool
        dispatcher = self.dispatcher
        live = True

        def on_update(partial_result: Any) -> None:
            if live:
                dispatcher.push(
                    ToolExecutionUpdateEvent(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        args=call.arguments,
                        partial_result=_normalize_result(call.name, partial_result),
                    )
                )

        execute = tool.execute
        arguments = (call.id, prepared.args, self.signal, on_update)[: positional_arity(execute)]
        timeout = getattr(tool, "timeout", None)
        started = time.perf_counter()
        try:
            if timeout is None:
                value = execute(*arguments)
                if inspect.isawaitable(value):
                    value = await value
                timed_out = False
            else:
                with anyio.move_on_after(timeout) as deadline:
                    value = execute(*arguments)
                    if inspect.isawaitable(value):
                        value = await value
                timed_out = deadline.cancelled_caught
            if timed_out:
                outcome = _Outcome(
                    error_result(f'Tool "{call.name}" timed out after {timeout:g}s'), True
                )
            else:
                result = _normalize_result(call.name, value)
                outcome = _Outcome(result, result.is_error is True)
        except Exception as exc:
            outcome = _Outcome(error_result(str(exc) or type(exc).__name__), True)
        finally:
            live = False
        outcome.duration_ms = round((time.perf_counter() - started) * 1000)
        # The call has finished: an abort from here on keeps this result.
        self.outcomes[i] = outcome
        if not dispatcher.idle:
            await dispatcher.settle()
        if self.config.after_tool_call is None:
            return outcome
        # The hook's answer is kept even when the run is aborted while it runs.
        final = self.outcomes[i] = await self._finalize(call, prepared, outcome)
        await self._check()
        return final

    async def _finalize(self, call: ToolCall, prepared: _Prepared, outcome: _Outcome) -> _Outcome:
        hook = self.config.after_tool_call
        if hook is None:
            return outcome
        try:
            raw = await call_hook(
                hook,
                AfterToolCallContext(
                    assistant_message=self.message,
                    tool_call=call,
                    args=prepared.args,
                    result=outcome.result,
                    is_error=outcome.is_error,
                    context=self.context,
                ),
                self.signal,
            )
            override = coerce_result(raw, AfterToolCallResult, "after_tool_call")
        except Exception as exc:
            return _Outcome(error_result(str(exc) or type(exc).__name__), True, outcome.duration_ms)
        if override is None:
            return outcome
        result = msgspec.structs.replace(outcome.result)
        if override.content is not None:
            result.content = override.content
        if override.details is not None:
            result.details = override.details
        if override.usage is not None:
            result.usage = override.usage
        if override.terminate is not None:
            result.terminate = override.terminate
        if override.structured_content is not None:
            result.structured_content = override.structured_content
        elif override.content is not None:
            result.structured_content = None
        is_error = outcome.is_error if override.is_error is None else override.is_error
        return _Outcome(result, is_error, outcome.duration_ms)

    # ------------------------------------------------------------------ truncated / aborted

    async def fail_truncated(self) -> None:
        """The message hit the output limit: no call is executed; each gets an error."""
        for i, call in enumerate(self.calls):
            await self._emit_start(i)
            self.outcomes[i] = _immediate(truncated_call_text(call.name))
            await self._emit_end(i)
            await self._emit_result_message(i)

    async def finish_aborted(self) -> None:
        """After an abort: every call without an outcome gets ``Operation aborted``; the
        missing start/end events and result messages are emitted in source order."""
        for i in range(len(self.calls)):
            if self.outcomes[i] is None:
                self.outcomes[i] = _immediate(ABORTED_TOOL_TEXT)
            if not self.started[i]:
                await self._emit_start(i)
            if not self.ended[i]:
                await self._emit_end(i)
        for i in range(len(self.calls)):
            if self.results_started[i] and not self.results_emitted[i]:
                await self._end_result_message(i)
        for i in range(len(self.calls)):
            if not self.results_started[i]:
                await self._emit_result_message(i)

    def result_messages(self) -> list[ToolResultMessage]:
        return [r for r in self.results if r is not None]
