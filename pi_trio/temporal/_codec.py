"""What crosses Temporal's boundaries, as JSON strings (sans-IO): agent events carried to
the activities that deliver them, the inputs of the three activities, and a request's
options without what must not enter the workflow history.

Every payload is one JSON string, so Temporal's data converter sees only ``str`` and the
history reads as pi's own JSON (camelCase, as the TypeScript runtime writes it).
"""

from __future__ import annotations

import typing
from typing import Any, Literal

import msgspec

from ..agent import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ModelFallbackEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ..ai import AssistantMessageEvent, StreamOptions, from_json, messages_from_json, to_json

__all__ = [
    "REQUEST_OPTION_FIELDS",
    "WORKER_OPTION_FIELDS",
    "Carried",
    "DeliverRequest",
    "ModelRequest",
    "QueuedMessage",
    "ToolRequest",
    "decode",
    "decode_event",
    "decode_options",
    "encode",
    "encode_options",
    "event_json",
]

# The fields of ``StreamOptions`` a request carries from the workflow to the model
# activity: plain data that shapes the request.
REQUEST_OPTION_FIELDS = (
    "temperature",
    "max_tokens",
    "cache_retention",
    "session_id",
    "disable_continuation",
    "metadata",
    "timeout_ms",
    "first_event_timeout",
    "idle_timeout",
    "max_retries",
    "max_retry_delay_ms",
    "sampling_params",
    "identity",
    "reasoning",
    "thinking_budgets",
    "tool_choice",
    "output_format",
    "deferred",
    "extra",
)
# The fields the activity takes from the worker's own agent instead: secrets (never in
# the history), callables and live objects (not JSON).
WORKER_OPTION_FIELDS = (
    "api_key",
    "headers",
    "env",
    "on_payload",
    "on_response",
    "on_provider_stream_event",
    "signal",
    "registry",
)

_HINTS = typing.get_type_hints(StreamOptions)
_DEFAULTS = StreamOptions()


def encode_options(options: StreamOptions) -> msgspec.Raw:
    """The request fields of ``options`` that differ from the defaults."""
    fields = {
        name: msgspec.to_builtins(value)
        for name in REQUEST_OPTION_FIELDS
        if (value := getattr(options, name)) != getattr(_DEFAULTS, name)
    }
    return msgspec.Raw(msgspec.json.encode(fields))


def decode_options(raw: msgspec.Raw, base: StreamOptions) -> StreamOptions:
    """``base`` (the worker's agent's options) with the request fields of ``raw``."""
    fields = msgspec.json.decode(raw, type=dict[str, Any])
    return msgspec.structs.replace(
        base, **{name: msgspec.convert(value, _HINTS[name]) for name, value in fields.items()}
    )


# --------------------------------------------------------------------------- events


class Carried(msgspec.Struct, array_like=True, frozen=True):
    """One agent event on its way to the listeners, and whether it is ``replayed`` (the
    workflow re-emitted it from recorded history)."""

    replayed: bool
    event: msgspec.Raw


def event_json(event: Any) -> msgspec.Raw:
    return msgspec.Raw(to_json(event))


_STREAM_EVENT: Any = AssistantMessageEvent
_PLAIN_EVENTS: dict[str, type[Any]] = {
    "agent_start": AgentStartEvent,
    "turn_start": TurnStartEvent,
    "tool_execution_start": ToolExecutionStartEvent,
    "tool_execution_update": ToolExecutionUpdateEvent,
    "tool_execution_end": ToolExecutionEndEvent,
    "auto_retry_start": AutoRetryStartEvent,
    "auto_retry_end": AutoRetryEndEvent,
    "compaction_start": CompactionStartEvent,
    "model_fallback": ModelFallbackEvent,
}


def decode_event(raw: msgspec.Raw | bytes) -> AgentEvent:
    """An agent event from its JSON, with its messages decoded as pi messages."""
    fields = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    kind = msgspec.json.decode(fields["type"], type=str)
    match kind:
        case "agent_end":
            return AgentEndEvent(messages=messages_from_json(bytes(fields["messages"])))
        case "turn_end":
            return TurnEndEvent(
                message=from_json(bytes(fields["message"])),
                tool_results=messages_from_json(bytes(fields["toolResults"])),  # type: ignore[arg-type]
            )
        case "message_start":
            return MessageStartEvent(message=from_json(bytes(fields["message"])))
        case "message_end":
            return MessageEndEvent(message=from_json(bytes(fields["message"])))
        case "message_update":
            update: Any = from_json(bytes(fields["assistantMessageEvent"]), _STREAM_EVENT)
            return MessageUpdateEvent(
                message=from_json(bytes(fields["message"])), assistant_message_event=update
            )
        case "compaction_end":
            end: Any = from_json(bytes(raw), CompactionEndEvent)
            if end.messages is not None:
                end.messages = messages_from_json(bytes(fields["messages"]))
            return end  # type: ignore[no-any-return]
        case _ if kind in _PLAIN_EVENTS:
            return from_json(bytes(raw), _PLAIN_EVENTS[kind])  # type: ignore[no-any-return]
    raise ValueError(f"not an agent event type: {kind!r}")


# --------------------------------------------------------------------------- activities


class ModelRequest(msgspec.Struct, rename="camel", kw_only=True):
    """The input of the model activity."""

    events: list[Carried]
    model: msgspec.Raw
    context: msgspec.Raw
    options: msgspec.Raw
    thinking_level: str


class ToolRequest(msgspec.Struct, rename="camel", kw_only=True):
    """The input of the tool activity: one call of one tool."""

    events: list[Carried]
    tool_call_id: str
    tool_name: str
    params: msgspec.Raw


class DeliverRequest(msgspec.Struct, rename="camel", kw_only=True):
    """The input of the delivery activity: the run's last events."""

    events: list[Carried]


class QueuedMessage(msgspec.Struct, rename="camel"):
    """The payload of the queue signal: a message for the run's steering or follow-up
    queue."""

    queue: Literal["steer", "followUp"]
    message: msgspec.Raw


def encode(value: Any) -> str:
    return msgspec.json.encode(value).decode()


_T = typing.TypeVar("_T")


def decode(payload: str, kind: type[_T]) -> _T:
    return msgspec.json.decode(payload, type=kind)
