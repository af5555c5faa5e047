"""A durable run that waits for approval: what it announces, how decisions reach it, and
how it waits for them.

When the agent's run pauses (a tool call needs approval), the workflow announces the
pending calls as a DBOS event (``APPROVAL_EVENT``: the pause's number and the calls) and
waits for a DBOS message on ``APPROVAL_TOPIC`` holding the decisions for that pause.
Both are recorded by DBOS, so a run that waited when its process died waits again after
``DBOS.launch()`` (it replays to the same pause from its recorded steps), and a message
sent meanwhile, while no process ran it, is there when it looks. A message for another
pause, whose call ids are not the pending ones, or that does not decode (nested too
deeply, too) is left aside with a warning.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import anyio
import anyio.to_thread
import msgspec
from dbos import DBOS, DBOSClient

from ..agent import ApprovalDecision, PendingApproval, ResumeError

__all__ = [
    "APPROVAL_EVENT",
    "APPROVAL_RECHECK_S",
    "APPROVAL_TOPIC",
    "announce",
    "read_waiting",
    "send_decisions",
    "wait_for_decisions",
]

_logger = logging.getLogger("pi_trio.durable")

APPROVAL_TOPIC: Final = "pi_trio.approval"
"""The DBOS message topic of the decisions for a paused durable run."""
APPROVAL_EVENT: Final = "pi_trio.approval"
"""The DBOS event of a durable run naming the calls it waits for (none once decided)."""
APPROVAL_RECHECK_S: Final = 60.0
"""How long one wait for a decision lasts before the run looks again: a cancellation
made in another process (``DBOS.cancel_workflow``) is seen within this; one made with
``DurableAgent.cancel`` in the process that runs it, at once. Each look records a DBOS
operation."""


class Waiting(msgspec.Struct, rename="camel", frozen=True):
    """What a paused run announces: its ``pause`` number (1, 2, ... in the run) and the
    calls that wait (empty once they were decided)."""

    pause: int
    pending: list[PendingApproval]


class _Decisions(msgspec.Struct, rename="camel"):
    pause: int
    approvals: dict[str, ApprovalDecision]


async def announce(pause: int, pending: list[PendingApproval]) -> None:
    """Called by the workflow: the calls it waits for now (none: it waits no more)."""
    await DBOS.set_event_async(
        APPROVAL_EVENT, msgspec.json.encode(Waiting(pause, pending)).decode()
    )


async def read_waiting(workflow_id: str, client: DBOSClient | None) -> Waiting | None:
    """The run's latest announcement (``None`` when it never paused)."""
    if client is None:
        raw = await DBOS.get_event_async(workflow_id, APPROVAL_EVENT, timeout_seconds=0)
    else:
        raw = await anyio.to_thread.run_sync(
            lambda: client.get_event(workflow_id, APPROVAL_EVENT, timeout_seconds=0)
        )
    return None if raw is None else msgspec.json.decode(raw, type=Waiting)


def _mismatch(approvals: dict[str, Any], pending: list[PendingApproval]) -> str | None:
    ids = [p.tool_call_id for p in pending]
    unknown = [k for k in approvals if k not in ids]
    missing = [k for k in ids if k not in approvals]
    listed = ", ".join(f"{p.tool_call_id!r} ({p.tool_name})" for p in pending)
    if unknown:
        return f"{', '.join(map(repr, unknown))} is not waiting for approval; the pending calls are {listed}"
    if missing:
        return (
            f"no decision for {', '.join(map(repr, missing))}; give every pending call "
            f"({listed}) approve(), deny(reason) or edit(arguments)"
        )
    return None


async def send_decisions(
    workflow_id: str,
    approvals: dict[str, ApprovalDecision],
    *,
    idempotency_key: str | None,
    client: DBOSClient | None,
) -> None:
    """Send ``approvals`` for the pause the run announced; ``ResumeError`` when it waits
    for nothing or the call ids are not the pending ones."""
    for call_id, decision in approvals.items():
        if not isinstance(decision, ApprovalDecision):
            raise TypeError(
                f"the decision for {call_id!r} is {decision!r}; use approve(), deny(reason) "
                "or edit(arguments) from pi_trio.agent"
            )
    waiting = await read_waiting(workflow_id, client)
    if waiting is None or not waiting.pending:
        raise ResumeError(
            f"durable run {workflow_id!r} is not waiting for approval (DurableRun."
            "pending_approvals() tells when it is)"
        )
    mismatch = _mismatch(approvals, waiting.pending)
    if mismatch is not None:
        raise ResumeError(f"durable run {workflow_id!r}: {mismatch}")
    payload = msgspec.json.encode(_Decisions(waiting.pause, dict(approvals))).decode()
    if client is None:
        await DBOS.send_async(workflow_id, payload, APPROVAL_TOPIC, idempotency_key=idempotency_key)
    else:
        await anyio.to_thread.run_sync(
            lambda: client.send(
                workflow_id, payload, APPROVAL_TOPIC, idempotency_key=idempotency_key
            )
        )


async def wait_for_decisions(
    pause: int, pending: list[PendingApproval], scope: anyio.CancelScope
) -> dict[str, ApprovalDecision] | None:
    """Called by the workflow: wait for the decisions of ``pause`` (``None`` when
    ``scope`` was cancelled: the run was cancelled in this process)."""
    with scope:
        while True:
            raw = await DBOS.recv_async(APPROVAL_TOPIC, timeout_seconds=APPROVAL_RECHECK_S)
            if raw is None:
                continue
            try:
                message = msgspec.json.decode(raw, type=_Decisions)
            except (msgspec.DecodeError, RecursionError) as exc:  # nested too deeply, too
                _logger.warning(
                    "durable run %s: ignored a malformed decision (%s)", DBOS.workflow_id, exc
                )
                continue
            problem = (
                f"it answers pause {message.pause}, and the run waits at pause {pause}"
                if message.pause != pause
                else _mismatch(message.approvals, pending)
            )
            if problem is None:
                return message.approvals
            _logger.warning("durable run %s: ignored a decision: %s", DBOS.workflow_id, problem)
    return None
