"""The running backend's own primitives, for the one hot path that needs them.

Event delivery to an asynchronous listener enters a shielded cancel scope per event and
reads the deadline and the clock (``agent/_dispatch.py``). Through anyio each of these
goes through its backend lookup and wrapper objects: on trio, anyio's shielded scope
costs about 7 us where trio's own costs 4.6, and the whole delivery 12 us per event
where the native calls make it 9 (W11). ``primitives()`` returns, once per run, the
running backend's functions with anyio's signatures and meaning: trio's own under trio,
anyio's everywhere else. Nothing else in the library should need this module.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import anyio.lowlevel

__all__ = ["Primitives", "primitives"]


class Primitives(Protocol):
    """What the dispatcher uses; anyio's signatures and meaning."""

    def cancel_scope(self, *, shield: bool, deadline: float) -> Any: ...

    checkpoint_if_cancelled: Callable[[], Awaitable[None]]
    current_effective_deadline: Callable[[], float]
    current_time: Callable[[], float]


class _Bound:
    __slots__ = (
        "_scope",
        "checkpoint_if_cancelled",
        "current_effective_deadline",
        "current_time",
    )

    def __init__(
        self,
        scope: Callable[..., Any],
        checkpoint_if_cancelled: Callable[[], Awaitable[None]],
        current_effective_deadline: Callable[[], float],
        current_time: Callable[[], float],
    ) -> None:
        self._scope = scope
        self.checkpoint_if_cancelled = checkpoint_if_cancelled
        self.current_effective_deadline = current_effective_deadline
        self.current_time = current_time

    def cancel_scope(self, *, shield: bool, deadline: float) -> Any:
        return self._scope(shield=shield, deadline=deadline)


_ANYIO = _Bound(
    anyio.CancelScope,
    anyio.lowlevel.checkpoint_if_cancelled,
    anyio.current_effective_deadline,
    anyio.current_time,
)
_TRIO: _Bound | None = None


def primitives() -> Primitives:
    """The running backend's primitives (call from inside the event loop)."""
    global _TRIO
    trio: Any = sys.modules.get("trio")  # never imported here: a trio run has it already
    if trio is None or not trio.lowlevel.in_trio_run():
        return _ANYIO
    if _TRIO is None:
        _TRIO = _Bound(
            trio.CancelScope,
            trio.lowlevel.checkpoint_if_cancelled,
            trio.current_effective_deadline,
            trio.current_time,
        )
    return _TRIO
