"""How a run ends badly: the text and message of an abort, and the events of a failed run.

An aborted response keeps what was received and says why (``aborted_text``: the reason
given to ``abort()``, else ``Request was aborted``). A run whose engine raised (a hook or
a listener failed) ends, as in the original runtime, with an assistant message whose
``stop_reason`` is ``"error"`` (``"aborted"`` when the run's signal was aborted) and the
error's text; tool calls of the last response that have no result get an error result
first, and a tool execution still open is ended, so the transcript never keeps a dangling
call (``failed_run_events``).
"""

from __future__ import annotations

from typing import Any

from ..ai import (
    AbortSignal,
    AssistantMessage,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from ..ai._seam import ABORTED_TEXT
from ..ai.providers import now_ms
from ._types import (
    AgentEndEvent,
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
)

__all__ = ["aborted_text", "failed_run_events"]


def aborted_text(signal: AbortSignal) -> str:
    """The error message of an aborted response: the abort's reason, if it has one."""
    reason = signal.reason
    if isinstance(reason, str) and reason:
        return reason
    if isinstance(reason, BaseException) and str(reason):
        return str(reason)
    return ABORTED_TEXT


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


def failed_run_events(
    messages: list[Any],
    pending_tool_calls: frozenset[str],
    model: Model,
    error: Exception,
    aborted: bool,
) -> list[Any]:
    """The events that close a run whose engine raised ``error``."""
    text = str(error) or type(error).__name__
    failure = AssistantMessage(
        content=[TextContent(text="")],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="aborted" if aborted else "error",
        error_message=text,
        timestamp=now_ms(),
    )
    events: list[Any] = []
    for result in _dangling_tool_results(messages, text):
        if result.tool_call_id in pending_tool_calls:
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
