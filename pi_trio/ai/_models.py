"""Catalog look-ups, cost accounting and thinking-level support of a model.

Every look-up returns fresh ``Model`` structs decoded from the catalog's canonical JSON, so
a caller may adjust the model it got (say, point ``base_url`` at a local server) without
changing what the next caller sees.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import msgspec

from . import _catalog
from ._jsnum import js_number
from ._types import Cost, CostTier, Model, ModelCost, ModelThinkingLevel, Usage

__all__ = [
    "THINKING_LEVELS",
    "calculate_cost",
    "clamp_thinking_level",
    "get_model",
    "get_models",
    "get_providers",
    "get_supported_thinking_levels",
    "models_are_equal",
]

THINKING_LEVELS: Final[tuple[ModelThinkingLevel, ...]] = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)
# Levels a model supports only when its thinking_level_map names them explicitly.
_OPT_IN_LEVELS: Final = frozenset({"xhigh", "max"})

_MODEL_DECODER: Final = msgspec.json.Decoder(Model)


def _wire_entry(provider: str, row: _catalog.Row) -> dict[str, Any]:
    model_id, name, reasoning, image, inp, out, cache_read, cache_write, context, max_out = row
    api, base_url = _catalog.PROVIDERS[provider]
    extras = dict(_catalog.EXTRAS.get((provider, model_id), {}))
    cost: dict[str, Any] = {
        "input": inp,
        "output": out,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
    }
    if "tiers" in extras:
        cost["tiers"] = extras.pop("tiers")
    return {
        "id": model_id,
        "name": name,
        "api": api,
        "provider": provider,
        "baseUrl": base_url,
        "reasoning": reasoning,
        "input": ["text", "image"] if image else ["text"],
        "cost": cost,
        "contextWindow": context,
        "maxTokens": max_out,
        **extras,
    }


@functools.cache
def _catalog_json() -> dict[str, dict[str, bytes]]:
    """The catalog as canonical JSON per model, validated against ``Model`` once."""
    table: dict[str, dict[str, bytes]] = {}
    for provider, rows in _catalog.MODELS.items():
        entries = table.setdefault(provider, {})
        for row in rows:
            raw = msgspec.json.encode(_wire_entry(provider, row))
            # Decoding checks the entry against the Model schema; re-encoding yields the
            # struct's own canonical JSON (defaults omitted, field order fixed).
            entries[row[0]] = msgspec.json.encode(_MODEL_DECODER.decode(raw))
    return table


def get_model(provider: str, model_id: str) -> Model | None:
    """The catalog model ``model_id`` of ``provider``, or ``None`` if the catalog has none."""
    raw = _catalog_json().get(provider, {}).get(model_id)
    return None if raw is None else _MODEL_DECODER.decode(raw)


def get_models(provider: str) -> list[Model]:
    """Every catalog model of ``provider`` in catalog order; ``[]`` for an unknown provider."""
    return [_MODEL_DECODER.decode(raw) for raw in _catalog_json().get(provider, {}).values()]


def get_providers() -> list[str]:
    """The provider ids of the catalog."""
    return list(_catalog_json())


def models_are_equal(a: Model | None, b: Model | None) -> bool:
    """True when both are models with the same ``id`` and ``provider``; false if either is None."""
    if a is None or b is None:
        return False
    return a.id == b.id and a.provider == b.provider


# --------------------------------------------------------------------------- cost


def _rates(cost: ModelCost, prompt_tokens: int) -> ModelCost | CostTier:
    """The tier with the highest threshold below ``prompt_tokens``, else the base rates."""
    chosen: ModelCost | CostTier = cost
    threshold = -1
    for tier in cost.tiers or ():
        if threshold < tier.input_tokens_above < prompt_tokens:
            chosen, threshold = tier, tier.input_tokens_above
    return chosen


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Price ``usage`` at ``model``'s rates: writes ``usage.cost`` in place and returns it.

    A price tier applies to the whole request once the prompt (input + cache read + cache
    write tokens) is above its ``input_tokens_above``. Cache writes with a one-hour TTL
    (``usage.cache_write_1h``, a subset of ``cache_write``) cost twice the input rate. The
    arithmetic is the original's, in its order, so the amounts are the same floats: the
    cache-write cost sums the token-weighted rates before dividing by a million
    (``0.001125``, not ``0.0011250000000000001``). ``total`` is the catalog estimate, so
    ``total_from_provider`` becomes false; a provider that reports its billed amount
    replaces ``total`` afterwards and sets it true.
    """
    rates = _rates(model.cost, usage.input + usage.cache_read + usage.cache_write)
    long_write = usage.cache_write_1h if isinstance(usage.cache_write_1h, int) else 0
    short_write = usage.cache_write - long_write
    cost = usage.cost
    parts = (
        rates.input / 1_000_000 * usage.input,
        rates.output / 1_000_000 * usage.output,
        rates.cache_read / 1_000_000 * usage.cache_read,
        (rates.cache_write * short_write + rates.input * 2 * long_write) / 1_000_000,
    )
    cost.input, cost.output, cost.cache_read, cost.cache_write = (js_number(p) for p in parts)
    cost.total = js_number(parts[0] + parts[1] + parts[2] + parts[3])
    cost.total_from_provider = False
    return cost


# --------------------------------------------------------------------------- thinking


def get_supported_thinking_levels(model: Model) -> list[ModelThinkingLevel]:
    """The thinking levels ``model`` accepts, lowest first.

    ``["off"]`` for a model without reasoning. Otherwise every level whose map value is not
    ``None``; ``xhigh`` and ``max`` only when the map names them explicitly.
    """
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    supported: list[ModelThinkingLevel] = []
    for level in THINKING_LEVELS:
        if level in level_map:
            if level_map[level] is not None:
                supported.append(level)
        elif level not in _OPT_IN_LEVELS:
            supported.append(level)
    return supported


def clamp_thinking_level(model: Model, level: str) -> ModelThinkingLevel:
    """The nearest level ``model`` supports: ``level`` itself, else the first supported one
    above it, else the first below it."""
    if level not in THINKING_LEVELS:
        raise ValueError(
            f"unknown thinking level {level!r}; expected one of {', '.join(THINKING_LEVELS)}"
        )
    supported = get_supported_thinking_levels(model)
    index = THINKING_LEVELS.index(level)
    upward = THINKING_LEVELS[index:]
    downward = reversed(THINKING_LEVELS[:index])
    for candidate in (*upward, *downward):
        if candidate in supported:
            return candidate
    return "off"  # every level is mapped to None
