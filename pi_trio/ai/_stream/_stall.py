"""Time limits on a stream's events: ``first_event_timeout`` and ``idle_timeout``.

A provider that stops answering, or that sends only keep-alives (SSE comments and
``ping`` events, empty chunks, Bedrock's empty frames, Gemini's blank lines), never trips
the HTTP read timeout: every keep-alive is a byte. ``StallTimer`` measures what the
reader of a stream counts as the provider's *events* instead: the time to the first one
from sending the request (``first_event_timeout``), then the silence between two
(``idle_timeout``). Only time spent waiting on the network counts, never the time the
consumer takes for an event (a slow listener is backpressure, not a silent provider).

The response head is waited for in a cancel scope (``head()``), within the first-event
limit; what that wait took is used up. The body is read under a watchdog
(``watching()``): a task beside the reader that wakes ``WATCH_STEPS`` times per limit and
counts the steps in which no event arrived while the reader waited on the network (the
reader says so in two attributes, ``waiting`` and ``events``, around each read: nothing
else per event). Past the limit the watchdog cancels the reads, and leaving ``watching()``
raises ``ProviderError`` with ``expired_text``; a retry of the request starts the
first-event limit again (``restart()``).

Deadlines are on anyio's clock (``anyio.current_time``), so trio's autojump clock drives
them in tests. A limit of ``None`` is no limit; with both ``None`` there is no timer
(``stall_timer`` returns ``None``) and reading costs nothing extra.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from types import TracebackType
from typing import Final

import anyio

from .._errors import ProviderError
from ._groups import raising_sole_exception

__all__ = [
    "DEFAULT_FIRST_EVENT_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "StallTimer",
    "check_timeout",
    "expired_text",
    "stall_timer",
    "watching",
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

    __slots__ = ("_fired", "_first", "_idle", "_left", "_since", "events", "waiting")

    def __init__(self, first_event_timeout: float | None, idle_timeout: float | None) -> None:
        self._first = first_event_timeout
        self._idle = idle_timeout
        self._left = first_event_timeout  # of the first-event limit, after the head's wait
        self._since = 0.0  # when the head's wait began
        self._fired = False
        # written by the reader around every network read: the watchdog's whole view
        self.events = 0  # batches that held an event that counts
        self.waiting = False  # the reader waits on the network (not on its consumer)

    def restart(self) -> None:
        """A new attempt of the request: nothing has arrived yet."""
        self._left = self._first
        self.events = 0
        self.waiting = False

    def head(self) -> _HeadWait:
        """``with timer.head():`` around the wait for the response head, within the
        first-event limit; what it takes is used up."""
        self._since = anyio.current_time()
        left = math.inf if self._left is None else self._left
        return _HeadWait(self, anyio.CancelScope(deadline=self._since + left))

    def _head_arrived(self) -> None:
        if self._left is not None:
            self._left = max(0.0, self._left - (anyio.current_time() - self._since))

    def watching(self) -> AbstractAsyncContextManager[None]:
        """``async with timer.watching():`` around the reading of the body: a watchdog
        task beside it ends the reads once the limit is reached; leaving the block then
        raises the failure."""
        return _watching(self)

    def expired(self) -> ProviderError:
        """The failure of a wait that reached its limit (retryable: the answer can be
        asked for again)."""
        seen = self.events > 0
        limit = self._idle if seen else self._first
        assert limit is not None
        return ProviderError(expired_text(limit, first=not seen), retryable=True)

    async def _watch(self, reading: anyio.CancelScope) -> None:
        """Count the silence in steps of the smaller limit's ``1/WATCH_STEPS``: a step in
        which no event arrived while the reader waited on the network is silent; a step
        in which the consumer held the reader counts for nothing."""
        limits = [limit for limit in (self._left, self._idle) if limit is not None]
        step = max(min(limits) / WATCH_STEPS, _MIN_STEP_S) if limits else _MIN_STEP_S
        silent = 0
        seen = self.events
        while True:
            await anyio.sleep(step)
            if self.events != seen:
                seen = self.events
                silent = 0
                continue
            if not self.waiting:
                continue
            silent += 1
            limit = self._idle if seen else self._left
            if limit is not None and silent * step >= limit:
                self._fired = True
                reading.cancel()
                return


# The watchdog looks this many times per limit, so a limit is reached at most 1/16 of it
# late; each look is one timer wake-up, so a limit costs nothing per event. (A cancel scope
# around every network read, the first design, cost W5 65 % more CPU: 20 000 reads.)
WATCH_STEPS: Final = 16
_MIN_STEP_S: Final = 0.001


class _HeadWait:
    """The cancel scope of the wait for the head; past the deadline, the failure."""

    __slots__ = ("_scope", "_timer")

    def __init__(self, timer: StallTimer, scope: anyio.CancelScope) -> None:
        self._timer = timer
        self._scope = scope

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
        if exc is None:
            self._timer._head_arrived()


@asynccontextmanager
async def _watching(timer: StallTimer) -> AsyncIterator[None]:
    with raising_sole_exception():
        async with anyio.create_task_group() as group:
            group.start_soon(timer._watch, group.cancel_scope)
            try:
                yield
            finally:
                timer.waiting = False
                group.cancel_scope.cancel()  # the watchdog: the body is done
    if timer._fired:
        raise timer.expired()


def watching(timer: StallTimer | None) -> AbstractAsyncContextManager[None]:
    """``timer.watching()``, or nothing to do without a timer."""
    return nullcontext() if timer is None else timer.watching()


def stall_timer(first_event_timeout: float | None, idle_timeout: float | None) -> StallTimer | None:
    """A timer for one request, or ``None`` when neither limit is set."""
    if first_event_timeout is None and idle_timeout is None:
        return None
    return StallTimer(first_event_timeout, idle_timeout)
