"""Retrying a failed assistant call: the policy, the backoff, and the retry loop.

``retry_assistant_call(produce, policy, signal)`` calls ``produce()`` and, while the
response failed with a transient error (``is_retryable_assistant_error``), waits
``retry_delay_ms(policy, attempt)`` and calls it again, up to ``policy.max_retries``
times. Aborts are never retried; an abort during the backoff returns the last response
marked ``aborted``. An Agent uses the same policy, given as
``Agent(policy=RunPolicy(retry=RetryPolicy(...)))``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio
import msgspec

from .._stream._abort import AbortSignal
from .._types import AssistantMessage
from ._overflow import is_retryable_assistant_error

__all__ = [
    "DEFAULT_MAX_AGENT_RETRY_DELAY_MS",
    "RetryPolicy",
    "retry_assistant_call",
    "retry_delay_ms",
]

DEFAULT_MAX_AGENT_RETRY_DELAY_MS: Final = 60_000
_MAX_SAFE_INTEGER: Final = 2**53 - 1


class RetryPolicy(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """Bounded retries with exponential backoff: attempt ``n`` (1-based) waits
    ``base_delay_ms * 2**(n-1)`` ms, capped by ``max_agent_delay_ms`` (60 s by default).
    ``max_retries=0`` retries nothing; the first call never counts as a retry."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2_000
    max_agent_delay_ms: int | None = None

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"RetryPolicy(max_retries={self.max_retries!r}) must be >= 0")
        if self.base_delay_ms < 0:
            raise ValueError(f"RetryPolicy(base_delay_ms={self.base_delay_ms!r}) must be >= 0")


def retry_delay_ms(policy: RetryPolicy, attempt: int) -> int:
    """The backoff before retry ``attempt`` (1-based), in milliseconds."""
    delay: int = policy.base_delay_ms * 2 ** max(0, attempt - 1)
    cap = policy.max_agent_delay_ms
    return min(delay, _MAX_SAFE_INTEGER, DEFAULT_MAX_AGENT_RETRY_DELAY_MS if cap is None else cap)


OnRetryScheduled = Callable[[int, int, int, str], Any]
OnRetryAttemptStart = Callable[[], Any]
OnRetryFinished = Callable[..., Any]


async def _call(callback: Callable[..., Any] | None, *args: Any) -> None:
    if callback is not None:
        result = callback(*args)
        if inspect.isawaitable(result):
            await result


async def retry_assistant_call(
    produce: Callable[[], Awaitable[AssistantMessage]],
    policy: RetryPolicy | None,
    signal: AbortSignal | None = None,
    *,
    on_retry_scheduled: OnRetryScheduled | None = None,
    on_retry_attempt_start: OnRetryAttemptStart | None = None,
    on_retry_finished: OnRetryFinished | None = None,
) -> AssistantMessage:
    """Run one assistant-producing call with bounded retries on transient errors.

    ``on_retry_scheduled(attempt, max_attempts, delay_ms, error_message)`` runs before
    each backoff, ``on_retry_attempt_start()`` after it, right before the call, and
    ``on_retry_finished(success, attempt, final_error=None)`` once, when a loop that
    retried ends (success, exhausted, non-retryable, aborted). Callbacks may be sync or
    async. Without a policy, or a disabled one, the first response is returned as is.
    """
    max_attempts = policy.max_retries if policy is not None and policy.enabled else 0
    attempt = 0
    last_error: str | None = None
    while True:
        response = await produce()
        if response.stop_reason == "aborted":
            if last_error is not None:
                await _call(on_retry_finished, False, attempt)
            return response
        if response.stop_reason != "error":
            if last_error is not None:
                await _call(on_retry_finished, True, attempt)
            return response
        if attempt >= max_attempts or not is_retryable_assistant_error(response):
            if last_error is not None:
                await _call(on_retry_finished, False, attempt, response.error_message)
            return response
        assert policy is not None
        attempt += 1
        last_error = response.error_message or "Unknown error"
        delay = retry_delay_ms(policy, attempt)
        await _call(on_retry_scheduled, attempt, max_attempts, delay, last_error)
        if await _backoff(delay, signal):
            await _call(on_retry_finished, False, attempt, last_error)
            return msgspec.structs.replace(response, stop_reason="aborted", error_message=None)
        await _call(on_retry_attempt_start)


async def _backoff(delay_ms: int, signal: AbortSignal | None) -> bool:
    """Wait ``delay_ms``; ``True`` when ``signal`` was aborted first (or already)."""
    if signal is None:
        await anyio.sleep(delay_ms / 1000)
        return False
    with anyio.move_on_after(delay_ms / 1000):
        await signal.wait()
    return signal.aborted
