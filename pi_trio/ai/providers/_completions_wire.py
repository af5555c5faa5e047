"""Chat Completions stream chunks as msgspec Structs (what the original's ``stream`` reads in
``src/api/openai-completions.ts``).

A chunk has no ``type`` to tell kinds apart: ``Chunk`` is one Struct whose fields are all
optional, since each of the many servers that speak this API sends its own subset (and
``null`` for much of it). Only the fields the mapper reads are declared; msgspec skips
the rest. Some fields stay plain JSON on purpose: ``error`` (shown to the user as sent),
``reasoning_details`` (OpenRouter's reasoning, replayed to it verbatim as the thinking
block's signature) and OpenRouter's billing in the usage.
"""

from __future__ import annotations

from typing import Any, Final

from .._json._depth import BoundedDecoder
from ._wire import Wire

__all__ = [
    "CHUNK_DECODER",
    "Chunk",
    "ChunkChoice",
    "ChunkDelta",
    "ChunkToolCall",
    "CompletionTokensDetails",
    "CompletionsUsage",
    "PromptTokensDetails",
    "ToolCallFunction",
]


class PromptTokensDetails(Wire):
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


class CompletionTokensDetails(Wire):
    reasoning_tokens: int | None = None


class CompletionsUsage(Wire):
    """Token counts; the cache reads are in ``prompt_tokens_details.cached_tokens``, or
    ``prompt_cache_hit_tokens`` (DeepSeek), or ``cached_tokens`` (Moonshot). OpenRouter
    adds what it billed (``cost``, ``is_byok``, ``cost_details``): kept as plain JSON,
    since accounting that is incomplete or not numbers only means the catalog estimate
    stands (``apply_openrouter_cost`` checks it)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None
    prompt_cache_hit_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: Any = None
    is_byok: Any = None
    cost_details: Any = None


class ToolCallFunction(Wire):
    name: str | None = None
    arguments: str | None = None


class ChunkToolCall(Wire):
    index: int | None = None
    id: str | None = None
    function: ToolCallFunction | None = None


class ChunkDelta(Wire):
    # Mistral's reasoning models send a list of parts here; only a string is text.
    content: str | list[Any] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    reasoning_text: str | None = None
    tool_calls: list[ChunkToolCall] | None = None
    reasoning_details: list[Any] | None = None
    refusal: str | None = None


class ChunkChoice(Wire):
    delta: ChunkDelta | None = None
    finish_reason: str | None = None
    usage: CompletionsUsage | None = None  # some servers report usage on the choice


class Chunk(Wire):
    id: str | None = None
    model: str | None = None
    choices: list[ChunkChoice] | None = None
    usage: CompletionsUsage | None = None
    error: Any = None


CHUNK_DECODER: Final = BoundedDecoder(Chunk)
