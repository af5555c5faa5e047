"""Gemini ``GenerateContentResponse`` stream chunks as msgspec Structs (what the original's
``stream`` reads in ``src/api/google-generative-ai.ts``).

A chunk has no ``type``: ``GenerateContentResponse`` is one Struct whose fields are all
optional, and a ``Part`` is text, thinking (``thought``) or a function call by the fields
it carries (parts of other kinds carry none the mapper reads). Only the fields the mapper
reads are declared; msgspec skips the rest. ``error`` stays plain JSON: it is shown to the
user as sent.
"""

from __future__ import annotations

from typing import Any, Final

from .._json._depth import BoundedDecoder
from ._wire import Wire

__all__ = [
    "RESPONSE_DECODER",
    "Candidate",
    "Content",
    "FunctionCall",
    "GenerateContentResponse",
    "Part",
    "PromptFeedback",
    "UsageMetadata",
]


class FunctionCall(Wire):
    name: str | None = None
    id: str | None = None
    args: dict[str, Any] | None = None


class Part(Wire, rename="camel"):
    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    function_call: FunctionCall | None = None


class Content(Wire):
    parts: list[Part] | None = None


class Candidate(Wire, rename="camel"):
    content: Content | None = None
    finish_reason: str | None = None
    finish_message: str | None = None


class PromptFeedback(Wire, rename="camel"):
    block_reason: str | None = None


class UsageMetadata(Wire, rename="camel"):
    """Token counts; ``prompt_token_count`` includes the cached ones."""

    prompt_token_count: int | None = None
    cached_content_token_count: int | None = None
    candidates_token_count: int | None = None
    thoughts_token_count: int | None = None
    total_token_count: int | None = None


class GenerateContentResponse(Wire, rename="camel"):
    candidates: list[Candidate] | None = None
    prompt_feedback: PromptFeedback | None = None
    usage_metadata: UsageMetadata | None = None
    response_id: str | None = None
    model_version: str | None = None
    error: Any = None


RESPONSE_DECODER: Final = BoundedDecoder(GenerateContentResponse)
