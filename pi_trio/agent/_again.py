"""Asking again for a response that failed: on the same model under a ``RetryPolicy``,
then on the next models of a ``FallbackPolicy``.

``AskAgain.respond`` makes a turn's request and, while the response failed:

1. retries it on the same model while it is transient (``failure_kind``: never a context
   overflow, even one whose text also reads as transient, and never one the run's
   compaction handles: ``Requester.recovers``)
   and the policy has retries left: the failed response leaves the transcript
   (``auto_retry_start``), the backoff is slept inside the run's abort scope, the request
   is made again; ``auto_retry_end`` once the retried response settled;
2. otherwise, when the failure falls through (``FallbackPolicy.falls_through``) and the
   chain has a model left, goes on with it at once: the failed response leaves the
   transcript (``model_fallback``, then ``auto_retry_end`` if that model was retried)
   and the run uses the new model from now on (``Requester.model``); its first answer
   carries the ``model_fallback`` diagnostic. That model gets retries of its own.

A run limit that forbids another request (``LimitGate.allows_request``) stops both: the
failed response is the turn's answer. Every decision reads the failed message and the
counters, which a durable run replays from its record.
"""

from __future__ import annotations

from typing import Any, Protocol

import anyio

from ..ai import AssistantMessage, Model
from ..ai.failures import failure_kind, retry_delay_ms
from ._config import AgentLoopConfig
from ._fallback import fallback_diagnostic, model_name
from ._lifecycle import RunLifecycle
from ._limits import LimitGate
from ._types import AutoRetryEndEvent, AutoRetryStartEvent, ModelFallbackEvent

__all__ = ["AskAgain", "Requester", "end_retries"]


class Requester(Protocol):
    """What ``AskAgain`` drives: the run's current model, and one request to it."""

    model: Model

    async def request(self) -> AssistantMessage: ...

    def recovers(self, message: AssistantMessage) -> bool:
        """Whether the failed ``message`` is an overflow the run's compaction handles
        (such a response is not retried on the same model)."""
        ...


class AskAgain:
    """One run's retries and fallbacks (see the module docstring). ``fallen_back``
    counts the chain's models the run went on to; ``note`` is the diagnostic the next
    answer carries (``take_note``)."""

    __slots__ = ("fallback", "fallen_back", "gate", "life", "note", "retry")

    def __init__(self, config: AgentLoopConfig, life: RunLifecycle, gate: LimitGate | None):
        retry = config.retry
        self.retry = retry if retry is not None and retry.enabled else None
        self.fallback = config.fallback
        self.life = life
        self.gate = gate
        self.fallen_back = 0
        self.note: dict[str, Any] | None = None

    @staticmethod
    def wanted(config: AgentLoopConfig) -> bool:
        """Whether a run of ``config`` asks again at all."""
        retry = config.retry
        return (retry is not None and retry.enabled) or config.fallback is not None

    def take_note(self) -> dict[str, Any] | None:
        note, self.note = self.note, None
        return note

    async def respond(self, run: Requester) -> AssistantMessage:
        policy = self.retry
        life = self.life
        gate = self.gate
        attempt = 0
        while True:
            message = await run.request()
            if message.stop_reason != "error" or not (gate is None or gate.allows_request()):
                break
            if (
                policy is not None
                and attempt < policy.max_retries
                and failure_kind(message) == "transient"
                and not run.recovers(message)
            ):
                attempt += 1
                delay = retry_delay_ms(policy, attempt)
                await _withdraw_for_retry(life, attempt, policy.max_retries, delay)
                await anyio.sleep(delay / 1000)
                _retrying(life)
                continue
            if not await self._fall_back(run, message):
                break
            attempt = 0  # the next model's own retries
        if attempt:
            success = message.stop_reason not in ("error", "aborted")
            await end_retries(life, success, None if success else message.error_message)
        return message

    async def _fall_back(self, run: Requester, failed: AssistantMessage) -> bool:
        """Go on with the next model of the chain, if ``failed`` falls through and one
        is left."""
        fallback = self.fallback
        if fallback is None or self.fallen_back >= len(fallback.models):
            return False
        kind = fallback.falls_through(failed, run.model)
        if kind is None:
            return False
        model = fallback.models[self.fallen_back]
        assert isinstance(model, Model)
        self.fallen_back += 1
        await _withdraw_for_fallback(
            self.life,
            f"{failed.provider}/{failed.model}",
            model_name(model),
            kind,
            self.fallen_back,
        )
        run.model = model
        self.note = fallback_diagnostic(failed, kind)
        return True


# ---------------------------------------------------------------------- the events of asking again
# What the run's lifecycle records of a retry: ``RunLifecycle.retry`` is the retry in
# progress (the attempt, the error retried, whether the backoff is still being slept),
# which ``close_aborted`` closes too.


async def _withdraw_for_retry(
    life: RunLifecycle, attempt: int, max_attempts: int, delay_ms: int
) -> None:
    """The failed response is retried (``auto_retry_start``)."""
    error = life.withdraw()
    life.retry = (attempt, error, True)
    await life.emit(
        AutoRetryStartEvent(
            attempt=attempt, max_attempts=max_attempts, delay_ms=delay_ms, error_message=error
        )
    )


async def _withdraw_for_fallback(
    life: RunLifecycle, from_model: str, to_model: str, kind: str, position: int
) -> None:
    """The failed response goes on to the next model (``model_fallback``); retries
    of the model that failed end with it (``auto_retry_end``)."""
    error = life.withdraw()
    await life.emit(
        ModelFallbackEvent(
            from_model=from_model,
            to_model=to_model,
            kind=kind,
            error_message=error,
            position=position,
        )
    )
    if life.retry is not None:
        await end_retries(life, False, error)


def _retrying(life: RunLifecycle) -> None:
    """The backoff is over; the retried request starts."""
    if life.retry is not None:
        attempt, error, _ = life.retry
        life.retry = (attempt, error, False)


async def end_retries(life: RunLifecycle, success: bool, final_error: str | None = None) -> None:
    """``auto_retry_end``, once a response that was retried settled."""
    retry, life.retry = life.retry, None
    if retry is not None:
        await life.emit(
            AutoRetryEndEvent(success=success, attempt=retry[0], final_error=final_error)
        )
