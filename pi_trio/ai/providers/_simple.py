"""The shared part of the ``*_simple`` entry points (the original's ``buildBaseOptions`` and
its helpers, ``src/api/simple-options.ts``).

The unified options name a ``reasoning`` level and optional ``thinking_budgets``; each
provider maps them to its native thinking parameters. What they share lives here: the
output-token cap clamped to the room left in the context window, the merged sampling
parameters and the keys of a body they may not set, and the thinking-budget arithmetic of
budget-based providers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from .._catalog._models import THINKING_LEVELS, clamp_thinking_level
from .._errors import ProviderError
from .._stream._options import StreamOptions, ThinkingBudgets
from .._transcript._system import normalize_context
from .._types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

__all__ = [
    "COMPLETIONS_OWNED_KEYS",
    "CONTEXT_MARGIN_TOKENS",
    "DEFAULT_THINKING_BUDGETS",
    "MIN_ANSWER_TOKENS",
    "RESPONSES_OWNED_KEYS",
    "add_sampling_params",
    "adjust_max_tokens_for_thinking",
    "build_base_options",
    "clamp_max_tokens_to_context",
    "clamp_thinking_budget_to_answer_room",
    "estimate_context_tokens",
    "resolve_sampling_params",
    "thinking_budget_for_level",
]

# Thinking-token budgets per level when the caller names none; xhigh and max use high's.
DEFAULT_THINKING_BUDGETS: Final[dict[str, int]] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
# Tokens kept free in the context window beyond the estimated prompt.
CONTEXT_MARGIN_TOKENS: Final = 4096
# Output tokens a budget-based request always leaves for the answer after thinking.
MIN_ANSWER_TOKENS: Final = 1024
# The keys of a Chat Completions body that say what the request is, which sampling
# parameters may not set (``add_sampling_params``): the model (and OpenRouter's fallback
# models and routing), the transcript, the tools, the answer's format and count,
# streaming, storage, caching, billing and the output limit.
COMPLETIONS_OWNED_KEYS: Final = frozenset(
    [
        "model",
        "models",
        "messages",
        "stream",
        "stream_options",
        "store",
        "tools",
        "tool_choice",
        "tool_stream",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "response_format",
        "n",
        "prompt_cache_key",
        "prompt_cache_retention",
        "max_tokens",
        "max_completion_tokens",
        "provider",
        "providerOptions",
        "route",
        "plugins",
        "transforms",
        "web_search_options",
        "user",
        "metadata",
        "service_tier",
        "modalities",
        "audio",
        "prediction",
    ]
)
# The same of a Responses body: the model, the input and instructions, stored and
# background responses and what they continue, the tools, the answer's format, what is
# included, caching, billing, the output limit.
RESPONSES_OWNED_KEYS: Final = frozenset(
    [
        "model",
        "input",
        "instructions",
        "stream",
        "stream_options",
        "store",
        "background",
        "previous_response_id",
        "conversation",
        "prompt",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_tool_calls",
        "text",
        "include",
        "prompt_cache_key",
        "prompt_cache_retention",
        "prompt_cache_options",
        "max_output_tokens",
        "service_tier",
        "truncation",
        "user",
        "safety_identifier",
        "metadata",
    ]
)
# What one image counts for in the character estimate (about 1 200 tokens).
_IMAGE_CHARS: Final = 4800

_encode = msgspec.json.encode


# --------------------------------------------------------------------------- estimate


def _text_chars(blocks: Iterable[Any]) -> int:
    chars = 0
    for block in blocks:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ImageContent):
            chars += _IMAGE_CHARS
        elif isinstance(block, ThinkingContent):
            chars += len(block.thinking)
        elif isinstance(block, ToolCall):
            chars += len(block.name) + len(_encode(block.arguments).decode())
    return chars


def _message_tokens(message: Any) -> int:
    if isinstance(message, (UserMessage, SystemMessage)):
        content = message.content
        chars = len(content) if isinstance(content, str) else _text_chars(content or ())
        if isinstance(message, SystemMessage):
            if message.tools_added:
                chars += len(_encode(message.tools_added))
            if message.tools_removed:
                chars += len(_encode(message.tools_removed))
    elif isinstance(message, (AssistantMessage, ToolResultMessage)):
        chars = _text_chars(message.content or ())
    else:
        return 0
    return math.ceil(chars / 4)


def _usage_tokens(usage: Usage) -> int:
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


def estimate_context_tokens(messages: Sequence[Any]) -> int:
    """Roughly how many tokens ``messages`` take: the reported usage of the last successful
    assistant message plus an estimate (characters / 4) of every message after it, or the
    estimate of all messages when no response reported usage."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("error", "aborted")
            and _usage_tokens(message.usage) > 0
        ):
            tail = sum(_message_tokens(m) for m in messages[i + 1 :])
            return _usage_tokens(message.usage) + tail
    return sum(_message_tokens(m) for m in messages)


# --------------------------------------------------------------------------- max tokens


def clamp_max_tokens_to_context(model: Model, context: Context, max_tokens: int) -> int:
    """``max_tokens`` lowered to what fits in the context window after the estimated
    prompt and a margin; never below 1."""
    if model.context_window <= 0:
        return max(1, max_tokens)
    messages = normalize_context(context).messages
    available = model.context_window - estimate_context_tokens(messages) - CONTEXT_MARGIN_TOKENS
    return min(max_tokens, max(1, available))


def build_base_options(model: Model, context: Context, options: StreamOptions) -> StreamOptions:
    """The generic options of a ``*_simple`` call: ``max_tokens`` defaults to the model's
    output limit and is clamped to the context window; ``sampling_params`` merges the
    model's and the caller's (the caller's win)."""
    requested = options.max_tokens if options.max_tokens is not None else model.max_tokens
    changes: dict[str, Any] = {"max_tokens": clamp_max_tokens_to_context(model, context, requested)}
    if model.sampling_params or options.sampling_params:
        changes["sampling_params"] = {
            **(model.sampling_params or {}),
            **(options.sampling_params or {}),
        }
    return msgspec.structs.replace(options, **changes)


def resolve_sampling_params(
    model: Model, level: str, request: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The sampling parameters of a request at thinking ``level``: the model's, then the
    model's for that level (clamped to the levels it has), then the request's; ``None``
    when none of them has any."""
    if level in THINKING_LEVELS:
        level = clamp_thinking_level(model, level)
    by_level = (model.sampling_params_by_thinking_level or {}).get(level)
    if not (model.sampling_params or by_level or request):
        return None
    return {**(model.sampling_params or {}), **(by_level or {}), **(request or {})}


def add_sampling_params(
    body: dict[str, Any], params: dict[str, Any] | None, owned: frozenset[str], api: str
) -> None:
    """Add the sampling parameters ``params`` to ``body``, last, as the original does; but
    none may set a key the request builder owns (``owned``: what the request is, as the
    model, the transcript, the tools, the answer's format, streaming, storage and
    routing): that is a ``ProviderError`` naming the key, before anything is sent."""
    if not params:
        return
    taken = sorted(owned.intersection(params))
    if taken:
        raise ProviderError(
            f"sampling_params may not set {', '.join(map(repr, taken))}: the {api} request "
            f"builder owns {'it' if len(taken) == 1 else 'them'} (from the model, the context "
            "or another option); change the request body with on_payload if it must differ"
        )
    body.update(params)


# --------------------------------------------------------------------------- thinking


def thinking_budget_for_level(level: str, budgets: ThinkingBudgets | None = None) -> int:
    """The thinking-token budget of ``level`` (``xhigh`` and ``max`` count as ``high``):
    the caller's budget when given, else the default."""
    key = level if level in DEFAULT_THINKING_BUDGETS else "high"
    custom = getattr(budgets, key, None) if budgets is not None else None
    return custom if custom is not None else DEFAULT_THINKING_BUDGETS[key]


def clamp_thinking_budget_to_answer_room(budget: int, ceiling: int) -> int:
    """``budget`` lowered so that ``MIN_ANSWER_TOKENS`` of ``ceiling`` stay for the answer
    (0 when no budget fits)."""
    return min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))


def adjust_max_tokens_for_thinking(
    base_max_tokens: int | None,
    model_max_tokens: int,
    level: str,
    budgets: ThinkingBudgets | None = None,
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` for a budget-based provider: room for the budget
    on top of the answer, capped at the model's output limit; when the cap leaves no room
    beyond the budget, the budget shrinks to leave ``MIN_ANSWER_TOKENS``."""
    budget = thinking_budget_for_level(level, budgets)
    if base_max_tokens is None:
        max_tokens = model_max_tokens
    else:
        max_tokens = min(base_max_tokens + budget, model_max_tokens)
    if max_tokens <= budget:
        budget = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return max_tokens, budget
