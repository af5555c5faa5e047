"""Catalog look-ups, cost accounting and thinking-level support of a model.

The catalog is the original's (``_data``), read on the first look-up. Every look-up
returns fresh ``Model`` structs decoded from the catalog's JSON, so a caller may adjust
the model it got (say, point ``base_url`` at a local server) without changing what the
next caller sees. ``get_model`` answers ``None`` for a name it does not know, as in the
original; ``resolve_model`` raises an error that names the closest matches instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

import msgspec

from .._errors import UnknownModelError
from .._json._codec import from_json
from .._json._jsnum import js_number
from .._types import Cost, CostTier, Model, ModelCost, ModelThinkingLevel, Usage
from . import _data

__all__ = [
    "THINKING_LEVELS",
    "calculate_cost",
    "clamp_thinking_level",
    "get_model",
    "get_models",
    "get_providers",
    "get_supported_thinking_levels",
    "models_are_equal",
    "resolve_model",
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
# How many close matches an unknown name's error suggests.
_SUGGESTIONS: Final = 3


def _decode_model(raw: bytes) -> Model:
    """One catalog entry. Entries with fields this version has no attribute for (the
    data is newer than the code) keep them, as every decoded wire type does."""
    try:
        return _MODEL_DECODER.decode(raw)
    except msgspec.ValidationError:
        return from_json(raw, Model)


def get_model(provider: str, model_id: str) -> Model | None:
    """The catalog's chat model ``model_id`` of ``provider``, or ``None`` if it has none."""
    raw = _data.chat_entries(provider).get(model_id)
    return None if raw is None else _decode_model(raw)


def get_models(provider: str) -> list[Model]:
    """Every chat model of ``provider`` in catalog order; ``[]`` for an unknown provider."""
    return [_decode_model(raw) for raw in _data.chat_entries(provider).values()]


def get_providers() -> list[str]:
    """The provider ids of the catalog, in alphabetical order."""
    return _data.provider_ids()


def resolve_model(spec: str, model_id: str | None = None) -> Model:
    """The catalog model named ``"provider/model-id"`` (or by ``provider``, ``model_id``).

    Everything after the first ``/`` is the model id, so ``"openrouter/openai/gpt-5"`` is
    OpenRouter's ``openai/gpt-5``. Raises ``UnknownModelError`` (a ``LookupError``) with
    the closest known names when the provider or the model is not in the catalog.
    """
    if not isinstance(spec, str) or not (model_id is None or isinstance(model_id, str)):
        raise TypeError(
            "resolve_model takes 'provider/model-id' or (provider, model_id) as strings, "
            f"got {spec!r}" + ("" if model_id is None else f", {model_id!r}")
        )
    if model_id is None:
        provider, slash, model_id = spec.partition("/")
        if not slash or not provider:
            raise UnknownModelError(_no_provider_message(spec))
        if not model_id:
            raise UnknownModelError(
                f"{spec!r} names no model: write 'provider/model-id'; "
                f"get_models({provider!r}) lists them"
            )
    else:
        provider = spec
    model = get_model(provider, model_id)
    if model is not None:
        return model
    providers = get_providers()
    if provider not in providers:
        text = f"unknown provider {provider!r} in {provider + '/' + model_id!r}"
        close = _closest(provider, providers)
        if close:
            raise UnknownModelError(f"{text}; did you mean {_either(close)}?")
        raise UnknownModelError(f"{text}; get_providers() lists the known ones")
    raise UnknownModelError(_unknown_model_message(provider, model_id))


def _no_provider_message(spec: str) -> str:
    text = f"{spec!r} names no provider: write 'provider/model-id'"
    having = [p for p in get_providers() if spec and spec in _data.chat_entries(p)]
    if having:
        examples = ", ".join(repr(f"{p}/{spec}") for p in having[:_SUGGESTIONS])
        return f"{text}, e.g. {examples}"
    return f"{text}, e.g. 'anthropic/claude-haiku-4-5'"


def _unknown_model_message(provider: str, model_id: str) -> str:
    text = f"unknown model {model_id!r} for provider {provider!r}"
    for kind in _data.KINDS[1:]:
        if model_id in _data.entries(provider, kind):
            return f"{text}: it is a {kind} model, and pi_trio runs chat models only"
    ids = list(_data.chat_entries(provider))
    close = _closest(model_id, ids)
    if close:
        return f"{text}; did you mean {_either(close)}?"
    elsewhere = [p for p in get_providers() if model_id in _data.chat_entries(p)]
    if elsewhere:
        found = ", ".join(repr(f"{p}/{model_id}") for p in elsewhere[:_SUGGESTIONS])
        return f"{text}; other providers have it: {found}"
    return f"{text}; get_models({provider!r}) lists its {len(ids)} models"


def _closest(name: str, candidates: Iterable[str]) -> list[str]:
    """The candidates closest to ``name``, best first, ignoring case."""
    by_folded: dict[str, str] = {}
    for candidate in candidates:
        by_folded.setdefault(candidate.casefold(), candidate)
    close = difflib.get_close_matches(name.casefold(), by_folded, n=_SUGGESTIONS)
    return [by_folded[c] for c in close]


def _either(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


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
