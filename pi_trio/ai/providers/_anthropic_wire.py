"""The Anthropic Messages stream as msgspec Structs (the events the original's
``iterateAnthropicEvents`` reads, ``src/api/anthropic-messages.ts``).

An event's data is a tagged union on its ``type`` (``AnthropicEvent``), and so are the
content block of ``content_block_start`` and the delta of ``content_block_delta``. Only
the fields the mapper reads are declared (msgspec skips the rest), each optional where
the API may leave it out or send ``null``. ``EVENT_TYPES``, ``BLOCK_TYPES`` and
``DELTA_TYPES`` name the kinds known here; others are skipped by the mapper.
"""

from __future__ import annotations

from typing import Any, Final

from .._json._depth import BoundedDecoder
from ._wire import Tagged, Wire, tags

__all__ = [
    "BLOCK_TYPES",
    "DELTA_TYPES",
    "EVENT_DECODER",
    "EVENT_TYPES",
    "AnthropicEvent",
    "AnthropicUsage",
    "ContentBlockDelta",
    "ContentBlockStart",
    "ContentBlockStop",
    "InputJsonDelta",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "RedactedThinkingBlock",
    "SignatureDelta",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolUseBlock",
]


# --------------------------------------------------------------------------- usage


class CacheCreation(Wire):
    ephemeral_1h_input_tokens: int | None = None


class OutputTokensDetails(Wire):
    thinking_tokens: int | None = None


class AnthropicUsage(Wire):
    """Token counts; ``message_delta`` sends cumulative ones, ``null`` where unchanged."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_creation: CacheCreation | None = None
    output_tokens_details: OutputTokensDetails | None = None


# --------------------------------------------------------------------------- blocks


class TextBlock(Tagged, tag="text"):
    text: str | None = None


class ThinkingBlock(Tagged, tag="thinking"):
    thinking: str | None = None
    signature: str | None = None


class RedactedThinkingBlock(Tagged, tag="redacted_thinking"):
    data: str | None = None


class ToolUseBlock(Tagged, tag="tool_use"):
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None


ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock


class TextDelta(Tagged, tag="text_delta"):
    text: str | None = None


class ThinkingDelta(Tagged, tag="thinking_delta"):
    thinking: str | None = None


class InputJsonDelta(Tagged, tag="input_json_delta"):
    partial_json: str | None = None


class SignatureDelta(Tagged, tag="signature_delta"):
    signature: str | None = None


Delta = TextDelta | ThinkingDelta | InputJsonDelta | SignatureDelta


# --------------------------------------------------------------------------- events


class StartedMessage(Wire):
    id: str | None = None
    model: str | None = None
    usage: AnthropicUsage | None = None


class MessageStart(Tagged, tag="message_start"):
    message: StartedMessage | None = None


class ContentBlockStart(Tagged, tag="content_block_start"):
    index: int | None = None
    content_block: ContentBlock | None = None


class ContentBlockDelta(Tagged, tag="content_block_delta"):
    index: int | None = None
    delta: Delta | None = None


class ContentBlockStop(Tagged, tag="content_block_stop"):
    index: int | None = None


class StopDetails(Wire):
    explanation: str | None = None


class MessageDeltaBody(Wire):
    stop_reason: str | None = None
    stop_details: StopDetails | None = None


class MessageDelta(Tagged, tag="message_delta"):
    delta: MessageDeltaBody | None = None
    usage: AnthropicUsage | None = None
    stop_details: StopDetails | None = None


class MessageStop(Tagged, tag="message_stop"):
    pass


AnthropicEvent = (
    MessageStart
    | ContentBlockStart
    | ContentBlockDelta
    | ContentBlockStop
    | MessageDelta
    | MessageStop
)

EVENT_DECODER: Final = BoundedDecoder(AnthropicEvent)


EVENT_TYPES: Final = tags(AnthropicEvent)
BLOCK_TYPES: Final = tags(ContentBlock)
DELTA_TYPES: Final = tags(Delta)
