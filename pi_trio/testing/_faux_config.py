"""Configuration of a faux provider: its models, its state and the chunk-size bounds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from pi_trio.ai import Model
from pi_trio.ai.deferred import DeferredHandle
from pi_trio.ai.models import ModelCost

__all__ = [
    "DEFAULT_TOKEN_SIZE",
    "FauxDeferred",
    "FauxModel",
    "FauxState",
    "faux_deferred",
    "faux_models",
    "normalize_token_size",
]

DEFAULT_MODEL_ID = "faux-1"
DEFAULT_MODEL_NAME = "Faux Model"
DEFAULT_BASE_URL = "http://localhost:0"
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384
DEFAULT_TOKEN_SIZE = (3, 5)


class FauxModel(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A model of a faux provider; unset fields get the defaults of the original."""

    id: str
    name: str | None = None
    reasoning: bool = False
    input: list[Literal["text", "image"]] = msgspec.field(default_factory=lambda: ["text", "image"])
    cost: ModelCost | None = None
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_tokens: int = DEFAULT_MAX_TOKENS


class FauxState(msgspec.Struct, kw_only=True):
    """Mutable state shared with response factories: the requests, the looks at
    deferred responses, and the handles cancelled (copies, in order)."""

    call_count: int = 0
    deferred_fetch_count: int = 0
    cancelled_deferred: list[DeferredHandle] = msgspec.field(default_factory=list)


class FauxDeferred(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How a faux provider answers deferred requests (pi 1.6's faux ``deferred``):
    ``pending_fetches`` looks return the handle again before the scripted response is
    ready; ``poll_after_ms`` goes into the handles it returns."""

    pending_fetches: int = 0
    poll_after_ms: int | None = None


def faux_deferred(value: FauxDeferred | Mapping[str, Any] | None) -> FauxDeferred:
    """``value`` as a ``FauxDeferred`` (a dict may use the wire names ``pendingFetches``
    and ``pollAfterMs``)."""
    if value is None:
        return FauxDeferred()
    if isinstance(value, FauxDeferred):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(
            f"deferred= takes a FauxDeferred or a dict of pending_fetches/poll_after_ms, "
            f"got {value!r}"
        )
    names = {"pendingFetches": "pending_fetches", "pollAfterMs": "poll_after_ms"}
    try:
        return msgspec.convert({names.get(k, k): v for k, v in value.items()}, FauxDeferred)
    except msgspec.ValidationError as exc:
        raise TypeError(f"invalid faux deferred settings {dict(value)!r}: {exc}") from exc


_MODEL_ALIASES = {"contextWindow": "context_window", "maxTokens": "max_tokens"}
_COST_WIRE_NAMES = {"cache_read": "cacheRead", "cache_write": "cacheWrite"}


def _faux_model(definition: FauxModel | Mapping[str, Any]) -> FauxModel:
    if isinstance(definition, FauxModel):
        return definition
    if not isinstance(definition, Mapping):
        raise TypeError(
            f"a faux model definition is a FauxModel or a dict with 'id' and optional "
            f"name/reasoning/input/cost/context_window/max_tokens, got {definition!r}"
        )
    fields = {_MODEL_ALIASES.get(key, key): value for key, value in definition.items()}
    cost = fields.get("cost")
    if isinstance(cost, Mapping):
        fields["cost"] = {_COST_WIRE_NAMES.get(key, key): value for key, value in cost.items()}
    try:
        return msgspec.convert(fields, FauxModel)
    except msgspec.ValidationError as exc:
        raise TypeError(f"invalid faux model definition {definition!r}: {exc}") from exc


def _model(definition: FauxModel, api: str, provider: str) -> Model:
    return Model(
        id=definition.id,
        name=definition.id if definition.name is None else definition.name,
        api=api,
        provider=provider,
        base_url=DEFAULT_BASE_URL,
        reasoning=definition.reasoning,
        input=list(definition.input),
        cost=definition.cost or ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=definition.context_window,
        max_tokens=definition.max_tokens,
    )


def normalize_token_size(value: tuple[int | None, int | None]) -> tuple[int, int]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"token_size must be a (min, max) pair of ints, got {value!r}") from None
    low = DEFAULT_TOKEN_SIZE[0] if low is None else low
    high = DEFAULT_TOKEN_SIZE[1] if high is None else high
    for bound in (low, high):
        if not isinstance(bound, int) or isinstance(bound, bool):
            raise TypeError(f"token_size must be a (min, max) pair of ints, got {value!r}")
    low = max(1, min(low, high))
    return low, max(low, high)


def faux_models(
    definitions: Sequence[FauxModel | Mapping[str, Any]] | None, api: str, provider: str
) -> list[Model]:
    """The models of a provider: one per definition (missing fields defaulted), or the
    default model ``faux-1`` when there are none."""
    checked = [_faux_model(definition) for definition in definitions or ()] or [
        FauxModel(id=DEFAULT_MODEL_ID, name=DEFAULT_MODEL_NAME)
    ]
    return [_model(definition, api, provider) for definition in checked]
