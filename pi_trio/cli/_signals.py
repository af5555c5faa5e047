"""Ctrl-C for the CLI: the first press aborts the active run, the next one exits.

``watch_interrupts`` turns SIGINT into calls of ``Interrupts.handle`` inside the command's
task group (with anyio's signal receiver, so no ``KeyboardInterrupt`` is raised while it
runs). ``handle`` is a plain function so tests call it directly.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

from ..agent import Agent
from ._exit import EXIT_INTERRUPTED

__all__ = ["EXIT_INTERRUPTED", "Interrupts", "run_interruptible", "watch_interrupts"]

ABORT_NOTE = "Interrupted: aborting the run (press Ctrl-C again to exit)"
EXIT_NOTE = "Interrupted: exiting"


class Interrupts:
    """What Ctrl-C does for one command.

    While ``agent`` runs and has not been aborted yet, ``handle()`` aborts the run and sets
    ``aborted`` (the command decides whether to go on). Otherwise — a second press, or a
    press while idle — it sets ``exit_requested`` and cancels ``exit_scope``; the run then
    settles through the agent's external-cancellation path and the command exits.
    """

    def __init__(self, exit_scope: anyio.CancelScope, notify: Callable[[str], None]) -> None:
        self.exit_scope = exit_scope
        self.notify = notify
        self.agent: Agent | None = None
        self.aborted = False
        self.exit_requested = False
        self._aborting_run = False

    def attach(self, agent: Agent) -> None:
        """Make ``agent`` the one the next Ctrl-C aborts."""
        self.agent = agent

    def run_finished(self) -> None:
        """Called after each run; the next press aborts the next run again."""
        self._aborting_run = False

    def handle(self) -> None:
        agent = self.agent
        running = agent is not None and agent.state.is_streaming
        if running and not self._aborting_run and not self.exit_requested:
            assert agent is not None
            self._aborting_run = True
            self.aborted = True
            self.notify(ABORT_NOTE)
            agent.abort()
            return
        if not self.exit_requested:
            self.exit_requested = True
            self.notify(EXIT_NOTE)
        self.exit_scope.cancel()


async def watch_interrupts(
    interrupts: Interrupts, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Deliver every SIGINT to ``interrupts.handle`` until cancelled."""
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        task_status.started()
        async for _ in signals:
            interrupts.handle()


async def run_interruptible(
    body: Callable[[Interrupts], Awaitable[int]],
    notify: Callable[[str], None],
    *,
    handle_signals: bool = True,
) -> tuple[int, Interrupts]:
    """Run ``body(interrupts)`` with Ctrl-C handled as ``Interrupts`` describes.

    Returns ``body``'s exit code, or ``EXIT_INTERRUPTED`` when Ctrl-C ended it, together
    with the ``Interrupts`` (``aborted`` / ``exit_requested`` tell what happened). Signals
    are handled only in the main thread (where Python delivers them).
    """
    code = EXIT_INTERRUPTED
    async with anyio.create_task_group() as group:
        interrupts = Interrupts(group.cancel_scope, notify)
        if handle_signals and threading.current_thread() is threading.main_thread():
            await group.start(watch_interrupts, interrupts)
        code = await body(interrupts)
        group.cancel_scope.cancel()
    return code, interrupts
