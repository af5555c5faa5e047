"""Running a batch's tool calls concurrently: eagerly, in one task group per run.

Calls start in source order in the engine's task (``Eager``); the first one that has to
wait keeps the engine's task, and every call not started yet becomes a task right then,
so a waiting call never delays the others, and calls that finish at once cost no task.
Those tasks go to the run's ``ToolGroup``: one task group for the whole run, opened by the
first batch that needs it and closed when the run's body ends, inside the abort scope.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from ..ai._seam import sole_exception
from ._eager import Eager

__all__ = ["Job", "ToolGroup", "run_concurrently"]

# A call to run: a function making its coroutine, and the name of its task if it gets one.
Job = tuple[Callable[[], Coroutine[Any, Any, None]], str]


class ToolGroup:
    """The run's task group for tool calls, opened on first use."""

    __slots__ = ("_group",)

    def __init__(self) -> None:
        self._group: anyio.abc.TaskGroup | None = None

    @property
    def opened(self) -> bool:
        return self._group is not None

    async def get(self) -> anyio.abc.TaskGroup:
        """The group, entered now if it was not yet (call it where nothing is pending:
        the group's scope nests inside whatever the calling task has entered)."""
        group = self._group
        if group is None:
            group = anyio.create_task_group()
            await group.__aenter__()
            self._group = group
        return group

    async def close(self, exc: BaseException | None) -> bool:
        """Leave the group as ``async with`` would, after waiting for its tasks; ``True``
        when it swallowed ``exc``. When ``exc`` is the only failure, ``False`` is returned
        instead of a group wrapping it, so the caller re-raises ``exc`` itself."""
        group, self._group = self._group, None
        if group is None:
            return False
        if exc is None:
            return bool(await group.__aexit__(None, None, None))
        try:
            return bool(await group.__aexit__(type(exc), exc, exc.__traceback__))
        except BaseExceptionGroup as wrapped:
            if sole_exception(wrapped) is exc:
                return False
            raise


async def run_concurrently(jobs: Sequence[Job], tool_group: ToolGroup | None) -> None:
    """Run ``jobs`` concurrently (see the module docstring) and return once all have
    finished. Without a ``tool_group`` the jobs get a task group of their own."""
    if len(jobs) == 1:  # nothing to run beside it: no task group, no task
        await jobs[0][0]()
        return
    waiting = deque(jobs)
    if tool_group is None:
        async with anyio.create_task_group() as group:
            await _start(group, waiting, None)
        return
    group = await tool_group.get()
    tracker = _Tracker()
    await _start(group, waiting, tracker)
    await tracker.wait()
    # A job task ends without finishing only when it was cancelled, and then so is this
    # task (the run's scopes are the jobs' scopes): say so here, even when every job
    # had ended before ``wait`` (no checkpoint there).
    await anyio.lowlevel.checkpoint_if_cancelled()


class _Tracker:
    """Counts a batch's jobs running as tasks of the shared group, so the batch can
    wait for its own jobs only."""

    __slots__ = ("_done", "running")

    def __init__(self) -> None:
        self.running = 0
        self._done: anyio.Event | None = None

    async def run(self, make: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            await make()
        finally:
            self.running -= 1
            if not self.running and self._done is not None:
                self._done.set()

    async def wait(self) -> None:
        if self.running:
            self._done = anyio.Event()
            await self._done.wait()


async def _start(group: anyio.abc.TaskGroup, waiting: deque[Job], tracker: _Tracker | None) -> None:
    def start_the_rest() -> None:
        while waiting:
            make, name = waiting.popleft()
            if tracker is None:
                group.start_soon(make, name=name)
            else:
                tracker.running += 1
                group.start_soon(tracker.run, make, name=name)

    while waiting:
        make, _ = waiting.popleft()
        await Eager(make(), start_the_rest)
