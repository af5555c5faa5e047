"""One execution of a durable run's workflow: which of its events are replays, and how a
DBOS cancellation becomes the agent's abort.

A workflow execution either starts a run or resumes one after a crash. Resuming replays
the recorded steps from the database; the events the agent emits meanwhile are *replayed*
events: they were delivered once already, before the crash. The execution turns *live* at
the first step whose body runs again. Everything is ordered around steps (the agent
delivers every event emitted so far before it starts a request or a tool), so one flag
tells replays from new events, with one exception: in a batch of parallel tool calls,
calls recorded before the crash may finish after another call went live, so their
``tool_execution_end`` is marked by call id.

It also decides after which turns the run takes the messages sent to it (see ``_queue``):
the steps record the senders' marks they saw, and a mark seen in a turn that the run has
not taken after yet means messages may be waiting.
"""

from __future__ import annotations

from typing import Any

import anyio

from ..agent import Agent

__all__ = ["UNKNOWN_MARK", "Execution"]

# What a step recorded by an earlier version of pi_trio saw: it did not read the mark, so
# messages may be waiting (and that version took them after every turn).
UNKNOWN_MARK = object()


class Execution:
    """The state of one workflow execution of a durable run."""

    __slots__ = ("agent", "cancelled", "live", "replayed_calls", "seen", "taken", "workflow_id")

    def __init__(self, workflow_id: str, agent: Agent) -> None:
        self.workflow_id = workflow_id
        self.agent = agent
        self.live = False
        self.cancelled = False
        self.replayed_calls: set[str] = set()
        self.seen: set[object] = set()  # the marks the steps of this turn saw
        self.taken: set[object] = {None}  # marks the run has taken messages after

    def mark_live(self) -> None:
        """A step body runs: from here on every event is new."""
        self.live = True

    def is_replayed(self, event: Any) -> bool:
        if not self.live:
            return True
        return event.type == "tool_execution_end" and event.tool_call_id in self.replayed_calls

    def saw(self, mark: object) -> None:
        """A step (run now or replayed) saw ``mark``: a sender's mark, ``None`` when
        nothing was sent, ``UNKNOWN_MARK`` when the step did not record one."""
        self.seen.add(mark)

    def looked(self) -> bool:
        """Whether a step of the current turn read the mark (or replayed one that did)."""
        return bool(self.seen)

    def take_after_turn(self) -> bool:
        """After a turn: whether to take the messages sent to the run now. Taking them
        covers every mark seen so far, which is forgotten either way."""
        waiting = not self.seen <= self.taken
        if waiting:
            self.taken |= self.seen - {UNKNOWN_MARK}
        self.seen.clear()
        return waiting

    def note_cancelled(self) -> None:
        """DBOS reported the workflow cancelled: abort the run (the abort contract's
        outcome is written by the agent)."""
        self.cancelled = True
        self.agent.abort(f"Workflow {self.workflow_id} was cancelled")

    async def stop_for_cancel(self) -> None:
        """Called where a step found the workflow cancelled: abort and let the abort's
        cancellation reach this task."""
        self.note_cancelled()
        await anyio.sleep_forever()
