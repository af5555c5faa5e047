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

__all__ = ["AskAgain", "Requester"]


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
                await life.withdraw_response(attempt, policy.max_retries, delay)
                await anyio.sleep(delay / 1000)
                life.retrying()
                continue
            if not await self._fall_back(run, message):
                break
            attempt = 0  # the next model's own retries
        if attempt:
            success = message.stop_reason not in ("error", "aborted")
            await life.end_retries(success, None if success else message.error_message)
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
        await self.life.withdraw_for_fallback(
            f"{failed.provider}/{failed.model}", model_name(model), kind, self.fallen_back
        )
        run.model = model
        self.note = fallback_diagnostic(failed, kind)
        return True
