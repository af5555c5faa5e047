"""The dispatcher: delivers a run's events to its listeners, in order, outside abort.

Events go through one bounded queue. The dispatcher task applies the reducer and then
awaits each listener in subscription order; it runs in a shielded scope, so neither
``abort()`` nor the caller's cancellation interrupts a listener (the caller's cancellation
only bounds it, through ``close_deadline``).

While the queue is empty and every listener is synchronous, the emitting task delivers
the event itself (reducer, then listeners) instead of waking the dispatcher: no task switch
per event on the common path. The first asynchronous listener, or an event emitted while
the dispatcher is busy, goes through the queue, so emission order is always kept.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel

from ..ai import AbortSignal

__all__ = ["DISPATCH_BUFFER", "Dispatcher", "Listener"]

# Events the engine may emit ahead of delivery while streaming deltas. Bounds memory and
# bounds how far a provider can run ahead of a listener that is about to abort the run.
DISPATCH_BUFFER = 64


class Listener:
    """A subscribed listener, adapted to ``call(event, signal)``."""

    __slots__ = ("active", "fn", "is_async", "takes_signal")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.active = True
        self.takes_signal = _takes_two_args(fn)
        self.is_async = _is_async_callable(fn)

    def call(self, event: Any, signal: AbortSignal | None) -> Any:
        if self.takes_signal:
            return self.fn(event, signal)
        return self.fn(event)


def _is_async_callable(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _takes_two_args(fn: Any) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


class Dispatcher:
    """Delivers events to ``listeners`` after ``reduce``; see the module docstring.

    The engine calls ``await send(event)`` (delivery may still be pending when it returns,
    see ``settle``), ``push(event)`` from synchronous callbacks, and ``await settle()`` to
    wait until everything sent so far has been delivered. A listener exception is recorded
    and raised to the engine by every later ``send`` or ``settle``; queued events after
    the failing one are dropped (they were never delivered, so nothing was reduced either).
    """

    def __init__(
        self,
        listeners: Callable[[], tuple[Listener, ...]],
        reduce: Callable[[Any], None] | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        self._listeners = listeners
        self._reduce = reduce
        self.signal = signal
        self._queue: deque[Any] = deque()
        self._delivering = False
        self._closed = False
        self._changed = anyio.Event()
        self.failure: BaseException | None = None
        self.scope: anyio.CancelScope | None = None

    # ------------------------------------------------------------------ engine side

    def _notify(self) -> None:
        changed = self._changed
        self._changed = anyio.Event()
        changed.set()

    def _raise_failure(self) -> None:
        failure = self.failure
        if failure is not None:
            raise failure

    def _can_deliver_inline(self) -> tuple[Listener, ...] | None:
        if self._queue or self._delivering or self.failure is not None:
            return None
        listeners = self._listeners()
        for listener in listeners:
            if listener.is_async:
                return None
        return listeners

    async def send(self, event: Any) -> None:
        """Emit ``event``: delivered now when possible, else queued (waiting for room)."""
        self._raise_failure()
        listeners = self._can_deliver_inline()
        if listeners is not None:
            self._deliver_sync(event, listeners)
            return
        while len(self._queue) >= DISPATCH_BUFFER and self.failure is None:
            await self._changed.wait()
        self._raise_failure()
        self._queue.append(event)
        self._notify()

    def send_nowait(self, event: Any) -> None:
        """Emit ``event`` without waiting: delivered now when possible, else queued even
        past the bound (callers wait for room first with ``wait_for_room``)."""
        self._raise_failure()
        listeners = self._can_deliver_inline()
        if listeners is not None:
            self._deliver_sync(event, listeners)
            return
        self._queue.append(event)
        self._notify()

    async def wait_for_room(self) -> None:
        """Wait until the queue is below its bound."""
        while len(self._queue) >= DISPATCH_BUFFER and self.failure is None:
            await self._changed.wait()
        self._raise_failure()

    def push(self, event: Any) -> None:
        """Queue ``event`` without waiting (for synchronous callbacks such as a tool's
        ``on_update``); always goes through the dispatcher task."""
        if self.failure is not None or self._closed:
            return
        self._queue.append(event)
        self._notify()

    async def settle(self) -> None:
        """Wait until every event sent so far has been delivered."""
        while (self._queue or self._delivering) and self.failure is None:
            await self._changed.wait()
        self._raise_failure()

    async def emit(self, event: Any) -> None:
        """``send`` then ``settle``: the event has reached every listener on return. An
        abort requested meanwhile (e.g. by a listener) takes effect here."""
        await self.send(event)
        if self._queue or self._delivering:
            await self.settle()
        signal = self.signal
        if signal is not None and signal.aborted:
            await anyio.lowlevel.checkpoint()

    def close(self) -> None:
        """Let the dispatcher task finish once the queue is delivered."""
        self._closed = True
        self._notify()

    def set_close_deadline(self, deadline: float) -> None:
        """Bound the remaining delivery (used when the caller's scope was cancelled)."""
        if self.scope is not None:
            self.scope.deadline = min(self.scope.deadline, deadline)

    # ------------------------------------------------------------------ delivery

    def _deliver_sync(self, event: Any, listeners: tuple[Listener, ...]) -> None:
        if self._reduce is not None:
            self._reduce(event)
        signal = self.signal
        for listener in listeners:
            if listener.active:
                listener.call(event, signal)

    async def run(self) -> None:
        """The dispatcher task. Shielded: abort never interrupts a listener."""
        with anyio.CancelScope(shield=True) as scope:
            self.scope = scope
            try:
                await self._run()
            finally:
                self._delivering = False
                self._queue.clear()
                self._closed = True
                self._notify()

    async def _run(self) -> None:
        queue = self._queue
        while True:
            while not queue:
                if self._closed:
                    return
                await self._changed.wait()
            self._delivering = True
            event = queue.popleft()
            try:
                if self._reduce is not None:
                    self._reduce(event)
                signal = self.signal
                for listener in self._listeners():
                    if listener.active:
                        result = listener.call(event, signal)
                        if inspect.isawaitable(result):
                            await result
            except Exception as exc:
                self.failure = exc
                queue.clear()
            finally:
                self._delivering = False
                self._notify()
            if self.failure is not None:
                # Nothing more is delivered for this run; the engine is told at its next
                # send/settle and turns the failure into the run's outcome.
                while not self._closed:
                    await self._changed.wait()
                return


async def checkpoint_if_aborted(signal: AbortSignal | None, scope: anyio.CancelScope) -> None:
    """Make an abort requested during synchronous work take effect now."""
    if signal is not None and signal.aborted:
        scope.cancel()
        await anyio.lowlevel.checkpoint()
