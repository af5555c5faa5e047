"""Mistral chat-completion stream chunks as msgspec Structs (the ``mistral-conversations``
api, ``POST /v1/chat/completions`` with ``stream: true``).

A chunk is ``{id, model, choices: [{index, delta, finish_reason}], usage?}``. ``choices``
is required: a chunk without it is not a Mistral stream event, and the mapper fails on it
as the original runtime does. ``delta.content`` is a string (text) or a list of content
chunks: ``{"type": "text", "text"}`` and ``{"type": "thinking", "thinking": [{"type":
"text", "text"}]}`` (reasoning models); other chunk types (references, images) are read
as a ``ContentChunk`` whose ``type`` the mapper does not handle, and skipped. A tool
call's ``arguments`` is a JSON string, or an object some models send whole. The cached
prompt tokens are reported under several spellings; every one the original reads is
declared.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .._json._depth import BoundedDecoder
from ._wire import Wire

__all__ = [
    "CHUNK_DECODER",
    "MistralChoice",
    "MistralChunk",
    "MistralContentChunk",
    "MistralDelta",
    "MistralFunction",
    "MistralToolCall",
    "MistralUsage",
    "TextPart",
]


class TextPart(Wire):
    type: str | None = None
    text: str | None = None


class MistralContentChunk(Wire):
    """One part of a list ``content``: ``text`` or ``thinking`` (a list of text parts)."""

    type: str | None = None
    text: str | None = None
    thinking: list[TextPart] | None = None


class MistralFunction(Wire):
    name: str | None = None
    arguments: Any = None  # a JSON string, or an object sent whole


class MistralToolCall(Wire):
    id: str | None = None
    index: int | None = None
    function: MistralFunction | None = None


class MistralDelta(Wire):
    content: str | list[MistralContentChunk] | None = None
    tool_calls: list[MistralToolCall] | None = None


class MistralChoice(Wire):
    index: int | None = None
    delta: MistralDelta | None = None
    finish_reason: str | None = None


class _CachedSnake(Wire):
    cached_tokens: Any = None


class _CachedCamel(Wire):
    cached_tokens: Any = msgspec.field(default=None, name="cachedTokens")


class MistralUsage(Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    # the cached prompt tokens, in every spelling a Mistral server or SDK has used
    details_camel: _CachedCamel | None = msgspec.field(default=None, name="promptTokensDetails")
    details: _CachedSnake | None = msgspec.field(default=None, name="prompt_tokens_details")
    detail_camel: _CachedCamel | None = msgspec.field(default=None, name="promptTokenDetails")
    detail: _CachedSnake | None = msgspec.field(default=None, name="prompt_token_details")
    num_cached_camel: Any = msgspec.field(default=None, name="numCachedTokens")
    num_cached_tokens: Any = None

    def cached_tokens(self) -> Any:
        """The first spelling present, in the original runtime's order (a raw value)."""
        for value in (
            self.details_camel and self.details_camel.cached_tokens,
            self.details and self.details.cached_tokens,
            self.detail_camel and self.detail_camel.cached_tokens,
            self.detail and self.detail.cached_tokens,
            self.num_cached_camel,
            self.num_cached_tokens,
        ):
            if value is not None:
                return value
        return 0


class MistralChunk(Wire):
    choices: list[MistralChoice]
    id: str | None = None
    model: str | None = None
    usage: MistralUsage | None = None


CHUNK_DECODER: Final = BoundedDecoder(MistralChunk)
