"""pi-messages events → assistant-message events (sans-IO).

``PiMessagesMapper.feed(data)`` takes the ``data:`` text of one SSE event, decodes it
into a ``PiMessagesEvent`` and returns the events it produced, rebuilding the message on
the request's ``MessageBuilder`` as the original client rebuilds its partial: deltas
append, ``text_end`` / ``thinking_end`` set the block's whole ``content`` (and its
signature, and ``redacted``), ``toolcall_end`` puts the fields of the finished
``toolCall`` over the streamed call (its arguments win over the streamed ones). Streamed
tool arguments are parsed as they arrive by the consumer's fold, as every provider's are.

A terminal ``done`` or ``error`` takes the message's stop reason, ``usage`` (as sent,
with the backend's cost), response id and model, the provider's thinking level and the
rewrite (a ``pi_messages_rewrite`` diagnostic); after it ``terminal`` is true and nothing
more is read. ``start`` is sent once, before the first block event or ``done`` (the
backend's own ``start`` when it sends one); an ``error`` that comes first is sent alone, as
a request that failed before any output.

Skipped: ``[DONE]``, empty data, and objects of a type the protocol does not name
(a newer backend may add types). Anything else that is wrong fails the stream with a
``ProviderError`` naming it: data that is not JSON or not an object, a known event
whose fields have the wrong types, a content index outside the message (the original's
``Invalid contentIndex <value> in pi-messages <type> event``), or a block event for a
block of another kind or one already ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json._codec import from_json
from .._sanitize import replace_lone_surrogate_escapes
from .._stream._builder import MessageBuilder
from .._types import AssistantMessage, ThinkingContent, Usage, now_ms
from ._pi_messages_wire import (
    EVENT_DECODER,
    EVENT_TYPES,
    PiMessagesEvent,
    WireDone,
    WireError,
    WireStart,
    WireTextDelta,
    WireTextEnd,
    WireTextStart,
    WireThinkingDelta,
    WireThinkingEnd,
    WireThinkingStart,
    WireToolCall,
    WireToolCallDelta,
    WireToolCallEnd,
    WireToolCallStart,
)
from ._wire import decode_failed

__all__ = ["REWRITE_DIAGNOSTIC", "UNKNOWN_ERROR_TEXT", "PiMessagesMapper", "rewrite_diagnostic"]

REWRITE_DIAGNOSTIC: Final = "pi_messages_rewrite"
UNKNOWN_ERROR_TEXT: Final = "An unknown error occurred"
_WHAT: Final = "pi-messages event"
_STARTS: Final = frozenset({"text_start", "thinking_start", "toolcall_start"})


def _skipped(value: Any) -> bool:
    """For data that does not fit its Struct: an object of a type the protocol does not
    name (or of none) is skipped; anything else is broken."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    return not (isinstance(kind, str) and kind in EVENT_TYPES)


def _repair(data: str) -> str:
    """JSON.stringify writes a lone surrogate as an escape, which msgspec refuses: read it
    as U+FFFD, as a UTF-16 decoder does."""
    return replace_lone_surrogate_escapes(data.encode()).decode()


def _index_text(value: Any) -> str:
    """The index as the original's text shows it (JSON; ``undefined`` when missing)."""
    return "undefined" if value is msgspec.UNSET else msgspec.json.encode(value).decode()


def _kind(event: Any) -> str:
    """The ``type`` an event was sent with."""
    return type(event).__struct_config__.tag  # type: ignore[no-any-return]


def rewrite_diagnostic(rewrite: dict[str, Any]) -> dict[str, Any]:
    """The diagnostic recording a server-side rewrite of the request."""
    return {"type": REWRITE_DIAGNOSTIC, "timestamp": now_ms(), "details": dict(rewrite)}


class PiMessagesMapper:
    """Folds one response's pi-messages events into ``builder``'s message (see the
    module docstring). ``terminal`` is true once ``done`` or ``error`` was read."""

    __slots__ = ("_clean", "_started", "builder", "terminal")

    def __init__(
        self, builder: MessageBuilder, *, clean: Callable[[str], str] | None = None
    ) -> None:
        self.builder = builder
        self.terminal = False
        self._started = False
        # applied to the backend's error text (the provider removes its secrets)
        self._clean = clean

    def feed(self, data: str) -> list[AssistantMessageEvent]:
        if self.terminal or not data or data == "[DONE]":
            return []
        event: PiMessagesEvent | None
        try:
            event = EVENT_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            event = decode_failed(exc, EVENT_DECODER, data, _WHAT, _skipped, repair=_repair)
        if event is None:
            return []
        return self.apply(event)

    def apply(self, event: PiMessagesEvent) -> list[AssistantMessageEvent]:
        """The events for one decoded pi-messages event."""
        if isinstance(event, WireError):
            return [self._terminal(event)]  # may come first: a failure before any output
        index = None if isinstance(event, WireStart | WireDone) else self._index(event)
        out: list[AssistantMessageEvent] = []
        if not self._started:
            self._started = True
            out.append(self.builder.start())
        if isinstance(event, WireDone):
            out.append(self._terminal(event))
        elif index is not None:
            out.append(self._block(event, index))
        return out

    def _index(self, event: Any) -> int:
        """The event's content index, checked as the original checks it: a start adds the
        next block, every other event names a block that exists."""
        value = event.content_index
        kind = _kind(event)
        count = self.builder.block_count
        limit = count if kind in _STARTS else count - 1
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
            or not 0 <= value <= limit
        ):
            raise ProviderError(
                f"Invalid contentIndex {_index_text(value)} in pi-messages {kind} event"
            )
        index = int(value)
        if kind in _STARTS and index != count:
            raise ProviderError(
                f"Invalid contentIndex {index} in pi-messages {kind} event: block "
                f"{index} was already started, and a start adds the next block ({count})"
            )
        return index

    def _block(self, event: Any, index: int) -> AssistantMessageEvent:
        builder = self.builder
        match event:
            case WireTextDelta(delta=delta):
                return builder.text_delta(index, delta)
            case WireThinkingDelta(delta=delta):
                return builder.thinking_delta(index, delta)
            case WireToolCallDelta(delta=delta):
                return builder.toolcall_delta(index, delta)
            case WireTextStart():
                return builder.text_start()
            case WireThinkingStart():
                return builder.thinking_start()
            case WireToolCallStart(id=call_id, tool_name=name):
                return builder.toolcall_start(call_id, name)
            case WireTextEnd(content=content, content_signature=signature):
                return builder.text_end(index, text_signature=signature, text=content)
            case WireThinkingEnd(content=content, content_signature=signature):
                ended = builder.thinking_end(index, thinking_signature=signature, thinking=content)
                block = builder.started_block(index)
                assert isinstance(block, ThinkingContent)
                block.redacted = event.redacted
                return ended
            case WireToolCallEnd(tool_call=call):
                return self._toolcall_end(index, call)
        raise TypeError(f"not a pi-messages block event: {event!r}")  # pragma: no cover

    def _toolcall_end(self, index: int, call: WireToolCall | None) -> AssistantMessageEvent:
        builder = self.builder
        if call is None:
            return builder.toolcall_end(index)
        live = builder.tool_call(index)
        if call.id is not None:
            live.id = call.id
        if call.name is not None:
            live.name = call.name
        if call.thought_signature is not None:
            live.thought_signature = call.thought_signature
        if call.namespace is not None:
            live.namespace = call.namespace
        if call.arguments is None:
            return builder.toolcall_end(index)
        return builder.toolcall_end(
            index, arguments=call.arguments, arguments_error=call.arguments_error
        )

    def _terminal(self, event: WireDone | WireError) -> AssistantMessageEvent:
        self.terminal = True
        message = self.builder.message
        _write_terminal(message, event)
        if isinstance(event, WireDone):
            return self.builder.done(event.reason)
        text = event.error_message or UNKNOWN_ERROR_TEXT
        if self._clean is not None:
            text = self._clean(text)
        return self.builder.error(text, reason=event.reason)


def _write_terminal(message: AssistantMessage, event: WireDone | WireError) -> None:
    usage = event.usage
    if usage and bytes(usage) != b"null":
        try:
            message.usage = from_json(bytes(usage), Usage)
        except msgspec.DecodeError as exc:  # MessageValidationError is one too
            raise ProviderError(
                f"Could not parse {_WHAT}: the usage of {_kind(event)!r} is no usage object "
                f"({exc}); expected {{input, output, cacheRead, cacheWrite, totalTokens, cost}}"
            ) from exc
    message.response_id = event.response_id
    if event.response_model is not None:
        message.response_model = event.response_model
    if event.provider_thinking_level is not None:
        message.provider_thinking_level = event.provider_thinking_level
    if event.rewrite is not None:
        message.diagnostics = [*(message.diagnostics or []), rewrite_diagnostic(event.rewrite)]
