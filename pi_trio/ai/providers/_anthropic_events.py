"""Anthropic Messages SSE events → assistant-message events (sans-IO, reference/ai.md §7.2).

``AnthropicEventMapper.feed(name, data)`` takes one decoded SSE event (its ``event:`` name
and ``data:`` text) and returns the events to send; ``finish()`` returns the terminal
event once the wire stream ended. A failure of the stream raises ``ProviderError`` with
the text the user sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._builder import MessageBuilder
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json_parse import repair_json
from .._models import calculate_cost
from .._types import Model
from ._common import unparseable_event

__all__ = [
    "AnthropicEventMapper",
    "ENDED_BEFORE_MESSAGE_STOP",
    "REDACTED_THINKING_TEXT",
    "REFUSAL_TEXT",
    "decode_event_data",
]

ENDED_BEFORE_MESSAGE_STOP: Final = "Anthropic stream ended before message_stop"
REFUSAL_TEXT: Final = "The model refused to complete the request"
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

# Events whose data the mapper reads; anything else (ping, proxy events) is skipped
# without parsing, so non-JSON data there is harmless.
_HANDLED: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
    }
)


def decode_event_data(name: str, data: str) -> Any:
    """The JSON of an SSE event's data; slightly broken JSON is repaired first."""
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as exc:
        repaired = repair_json(data)
        if repaired != data:
            try:
                return msgspec.json.decode(repaired)
            except msgspec.DecodeError:
                pass
        raise unparseable_event(f"Anthropic SSE event {name}", data, exc) from exc


def _index(payload: dict[str, Any]) -> int | None:
    index = payload.get("index")
    return index if isinstance(index, int) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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

    def feed(self, name: str, data: str) -> list[AssistantMessageEvent]:
        if name not in _HANDLED:
            return []
        if name == "error":
            raise ProviderError(data)
        payload = decode_event_data(name, data)
        if not isinstance(payload, dict):
            return []
        if name == "message_start":
            self._message_start(payload.get("message") or {})
            return []
        if name == "content_block_start":
            return self._block_start(payload)
        if name == "content_block_delta":
            return self._block_delta(payload)
        if name == "content_block_stop":
            return self._block_stop(payload)
        if name == "message_delta":
            self._message_delta(payload)
            return []
        self._stopped = True  # message_stop
        return []

    def finish(self) -> AssistantMessageEvent:
        """The terminal event after the wire stream ended (raises on failure)."""
        if not self._stopped:
            raise ProviderError(ENDED_BEFORE_MESSAGE_STOP)
        if self._failure is not None:
            raise ProviderError(self._failure)
        return self.builder.done()

    # ------------------------------------------------------------------ message

    def _message_start(self, message: dict[str, Any]) -> None:
        out = self.builder.message
        if isinstance(message.get("id"), str):
            out.response_id = message["id"]
        reported = message.get("model")
        if isinstance(reported, str) and reported and reported != self.model.id:
            out.response_model = reported
        usage = message.get("usage") or {}
        u = out.usage
        u.input = _count(usage.get("input_tokens")) or 0
        u.output = _count(usage.get("output_tokens")) or 0
        u.cache_read = _count(usage.get("cache_read_input_tokens")) or 0
        u.cache_write = _count(usage.get("cache_creation_input_tokens")) or 0
        long_write = _count((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
        if long_write is not None:
            u.cache_write_1h = long_write
        self._update_totals()

    def _message_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta") or {}
        reason = delta.get("stop_reason")
        if isinstance(reason, str):
            self._stop_reason(reason, delta.get("stop_details") or payload.get("stop_details"))
        usage = payload.get("usage") or {}
        u = self.builder.message.usage
        for key, attr in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = _count(usage.get(key))
            if value is not None:
                setattr(u, attr, value)
        thinking_tokens = _count((usage.get("output_tokens_details") or {}).get("thinking_tokens"))
        if thinking_tokens is not None:
            u.reasoning = thinking_tokens
        self._update_totals()

    def _stop_reason(self, reason: str, details: Any) -> None:
        out = self.builder.message
        out.raw_stop_reason = reason
        mapped = _STOP_REASONS.get(reason)
        if mapped is None:
            raise ProviderError(f"Unhandled stop reason: {reason}")
        out.stop_reason = mapped  # type: ignore[assignment]
        if reason == "refusal":
            explanation = details.get("explanation") if isinstance(details, dict) else None
            self._failure = (
                explanation if isinstance(explanation, str) and explanation else (REFUSAL_TEXT)
            )
        elif reason == "sensitive":
            self._failure = f"Provider stopped with: {reason}"

    def _update_totals(self) -> None:
        u = self.builder.message.usage
        u.total_tokens = u.input + u.output + u.cache_read + u.cache_write
        calculate_cost(self.model, u)

    # ------------------------------------------------------------------ blocks

    def _block_start(self, payload: dict[str, Any]) -> list[AssistantMessageEvent]:
        index = _index(payload)
        block = payload.get("content_block")
        if index is None or not isinstance(block, dict):
            return []
        kind = block.get("type")
        b = self.builder
        events: list[AssistantMessageEvent]
        if kind == "text":
            start = b.text_start()
            events = [start]
            initial = block.get("text")
            if isinstance(initial, str) and initial:
                events.append(b.text_delta(start.content_index, initial))
            self._blocks[index] = ("text", start.content_index)
            return events
        if kind == "thinking":
            start_t = b.thinking_start(thinking_signature="")
            events = [start_t]
            initial = block.get("thinking")
            if isinstance(initial, str) and initial:
                events.append(b.thinking_delta(start_t.content_index, initial))
            signature = block.get("signature")
            if isinstance(signature, str) and signature:
                b.thinking_signature_delta(start_t.content_index, signature)
            self._blocks[index] = ("thinking", start_t.content_index)
            return events
        if kind == "redacted_thinking":
            start_r = b.thinking_start(
                thinking=REDACTED_THINKING_TEXT,
                thinking_signature=str(block.get("data") or ""),
                redacted=True,
            )
            self._blocks[index] = ("thinking", start_r.content_index)
            return [start_r]
        if kind == "tool_use":
            name = str(block.get("name") or "")
            name = self._tool_names.get(name.lower(), name) if self._tool_names else name
            initial_input = block.get("input")
            start_c = b.toolcall_start(
                str(block.get("id") or ""),
                name,
                arguments=dict(initial_input) if isinstance(initial_input, dict) else {},
            )
            self._blocks[index] = ("toolCall", start_c.content_index)
            return [start_c]
        return []  # server tools, citations results, ...: not part of the message

    def _block_delta(self, payload: dict[str, Any]) -> list[AssistantMessageEvent]:
        entry = self._blocks.get(_index(payload))  # type: ignore[arg-type]
        if entry is None:
            return []
        kind, content_index = entry
        delta = payload.get("delta") or {}
        delta_type = delta.get("type")
        b = self.builder
        if delta_type == "text_delta" and kind == "text":
            return [b.text_delta(content_index, str(delta.get("text") or ""))]
        if delta_type == "thinking_delta" and kind == "thinking":
            return [b.thinking_delta(content_index, str(delta.get("thinking") or ""))]
        if delta_type == "input_json_delta" and kind == "toolCall":
            return [b.toolcall_delta(content_index, str(delta.get("partial_json") or ""))]
        if delta_type == "signature_delta" and kind == "thinking":
            b.thinking_signature_delta(content_index, str(delta.get("signature") or ""))
        return []

    def _block_stop(self, payload: dict[str, Any]) -> list[AssistantMessageEvent]:
        entry = self._blocks.pop(_index(payload), None)  # type: ignore[arg-type]
        if entry is None:
            return []
        kind, content_index = entry
        b = self.builder
        if kind == "text":
            return [b.text_end(content_index)]
        if kind == "thinking":
            return [b.thinking_end(content_index)]
        return [b.toolcall_end(content_index)]
