"""The events that re-send a recorded assistant message (sans-IO).

A durable run (``pi_trio.durable`` on DBOS, ``pi_trio.temporal``) records the final
message of every model request. When the run is resumed, the request is not made again:
the recorded message is sent to the agent as a stream of its own, one ``start``, each block as ``*_start`` / one whole delta / ``*_end``, then the
terminal ``done`` or ``error`` carrying the recorded message itself, so the transcript gets
exactly the message that was recorded.
"""

from __future__ import annotations

import msgspec

from .._events import AssistantMessageEvent, DoneEvent, ErrorEvent
from .._types import AssistantMessage, Model, TextContent, ThinkingContent, ToolCall
from ._builder import MessageBuilder

__all__ = ["replay_events"]


def replay_events(message: AssistantMessage, model: Model) -> list[AssistantMessageEvent]:
    """The events of a stream that produces ``message`` (recorded for ``model``)."""
    builder = MessageBuilder(model, timestamp=message.timestamp)
    builder.message = msgspec.structs.replace(message, content=[], stop_reason="pending")
    events: list[AssistantMessageEvent] = [builder.start()]
    for block in message.content:
        if isinstance(block, TextContent):
            start = builder.text_start()
            events.append(start)
            if block.text:
                events.append(builder.text_delta(start.content_index, block.text))
            events.append(
                builder.text_end(start.content_index, text_signature=block.text_signature)
            )
        elif isinstance(block, ThinkingContent):
            thinking = builder.thinking_start(redacted=block.redacted)
            events.append(thinking)
            if block.thinking:
                events.append(builder.thinking_delta(thinking.content_index, block.thinking))
            events.append(
                builder.thinking_end(
                    thinking.content_index, thinking_signature=block.thinking_signature
                )
            )
        elif isinstance(block, ToolCall):
            call = builder.toolcall_start(
                block.id,
                block.name,
                thought_signature=block.thought_signature,
                namespace=block.namespace,
            )
            events.append(call)
            arguments = msgspec.json.encode(block.arguments).decode()
            events.append(builder.toolcall_delta(call.content_index, arguments))
            events.append(builder.toolcall_end(call.content_index, arguments=dict(block.arguments)))
    match message.stop_reason:
        case "error" | "aborted" as failed:
            events.append(ErrorEvent(reason=failed, error=message))
        case "stop" | "length" | "toolUse" | "deferred" as reason:
            events.append(DoneEvent(reason=reason, message=message))
        case other:
            raise ValueError(
                f"a recorded assistant message ends with a final stop reason, got {other!r}"
            )
    return events
