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
"""

from __future__ import annotations

from typing import Any

import anyio

from ..agent import Agent

__all__ = ["Execution"]


class Execution:
    """The state of one workflow execution of a durable run."""

    __slots__ = ("agent", "cancelled", "live", "replayed_calls", "workflow_id")

    def __init__(self, workflow_id: str, agent: Agent) -> None:
        self.workflow_id = workflow_id
        self.agent = agent
        self.live = False
        self.cancelled = False
        self.replayed_calls: set[str] = set()

    def mark_live(self) -> None:
        """A step body runs: from here on every event is new."""
        self.live = True

    def is_replayed(self, event: Any) -> bool:
        if not self.live:
            return True
        return event.type == "tool_execution_end" and event.tool_call_id in self.replayed_calls

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
