"""One tool call, start to finish, without events: prepare → validate → ``before_tool_call``
→ execute → ``after_tool_call``.

The batch of a response (``_batch.ToolBatch``) runs each call through these steps and
emits the events around them; ``run_tool_call`` runs one call through the very same steps
for a tool that calls other tools (a nested call), so the hooks (permission checks, for
example) apply to those calls too. Every step ends in data: an unknown tool, arguments
that do not parse or validate, a blocked call, a tool that raises or times out all give an
error result (``is_error=True``), never an exception; cancellation propagates.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    TextContent,
    ToolCall,
    validate_tool_arguments_async,
)
from ._config import AfterToolCallHook, BeforeToolCallHook
from ._hooks import call_hook, coerce_result, positional_arity
from ._types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)

__all__ = [
    "ABORTED_TOOL_TEXT",
    "PreparedCall",
    "ToolCallOutcome",
    "after_call",
    "as_tool_result",
    "before_call",
    "error_result",
    "execute_call",
    "immediate",
    "prepare_call",
    "run_tool_call",
    "truncated_call_text",
]

ABORTED_TOOL_TEXT = "Operation aborted"


class ToolCallOutcome(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """How one tool call ended: its ``result`` (what the model sees), whether it is an
    error, and ``duration_ms`` when the tool actually executed."""

    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None


class PreparedCall:
    """A call that passed preparation: its tool and validated arguments."""

    __slots__ = ("adapted", "args", "tool")

    def __init__(self, tool: Any, args: Any, adapted: bool) -> None:
        self.tool = tool
        self.args = args
        self.adapted = adapted  # the tool's own prepare_arguments ran


def error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text=text)], details={})


def immediate(call: ToolCall, text: str, terminate: bool | None = None) -> ToolCallOutcome:
    """An error outcome of a call that never executed."""
    result = error_result(text)
    if terminate:
        result.terminate = True
    return ToolCallOutcome(tool_call=call, result=result, is_error=True)


def truncated_call_text(name: str) -> str:
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, '
        "so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )


def as_tool_result(tool_name: str, value: Any) -> AgentToolResult:
    """What a tool's ``execute`` returned (or sent to ``on_update``), as the agent takes
    it: an ``AgentToolResult`` as it is, a ``str`` as its text, a dict as its fields,
    ``None`` as an empty result. Anything else is a ``TypeError`` naming the tool (the
    agent reports it to the model as an error result)."""
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
    if inspect.isawaitable(value):
        raise TypeError(f"Tool {tool_name} returned an awaitable it did not await: {value!r}")
    raise TypeError(
        f"Tool {tool_name} returned {value!r}; expected an AgentToolResult "
        "(or a dict of its fields, a str, or None)"
    )


async def prepare_call(call: ToolCall, tools: Sequence[Any]) -> ToolCallOutcome | PreparedCall:
    """Find the tool, adapt the arguments (the tool's ``prepare_arguments``) and validate
    them. Arguments whose text did not parse (``call.arguments_error``) fail here, so no
    hook runs for them. Arguments the schema's fast path accepts are checked without a
    checkpoint; the rest in a worker thread that an abort stops
    (``validate_tool_arguments_async``)."""
    tool = next((t for t in tools if t.name == call.name), None)
    if tool is None:
        return immediate(call, f"Tool {call.name} not found")
    prepare = getattr(tool, "prepare_arguments", None)
    try:
        arguments: Any = call
        if prepare is not None:
            adapted = prepare(call.arguments)
            if adapted is not call.arguments:
                arguments = msgspec.structs.replace(call, arguments=adapted)
        args = await validate_tool_arguments_async(tool, arguments)
    except Exception as exc:
        return immediate(call, str(exc) or type(exc).__name__)
    return PreparedCall(tool, args, prepare is not None)


async def before_call(
    hook: BeforeToolCallHook,
    run_hook: Callable[..., Awaitable[Any]],
    assistant: AssistantMessage,
    call: ToolCall,
    prepared: PreparedCall,
    context: AgentContext,
    signal: AbortSignal | None,
) -> ToolCallOutcome | PreparedCall:
    """``before_tool_call``: it may block the call (``reason`` becomes the error text)."""
    try:
        raw = await run_hook(
            hook,
            BeforeToolCallContext(
                assistant_message=assistant, tool_call=call, args=prepared.args, context=context
            ),
            signal,
        )
        decision = coerce_result(raw, BeforeToolCallResult, "before_tool_call")
    except Exception as exc:
        return immediate(call, str(exc) or type(exc).__name__)
    if decision is not None and decision.block:
        return immediate(
            call, decision.reason or "Tool execution was blocked", decision.terminate is True
        )
    return prepared


async def execute_call(
    call: ToolCall,
    prepared: PreparedCall,
    signal: AbortSignal | None,
    on_update: Callable[[AgentToolResult], None] | None,
) -> ToolCallOutcome:
    """Run the tool (bounded by its ``timeout``); updates it sends after it returned are
    dropped."""
    tool = prepared.tool
    live = True

    def update(partial_result: Any) -> None:
        if live and on_update is not None:
            on_update(as_tool_result(call.name, partial_result))

    execute = tool.execute
    arguments = (call.id, prepared.args, signal, update)[: positional_arity(execute)]
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
            result = error_result(f'Tool "{call.name}" timed out after {timeout:g}s')
            is_error = True
        else:
            result = as_tool_result(call.name, value)
            is_error = result.is_error is True
    except Exception as exc:
        result = error_result(str(exc) or type(exc).__name__)
        is_error = True
    finally:
        live = False
    duration_ms = round((time.perf_counter() - started) * 1000)
    return ToolCallOutcome(
        tool_call=call, result=result, is_error=is_error, duration_ms=duration_ms
    )


async def after_call(
    hook: AfterToolCallHook,
    assistant: AssistantMessage,
    prepared: PreparedCall,
    outcome: ToolCallOutcome,
    context: AgentContext,
    signal: AbortSignal | None,
) -> ToolCallOutcome:
    """``after_tool_call``: field-by-field overrides of the executed result. Replacing the
    content drops ``structured_content`` unless the hook gives a new one."""
    call = outcome.tool_call
    try:
        raw = await call_hook(
            hook,
            AfterToolCallContext(
                assistant_message=assistant,
                tool_call=call,
                args=prepared.args,
                result=outcome.result,
                is_error=outcome.is_error,
                context=context,
            ),
            signal,
        )
        override = coerce_result(raw, AfterToolCallResult, "after_tool_call")
    except Exception as exc:
        return ToolCallOutcome(
            tool_call=call,
            result=error_result(str(exc) or type(exc).__name__),
            is_error=True,
            duration_ms=outcome.duration_ms,
        )
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
    return ToolCallOutcome(
        tool_call=call, result=result, is_error=is_error, duration_ms=outcome.duration_ms
    )


async def run_tool_call(
    tool_call: ToolCall,
    *,
    tools: Sequence[Any],
    assistant_message: AssistantMessage,
    context: AgentContext,
    signal: AbortSignal | None = None,
    on_update: Callable[[AgentToolResult], None] | None = None,
    before_tool_call: BeforeToolCallHook | None = None,
    after_tool_call: AfterToolCallHook | None = None,
) -> ToolCallOutcome:
    """Run one tool call (a call a tool makes itself) through the same steps as a call of
    the model: ``prepare_arguments``, validation, ``before_tool_call``, execution,
    ``after_tool_call``. Emits no events and adds no messages; a host that wants them in
    the transcript records them (``ToolResultMessage.nested_calls``). Never raises for a
    tool failure: an aborted ``signal`` (checked first, before any hook), an unknown tool,
    invalid arguments, a blocked call and a raising tool all come back as
    ``is_error=True``."""
    if signal is not None and signal.aborted:
        return immediate(tool_call, ABORTED_TOOL_TEXT)
    prepared = await prepare_call(tool_call, tools)
    if isinstance(prepared, PreparedCall) and before_tool_call is not None:
        prepared = await before_call(
            before_tool_call, call_hook, assistant_message, tool_call, prepared, context, signal
        )
        if signal is not None and signal.aborted:
            return immediate(tool_call, ABORTED_TOOL_TEXT)
    if not isinstance(prepared, PreparedCall):
        return prepared
    outcome = await execute_call(tool_call, prepared, signal, on_update)
    if after_tool_call is None:
        return outcome
    return await after_call(after_tool_call, assistant_message, prepared, outcome, context, signal)
