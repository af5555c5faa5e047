"""Failed answers told apart, and retried.

``is_retryable_assistant_error`` (a transient provider or network failure),
``is_context_overflow`` and ``is_recoverable_length`` read an assistant message that
ended badly, with pi 1.6's patterns; ``failure_kind`` sorts such a message into one
``FailureKind`` (``"transient"``, ``"quota"``, ``"overflow"``, ``"other"``: what a
``FallbackPolicy`` falls through on); ``retry_assistant_call`` is the retry loop an
``Agent`` runs with a ``RetryPolicy`` (in ``pi_trio.ai``), for calls of your own, with
its backoff ``retry_delay_ms``.
"""

from __future__ import annotations

from ._failures._overflow import FailureKind as FailureKind
from ._failures._overflow import failure_kind as failure_kind
from ._failures._overflow import get_overflow_patterns as get_overflow_patterns
from ._failures._overflow import is_context_overflow as is_context_overflow
from ._failures._overflow import is_recoverable_length as is_recoverable_length
from ._failures._overflow import is_retryable_assistant_error as is_retryable_assistant_error
from ._failures._retry import DEFAULT_MAX_AGENT_RETRY_DELAY_MS as DEFAULT_MAX_AGENT_RETRY_DELAY_MS
from ._failures._retry import retry_assistant_call as retry_assistant_call
from ._failures._retry import retry_delay_ms as retry_delay_ms

__all__ = [
    "DEFAULT_MAX_AGENT_RETRY_DELAY_MS",
    "FailureKind",
    "failure_kind",
    "get_overflow_patterns",
    "is_context_overflow",
    "is_recoverable_length",
    "is_retryable_assistant_error",
    "retry_assistant_call",
    "retry_delay_ms",
]
