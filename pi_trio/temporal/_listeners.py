"""Listeners of Temporal runs, and the one place that calls them: ``Listeners.deliver``,
awaited by the activities in the worker's own event loop.

A run's events reach listeners only from activities: the model activity delivers the
events of the answer it streams, the tool activity the progress of its tool, and the loop's
own events (``agent_start``, ``turn_end``, ``tool_execution_end``, ...) travel from the
workflow to the listeners as part of the next activity's input (``Carried``), delivered
before that activity does its work; the run's last events travel in the delivery activity.
So an event is delivered by the activity that carries it, once Temporal started that
activity, and never by replaying the workflow.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any

import anyio

from ..agent import AgentEvent
from ..agent.extend import positional_arity
from ._codec import Carried, decode_event

__all__ = ["Listeners", "RunTarget", "TemporalEventInfo"]

logger = logging.getLogger("pi_trio.temporal")


class TemporalEventInfo:
    """What a listener learns besides the event: the run's ``workflow_id`` and
    ``run_id``, and whether the event is ``replayed`` (re-emitted from recorded history
    when another worker resumed the run)."""

    __slots__ = ("replayed", "run_id", "workflow_id")

    def __init__(self, workflow_id: str, run_id: str, replayed: bool) -> None:
        self.workflow_id = workflow_id
        self.run_id = run_id
        self.replayed = replayed

    def __repr__(self) -> str:
        return (
            f"TemporalEventInfo(workflow_id={self.workflow_id!r}, run_id={self.run_id!r}, "
            f"replayed={self.replayed})"
        )


class _Subscription:
    __slots__ = ("fn", "is_async", "replayed", "takes_info")

    def __init__(self, fn: Callable[..., Any], replayed: bool) -> None:
        self.fn = fn
        self.replayed = replayed
        self.takes_info = positional_arity(fn) >= 2
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )


class Listeners:
    """The listeners of one ``TemporalAgent`` in this process."""

    def __init__(self) -> None:
        self._subscriptions: tuple[_Subscription, ...] = ()
        # runs whose events activities are delivering here: listeners are never called
        # concurrently for one run, also by the parallel tool calls of a batch
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    def subscribe(self, fn: Callable[..., Any], replayed: bool) -> Callable[[], None]:
        entry = _Subscription(fn, replayed)
        self._subscriptions = (*self._subscriptions, entry)

        def unsubscribe() -> None:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not entry)

        return unsubscribe

    def target(self, workflow_id: str, run_id: str) -> RunTarget:
        return RunTarget(self, workflow_id, run_id)

    def _lock(self, key: str) -> anyio.Lock:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = anyio.Lock()
        self._locks[key] = (lock, users + 1)
        return lock

    def _release(self, key: str) -> None:
        lock, users = self._locks[key]
        if users == 1:
            del self._locks[key]
        else:
            self._locks[key] = (lock, users - 1)

    async def deliver(
        self, workflow_id: str, run_id: str, events: Iterable[tuple[AgentEvent, bool]]
    ) -> None:
        """Call every listener with each event, in order, one listener after another; a
        replayed event only reaches the listeners that asked for replays. A listener
        that raises is logged and does not stop the run (an observer's failure is not
        the run's)."""
        key = f"{workflow_id}/{run_id}"
        lock = self._lock(key)
        try:
            async with lock:
                for event, replayed in events:
                    info = TemporalEventInfo(workflow_id, run_id, replayed)
                    for subscription in self._subscriptions:
                        if replayed and not subscription.replayed:
                            continue
                        await _call(subscription, event, info)
        finally:
            self._release(key)


async def _call(subscription: _Subscription, event: Any, info: TemporalEventInfo) -> None:
    args = (event, info) if subscription.takes_info else (event,)
    try:
        if subscription.is_async:
            await subscription.fn(*args)
        else:
            subscription.fn(*args)
    except Exception:
        logger.exception(
            "listener %r failed on %s of workflow %r; the run goes on",
            subscription.fn,
            event.type,
            info.workflow_id,
        )


class RunTarget:
    """The listeners as one activity of one run sees them."""

    __slots__ = ("_listeners", "run_id", "workflow_id")

    def __init__(self, listeners: Listeners, workflow_id: str, run_id: str) -> None:
        self._listeners = listeners
        self.workflow_id = workflow_id
        self.run_id = run_id

    async def deliver(self, event: AgentEvent) -> None:
        """A new event produced by this activity."""
        await self._listeners.deliver(self.workflow_id, self.run_id, ((event, False),))

    async def deliver_carried(self, carried: list[Carried]) -> None:
        """The events the workflow handed to this activity."""
        if carried:
            events = [(decode_event(item.event), item.replayed) for item in carried]
            await self._listeners.deliver(self.workflow_id, self.run_id, events)
