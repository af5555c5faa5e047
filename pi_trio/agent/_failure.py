"""A failed run: the events that close it when the engine raised (a hook or a listener
failed, a stream function broke), delivered through the reducer to every listener.

The failure becomes an assistant message with ``stop_reason`` ``"error"`` (``"aborted"``
when the run's signal was aborted) and the error's text, as the original runtime does.
Tool calls of the last response that have no result get an error result first, and a tool
execution still open is ended, so the transcript never keeps a dangling call.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import anyio

from ..ai import (
    AbortSignal,
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    now_ms,
)
from ._dispatch import ListenerSet
from ._state import AgentState
from ._types import (
    AgentEndEvent,
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
)

__all__ = ["deliver_run_failure"]


def _dangling_tool_results(messages: list[Any], text: str) -> list[ToolResultMessage]:
    """Error results for the tool calls of the last response that have none."""
    answered: set[str] = set()
    for message in reversed(messages):
        role = getattr(message, "role", None)
        if role == "toolResult":
            answered.add(message.tool_call_id)
        elif role == "assistant":
            if message.stop_reason in ("error", "aborted"):
                return []
            return [
                ToolResultMessage(
                    tool_call_id=block.id,
                    tool_name=block.name,
                    content=[TextContent(text=text)],
                    details={},
                    is_error=True,
                )
                for block in message.content
                if isinstance(block, ToolCall) and block.id not in answered
            ]
    return []


def _failure_events(state: AgentState, error: Exception, signal: AbortSignal) -> list[Any]:
    model = state.model
    text = str(error) or type(error).__name__
    failure = AssistantMessage(
        content=[TextContent(text="")],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="aborted" if signal.aborted else "error",
        error_message=text,
        timestamp=now_ms(),
    )
    events: list[Any] = []
    for result in _dangling_tool_results(state.messages, text):
        if result.tool_call_id in state.pending_tool_calls:
            events.append(
                ToolExecutionEndEvent(
                    tool_call_id=result.tool_call_id,
                    tool_name=result.tool_name,
                    result=AgentToolResult(content=result.content, details={}),
                    is_error=True,
                )
            )
        events += [MessageStartEvent(message=result), MessageEndEvent(message=result)]
    return [
        *events,
        MessageStartEvent(message=failure),
        MessageEndEvent(message=failure),
        TurnEndEvent(message=failure, tool_results=[]),
        AgentEndEvent(messages=[failure]),
    ]


async def deliver_run_failure(
    state: AgentState,
    listeners: ListenerSet,
    error: Exception,
    signal: AbortSignal,
    close_timeout: float,
) -> None:
    """Reduce and deliver the failure events. Every event reaches every listener; the
    first listener error is raised afterwards. Delivery is shielded; once the caller's
    scope is cancelled, what remains is bounded by ``close_timeout``."""
    first_error: Exception | None = None
    deadline = math.inf
    for event in _failure_events(state, error, signal):
        if deadline == math.inf and anyio.current_effective_deadline() == -math.inf:
            deadline = anyio.current_time() + close_timeout
        with anyio.CancelScope(shield=True, deadline=deadline):
            state._reduce(event)
            for listener in listeners.entries:
                if listener.active:
                    try:
                        result = listener.call(event, signal)
                        if inspect.isawaitable(result):
                            await result
                    except Exception as exc:
                        first_error = first_error or exc
    if first_error is not None:
        raise first_error
