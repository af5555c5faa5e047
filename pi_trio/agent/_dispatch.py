"""The dispatcher: delivers a run's events to its listeners, in order, outside abort.

Events go through one bounded queue. Delivery applies the reducer and then awaits each
listener in subscription order; ``abort()`` never interrupts a listener.

While the queue is empty and every listener is synchronous, the emitting task delivers
the event itself (reducer, then listeners): no task switch per event on the common path.
An event that has to wait (an asynchronous listener, or delivery already busy) is queued,
so emission order is always kept. Who delivers the queue depends on the run:

- attached to the run's task group (``attach``), a dispatcher task started on the first
  queued event delivers it in a shielded scope (the caller's cancellation only bounds it,
  through ``set_close_deadline``), and the engine may run ahead of it by
  ``DISPATCH_BUFFER`` events: the mode for runs that start with an asynchronous listener;
- otherwise (every listener synchronous when the run started, so no task group at all)
  the engine delivers queued events itself whenever it sends, waits for room or
  settles: a listener subscribed mid-run that is asynchronous still gets every event in
  order, one at a time. An abort requested meanwhile takes effect once that delivery
  returns; the caller's cancellation interrupts it, and the closing events then go out
  under the engine's bounded shield.
"""

from __future__ import annotations

import inspect
import math
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from ..ai import AbortSignal
from ._hooks import positional_arity

__all__ = ["DISPATCH_BUFFER", "Dispatcher", "Listener", "ListenerSet", "deliver_directly"]

# Events the engine may emit ahead of delivery while streaming deltas. Bounds memory and
# bounds how far a provider can run ahead of a listener that is about to abort the run.
DISPATCH_BUFFER = 64


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

    The engine calls ``await send(event)`` (delivery may still be pending when it returns,
    see ``settle``), ``send_nowait(event)`` after ``wait_for_room()``, ``push(event)`` from
    synchronous callbacks, and ``await settle()`` to wait until everything sent so far has
    been delivered. A listener exception is recorded and raised to the engine by every
    later ``send`` or ``settle``; queued events after the failing one are dropped (they
    were never delivered, so nothing was reduced either).
    """

    def __init__(
        self,
        listeners: ListenerSet,
        reduce: Callable[[Any], None] | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        self._listeners = listeners
        self._reduce = reduce
        self.signal = signal
        self._queue: deque[Any] = deque()
        self._delivering = False
        self._closed = False
        self._changed: anyio.Event | None = None
        self.failure: BaseException | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._started = False
        self._scope: anyio.CancelScope | None = None
        self._deadline = math.inf
        self._draining = False
        self._deferred: list[Callable[[], object]] = []

    def attach(self, task_group: anyio.abc.TaskGroup) -> None:
        """The run's task group: the dispatcher task starts there the first time an event
        has to wait for delivery (never, while every listener is synchronous). Without
        it the engine delivers queued events itself."""
        self._task_group = task_group

    @property
    def needs_task(self) -> bool:
        """Whether the run should give this dispatcher a task group (an asynchronous
        listener is subscribed)."""
        return not self._listeners.all_sync

    # ------------------------------------------------------------------ engine side

    def _ensure_task(self) -> None:
        if not self._started and self._task_group is not None:
            self._started = True
            self._task_group.start_soon(self._run_task, name="agent event dispatcher")

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

    def _raise_failure(self) -> None:
        failure = self.failure
        if failure is not None:
            raise failure

    def _can_deliver_inline(self) -> tuple[Listener, ...] | None:
        if self._queue or self._delivering or self.failure is not None:
            return None
        listeners = self._listeners
        return listeners.entries if listeners.all_sync else None

    def _enqueue(self, event: Any) -> None:
        self._queue.append(event)
        self._ensure_task()
        self._notify()

    async def send(self, event: Any) -> None:
        """Emit ``event``: delivered now when possible, else queued (waiting for room)."""
        self._raise_failure()
        listeners = self._can_deliver_inline()
        if listeners is not None:
            self._deliver_sync(event, listeners)
            return
        if self._task_group is None:
            self._enqueue(event)
            await self._drain()
            return
        while len(self._queue) >= DISPATCH_BUFFER and self.failure is None:
            await self._wait_changed()
        self._raise_failure()
        self._enqueue(event)

    def send_nowait(self, event: Any) -> None:
        """Emit ``event`` without waiting: delivered now when possible, else queued even
        past the bound (callers wait for room first with ``wait_for_room``)."""
        if self._queue or self._delivering or self.failure is not None:
            self._raise_failure()
            self._enqueue(event)
            return
        listeners = self._listeners
        if not listeners.all_sync:
            self._enqueue(event)
            return
        self._deliver_sync(event, listeners.entries)

    def has_room(self) -> bool:
        if self._task_group is None:
            return not self._queue
        return len(self._queue) < DISPATCH_BUFFER

    async def wait_for_room(self) -> None:
        """Wait until the queue is below its bound (without a dispatcher task: deliver
        it)."""
        if self._task_group is None:
            await self._drain()
            return
        while len(self._queue) >= DISPATCH_BUFFER and self.failure is None:
            await self._wait_changed()
        self._raise_failure()

    def push(self, event: Any) -> None:
        """Emit ``event`` without waiting (for synchronous callbacks such as a tool's
        ``on_update``): delivered now when possible, else queued for the next delivery.
        A listener error is recorded for the engine, never raised into the caller."""
        if self.failure is not None or self._closed:
            return
        listeners = self._can_deliver_inline()
        if listeners is None:
            self._enqueue(event)
            return
        try:
            self._deliver_sync(event, listeners)
        except Exception as exc:
            self.failure = exc

    async def settle(self) -> None:
        """Wait until every event sent so far has been delivered."""
        if self._task_group is None:
            await self._drain()
            return
        while (self._queue or self._delivering) and self.failure is None:
            await self._wait_changed()
        self._raise_failure()

    async def emit(self, event: Any) -> None:
        """``send`` then ``settle``: the event has reached every listener on return."""
        listeners = self._listeners
        if self._queue or self._delivering or self.failure is not None or not listeners.all_sync:
            await self.send(event)
            if self._queue or self._delivering:
                await self.settle()
        else:
            self._deliver_sync(event, listeners.entries)  # the common path, inline

    @property
    def idle(self) -> bool:
        """Nothing sent is waiting for delivery (``settle`` would return at once)."""
        return not (self._queue or self._delivering) and self.failure is None

    def close(self) -> None:
        """Let the dispatcher task finish once the queue is delivered."""
        self._closed = True
        self._notify()

    def set_close_deadline(self, deadline: float) -> None:
        """Bound the remaining delivery (used when the caller's scope was cancelled)."""
        self._deadline = min(self._deadline, deadline)
        if self._scope is not None:
            self._scope.deadline = self._deadline

    # ------------------------------------------------------------------ delivery

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

    async def _run_task(self) -> None:
        """The dispatcher task. Shielded: abort never interrupts a listener."""
        with anyio.CancelScope(shield=True, deadline=self._deadline) as scope:
            self._scope = scope
            try:
                await self._deliver_queued()
            finally:
                self._delivering = False
                self._queue.clear()
                self._closed = True
                self._notify()

    async def _deliver_queued(self) -> None:
        queue = self._queue
        while True:
            while not queue:
                if self._closed:
                    return
                await self._wait_changed()
            await self._deliver_available()
            if self.failure is not None:
                # Nothing more is delivered for this run; the engine is told at its next
                # send/settle and turns the failure into the run's outcome.
                return

    async def _deliver_available(self) -> None:
        """Deliver queued events until the queue is empty or a listener failed."""
        queue = self._queue
        while queue and self.failure is None:
            self._delivering = True
            event = queue.popleft()
            try:
                if self._reduce is not None:
                    self._reduce(event)
                signal = self.signal
                for listener in self._listeners.entries:
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

    async def _drain(self) -> None:
        """Without a dispatcher task: deliver the queue in the calling task, or wait for
        the task that is delivering it. The engine's abort is held back meanwhile (see
        ``defer_while_delivering``); the caller's cancellation is not."""
        while self._delivering and self.failure is None:
            await self._wait_changed()
        if self._queue and self.failure is None:
            self._draining = True
            try:
                await self._deliver_available()
            finally:
                self._draining = False
                deferred, self._deferred = self._deferred, []
                for action in deferred:
                    action()
        self._raise_failure()

    def defer_while_delivering(self, action: Callable[[], object]) -> None:
        """Run ``action`` (the engine cancelling its abort scope) now, or, while the
        engine's task is awaiting a listener, once that delivery ends: abort never
        interrupts a listener."""
        if self._draining:
            self._deferred.append(action)
        else:
            action()


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
