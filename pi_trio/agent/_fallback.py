"""Fallback models: ``Agent(policy=RunPolicy(fallback=FallbackPolicy(models=[...])))``,
or in short ``Agent(model=[primary, fallback, ...])``.

When a turn's response fails in a way the policy passes on (by default a transient
failure, once any ``RetryPolicy`` has given up on it, or a quota or billing failure), the
same turn goes on with the next model of the chain: the failed response leaves the
transcript (``model_fallback`` tells the listeners) and the request is made again, at
once, to that model. The run stays on it for its later turns; the next run starts with
the Agent's own model again. Which model answered is each assistant message's
``provider`` and ``model``; the answer of a model fallen back to carries a
``model_fallback`` diagnostic naming the model that failed and why.

The decision reads only the failed message (its ``error_message``) and the position in
the chain, so a durable run that replays its recorded responses takes the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, TypeAlias, get_args

import msgspec

from ..ai import AssistantMessage, Model
from ..ai.failures import FailureKind, failure_kind
from ..ai.providers import now_ms
from ._checks import check_model

__all__ = [
    "DEFAULT_FALLBACK_ON",
    "FallbackPolicy",
    "FallbackPredicate",
    "fallback_diagnostic",
    "model_chain",
    "model_name",
]

FallbackPredicate: TypeAlias = Callable[[AssistantMessage, Model], bool]
"""``on(message, model) -> bool``: whether the failed ``message`` of ``model`` goes on to
the next model."""

DEFAULT_FALLBACK_ON: Final[frozenset[FailureKind]] = frozenset({"transient", "quota"})
"""The failures that fall through by default: those another model may well not have.
Context overflow (a model with a larger window may take the prompt) and the rest
(authentication, a malformed request) are opt-in."""

_KINDS: Final = frozenset(get_args(FailureKind))
_DIAGNOSTIC: Final = "model_fallback"


def model_name(model: Model) -> str:
    """``"provider/model-id"``, the catalog's spelling."""
    return f"{model.provider}/{model.id}"


class FallbackPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """The models a failing turn goes on with, in order, and which failures fall through.

    - ``models``: the fallback chain after the Agent's own model: ``Model``s or catalog
      names (``"openai/gpt-4o-mini"``), resolved when the policy is made;
    - ``on``: the ``failure_kind``s that fall through (default ``{"transient",
      "quota"}``; add ``"overflow"`` for models with larger windows, ``"other"`` for
      every failure), or a predicate ``on(message, model) -> bool`` called with each
      response that ended in ``error``.

    A ``RetryPolicy`` retries a transient failure on the same model first; the chain
    takes over when its retries run out. An aborted response never falls through.
    """

    models: Sequence[Model | str]
    on: Collection[FailureKind] | FallbackPredicate = DEFAULT_FALLBACK_ON

    def __post_init__(self) -> None:
        models = self.models
        if isinstance(models, (str, Model)) or not isinstance(models, Sequence):
            raise TypeError(
                "FallbackPolicy(models=...) takes a list of models (Models or "
                f"'provider/model-id' names), got {models!r}"
            )
        if not models:
            raise ValueError(
                "FallbackPolicy(models=[]) has nothing to fall back to; give at least one model"
            )
        resolved = tuple(
            check_model(m, f"FallbackPolicy(models=[...]) item {i}") for i, m in enumerate(models)
        )
        msgspec.structs.force_setattr(self, "models", resolved)
        on = self.on
        if callable(on):
            return
        if isinstance(on, str) or not isinstance(on, Collection):
            raise TypeError(
                "FallbackPolicy(on=...) takes a set of failure kinds such as "
                f"{{'transient', 'quota'}} or a function on(message, model) -> bool; got {on!r}"
            )
        unknown = [kind for kind in on if kind not in _KINDS]
        if unknown:
            raise ValueError(
                f"FallbackPolicy(on=...): {unknown[0]!r} is not a failure kind; the kinds "
                f"are {', '.join(sorted(_KINDS))}"
            )
        msgspec.structs.force_setattr(self, "on", frozenset(on))

    def falls_through(self, message: AssistantMessage, model: Model) -> FailureKind | None:
        """The kind of failure that sends ``message`` (``model``'s response) on to the
        next model, ``None`` when it stays (it did not fail, or the policy keeps it)."""
        kind = failure_kind(message)
        if kind is None:
            return None
        on: Any = self.on
        if callable(on):
            return kind if on(message, model) else None
        return kind if kind in on else None


def fallback_diagnostic(failed: AssistantMessage, kind: str) -> dict[str, Any]:
    """The diagnostic the next model's answer carries: which model failed, and why."""
    return {
        "type": _DIAGNOSTIC,
        "timestamp": now_ms(),
        "error": {"message": failed.error_message or "Unknown error"},
        "details": {"from": f"{failed.provider}/{failed.model}", "kind": kind},
    }


def model_chain(
    model: Model | str | Sequence[Model | str] | None, fallback: FallbackPolicy | None
) -> tuple[Model | str | None, FallbackPolicy | None]:
    """``Agent(model=[primary, *rest])`` as ``model=primary`` with
    ``RunPolicy(fallback=FallbackPolicy(models=rest))`` (the default failures fall through); any
    other ``model`` is returned as it is, with ``fallback``."""
    if not isinstance(model, (list, tuple)):
        return model, fallback  # type: ignore[return-value]  # AgentState checks it
    if not model:
        raise ValueError(
            "Agent(model=[]) names no model; give one, or a list whose first model is the "
            "primary and the rest its fallbacks: Agent(model=['openai/gpt-4o', "
            "'anthropic/claude-haiku-4-5'])"
        )
    if fallback is not None and len(model) > 1:
        raise TypeError(
            "Agent(model=[...]) with several models already is a fallback chain; give "
            "either the list or policy=RunPolicy(fallback=FallbackPolicy(...)), not both "
            "(the FallbackPolicy's models=[...] takes the models after the first)"
        )
    primary, *rest = model
    if rest:
        fallback = FallbackPolicy(models=rest)
    return primary, fallback
