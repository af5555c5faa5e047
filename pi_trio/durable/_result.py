"""What a durable run ends with: ``DurableResult``, as the workflow records it, and the
``DurableRun`` handle that waits for it."""

from __future__ import annotations

from typing import Any

import msgspec
from dbos import DBOSClient, WorkflowHandleAsync
from dbos import error as dbos_error

from ..agent import Agent, AgentMessage, PendingApproval
from ..ai import PiError, messages_from_json, messages_to_json
from ._approvals import read_waiting

__all__ = [
    "DurableResult",
    "DurableRun",
    "RunCancelledError",
    "decode_outcome",
    "encode_outcome",
]


class RunCancelledError(PiError):
    """The run's workflow was cancelled through DBOS (``cancel_workflow``) and its aborted
    transcript is not known in this process; ``DBOS.resume_workflow`` continues it."""


class DurableResult:
    """The end of a durable run: the whole transcript (``messages``), the messages the
    run added (``new_messages``), steering or follow-up messages it took but did not
    deliver (``queued``: the run ended first), and whether it was ``cancelled`` through
    DBOS."""

    __slots__ = ("cancelled", "messages", "new_messages", "queued", "workflow_id")

    def __init__(
        self,
        workflow_id: str,
        messages: list[AgentMessage],
        new_messages: list[AgentMessage],
        queued: list[AgentMessage],
        cancelled: bool = False,
    ) -> None:
        self.workflow_id = workflow_id
        self.messages = messages
        self.new_messages = new_messages
        self.queued = queued
        self.cancelled = cancelled

    @property
    def stop_reason(self) -> str | None:
        """The stop reason of the last assistant message (``None`` without one)."""
        for message in reversed(self.messages):
            if getattr(message, "role", None) == "assistant":
                return str(message.stop_reason)
        return None

    def __repr__(self) -> str:
        return (
            f"<DurableResult {self.workflow_id!r} messages={len(self.messages)} "
            f"stop_reason={self.stop_reason!r} cancelled={self.cancelled}>"
        )


class _Outcome(msgspec.Struct, rename="camel"):
    """A run's result as the workflow records it."""

    messages: msgspec.Raw
    new_count: int
    queued: msgspec.Raw


def encode_outcome(agent: Agent, new_count: int, queued: list[Any]) -> str:
    outcome = _Outcome(
        msgspec.Raw(messages_to_json(agent.state.messages)),
        new_count,
        msgspec.Raw(messages_to_json(queued)),
    )
    return msgspec.json.encode(outcome).decode()


def decode_outcome(workflow_id: str, raw: str, *, cancelled: bool = False) -> DurableResult:
    outcome = msgspec.json.decode(raw, type=_Outcome)
    messages: list[Any] = messages_from_json(bytes(outcome.messages))
    new = messages[len(messages) - outcome.new_count :] if outcome.new_count else []
    queued: list[Any] = messages_from_json(bytes(outcome.queued))
    return DurableResult(workflow_id, messages, new, queued, cancelled)


class DurableRun:
    """A handle on one durable run (a DBOS workflow), from ``DurableAgent.start`` or
    ``DurableAgent.retrieve``."""

    def __init__(self, workflow_id: str, handle: WorkflowHandleAsync[str]) -> None:
        self.workflow_id = workflow_id
        self._handle = handle
        # set by the workflow when it ran in this process and DBOS cancelled it
        self._cancelled_outcome: str | None = None

    async def result(self, *, poll_interval: float = 1.0) -> DurableResult:
        """Wait for the run to end and return its result (a run executing in another
        process is polled every ``poll_interval`` seconds). A run cancelled through DBOS
        returns the aborted transcript (``cancelled=True``) when it ran in this process,
        and raises ``RunCancelledError`` otherwise."""
        try:
            raw = await self._handle.get_result(polling_interval_sec=poll_interval)
        except dbos_error.DBOSAwaitedWorkflowCancelledError as exc:
            if self._cancelled_outcome is None:
                raise RunCancelledError(
                    f"durable run {self.workflow_id!r} was cancelled through DBOS in another "
                    "process; DBOS.resume_workflow continues it from its last completed step"
                ) from exc
            return decode_outcome(self.workflow_id, self._cancelled_outcome, cancelled=True)
        return decode_outcome(self.workflow_id, raw)

    def keep_cancelled_outcome(self, outcome: str) -> None:
        """Called by the run's workflow when DBOS cancelled it in this process: the
        aborted transcript (as recorded outcomes are encoded) that ``result`` returns."""
        self._cancelled_outcome = outcome

    async def pending_approvals(
        self, *, client: DBOSClient | None = None
    ) -> tuple[PendingApproval, ...]:
        """The tool calls the run waits for now (none when it does not wait for
        approval); send the decisions with ``DurableAgent.resume``."""
        waiting = await read_waiting(self.workflow_id, client)
        return () if waiting is None else tuple(waiting.pending)

    async def status(self) -> str:
        """The workflow's DBOS status (``PENDING``, ``SUCCESS``, ``CANCELLED``, ...)."""
        return (await self._handle.get_status()).status

    def __repr__(self) -> str:
        return f"<DurableRun {self.workflow_id!r}>"
