"""Anthropic Messages SSE events → assistant-message events (sans-IO; the original's
``stream`` in ``src/api/anthropic-messages.ts``).

``AnthropicEventMapper.feed(name, data)`` takes one SSE event (its ``event:`` name and
``data:`` text), decodes the data into an ``_anthropic_wire`` Struct (a tagged union on its
``type``) and returns the events to send; ``finish()`` returns the terminal event once the
wire stream ended. Unknown event, content block and delta types are skipped. A failure of
the stream raises ``ProviderError`` with the text the user sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._arguments._partial import repair_json
from .._catalog._models import calculate_cost
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._stream._builder import MessageBuilder
from .._types import Model
from ._anthropic_wire import (
    BLOCK_TYPES,
    DELTA_TYPES,
    EVENT_DECODER,
    EVENT_TYPES,
    AnthropicEvent,
    AnthropicUsage,
    ContentBlock,
    ContentBlockDelta,
    ContentBlockStart,
    ContentBlockStop,
    Delta,
    InputJsonDelta,
    MessageDelta,
    MessageStart,
    MessageStop,
    RedactedThinkingBlock,
    SignatureDelta,
    StartedMessage,
    StopDetails,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
)
from ._wire import REFUSAL_TEXT, decode_failed, note_response, wire_type

__all__ = [
    "ENDED_BEFORE_MESSAGE_STOP",
    "REDACTED_THINKING_TEXT",
    "REFUSAL_TEXT",
    "AnthropicEventMapper",
]

ENDED_BEFORE_MESSAGE_STOP: Final = "Anthropic stream ended before message_stop"
REDACTED_THINKING_TEXT: Final = "[Reasoning redacted]"

_STOP_REASONS: Final = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "refusal": "error",
    "sensitive": "error",
}

# The SSE events whose data the mapper reads (as the vendor SDK does, by the ``event:``
# name); anything else (ping, proxy events) is skipped without parsing, so non-JSON data
# there is harmless.
_HANDLED: Final = EVENT_TYPES | {"error"}
_WHAT: Final = {name: f"Anthropic SSE event {name}" for name in _HANDLED}


def _skipped(payload: Any) -> bool:
    """For data that does not fit its Struct: whether it is something the mapper ignores
    (not an object; an event, content block or delta type it does not know)."""
    kind = wire_type(payload)
    if kind == "content_block_start":
        return wire_type(payload.get("content_block")) not in BLOCK_TYPES
    if kind == "content_block_delta":
        return wire_type(payload.get("delta")) not in DELTA_TYPES
    return kind not in EVENT_TYPES


class AnthropicEventMapper:
    """Folds one response's SSE events into ``builder``'s message."""

    def __init__(
        self, builder: MessageBuilder, model: Model, *, tool_names: Sequence[str] = ()
    ) -> None:
        self.builder = builder
        self.model = model
        # The caller's spelling of each tool name (OAuth requests send Claude Code casing).
        self._tool_names = {name.lower(): name for name in tool_names}
        self._blocks: dict[int, tuple[str, int]] = {}  # wire index -> (kind, content index)
        self._stopped = False
        self._failure: str | None = None

    # ------------------------------------------------------------------ feeding

    @property
    def stopped(self) -> bool:
        """Whether ``message_stop`` arrived: the stream is over, nothing after it is read."""
        return self._stopped

    def feed(self, name: str, data: str) -> list[AssistantMessageEvent]:
        if name not in _HANDLED or self._stopped:
            return []
        if name == "error":
            raise ProviderError(data)
        event: AnthropicEvent | None
        try:
            event = EVENT_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            what = _WHAT[name]
            event = decode_failed(exc, EVENT_DECODER, data, what, _skipped, repair=repair_json)
        match event:  # most frequent first: a case that does not match costs ~0.15 us
            case ContentBlockDelta():
                return self._block_delta(event.index, event.delta)
            case ContentBlockStart(index=index, content_block=block):
                return self._block_start(index, block)
            case ContentBlockStop(index=index):
                return self._block_stop(index)
            case MessageStart(message=message):
                self._message_start(message or StartedMessage())
            case MessageDelta():
                self._message_delta(event)
            case MessageStop():
                self._stopped = True
        return []

    def finish(self) -> AssistantMessageEvent:
        """The terminal event after the wire stream ended (raises on failure)."""
        if not self._stopped:
            raise ProviderError(ENDED_BEFORE_MESSAGE_STOP)
        if self._failure is not None:
            raise ProviderError(self._failure)
        return self.builder.done()

    # ------------------------------------------------------------------ message

    def _message_start(self, message: StartedMessage) -> None:
        out = self.builder.message
        note_response(out, self.model, message.id, message.model)
        usage = message.usage or AnthropicUsage()
        u = out.usage
        u.input = usage.input_tokens or 0
        u.output = usage.output_tokens or 0
        u.cache_read = usage.cache_read_input_tokens or 0
        u.cache_write = usage.cache_creation_input_tokens or 0
        # pi 1.6 writes the 1h share on every message_start, 0 when the split is absent
        creation = usage.cache_creation
        u.cache_write_1h = (creation.ephemeral_1h_input_tokens if creation else None) or 0
        self._update_totals()

    def _message_delta(self, event: MessageDelta) -> None:
        delta = event.delta
        if delta is not None and delta.stop_reason is not None:
            details = delta.stop_details
            self._stop_reason(delta.stop_reason, event.stop_details if details is None else details)
        usage = event.usage
        if usage is not None:
            # cumulative counts; a null one leaves what message_start said
            u = self.builder.message.usage
            if usage.input_tokens is not None:
                u.input = usage.input_tokens
            if usage.output_tokens is not None:
                u.output = usage.output_tokens
            if usage.cache_read_input_tokens is not None:
                u.cache_read = usage.cache_read_input_tokens
            if usage.cache_creation_input_tokens is not None:
                u.cache_write = usage.cache_creation_input_tokens
            # gateways (Vercel's) repeat the TTL split in deltas
            creation = usage.cache_creation
            if creation is not None and creation.ephemeral_1h_input_tokens is not None:
                u.cache_write_1h = creation.ephemeral_1h_input_tokens
            details_out = usage.output_tokens_details
            if details_out is not None and details_out.thinking_tokens is not None:
                u.reasoning = details_out.thinking_tokens
        self._update_totals()

    def _stop_reason(self, reason: str, details: StopDetails | None) -> None:
        out = self.builder.message
        out.raw_stop_reason = reason
        mapped = _STOP_REASONS.get(reason)
        if mapped is None:
            raise ProviderError(f"Unhandled stop reason: {reason}")
        out.stop_reason = mapped  # type: ignore[assignment]
        if reason == "refusal":
            explanation = details.explanation if details is not None else None
            self._failure = explanation or REFUSAL_TEXT
        elif reason == "sensitive":
            self._failure = f"Provider stopped with: {reason}"

    def _update_totals(self) -> None:
        u = self.builder.message.usage
        u.total_tokens = u.input + u.output + u.cache_read + u.cache_write
        calculate_cost(self.model, u)

    # ------------------------------------------------------------------ blocks

    def _block_start(
        self, index: int | None, block: ContentBlock | None
    ) -> list[AssistantMessageEvent]:
        if index is None:
            return []
        b = self.builder
        events: list[AssistantMessageEvent]
        match block:
            case TextBlock(text=text):
                start = b.text_start()
                self._blocks[index] = ("text", start.content_index)
                return [start, b.text_delta(start.content_index, text)] if text else [start]
            case ThinkingBlock(thinking=thinking, signature=signature):
                start_t = b.thinking_start(thinking_signature="")
                self._blocks[index] = ("thinking", start_t.content_index)
                events = [start_t]
                if thinking:
                    events.append(b.thinking_delta(start_t.content_index, thinking))
                if signature:
                    b.thinking_signature_delta(start_t.content_index, signature)
                return events
            case RedactedThinkingBlock(data=data):
                # the placeholder is the block's text from its start, as in pi 1.6: the
                # wire sends no delta, so neither do we (thinking_end carries the text)
                start_r = b.thinking_start(
                    thinking=REDACTED_THINKING_TEXT, thinking_signature=data or "", redacted=True
                )
                self._blocks[index] = ("thinking", start_r.content_index)
                return [start_r]
            case ToolUseBlock(id=call_id, name=name, input=arguments):
                name = name or ""
                if self._tool_names:
                    name = self._tool_names.get(name.lower(), name)
                start_c = b.toolcall_start(
                    call_id or "", name, arguments={} if arguments is None else arguments
                )
                self._blocks[index] = ("toolCall", start_c.content_index)
                return [start_c]
        return []

    def _block_delta(self, index: int | None, delta: Delta | None) -> list[AssistantMessageEvent]:
        entry = self._blocks.get(index)  # type: ignore[arg-type]
        if entry is None:
            return []
        kind, content_index = entry
        b = self.builder
        # By the block's kind, then the delta's exact type: on this path (every delta), a
        # class pattern that does not match would cost ~0.15 us per case.
        match kind:
            case "text":
                if type(delta) is TextDelta:
                    return [b.text_delta(content_index, delta.text or "")]
            case "toolCall":
                if type(delta) is InputJsonDelta:
                    return [b.toolcall_delta(content_index, delta.partial_json or "")]
            case "thinking":
                if type(delta) is ThinkingDelta:
                    return [b.thinking_delta(content_index, delta.thinking or "")]
                if type(delta) is SignatureDelta:
                    b.thinking_signature_delta(content_index, delta.signature or "")
        return []

    def _block_stop(self, index: int | None) -> list[AssistantMessageEvent]:
        entry = self._blocks.pop(index, None)  # type: ignore[arg-type]
        if entry is None:
            return []
        kind, content_index = entry
        b = self.builder
        if kind == "text":
            return [b.text_end(content_index)]
        if kind == "thinking":
            return [b.thinking_end(content_index)]
        return [b.toolcall_end(content_index)]
