"""The dispatcher: the one path by which a run's events reach its listeners.

It owns the listener half of the abort contract (README, "Abort and cancellation: the
contract"), in one place:

- **Order.** Each event is reduced into the state, then handed to every listener in
  subscription order; an asynchronous listener is awaited before the next one is called.
- **Every listener sees every event.** An event that reached one listener reaches all of
  them, whatever is cancelled or raised meanwhile: a listener that raises does not keep
  the event from the listeners after it (the first error is raised once the event has
  reached them all), and a listener is never cancelled in the middle of an event.
- **Abort never interrupts a listener.** Awaiting listeners is shielded from the run's
  abort scope. Once the run is aborted (``hold``) no delivery starts inside that scope:
  events wait in order and are the first the closing sequence delivers, outside it
  (``release``).
- **The caller's cancellation, within bounds.** A delivery is not interrupted by the
  caller's cancellation either, but it is bounded: by ``close_timeout`` past the caller's
  deadline (known when the run starts), or past the moment it started if the caller was
  cancelled already; after the caller's cancellation, the closing sequence's deliveries
  share one ``close_timeout`` (``closing``). A listener still running at the bound is
  cancelled; the listeners after it get the event all the same, and so do the closing
  events that follow (every listener is still called; one that waits is cut at once).

Each delivery that awaits a listener enters a shielded cancel scope of its own, around
that delivery only: a scope around the whole run, shielded only while a listener waits,
is cheaper (no scope per event) but wrong. A cancellation already delivered to a task of
the run (a tool, the pump) and still propagating becomes invisible from inside the outer
scope the moment another task raises its shield, so the innermost cancelled scope it
meets (a task group's, whose sibling it also cancels) catches it: a cancellation is
swallowed and a listener in the sibling is interrupted. The scope per event, taken from
the running backend itself (``_backend``), costs the first asynchronous listener of an
event about 9 us in all (W11, 12 through anyio's wrappers); synchronous listeners never
pay it (``deliver_now``).

There is no delivery task: the task that emits an event delivers it (the engine its
events, a tool task its own), so a listener that waits makes the emitting task wait
(backpressure), and while one event is being delivered, others queue behind it and are
delivered in order by whoever delivers next, or by the engine's ``settle`` at its next
decision point. The forms of the one path, all over ``_call_listeners`` (the calls) and
``_await_listeners`` (the shielded awaits):

- ``deliver_now``: synchronous, when ``ready()`` (every listener synchronous, nothing
  queued); the streaming fast path;
- ``send`` / ``emit``: whatever the listeners; awaits asynchronous ones in place;
- ``push``: for synchronous callbacks (a tool's ``on_update``): delivered now when it can
  be, else queued;
- ``settle``: what is queued; ``pump``: a task beside a running tool that delivers its
  pushed updates while it runs;
- ``deliver_final``: the closing events of a run whose engine raised.
"""

from __future__ import annotations

import inspect
import math
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import anyio.lowlevel

from ..ai import AbortSignal
from ._backend import scheduler_calls
from ._hooks import positional_arity

__all__ = ["Dispatcher", "Listener", "ListenerSet"]


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

    A listener error is recorded (``failure``) once its event reached every listener, and
    raised by that ``send`` and by every later ``send`` or ``settle``; events queued
    behind it are dropped (never delivered, so never reduced either). The caller's
    deadline is read when the dispatcher is made, which is when a run starts.
    """

    __slots__ = (
        "_calls",
        "_changed",
        "_delivering",
        "_held",
        "_limit",
        "_listeners",
        "_queue",
        "_reduce",
        "close_timeout",
        "failure",
        "signal",
    )

    def __init__(
        self,
        listeners: ListenerSet,
        reduce: Callable[[Any], None] | None = None,
        signal: AbortSignal | None = None,
        close_timeout: float = 5.0,
    ) -> None:
        self._listeners = listeners
        self._reduce = reduce
        self._calls = scheduler_calls()
        self.signal = signal
        self.close_timeout = close_timeout
        self._queue: deque[Any] | None = None
        self._delivering = False
        self._held = False
        self._changed: anyio.Event | None = None
        self.failure: BaseException | None = None
        # how long a delivery may be shielded: close_timeout past the caller's deadline
        deadline = anyio.current_effective_deadline()
        self._limit = (
            math.inf
            if deadline == math.inf
            else max(deadline, anyio.current_time()) + close_timeout
        )

    # ------------------------------------------------------------------ emitting

    def ready(self) -> bool:
        """Whether ``deliver_now`` may deliver the next event synchronously."""
        return (
            not (self._queue or self._delivering or self._held or self.failure is not None)
            and self._listeners.all_sync
        )

    def deliver_now(self, event: Any) -> None:
        """Deliver ``event`` synchronously; only when ``ready()``."""
        if self._reduce is not None:
            self._reduce(event)
        self._call_listeners(event, iter(self._listeners.entries))
        if self.failure is not None:
            raise self.failure

    async def send(self, event: Any) -> None:
        """Deliver ``event`` after anything queued before it (after ``hold``: queue it)."""
        self._raise_failure()
        if self._queue or self._delivering or self._held:
            self._enqueue(event)
            if not self._held:
                await self._drain()
            return
        if self._reduce is not None:
            self._reduce(event)
        listeners = iter(self._listeners.entries)
        waiting = self._call_listeners(event, listeners)
        if waiting is not None:
            self._delivering = True
            try:
                await self._await_listeners(event, listeners, waiting)
            finally:
                self._end_delivery()
            self._raise_failure()
            # the delivery was shielded: a cancellation that came meanwhile takes effect
            # now that the event reached every listener
            await self._calls.checkpoint_if_cancelled()
            return
        self._raise_failure()

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
            if self._reduce is not None:
                self._reduce(event)
            self._call_listeners(event, iter(self._listeners.entries))
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
        it runs instead of piling up until it returns. A failure is recorded for the
        engine's next ``send``/``settle``."""
        while not stopped() and self.failure is None:
            if self._queue and not (self._delivering or self._held):
                await self._deliver_queued(stopped)
            else:
                await self._wait_changed()

    def wake(self) -> None:
        """Wake `pump`s and waiters to look again (a tool ended)."""
        self._notify()

    @property
    def idle(self) -> bool:
        """Nothing is queued or being delivered (``settle`` would return at once)."""
        return not (self._queue or self._delivering) and self.failure is None

    # ------------------------------------------------------------------ abort and close

    def hold(self) -> None:
        """The run was aborted: from now on events wait, in order, until ``release``
        (no delivery starts inside the cancelled abort scope; one in progress ends
        first, shielded)."""
        self._held = True

    def release(self) -> None:
        """The abort scope is left: what waits is delivered first by the next ``send``."""
        self._held = False

    def closing(self) -> float:
        """The caller was cancelled: what is left to deliver gets ``close_timeout`` from
        now at most (or until the bound it had already). Returns that deadline."""
        self._limit = min(self._limit, anyio.current_time() + self.close_timeout)
        return self._limit

    async def deliver_final(self, events: list[Any]) -> None:
        """Deliver the closing events of a run whose engine raised: each to every
        listener, whatever failed before (what was queued is dropped); the first
        listener error is raised afterwards."""
        self.failure = None
        self._held = False
        if self._queue is not None:
            self._queue.clear()
        if self._calls.deadline_passed():
            self.closing()
        first: BaseException | None = None
        for event in events:
            if self._reduce is not None:
                self._reduce(event)
            listeners = iter(self._listeners.entries)
            waiting = self._call_listeners(event, listeners)
            if waiting is not None:
                await self._await_listeners(event, listeners, waiting)
            if first is None:
                first = self.failure
            self.failure = None
        if first is not None:
            raise first

    # ------------------------------------------------------------------ the one path

    def _call_listeners(self, event: Any, listeners: Iterator[Listener]) -> Awaitable[Any] | None:
        """Call the listeners ``listeners`` yields with ``event``, in order, until one
        returns an awaitable, and return it (``None``: all called); calling again with
        the same iterator goes on after it. A listener error is recorded and the next
        listener is called."""
        signal = self.signal
        for listener in listeners:
            if not listener.active:
                continue
            try:
                result = listener.fn(event, signal) if listener.takes_signal else listener.fn(event)
            except Exception as exc:
                self._fail(exc)
                continue
            if listener.is_async or (result is not None and inspect.isawaitable(result)):
                return result  # type: ignore[no-any-return]
        return None

    async def _await_listeners(
        self, event: Any, listeners: Iterator[Listener], awaitable: Awaitable[Any]
    ) -> None:
        """Await ``awaitable``, then call (and await) the listeners after it, shielded up
        to the bound (module docstring). A listener still running at the bound is
        cancelled, and the ones after it get the event all the same."""
        waiting: Awaitable[Any] | None = awaitable
        while waiting is not None:
            with self._calls.cancel_scope(shield=True, deadline=self._shield_deadline()):
                while waiting is not None:
                    try:
                        await waiting
                    except Exception as exc:
                        self._fail(exc)
                    waiting = self._call_listeners(event, listeners)
                return
            # the bound cut a listener: go on with the ones after it
            waiting = self._call_listeners(event, listeners)

    def _shield_deadline(self) -> float:
        if self._calls.deadline_passed():
            # The caller is cancelled (inside the abort scope nothing is delivered once it
            # is cancelled): this delivery gets close_timeout at most.
            return min(self._limit, self._calls.current_time() + self.close_timeout)
        return self._limit

    def _fail(self, exc: Exception) -> None:
        if self.failure is None:
            self.failure = exc
            if self._queue is not None:
                self._queue.clear()

    def _raise_failure(self) -> None:
        failure = self.failure
        if failure is not None:
            raise failure

    # ------------------------------------------------------------------ the queue

    def _enqueue(self, event: Any) -> None:
        if self._queue is None:
            self._queue = deque()
        self._queue.append(event)
        self._notify()  # a `pump` waiting for pushed events

    async def _drain(self) -> None:
        """Deliver the queue in the calling task, after the delivery in progress (another
        task's) ends. After ``hold`` only a checkpoint: the abort scope is cancelled."""
        while self._delivering and self.failure is None:
            await self._wait_changed()
        if self._held:
            await anyio.lowlevel.checkpoint()
        elif self._queue and self.failure is None:
            await self._deliver_queued(None)
            self._raise_failure()
            await self._calls.checkpoint_if_cancelled()  # as after ``send``
        self._raise_failure()

    async def _deliver_queued(self, stopped: Callable[[], bool] | None) -> None:
        """Deliver queued events in order while nothing fails, nothing holds them and
        ``stopped`` (the pump's) is not true."""
        queue = self._queue
        assert queue is not None
        self._delivering = True
        try:
            while queue and self.failure is None and not self._held:
                if stopped is not None and stopped():
                    return
                event = queue.popleft()
                if self._reduce is not None:
                    self._reduce(event)
                listeners = iter(self._listeners.entries)
                waiting = self._call_listeners(event, listeners)
                if waiting is not None:
                    await self._await_listeners(event, listeners, waiting)
        finally:
            self._end_delivery()

    def _end_delivery(self) -> None:
        self._delivering = False
        if self._changed is not None:
            self._notify()

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
