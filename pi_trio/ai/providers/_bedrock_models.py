"""What Bedrock's model families need (sans-IO): which ids are Claude, which Claude think
adaptively, take prompt-cache points or bind replayed thinking, and the reasoning fields
of a request (``additionalModelRequestFields``).

Model ids and names are matched both as given and with ``.``/``:``/``_``/blanks turned
into ``-``, so inference-profile ids (``us.anthropic.claude-opus-4-7``), ARNs of
application inference profiles (whose ``name`` the user sets) and display names all
match.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .._stream._options import StreamOptions
from .._types import Model
from ._common import option_env

__all__ = [
    "DEFAULT_THINKING_DISPLAY",
    "INTERLEAVED_THINKING_BETA",
    "THINKING_BINDING_BETA",
    "configured_region",
    "is_claude",
    "is_govcloud",
    "match_candidates",
    "supports_adaptive_thinking",
    "supports_prompt_caching",
    "thinking_fields",
]

DEFAULT_THINKING_DISPLAY: Final = "summarized"
INTERLEAVED_THINKING_BETA: Final = "interleaved-thinking-2025-05-14"
THINKING_BINDING_BETA: Final = "thinking-binding-controls-2026-08-01"

_SEPARATORS: Final = re.compile(r"[\s_.:]+")
_CLAUDE5: Final = ("opus-5", "sonnet-5", "haiku-5", "fable-5")
_ADAPTIVE: Final = ("opus-4-6", "opus-4-7", "opus-4-8", "sonnet-4-6", *_CLAUDE5)
_XHIGH_AND_BINDING: Final = ("opus-4-7", "opus-4-8", *_CLAUDE5)
# Thinking budgets of budget-based Claude; the extended levels count as high.
_BUDGETS: Final = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 16384,
    "max": 16384,
}
# OpenAI GPT models take a nested ``reasoning.effort`` and refuse ``minimal``.
_GPT_EFFORT: Final = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
# gpt-oss takes a flat ``reasoning_effort`` of low, medium or high.
_GPT_OSS_EFFORT: Final = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}
_EFFORT: Final = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def match_candidates(model: Model) -> list[str]:
    """The lower-case id and name, each also with separators turned into ``-``."""
    values = [model.id, model.name] if model.name else [model.id]
    out: list[str] = []
    for value in values:
        lower = value.lower()
        out.extend((lower, _SEPARATORS.sub("-", lower)))
    return out


def _any(model: Model, needles: tuple[str, ...]) -> bool:
    return any(n in c for c in match_candidates(model) for n in needles)


def is_claude(model: Model) -> bool:
    """Anthropic Claude on Bedrock, by id or name."""
    model_id = model.id.lower()
    name = (model.name or "").lower()
    return (
        "anthropic.claude" in model_id
        or "anthropic/claude" in model_id
        or "anthropic.claude" in name
        or "anthropic/claude" in name
        or "claude" in name
    )


def supports_adaptive_thinking(model: Model) -> bool:
    """Claude that thinks adaptively (Opus 4.6+, Sonnet 4.6, the Claude 5 family)."""
    return _any(model, _ADAPTIVE)


def supports_prompt_caching(model: Model, forced: bool = False) -> bool:
    """Claude 3.5 Haiku, 3.7 Sonnet, 4.x and 5 take cache points; ``forced``
    (``AWS_BEDROCK_FORCE_CACHE=1``) enables them for ids without a Claude name, such as
    application inference profiles."""
    candidates = match_candidates(model)
    if not any("claude" in c for c in candidates):
        return forced
    return any(
        n in c
        for c in candidates
        for n in (*_CLAUDE5, "-4-", "claude-3-7-sonnet", "claude-3-5-haiku")
    )


def configured_region(options: StreamOptions) -> str | None:
    """``extra["region"]``, else ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` (``options.env``
    first, then the process environment)."""
    region = (options.extra or {}).get("region")
    if isinstance(region, str) and region:
        return region
    return option_env(options, "AWS_REGION") or option_env(options, "AWS_DEFAULT_REGION")


def is_govcloud(model: Model, region: str | None) -> bool:
    """A GovCloud target (its Converse schema lags: no thinking display or binding)."""
    if region is not None and region.lower().startswith("us-gov-"):
        return True
    model_id = model.id.lower()
    return model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


def _effort(model: Model, level: str) -> str:
    if level == "xhigh" and _any(model, _XHIGH_AND_BINDING):
        return "xhigh"
    mapped = (model.thinking_level_map or {}).get(level)
    return mapped if isinstance(mapped, str) else _EFFORT.get(level, "high")


def _claude_fields(model: Model, options: StreamOptions, level: str) -> Any:
    extra = options.extra or {}
    gov = is_govcloud(model, configured_region(options))
    display = None if gov else extra.get("thinking_display") or DEFAULT_THINKING_DISPLAY
    fields: dict[str, Any]
    if supports_adaptive_thinking(model):
        binding = not gov and _any(model, _XHIGH_AND_BINDING)
        thinking: dict[str, Any] = {"type": "adaptive"}
        if display is not None:
            thinking["display"] = display
        if binding:
            thinking["block_binding"] = {"prefix_mismatch_behavior": "drop_block"}
        fields = {"thinking": thinking, "output_config": {"effort": _effort(model, level)}}
        if binding:
            fields["anthropic_beta"] = [THINKING_BINDING_BETA]
        return fields
    budget_level = "high" if level in ("xhigh", "max") else level
    budgets = options.thinking_budgets
    custom = getattr(budgets, budget_level, None) if budgets is not None else None
    budget = custom if custom is not None else _BUDGETS.get(level, _BUDGETS["high"])
    thinking = {"type": "enabled", "budget_tokens": budget}
    if display is not None:
        thinking["display"] = display
    fields = {"thinking": thinking}
    if extra.get("interleaved_thinking", True) is not False:
        fields["anthropic_beta"] = [INTERLEAVED_THINKING_BETA]
    return fields


def thinking_fields(model: Model, options: StreamOptions) -> Any:
    """``additionalModelRequestFields`` for ``options.reasoning`` (``None`` without a
    level, on models that do not reason, and on families with no known mapping)."""
    level = options.reasoning
    if not level or not model.reasoning:
        return None
    if is_claude(model):
        return _claude_fields(model, options, level)
    candidates = match_candidates(model)
    if any("gpt-oss" in c for c in candidates):
        return {"reasoning_effort": _GPT_OSS_EFFORT[level]}
    if any("gpt-" in c for c in candidates):
        mapped = (model.thinking_level_map or {}).get(level)
        return {"reasoning": {"effort": mapped if isinstance(mapped, str) else _GPT_EFFORT[level]}}
    return None
