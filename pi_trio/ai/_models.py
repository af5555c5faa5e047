"""Catalog look-ups, cost accounting and thinking-level support of a model.

The catalog is the original's (``_catalog``), read on the first look-up. Every look-up
returns fresh ``Model`` structs decoded from the catalog's JSON, so a caller may adjust
the model it got (say, point ``base_url`` at a local server) without changing what the
next caller sees. ``get_model`` answers ``None`` for a name it does not know, as in the
original.
"""

from __future__ import annotations

from typing import Final

import msgspec

from . import _catalog
from ._types import Cost, CostTier, Model, ModelCost, ModelThinkingLevel, Number, Usage

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


def get_model(provider: str, model_id: str) -> Model | None:
    """The catalog's chat model ``model_id`` of ``provider``, or ``None`` if it has none."""
    raw = _catalog.chat_entries(provider).get(model_id)
    return None if raw is None else _MODEL_DECODER.decode(raw)


def get_models(provider: str) -> list[Model]:
    """Every chat model of ``provider`` in catalog order; ``[]`` for an unknown provider."""
    return [_MODEL_DECODER.decode(raw) for raw in _catalog.chat_entries(provider).values()]


def get_providers() -> list[str]:
    """The provider ids of the catalog, in alphabetical order."""
    return _catalog.provider_ids()


def models_are_equal(a: Model | None, b: Model | None) -> bool:
    """True when both are models with the same ``id`` and ``provider``; false if either is None."""
    if a is None or b is None:
        return False
    return a.id == b.id and a.provider == b.provider


# --------------------------------------------------------------------------- cost


def _whole(value: float) -> Number:
    """Whole dollar amounts as ``int``, so a zero cost encodes as ``0`` like the original."""
    return int(value) if value.is_integer() else value


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
    (``usage.cache_write_1h``, a subset of ``cache_write``) cost twice the input rate.
    """
    rates = _rates(model.cost, usage.input + usage.cache_read + usage.cache_write)
    long_write = usage.cache_write_1h if isinstance(usage.cache_write_1h, int) else 0
    short_write = usage.cache_write - long_write
    cost = usage.cost
    cost.input = _whole(rates.input / 1_000_000 * usage.input)
    cost.output = _whole(rates.output / 1_000_000 * usage.output)
    cost.cache_read = _whole(rates.cache_read / 1_000_000 * usage.cache_read)
    cost.cache_write = _whole(
        (rates.cache_write * short_write + rates.input * 2 * long_write) / 1_000_000
    )
    cost.total = _whole(float(cost.input + cost.output + cost.cache_read + cost.cache_write))
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
