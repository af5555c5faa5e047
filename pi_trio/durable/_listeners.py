"""Durable listeners: which events of a resumed run each one gets, and what it learns
about them (``DurableEventInfo``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..agent.extend import positional_arity
from ..ai import AbortSignal
from ._execution import Execution

__all__ = ["DurableEventInfo", "Subscription", "agent_listener"]


class DurableEventInfo:
    """What a durable listener learns besides the event: the run's ``workflow_id``,
    whether the event is ``replayed`` (re-emitted from recorded steps after a crash) and
    the run's abort ``signal``."""

    __slots__ = ("replayed", "signal", "workflow_id")

    def __init__(self, workflow_id: str, replayed: bool, signal: AbortSignal | None) -> None:
        self.workflow_id = workflow_id
        self.replayed = replayed
        self.signal = signal

    def __repr__(self) -> str:
        return f"DurableEventInfo(workflow_id={self.workflow_id!r}, replayed={self.replayed})"


class Subscription:
    __slots__ = ("fn", "replayed")

    def __init__(self, fn: Callable[..., Any], replayed: bool) -> None:
        self.fn = fn
        self.replayed = replayed


def agent_listener(subscription: Subscription, execution: Execution) -> Callable[..., Any]:
    """The listener subscribed to the run's agent for one durable listener."""
    fn = subscription.fn
    takes_info = positional_arity(fn) >= 2
    deliver_replayed = subscription.replayed
    workflow_id = execution.workflow_id

    def arguments(event: Any, signal: AbortSignal | None) -> tuple[Any, ...] | None:
        replayed = execution.is_replayed(event)
        if replayed and not deliver_replayed:
            return None
        if takes_info:
            return (event, DurableEventInfo(workflow_id, replayed, signal))
        return (event,)

    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    ):

        async def deliver_async(event: Any, signal: AbortSignal | None) -> None:
            args = arguments(event, signal)
            if args is not None:
                await fn(*args)

        return deliver_async

    def deliver(event: Any, signal: AbortSignal | None) -> None:
        args = arguments(event, signal)
        if args is not None:
            fn(*args)

    return deliver
