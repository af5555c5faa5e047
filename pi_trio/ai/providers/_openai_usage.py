"""Usage and cost of an ``openai-completions`` response, including OpenRouter's billed cost."""

from __future__ import annotations

import math
from typing import Any

from .._json._jsnum import js_number
from .._types import Model, Usage
from ._completions_wire import CompletionsUsage
from ._wire import write_prompt_usage

__all__ = ["apply_openrouter_cost", "parse_usage"]


def parse_usage(raw: CompletionsUsage, model: Model) -> Usage:
    """Usage of a chunk: prompt tokens minus cache reads and writes are ``input``;
    ``completion_tokens`` (reasoning included) are ``output``; cost computed, and replaced
    by the billed total where OpenRouter reports one."""
    details = raw.prompt_tokens_details
    cache_read = details.cached_tokens if details is not None else None
    if cache_read is None:
        cache_read = raw.prompt_cache_hit_tokens
    if cache_read is None:
        cache_read = raw.cached_tokens
    completion = raw.completion_tokens_details
    reasoning = completion.reasoning_tokens if completion is not None else None
    usage = Usage()
    write_prompt_usage(
        usage,
        model,
        prompt=raw.prompt_tokens or 0,
        output=raw.completion_tokens or 0,
        cache_read=cache_read or 0,
        cache_write=(details.cache_write_tokens or 0) if details is not None else 0,
        reasoning=reasoning or raw.reasoning_tokens or 0,
    )
    if model.provider == "openrouter" or "openrouter.ai" in model.base_url:
        apply_openrouter_cost(usage, raw)
    return usage


def _amount(value: Any) -> float | None:
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if valid and math.isfinite(value) and value >= 0 else None


def apply_openrouter_cost(usage: Usage, raw: CompletionsUsage) -> None:
    """Replace the catalog total with the amount OpenRouter billed (``usage.cost``), when
    the chunk reports complete, valid accounting; a BYOK request adds the upstream cost."""
    billed = _amount(raw.cost)
    if billed is None:
        return
    byok = raw.is_byok
    if byok is True:
        details = raw.cost_details
        if not isinstance(details, dict):
            return
        upstream = details.get("upstream_inference_cost")
        if upstream is None:
            prompt = _amount(details.get("upstream_inference_prompt_cost"))
            completion = _amount(details.get("upstream_inference_completions_cost"))
            if prompt is None or completion is None:
                return
            upstream = prompt + completion
        upstream = _amount(upstream)
        if upstream is None:
            return
        billed += upstream
    elif byok is not False:
        return
    usage.cost.total = js_number(billed)
    usage.cost.total_from_provider = True
