"""Usage and cost of an ``openai-completions`` response, including OpenRouter's billed cost."""

from __future__ import annotations

import math
from typing import Any

from .._jsnum import js_number
from .._models import calculate_cost
from .._types import Model, Usage

__all__ = ["apply_openrouter_cost", "parse_usage"]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_usage(raw: dict[str, Any], model: Model) -> Usage:
    """Usage of a chunk: prompt tokens minus cache reads and writes are ``input``;
    ``completion_tokens`` (reasoning included) are ``output``; cost computed."""
    prompt = _int(raw.get("prompt_tokens"))
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read: Any = details.get("cached_tokens")
    if cache_read is None:
        cache_read = raw.get("prompt_cache_hit_tokens")
    if cache_read is None:
        cache_read = raw.get("cached_tokens")
    cache_read = _int(cache_read)
    cache_write = _int(details.get("cache_write_tokens"))
    completion = raw.get("completion_tokens_details")
    completion = completion if isinstance(completion, dict) else {}
    reasoning = _int(completion.get("reasoning_tokens")) or _int(raw.get("reasoning_tokens"))
    output = _int(raw.get("completion_tokens"))
    input_tokens = max(0, prompt - cache_read - cache_write)
    usage = Usage(
        input=input_tokens,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning=reasoning,
        total_tokens=input_tokens + output + cache_read + cache_write,
    )
    calculate_cost(model, usage)
    if model.provider == "openrouter" or "openrouter.ai" in model.base_url:
        apply_openrouter_cost(usage, raw)
    return usage


def _amount(value: Any) -> float | None:
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if valid and math.isfinite(value) and value >= 0 else None


def apply_openrouter_cost(usage: Usage, raw: dict[str, Any]) -> None:
    """Replace the catalog total with the amount OpenRouter billed (``usage.cost``), when
    the chunk reports complete, valid accounting; a BYOK request adds the upstream cost."""
    billed = _amount(raw.get("cost"))
    if billed is None:
        return
    byok = raw.get("is_byok")
    if byok is True:
        details = raw.get("cost_details")
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
