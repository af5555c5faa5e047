"""Bedrock ``ConverseStream`` frames → assistant-message events (sans-IO).

``BedrockEventMapper.feed(kind, name, payload)`` takes one event-stream frame (its
``:message-type``, its event, exception or error name, and its payload bytes) and returns
the events it makes; ``finish()`` returns the closing events once the stream ended, the
terminal one last. Text and reasoning blocks open with their first delta (Bedrock sends a
start only for tool calls); tool-call arguments stream as JSON text. Reasoning that
arrives encrypted (``redactedContent``, e.g. from OpenAI models) is kept, base64, as the
block's signature and shown as ``[Reasoning redacted]``. Exception and error frames, a
stop reason that is a failure and a stream without a stop reason raise
``ProviderError`` with the text the user sees (``bedrock_error_text``).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final

import msgspec

from .._catalog._models import calculate_cost
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json._depth import decode_json
from .._stream._builder import MessageBuilder
from .._stream._live import LiveThinking
from .._types import Model
from ._bedrock_wire import (
    EVENT_DECODERS,
    ContentBlockDeltaEvent,
    ContentBlockStartEvent,
    ContentBlockStopEvent,
    MessageStartEvent,
    MessageStopEvent,
    MetadataEvent,
    ReasoningDelta,
    TokenUsage,
)
from ._wire import decode_failed

__all__ = ["REDACTED_REASONING_TEXT", "BedrockEventMapper", "bedrock_error_text"]

REDACTED_REASONING_TEXT: Final = "[Reasoning redacted]"
_STOP_REASONS: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}
# Stable prefixes of the modeled exceptions: the retry and overflow classifiers match them.
_ERROR_PREFIXES: Final = {
    "InternalServerException": "Internal server error",
    "ModelStreamErrorException": "Model stream error",
    "ValidationException": "Validation error",
    "ThrottlingException": "Throttling error",
    "ServiceUnavailableException": "Service unavailable",
}
_DATA_RETENTION: Final = re.compile("data retention mode", re.IGNORECASE)
_DATA_RETENTION_DOCS: Final = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html"
)


def bedrock_error_text(code: str, message: str) -> str:
    """``"<prefix>: <message>"`` for a Bedrock exception ``code`` (``ThrottlingException``
    → ``Throttling error``; other codes stand as they are), with a pointer to the data
    retention docs when the message is about that."""
    prefix = _ERROR_PREFIXES.get(code, code)
    text = f"{prefix}: {message}" if prefix else message
    if _DATA_RETENTION.search(message):
        text += f" See {_DATA_RETENTION_DOCS} for supported data retention modes."
    return text


def _exception_message(payload: bytes) -> str:
    try:
        data = decode_json(payload)
    except msgspec.DecodeError:
        return payload.decode("utf-8", "replace").strip()
    if isinstance(data, dict):
        for key in ("message", "Message"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    return payload.decode("utf-8", "replace").strip()


def _not_object(value: Any) -> bool:
    return not isinstance(value, dict)


class _Open:
    """A block the wire has open: its content index, kind and encrypted reasoning."""

    __slots__ = ("index", "kind", "redacted")

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind  # "text" / "thinking" / "toolCall"
        self.redacted: list[bytes] | None = None


class BedrockEventMapper:
    """Folds one response's frames into ``builder``'s message."""

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        self._open: dict[int, _Open] = {}  # wire contentBlockIndex -> block
        self._failure: str | None = None
        self._stopped = False
        self.ended = False  # ``metadata`` after ``messageStop``: the answer is complete
        self.error_code: str | None = None  # of the exception or error frame that ended it

    # ------------------------------------------------------------------ frames

    def feed(
        self, kind: str, name: str, payload: bytes, error_message: str | None = None
    ) -> list[AssistantMessageEvent]:
        """One frame: ``kind`` is ``event``, ``exception`` or ``error``."""
        if self.ended:
            return []
        if kind == "exception":
            code = self.error_code = name[:1].upper() + name[1:]
            raise ProviderError(bedrock_error_text(code, _exception_message(payload)))
        if kind == "error":
            self.error_code = name
            raise ProviderError(bedrock_error_text(name, error_message or "UnknownError"))
        decoder = EVENT_DECODERS.get(name)
        if decoder is None:
            return []  # an event type this mapper does not read
        data = payload.decode("utf-8", "replace")
        try:
            event = decoder.decode(data)
        except msgspec.DecodeError as exc:
            event = decode_failed(exc, decoder, data, name, _not_object)
        match event:
            case ContentBlockDeltaEvent():
                return self._delta(event)
            case ContentBlockStartEvent():
                return self._start(event)
            case ContentBlockStopEvent(content_block_index=wire_index):
                return self._stop(wire_index)
            case MessageStopEvent(stop_reason=reason):
                self._message_stop(reason)
            case MetadataEvent(usage=usage):
                if usage is not None:
                    self._usage(usage)
                # the last frame of an answer: the stream is over, nothing after it is read
                self.ended = self._stopped
            case MessageStartEvent(role=role) if role not in (None, "assistant"):
                raise ProviderError(
                    f"Bedrock started a message of role {role!r}; expected 'assistant'"
                )
        return []

    def finish(self) -> list[AssistantMessageEvent]:
        """The closing events after the stream ended, the terminal one last."""
        if self._failure is not None:
            raise ProviderError(self._failure)
        if not self._stopped:
            raise ProviderError("Bedrock stream ended without a stop reason")
        events: list[AssistantMessageEvent] = []
        for wire_index in list(self._open):
            events.extend(self._stop(wire_index))
        events.append(self.builder.done())
        return events

    # ------------------------------------------------------------------ blocks

    def _start(self, event: ContentBlockStartEvent) -> list[AssistantMessageEvent]:
        start = event.start
        tool = start.tool_use if start is not None else None
        if tool is None:
            return []
        started = self.builder.toolcall_start(tool.tool_use_id or "", tool.name or "")
        self._open[event.content_block_index] = _Open(started.content_index, "toolCall")
        return [started]

    def _delta(self, event: ContentBlockDeltaEvent) -> list[AssistantMessageEvent]:
        delta = event.delta
        if delta is None:
            return []
        b = self.builder
        wire_index = event.content_block_index
        block = self._open.get(wire_index)
        if delta.text is not None:
            events: list[AssistantMessageEvent] = []
            if block is None:
                start = b.text_start()
                block = self._open[wire_index] = _Open(start.content_index, "text")
                events.append(start)
            if block.kind == "text":
                events.append(b.text_delta(block.index, delta.text))
            return events
        if delta.tool_use is not None:
            if block is None or block.kind != "toolCall":
                return []
            return [b.toolcall_delta(block.index, delta.tool_use.input or "")]
        if delta.reasoning_content is not None:
            return self._reasoning(wire_index, block, delta.reasoning_content)
        return []

    def _reasoning(
        self, wire_index: int, block: _Open | None, delta: ReasoningDelta
    ) -> list[AssistantMessageEvent]:
        b = self.builder
        events: list[AssistantMessageEvent] = []
        encrypted = _decode_blob(delta.redacted_content)
        if block is None:
            start = b.thinking_start(thinking_signature="", redacted=True if encrypted else None)
            block = self._open[wire_index] = _Open(start.content_index, "thinking")
            events.append(start)
        if block.kind != "thinking":
            return events
        if delta.text:
            events.append(b.thinking_delta(block.index, delta.text))
        # a signature and an encrypted payload never mix: the signature slot holds one
        if delta.signature and block.redacted is None:
            b.thinking_signature_delta(block.index, delta.signature)
        if encrypted:
            if block.redacted is None:
                block.redacted = []
                live = b.started_block(block.index)
                if isinstance(live, LiveThinking) and not live.redacted:
                    live.redacted = True  # reasoning that turned encrypted mid-block
                events.append(b.thinking_delta(block.index, REDACTED_REASONING_TEXT))
            block.redacted.append(encrypted)
        return events

    def _stop(self, wire_index: int) -> list[AssistantMessageEvent]:
        block = self._open.pop(wire_index, None)
        if block is None:
            return []
        b = self.builder
        if block.kind == "text":
            return [b.text_end(block.index)]
        if block.kind == "thinking":
            signature = None
            if block.redacted is not None:
                signature = base64.b64encode(b"".join(block.redacted)).decode("ascii")
            return [b.thinking_end(block.index, thinking_signature=signature)]
        return [b.toolcall_end(block.index)]

    # ------------------------------------------------------------------ stop and usage

    def _message_stop(self, reason: str | None) -> None:
        out = self.builder.message
        self._stopped = True
        out.raw_stop_reason = reason
        mapped = _STOP_REASONS.get(reason or "")
        if mapped is None:
            out.stop_reason = "error"
            self._failure = (
                f"Provider stopped with: {reason}" if reason else "An unknown error occurred"
            )
        else:
            self._failure = None
            out.stop_reason = mapped  # type: ignore[assignment]

    def _usage(self, wire: TokenUsage) -> None:
        usage = self.builder.message.usage
        usage.input = wire.input_tokens or 0
        usage.output = wire.output_tokens or 0
        usage.cache_read = wire.cache_read_input_tokens or 0
        usage.cache_write = wire.cache_write_input_tokens or 0
        if wire.cache_details is not None:
            usage.cache_write_1h = sum(
                d.input_tokens or 0 for d in wire.cache_details if d.ttl == "1h"
            )
        usage.total_tokens = wire.total_tokens or usage.input + usage.output
        calculate_cost(self.model, usage)


def _decode_blob(value: str | None) -> bytes:
    if not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ProviderError(f"Bedrock sent redactedContent that is not base64: {exc}") from exc
