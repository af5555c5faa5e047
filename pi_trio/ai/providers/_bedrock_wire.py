"""Bedrock ``ConverseStream`` events as msgspec Structs (the payloads of the event-stream
frames; the service's ``ConverseStreamOutput`` union, as the original's ``handleContentBlock*``
and ``handleMetadata`` read it in ``src/api/bedrock-converse-stream.ts``).

The union's tag is the frame's ``:event-type`` header, not a JSON field, so each member
has a decoder of its own (``EVENT_DECODERS``). Only the fields the mapper reads are
declared; msgspec skips the rest. Blobs (``redactedContent``) arrive base64-encoded, as
the JSON protocol sends them.
"""

from __future__ import annotations

from typing import Any, Final

from .._json._depth import BoundedDecoder
from ._wire import Wire

__all__ = [
    "EVENT_DECODERS",
    "CacheDetail",
    "ContentBlockDeltaEvent",
    "ContentBlockStartEvent",
    "ContentBlockStopEvent",
    "Delta",
    "MessageStartEvent",
    "MessageStopEvent",
    "MetadataEvent",
    "ReasoningDelta",
    "TokenUsage",
    "ToolUseDelta",
    "ToolUseStart",
]


class MessageStartEvent(Wire):
    role: str | None = None


class ToolUseStart(Wire, rename="camel"):
    tool_use_id: str | None = None
    name: str | None = None


class BlockStart(Wire, rename="camel"):
    tool_use: ToolUseStart | None = None


class ContentBlockStartEvent(Wire, rename="camel"):
    content_block_index: int = 0
    start: BlockStart | None = None


class ToolUseDelta(Wire):
    input: str | None = None


class ReasoningDelta(Wire, rename="camel"):
    text: str | None = None
    signature: str | None = None
    redacted_content: str | None = None  # base64


class Delta(Wire, rename="camel"):
    text: str | None = None
    tool_use: ToolUseDelta | None = None
    reasoning_content: ReasoningDelta | None = None


class ContentBlockDeltaEvent(Wire, rename="camel"):
    content_block_index: int = 0
    delta: Delta | None = None


class ContentBlockStopEvent(Wire, rename="camel"):
    content_block_index: int = 0


class MessageStopEvent(Wire, rename="camel"):
    stop_reason: str | None = None
    additional_model_response_fields: Any = None


class CacheDetail(Wire, rename="camel"):
    ttl: str | None = None
    input_tokens: int | None = None


class TokenUsage(Wire, rename="camel"):
    """Token counts; ``input_tokens`` excludes the cache reads and writes."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    cache_details: list[CacheDetail] | None = None


class MetadataEvent(Wire):
    usage: TokenUsage | None = None


EVENT_DECODERS: Final[dict[str, BoundedDecoder[Any]]] = {
    "messageStart": BoundedDecoder(MessageStartEvent),
    "contentBlockStart": BoundedDecoder(ContentBlockStartEvent),
    "contentBlockDelta": BoundedDecoder(ContentBlockDeltaEvent),
    "contentBlockStop": BoundedDecoder(ContentBlockStopEvent),
    "messageStop": BoundedDecoder(MessageStopEvent),
    "metadata": BoundedDecoder(MetadataEvent),
}
