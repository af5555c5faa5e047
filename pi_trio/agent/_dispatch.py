"""The dispatcher: delivers a run's events to its listeners, in order, never interrupted by
an abort.

Delivery applies the reducer and then calls each listener in subscription order; an
asynchronous listener is awaited before the next one is called. The task that emits an
event delivers it itself: the engine for its events, a tool task for its own. There is
no delivery task: a listener that waits makes the emitting task wait (backpressure), and
an asynchronous listener that returns without waiting costs one coroutine, no task
switch.

While an event is being delivered, other events (a parallel tool's, a tool's progress
update from a synchronous callback) queue behind it and are delivered in order by whoever
delivers next, or by the engine's ``settle`` at its next decision point. An abort
requested during a delivery takes effect when the delivery ends
(``defer_while_delivering``): abort never interrupts a listener. The caller's own
cancellation does interrupt a listener that is waiting; the engine then delivers the
closing events under its shield, bounded by ``close_timeout``.
"""

from __future__ import annotations

import inspect
import math
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio

from ..ai import AbortSignal
from ._hooks import positional_arity

__all__ = ["Dispatcher", "Listener", "ListenerSet", "deliver_directly"]


class Listener:
    """A subscribed listener, adapted to ``call(event, signal)``."""

    __slots__ = ("active", "fn", "is_async", "takes_signal")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.active = True
        self.takes_signal = positional_arity(fn) >= 2
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


class ListenerSet:
    """Listeners in subscription order. ``entries`` is replaced (never mutated) on each
    change, so a delivery in progress keeps the snapshot it started with; an entry
    removed meanwhile is skipped (``active`` is false)."""

    __slots__ = ("all_sync", "entries")

    def __init__(self, *fns: Callable[..., Any]) -> None:
        self.entries: tuple[Listener, ...] = ()
        self.all_sync = True
        for fn in fns:
            self.add(fn)

    def add(self, fn: Callable[..., Any]) -> Listener:
        for existing in self.entries:
            if existing.fn is fn:
                return existing
        entry = Listener(fn)
        self._set((*self.entries, entry))
        return entry

    def remove(self, entry: Listener) -> None:
        entry.active = False
        self._set(tuple(x for x in self.entries if x is not entry))

    def _set(self, entries: tuple[Listener, ...]) -> None:
        self.entries = entries
        self.all_sync = not any(x.is_async for x in entries)


class Dispatcher:
    """Delivers events to ``listeners`` after ``reduce``; see the module docstring.

    ``ready()`` says whether ``deliver_now(event)`` may deliver synchronously (nothing
    queued or being delivered, every listener synchronous); ``await send(event)``
    delivers in every case; ``push(event)`` is for synchronous callbacks (delivered now if
    it can be, else queued); ``await settle()`` delivers what is queued. A listener
    exception is recorded and raised by every later ``send`` or ``settle``; events queued
    behind the failing one are dropped (they were never delivered, so nothing was reduced
    either). The queue and the deferred actions are made when first needed.
    """

    __slots__ = (
        "_changed",
        "_deferred",
        "_delivering",
        "_listeners",
        "_queue",
        "_reduce",
        "failure",
        "signal",
    )

    def __init__(
        self,
        listeners: ListenerSet,
        reduce: Callable[[Any], None] | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        self._listeners = listeners
        self._reduce = reduce
        self.signal = signal
        self._queue: deque[Any] | None = None
        self._delivering = False
        self._changed: anyio.Event | None = None
        self.failure: BaseException | None = None
        self._deferred: list[Callable[[], object]] | None = None

    # ------------------------------------------------------------------ emitting

    def ready(self) -> bool:
        """Whether ``deliver_now`` may deliver the next event synchronously."""
        return (
            not (self._queue or self._delivering or self.failure is not None)
            and self._listeners.all_sync
        )

    def deliver_now(self, event: Any) -> None:
        """Deliver ``event`` synchronously; only when ``ready()``."""
        self._deliver_sync(event, self._listeners.entries)

    async def send(self, event: Any) -> None:
        """Deliver ``event`` after anything queued before it."""
        self._raise_failure()
        if not (self._queue or self._delivering):
            listeners = self._listeners
            if listeners.all_sync:
                self._deliver_sync(event, listeners.entries)  # the common path
                return
            self._delivering = True
            try:
                # ``_deliver`` inlined: one coroutine fewer per event for async listeners
                if self._reduce is not None:
                    self._reduce(event)
                signal = self.signal
                for listener in listeners.entries:
                    if listener.active:
                        result = listener.call(event, signal)
                        if listener.is_async or inspect.isawaitable(result):
                            await result
            except Exception as exc:
                self.failure = exc
                if self._queue is not None:
                    self._queue.clear()
                raise
            finally:
                self._end_delivery()
            return
        self._enqueue(event)
        await self._drain()

    async def emit(self, event: Any) -> None:
        """``send``, and everything queued is delivered too on return."""
        await self.send(event)
        if self._queue or self._delivering:
            await self._drain()

    def push(self, event: Any) -> None:
        """Emit ``event`` without waiting (synchronous callbacks such as a tool's
        ``on_update``): delivered now when possible, else queued for the next delivery.
        A listener error is recorded for the engine, never raised into the caller."""
        if self.failure is not None:
            return
        if self.ready():
            try:
                self._deliver_sync(event, self._listeners.entries)
            except Exception as exc:
                self.failure = exc
            return
        self._enqueue(event)

    async def settle(self) -> None:
        """Deliver everything queued (waiting for a delivery in progress first)."""
        await self._drain()

    @property
    def all_sync(self) -> bool:
        """Every listener is synchronous: ``push`` delivers at once, nothing needs `pump`."""
        return self._listeners.all_sync

    async def pump(self, stopped: Callable[[], bool]) -> None:
        """Deliver what ``push`` queues as it arrives, until ``stopped()`` (checked after
        each delivery and whenever `wake` is called) or a listener fails: a task beside a
        running tool, so that its ``on_update`` events reach asynchronous listeners while
        it runs instead of piling up until it returns. A delivery in progress is finished,
        never cut short; a failure is recorded for the engine's next ``send``/``settle``."""
        while not stopped() and self.failure is None:
            queue = self._queue
            if queue and not self._delivering:
                self._delivering = True
                try:
                    while queue and self.failure is None and not stopped():
                        await self._deliver(queue.popleft())
                finally:
                    self._end_delivery()
            else:
                await self._wait_changed()

    def wake(self) -> None:
        """Wake `pump`s and waiters to look again (a tool ended)."""
        self._notify()

    @property
    def idle(self) -> bool:
        """Nothing is queued or being delivered (``settle`` would return at once)."""
        return not (self._queue or self._delivering) and self.failure is None

    def defer_while_delivering(self, action: Callable[[], object]) -> None:
        """Run ``action`` (the engine cancelling its abort scope) now, or, while a
        listener is being delivered to, once that delivery ends: abort never interrupts a
        listener."""
        if self._delivering:
            if self._deferred is None:
                self._deferred = []
            self._deferred.append(action)
        else:
            action()

    # ------------------------------------------------------------------ delivery

    def _enqueue(self, event: Any) -> None:
        if self._queue is None:
            self._queue = deque()
        self._queue.append(event)
        self._notify()  # a `pump` waiting for pushed events

    def _raise_failure(self) -> None:
        failure = self.failure
        if failure is not None:
            raise failure

    def _deliver_sync(self, event: Any, listeners: tuple[Listener, ...]) -> None:
        if self._reduce is not None:
            self._reduce(event)
        signal = self.signal
        for listener in listeners:
            if listener.active:
                if listener.takes_signal:
                    listener.fn(event, signal)
                else:
                    listener.fn(event)

    async def _drain(self) -> None:
        """Deliver the queue in the calling task, after the delivery in progress (another
        task's) ends."""
        while self._delivering and self.failure is None:
            await self._wait_changed()
        queue = self._queue
        if queue and self.failure is None:
            self._delivering = True
            try:
                while queue and self.failure is None:
                    await self._deliver(queue.popleft())
            finally:
                self._end_delivery()
        self._raise_failure()

    def _end_delivery(self) -> None:
        self._delivering = False
        if self._deferred:
            deferred, self._deferred = self._deferred, None
            for action in deferred:
                action()
        if self._changed is not None:
            self._notify()

    async def _deliver(self, event: Any) -> None:
        try:
            if self._reduce is not None:
                self._reduce(event)
            signal = self.signal
            for listener in self._listeners.entries:
                if listener.active:
                    result = listener.call(event, signal)
                    if listener.is_async or inspect.isawaitable(result):
                        await result
        except Exception as exc:
            self.failure = exc
            if self._queue is not None:
                self._queue.clear()

    async def _wait_changed(self) -> None:
        changed = self._changed
        if changed is None:
            changed = self._changed = anyio.Event()
        await changed.wait()

    def _notify(self) -> None:
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()


async def deliver_directly(
    events: list[Any],
    listeners: ListenerSet,
    reduce: Callable[[Any], None],
    signal: AbortSignal,
    close_timeout: float,
) -> None:
    """Reduce and deliver ``events`` without a dispatcher (the closing events of a run
    whose engine raised). Every event reaches every listener; the first listener error
    is raised afterwards. Delivery is shielded; once the caller's scope is cancelled,
    what remains is bounded by ``close_timeout``."""
    first_error: Exception | None = None
    deadline = math.inf
    for event in events:
        if deadline == math.inf and anyio.current_effective_deadline() == -math.inf:
            deadline = anyio.current_time() + close_timeout
        with anyio.CancelScope(shield=True, deadline=deadline):
            reduce(event)
            for listener in listeners.entries:
                if listener.active:
                    try:
                        result = listener.call(event, signal)
                        if inspect.isawaitable(result):
                            await result
                    except Exception as exc:
                        first_error = first_error or exc
    if first_error is not None:
        raise first_error
