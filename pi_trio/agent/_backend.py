"""The scheduler calls of a run, bound once to the backend it runs on.

anyio's ``checkpoint_if_cancelled``, ``current_effective_deadline`` and ``current_time``
look the running backend up on every call, which costs more than the call itself on trio
(about 0.3 to 0.5 µs each); a run makes them after every structural event and before
every hook and request. Event delivery also enters a shielded cancel scope for each event
an asynchronous listener gets (``agent/_dispatch.py``): anyio's costs about 7 µs on trio,
trio's own 4.6. ``scheduler_calls()``, called where a run starts, looks once: in a trio
task it gives trio's own functions and cancel scope, anywhere else anyio's. Both do the
same thing.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

import anyio
import anyio.lowlevel
import trio
import trio.lowlevel

__all__ = ["ANYIO_CALLS", "TRIO_CALLS", "SchedulerCalls", "scheduler_calls"]


class SchedulerCalls(NamedTuple):
    """One backend's functions (the names are anyio's)."""

    checkpoint_if_cancelled: Callable[[], Awaitable[None]]
    current_effective_deadline: Callable[[], float]
    current_time: Callable[[], float]
    cancel_scope: Callable[..., Any]  # the class: ``cancel_scope(shield=..., deadline=...)``

    def deadline_passed(self) -> bool:
        """Whether the calling task's deadline has passed (``False`` without one)."""
        deadline = self.current_effective_deadline()
        return deadline != math.inf and deadline <= self.current_time()


ANYIO_CALLS = SchedulerCalls(
    anyio.lowlevel.checkpoint_if_cancelled,
    anyio.current_effective_deadline,
    anyio.current_time,
    anyio.CancelScope,
)
TRIO_CALLS = SchedulerCalls(
    trio.lowlevel.checkpoint_if_cancelled,
    trio.current_effective_deadline,
    trio.current_time,
    trio.CancelScope,
)


def scheduler_calls() -> SchedulerCalls:
    """The calls for the backend running the calling task: trio's own in a trio task,
    anyio's otherwise (asyncio, or no event loop yet)."""
    return TRIO_CALLS if trio.lowlevel.in_trio_task() else ANYIO_CALLS
