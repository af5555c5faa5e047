"""The proxy client's sans-IO core: response lines in, assistant events out.

``LineSplitter`` cuts the response body into lines; ``ProxyRebuilder`` reads the
``data: `` lines and rebuilds the assistant message from the partial-less events exactly as
the original client does, with a ``MessageBuilder`` (so the rebuild is linear in the size of
the stream), and returns each event with ``partial`` attached.
"""

from __future__ import annotations

import codecs
import logging
from typing import Any

import msgspec

from ..ai import (
    AssistantMessageEvent,
    ErrorEvent,
    Model,
    StreamProtocolError,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolCallEndEvent,
)
from ..ai._seam import BoundedDecoder
from ..ai.providers import MessageBuilder
from ._wire import (
    KNOWN_EVENT_TYPES,
    ProxyDone,
    ProxyError,
    ProxyEvent,
    ProxyStart,
    ProxyTextDelta,
    ProxyTextEnd,
    ProxyTextStart,
    ProxyThinkingDelta,
    ProxyThinkingEnd,
    ProxyThinkingStart,
    ProxyToolCallDelta,
    ProxyToolCallEnd,
    ProxyToolCallStart,
    decode_json,
)

__all__ = ["EOF_DIAGNOSTICS", "EOF_TEXT", "MAX_PROXY_LINE_CHARS", "LineSplitter", "ProxyRebuilder"]

# Longer than any event line a proxy sends (arguments arrive in deltas); a body that holds
# this much without a newline is broken, and reading it further would only grow memory.
MAX_PROXY_LINE_CHARS = 16 * 1024 * 1024

logger = logging.getLogger("pi_trio.proxy")

EOF_TEXT = "Proxy stream ended without a terminal event"
# What the original runtime records on a message whose proxy stream ended early.
EOF_DIAGNOSTICS: list[Any] = [
    {
        "type": "bedrock_response_failure",
        "details": {
            "phase": "stream_completion",
            "failureClass": "transient_transport_failure",
        },
    }
]


class _TypeOnly(msgspec.Struct):
    type: Any = None


class LineSplitter:
    """Splits a byte stream into ``\\n``-terminated text lines (UTF-8; invalid bytes become
    U+FFFD; a leading BOM is dropped). Linear in the input, however it is chunked."""

    __slots__ = ("_decoder", "_pending", "_pending_chars")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._pending: list[str] = []
        self._pending_chars = 0

    def feed(self, data: bytes) -> list[str]:
        """The lines ``data`` completed; ``StreamProtocolError`` once an unfinished line
        exceeds ``MAX_PROXY_LINE_CHARS``."""
        text = self._decoder.decode(data)
        if "\n" not in text:
            if text:
                self._pending.append(text)
                self._pending_chars += len(text)
                if self._pending_chars > MAX_PROXY_LINE_CHARS:
                    raise StreamProtocolError(
                        f"The proxy sent more than {MAX_PROXY_LINE_CHARS} characters without "
                        "a newline (MAX_PROXY_LINE_CHARS); the stream is broken, so it is not "
                        "read further"
                    )
            return []
        lines = text.split("\n")
        if self._pending:
            self._pending.append(lines[0])
            lines[0] = "".join(self._pending)
        last = lines.pop()
        self._pending = [last] if last else []
        self._pending_chars = len(last)
        return lines

    def flush(self) -> list[str]:
        """The last line when the stream ended without a newline after it."""
        text = self._decoder.decode(b"", final=True)
        rest = "".join(self._pending) + text
        self._pending = []
        return [rest] if rest else []


class ProxyRebuilder:
    """Rebuilds the assistant message from partial-less proxy events, as the original
    client does. ``feed_line`` takes one line of the response body and returns the event
    to send (with ``partial``), or ``None``. Protocol violations raise
    ``StreamProtocolError`` with the original runtime's text where it has one."""

    __slots__ = ("_builder", "terminal")

    def __init__(self, model: Model, *, timestamp: int | None = None) -> None:
        self._builder = MessageBuilder(model, timestamp=timestamp)
        self.terminal = False

    def feed_line(self, line: str) -> AssistantMessageEvent | None:
        if not line.startswith("data: "):
            return None
        data = line[6:].strip()
        if not data or self.terminal:
            return None
        try:
            wire = decode_json(data, ProxyEvent)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            kind = _unknown_type(data)
            if kind is not None:
                logger.warning("Unhandled proxy event type: %s", kind)
                return None
            raise StreamProtocolError(
                f"Malformed proxy event {_clip(data)!r}: {exc}; expected one JSON assistant "
                "event without 'partial' per 'data: ' line"
            ) from exc
        return self.apply(wire)

    def apply(self, wire: ProxyEvent) -> AssistantMessageEvent | None:
        builder = self._builder
        match wire:
            case ProxyStart():
                return builder.start()
            case ProxyTextStart(content_index=index):
                self._check_next(index, "text_start")
                return builder.text_start()
            case ProxyTextDelta(content_index=index, delta=delta):
                self._require(index, TextContent, "Received text_delta for non-text content")
                return builder.text_delta(index, delta)
            case ProxyTextEnd(content_index=index, content_signature=signature):
                self._require(index, TextContent, "Received text_end for non-text content")
                return builder.text_end(index, text_signature=signature)
            case ProxyThinkingStart(content_index=index):
                self._check_next(index, "thinking_start")
                return builder.thinking_start()
            case ProxyThinkingDelta(content_index=index, delta=delta):
                self._require(
                    index, ThinkingContent, "Received thinking_delta for non-thinking content"
                )
                return builder.thinking_delta(index, delta)
            case ProxyThinkingEnd(
                content_index=index, content_signature=signature, redacted=redacted
            ):
                self._require(
                    index, ThinkingContent, "Received thinking_end for non-thinking content"
                )
                if redacted:
                    block = builder.started_block(index)
                    assert isinstance(block, ThinkingContent)
                    block.redacted = True
                return builder.thinking_end(index, thinking_signature=signature)
            case ProxyToolCallStart(content_index=index, id=call_id, tool_name=name):
                self._check_next(index, "toolcall_start")
                return builder.toolcall_start(call_id, name)
            case ProxyToolCallDelta(content_index=index, delta=delta):
                self._require(index, ToolCall, "Received toolcall_delta for non-toolCall content")
                return builder.toolcall_delta(index, delta)
            case ProxyToolCallEnd(content_index=index, tool_call=server_call):
                return self._toolcall_end(index, server_call)
            case ProxyDone():
                self._finish(wire)
                self.terminal = True
                return builder.done(wire.reason)
            case ProxyError():
                self._finish(wire)
                self.terminal = True
                return builder.error(wire.error_message, reason=wire.reason)
        raise TypeError(f"not a proxy event: {wire!r}")  # pragma: no cover

    def error(self, text: str, *, diagnostics: list[Any] | None = None) -> ErrorEvent:
        """The terminal event for a failure on the client's side (HTTP status, transport,
        malformed data, early end): what was rebuilt so far, with ``stop_reason="error"``."""
        self.terminal = True
        if diagnostics is not None:
            self._builder.message.diagnostics = diagnostics
        return self._builder.error(text)

    def _finish(self, wire: ProxyDone | ProxyError) -> Any:
        message = self._builder.message
        if wire.usage is not None:
            message.usage = wire.usage
        if wire.provider_thinking_level is not None:
            message.provider_thinking_level = wire.provider_thinking_level
        if wire.diagnostics is not None:
            message.diagnostics = wire.diagnostics
        return message

    def _check_next(self, index: int, action: str) -> None:
        expected = self._builder.block_count
        if index != expected:
            raise StreamProtocolError(
                f"Proxy sent {action} for content index {index}, expected {expected}: "
                "blocks are started in order, one index after the other"
            )

    def _require(self, index: int, kind: type, text: str) -> None:
        if not isinstance(self._builder.started_block(index), kind):
            raise StreamProtocolError(text)

    def _toolcall_end(self, index: int, server_call: ToolCall | None) -> ToolCallEndEvent | None:
        if not isinstance(self._builder.started_block(index), ToolCall):
            return None  # the original ignores a toolcall_end for another block type
        if server_call is None:
            return self._builder.toolcall_end(index)
        # The server's tool call wins: it may carry metadata (namespace, signature) that
        # only arrives at the end.
        live = self._builder.tool_call(index)
        live.id = server_call.id
        live.name = server_call.name
        if server_call.thought_signature is not None:
            live.thought_signature = server_call.thought_signature
        if server_call.namespace is not None:
            live.namespace = server_call.namespace
        return self._builder.toolcall_end(index, arguments=server_call.arguments)


_type_only = BoundedDecoder(_TypeOnly)


def _unknown_type(data: str) -> str | None:
    """The event type of ``data`` if it is a JSON object of a type this protocol does not
    know (such events are skipped), else ``None``."""
    try:
        head = _type_only.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    kind = head.type
    if isinstance(kind, str) and kind not in KNOWN_EVENT_TYPES:
        return kind
    return None


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
