"""Time limits on a stream's events: ``first_event_timeout`` and ``idle_timeout``.

A provider that stops answering, or that sends only keep-alives (SSE comments and
``ping`` events, empty chunks, Bedrock's empty frames, Gemini's blank lines), never trips
the HTTP read timeout: every keep-alive is a byte. ``StallTimer`` measures what the
reader of a stream counts as the provider's *events* instead: the time to the first one
from sending the request (``first_event_timeout``), then the silence between two
(``idle_timeout``). Only time spent waiting on the network counts, never the time the
consumer takes for an event (a slow listener is backpressure, not a silent provider).

Each wait gets what is left of the current limit: ``wait()`` is a ``with`` block around
the reads that make one batch of events; inside it, ``saw(counted)`` says whether that
batch held an event that counts (the limit starts again from the full ``idle_timeout``)
or only keep-alives (the time waited is used up). Past the limit the block's cancel scope
ends the reads and ``wait()`` raises ``ProviderError`` with ``expired_text``; a retry of
the request starts the first-event limit again (``restart()``).

Deadlines are on anyio's clock (``anyio.current_time``), so trio's autojump clock drives
them in tests. A limit of ``None`` is no limit; with both ``None`` there is no timer
(``stall_timer`` returns ``None``) and reading costs nothing extra.
"""

from __future__ import annotations

import math
from types import TracebackType
from typing import Final

import anyio

from ._errors import ProviderError

__all__ = [
    "DEFAULT_FIRST_EVENT_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "StallTimer",
    "check_timeout",
    "expired_text",
    "stall_timer",
]

# As long as the HTTP read timeout (and OpenAI's Codex CLI's stream idle timeout): a
# reasoning model that thinks without streaming its thoughts (o3-pro through Chat
# Completions, a Responses reasoning item without a summary), or a local server
# prefilling a long prompt, is silent for minutes and must not be cut by default. Set
# them shorter for interactive use; ``None`` waits without a limit.
DEFAULT_FIRST_EVENT_TIMEOUT_S: Final = 300.0
DEFAULT_IDLE_TIMEOUT_S: Final = 300.0


def _seconds(value: float) -> str:
    return f"{value:g}"


def expired_text(limit: float, *, first: bool) -> str:
    """The error text of a stream that waited ``limit`` seconds for an event."""
    if first:
        return (
            f"No first response event for {_seconds(limit)} s after sending the request "
            "(StreamOptions.first_event_timeout): the provider answered nothing, or only "
            "keep-alives. Raise first_event_timeout, or set it to None to wait without a limit"
        )
    return (
        f"No response event for {_seconds(limit)} s (StreamOptions.idle_timeout): the "
        "stream went silent mid-answer, or sent only keep-alives. Raise idle_timeout, or "
        "set it to None to wait without a limit"
    )


def check_timeout(name: str, value: float | None) -> None:
    """``ValueError`` unless ``value`` is ``None`` or a positive finite number."""
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
        or not math.isfinite(value)
    ):
        raise ValueError(
            f"StreamOptions({name}={value!r}): expected a positive number of seconds, or "
            f"None for no limit (e.g. {name}=60.0)"
        )


class StallTimer:
    """The event limits of one request (see the module docstring)."""

    __slots__ = ("_first", "_idle", "_left", "_seen", "_since")

    def __init__(self, first_event_timeout: float | None, idle_timeout: float | None) -> None:
        self._first = first_event_timeout
        self._idle = idle_timeout
        self._left = math.inf if first_event_timeout is None else float(first_event_timeout)
        self._seen = False  # an event that counts arrived
        self._since = 0.0  # when the current wait began

    def restart(self) -> None:
        """A new attempt of the request: nothing has arrived yet."""
        self._seen = False
        self._left = math.inf if self._first is None else float(self._first)

    def wait(self) -> _Wait:
        """``with timer.wait():`` around the reads of one batch (see the module docstring)."""
        return _Wait(self)

    def saw(self, counted: bool) -> None:
        """The wait ended with a batch: ``counted`` when it held an event that counts."""
        if counted:
            self._seen = True
            self._left = math.inf if self._idle is None else float(self._idle)
        else:
            self._left -= anyio.current_time() - self._since

    def expired(self) -> ProviderError:
        """The failure of a wait that reached its limit (retryable: nothing streamed)."""
        limit = self._idle if self._seen else self._first
        assert limit is not None
        return ProviderError(expired_text(limit, first=not self._seen), retryable=True)

    def _deadline(self) -> float:
        now = self._since = anyio.current_time()
        return now + max(self._left, 0.0)


class _Wait:
    """The cancel scope of one wait; leaving it past the deadline raises the failure."""

    __slots__ = ("_scope", "_timer")

    def __init__(self, timer: StallTimer) -> None:
        self._timer = timer
        self._scope = anyio.CancelScope(deadline=timer._deadline())

    def __enter__(self) -> None:
        self._scope.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # the scope swallows only its own cancellation, the deadline's, which becomes the
        # failure; anything else goes on as it came
        self._scope.__exit__(exc_type, exc, tb)
        if self._scope.cancelled_caught:
            raise self._timer.expired() from None


def stall_timer(first_event_timeout: float | None, idle_timeout: float | None) -> StallTimer | None:
    """A timer for one request, or ``None`` when neither limit is set."""
    if first_event_timeout is None and idle_timeout is None:
        return None
    return StallTimer(first_event_timeout, idle_timeout)
