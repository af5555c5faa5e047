"""The pi-messages stream as msgspec Structs (the ``pi-messages`` api, pi 1.6).

A pi-messages backend (the Radius gateway, or any server speaking pi's own protocol)
answers ``POST <base_url>/messages`` with Server-Sent Events whose ``data:`` is one
assistant-message event without ``partial``, tagged by ``type``: ``start``, the
``text_*``, ``thinking_*`` and ``toolcall_*`` block events, and a terminal ``done`` or
``error``. The block events differ from the proxy protocol's: ``text_end`` and
``thinking_end`` carry the block's whole ``content``, ``toolcall_start`` its ``id`` and
``toolName``, ``toolcall_end`` the finished ``toolCall``; the terminals carry the usage,
the response id and model, the provider's thinking level and a ``rewrite`` (the impact
of a server-side rewrite of the request, such as a gateway policy).

``contentIndex`` is declared as any JSON value: the mapper checks it and names what it
got. ``usage`` stays raw JSON until a terminal is read, so it is decoded as a ``Usage``
that keeps fields pi_trio does not know (the backend serializes pi's own type, which a
newer line may extend). Unknown fields are ignored everywhere else.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import msgspec

from .._json._depth import BoundedDecoder
from ._wire import Tagged, Wire, tags

__all__ = [
    "EVENT_DECODER",
    "EVENT_TYPES",
    "PiMessagesEvent",
    "WireDone",
    "WireError",
    "WireStart",
    "WireTextDelta",
    "WireTextEnd",
    "WireTextStart",
    "WireThinkingDelta",
    "WireThinkingEnd",
    "WireThinkingStart",
    "WireToolCall",
    "WireToolCallDelta",
    "WireToolCallEnd",
    "WireToolCallStart",
]


class WireToolCall(Wire, rename="camel", kw_only=True):
    """The finished call of ``toolcall_end``: the fields it holds replace the streamed
    call's (the original merges the object into the block)."""

    id: str | None = None
    name: str | None = None
    arguments: dict[str, Any] | None = None
    thought_signature: str | None = None
    namespace: str | None = None
    arguments_error: str | None = None


class _Event(Tagged, rename="camel", kw_only=True):
    pass


class _BlockEvent(_Event):
    content_index: Any = msgspec.UNSET


class WireStart(_Event, tag="start", kw_only=True):
    pass


class WireTextStart(_BlockEvent, tag="text_start", kw_only=True):
    pass


class WireTextDelta(_BlockEvent, tag="text_delta", kw_only=True):
    delta: str


class WireTextEnd(_BlockEvent, tag="text_end", kw_only=True):
    content: str | None = None
    content_signature: str | None = None


class WireThinkingStart(_BlockEvent, tag="thinking_start", kw_only=True):
    pass


class WireThinkingDelta(_BlockEvent, tag="thinking_delta", kw_only=True):
    delta: str


class WireThinkingEnd(_BlockEvent, tag="thinking_end", kw_only=True):
    content: str | None = None
    content_signature: str | None = None
    redacted: bool | None = None


class WireToolCallStart(_BlockEvent, tag="toolcall_start", kw_only=True):
    id: str
    tool_name: str


class WireToolCallDelta(_BlockEvent, tag="toolcall_delta", kw_only=True):
    delta: str


class WireToolCallEnd(_BlockEvent, tag="toolcall_end", kw_only=True):
    tool_call: WireToolCall | None = None


class _Terminal(_Event):
    usage: msgspec.Raw = msgspec.Raw(b"")  # empty when the event has none
    response_id: str | None = None
    response_model: str | None = None
    provider_thinking_level: str | None = None
    rewrite: dict[str, Any] | None = None


class WireDone(_Terminal, tag="done", kw_only=True):
    reason: Literal["stop", "length", "toolUse"]


class WireError(_Terminal, tag="error", kw_only=True):
    reason: Literal["error", "aborted"]
    error_message: str | None = None


PiMessagesEvent: TypeAlias = (
    WireStart
    | WireTextStart
    | WireTextDelta
    | WireTextEnd
    | WireThinkingStart
    | WireThinkingDelta
    | WireThinkingEnd
    | WireToolCallStart
    | WireToolCallDelta
    | WireToolCallEnd
    | WireDone
    | WireError
)

EVENT_DECODER: Final = BoundedDecoder(PiMessagesEvent)
EVENT_TYPES: Final = tags(PiMessagesEvent)
