"""Resuming a paused run: finding the paused turn in a transcript, checking that it is
as the pause left it, and what the resumed run does with each call.

Everything is read from the transcript itself (the placeholders and their fingerprint),
so a run paused in one process resumes in another, from any store that keeps the
messages. A resume continues the paused turn: the paused answer must be the one that
paused, with one result per call, and nothing may follow those results; otherwise
``TranscriptChangedError`` says what changed. The messages before the paused answer may
change (compacted or redacted history): the decisions are about the answer's calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..ai import AssistantMessage, PiError, ToolCall, ToolResultMessage
from ._approval import (
    PENDING,
    ApprovalDecision,
    Fingerprint,
    PendingApproval,
    digest,
    placeholder_status,
)
from ._tool_call import PreparedCall, prepare_call

__all__ = [
    "ResumeError",
    "ResumePlan",
    "TranscriptChangedError",
    "check_edits",
    "paused_answer",
    "pending_approvals",
    "plan_resume",
]

_RESUME_HINT = (
    "resume() continues a run that paused for approval (RunResult.status == "
    "'approval_pending'), from the transcript it left"
)


class ResumeError(PiError, ValueError):
    """``Agent.resume`` cannot continue: nothing waits for approval, or the decisions do
    not fit the calls that wait. The message says which and what to give instead."""


class TranscriptChangedError(ResumeError):
    """The transcript changed since the run paused (messages added after the paused turn,
    a message before it edited, a placeholder removed...); the message names the change.
    A resume would run calls that were approved for another conversation."""


class ResumePlan:
    """What a resumed run does: the paused ``message``, the ``calls`` to run now (in
    source order; an edited call carries its new arguments), the ``decisions`` by call
    id, and where each call's placeholder is (``slots``: call id -> transcript index)."""

    __slots__ = ("answer_index", "calls", "decisions", "fingerprint", "message", "slots")

    def __init__(
        self,
        answer_index: int,
        message: AssistantMessage,
        calls: list[ToolCall],
        decisions: dict[str, ApprovalDecision],
        slots: dict[str, int],
        fingerprint: Fingerprint,
    ) -> None:
        self.answer_index = answer_index
        self.message = message
        self.calls = calls
        self.decisions = decisions
        self.slots = slots
        self.fingerprint = fingerprint

    def commit(self, messages: list[Any], results: list[ToolResultMessage]) -> list[Any]:
        """Put each result in its placeholder's place; return all the turn's results, in
        source order."""
        slots = self.slots
        for result in results:
            messages[slots[result.tool_call_id]] = result
        end = self.answer_index + 1
        while end < len(messages) and getattr(messages[end], "role", None) == "toolResult":
            end += 1
        return list(messages[self.answer_index + 1 : end])


def paused_answer(messages: Sequence[Any]) -> int | None:
    """The index of the paused answer: the last assistant message, when only tool results
    follow it and one of them is a placeholder."""
    index = len(messages)
    while index and getattr(messages[index - 1], "role", None) == "toolResult":
        index -= 1
    if index == len(messages) or not index:
        return None
    if getattr(messages[index - 1], "role", None) != "assistant":
        return None
    if not any(placeholder_status(m) is not None for m in messages[index:]):
        return None
    return index - 1


def _calls(message: Any) -> list[ToolCall]:
    return [b for b in message.content if isinstance(b, ToolCall)]


def pending_approvals(messages: Sequence[Any]) -> tuple[PendingApproval, ...]:
    """The calls of the transcript's paused turn that wait for a decision (none when the
    transcript does not end with a paused turn)."""
    answer = paused_answer(messages)
    if answer is None:
        return ()
    calls = {c.id: c for c in _calls(messages[answer])}
    pending = []
    for message in messages[answer + 1 :]:
        status = placeholder_status(message)
        call = calls.get(message.tool_call_id)
        if status is not None and status[0] == PENDING and call is not None:
            pending.append(
                PendingApproval(tool_call_id=call.id, tool_name=call.name, arguments=call.arguments)
            )
    return tuple(pending)


def _roles(messages: Sequence[Any]) -> str:
    return ", ".join(str(getattr(m, "role", type(m).__name__)) for m in messages)


def _no_paused_turn(messages: Sequence[Any]) -> ResumeError:
    """Why there is nothing to resume: a placeholder further back means the transcript
    went on after a pause."""
    for index in range(len(messages) - 1, -1, -1):
        found = placeholder_status(messages[index])
        if found is not None and found[0] == PENDING:
            after = index + 1
            while after < len(messages) and messages[after].role == "toolResult":
                after += 1
            added = messages[after:]
            return TranscriptChangedError(
                f"the transcript changed since the run paused: {len(added)} message(s) "
                f"({_roles(added)}) were added after the paused turn, whose calls are no "
                "longer the last thing in the conversation; a resume continues that turn, "
                "so remove the messages added after it to resume, or go on with prompt()"
            )
    return ResumeError(f"no tool call is waiting for approval; {_RESUME_HINT}")


def _check_block(answer: int, messages: Sequence[Any], calls: list[ToolCall]) -> None:
    """Every call of the paused answer has exactly one result after it."""
    seen: dict[str, int] = {}
    ids = {c.id for c in calls}
    for message in messages[answer + 1 :]:
        call_id = message.tool_call_id
        if call_id not in ids:
            raise TranscriptChangedError(
                f"the transcript changed since the run paused: a result for call "
                f"{call_id!r} follows the paused answer (message {answer}), which made no "
                "such call"
            )
        seen[call_id] = seen.get(call_id, 0) + 1
    for call in calls:
        count = seen.get(call.id, 0)
        if count != 1:
            what = "has no result" if not count else f"has {count} results"
            raise TranscriptChangedError(
                f"the transcript changed since the run paused: call {call.id!r} "
                f"({call.name}) of the paused answer {what}; the pause left exactly one"
            )


def _check_fingerprint(answer: int, messages: Sequence[Any], placeholders: list[Any]) -> None:
    prints = {found[1] for found in placeholders}
    if len(prints) != 1:
        raise TranscriptChangedError(
            "the transcript changed since the run paused: the placeholders of the paused "
            "turn come from different pauses"
        )
    (fingerprint,) = prints
    if digest([messages[answer]]) != fingerprint.answer:
        raise TranscriptChangedError(
            f"the transcript changed since the run paused: the paused answer (message "
            f"{answer}, whose tool calls wait) was edited"
        )


def _check_decisions(
    approvals: Mapping[str, Any], pending: dict[str, ToolCall]
) -> dict[str, ApprovalDecision]:
    if not isinstance(approvals, Mapping):
        raise TypeError(
            "resume(approvals=...) takes a dict from call id to approve(), deny(reason) or "
            f"edit(arguments), got {approvals!r}"
        )
    listed = ", ".join(f"{c.id!r} ({c.name})" for c in pending.values())
    unknown = [k for k in approvals if k not in pending]
    if unknown:
        raise ResumeError(
            f"resume(approvals=...) names {', '.join(map(repr, unknown))}, which is not "
            f"waiting for approval; the pending calls are {listed}"
        )
    missing = [c for c in pending if c not in approvals]
    if missing:
        raise ResumeError(
            f"resume(approvals=...) has no decision for {', '.join(map(repr, missing))}; "
            f"give every pending call ({listed}) approve(), deny(reason) or edit(arguments)"
        )
    decisions: dict[str, ApprovalDecision] = {}
    for call_id, decision in approvals.items():
        if not isinstance(decision, ApprovalDecision):
            raise TypeError(
                f"resume(approvals=...): the decision for {call_id!r} is {decision!r}; use "
                "approve(), deny(reason) or edit(arguments) from pi_trio.agent"
            )
        decisions[call_id] = decision
    return decisions


def plan_resume(messages: Sequence[Any], approvals: Mapping[str, Any]) -> ResumePlan:
    """The plan of a resume of ``messages`` with ``approvals``; raises ``ResumeError``
    (``TranscriptChangedError``) when it cannot resume, naming why."""
    answer = paused_answer(messages)
    if answer is None:
        raise _no_paused_turn(messages)
    message = messages[answer]
    calls = _calls(message)
    _check_block(answer, messages, calls)
    slots: dict[str, int] = {}
    statuses: dict[str, str] = {}
    placeholders = []
    for index in range(answer + 1, len(messages)):
        found = placeholder_status(messages[index])
        if found is not None:
            slots[messages[index].tool_call_id] = index
            statuses[messages[index].tool_call_id] = found[0]
            placeholders.append(found)
    _check_fingerprint(answer, messages, placeholders)
    pending = {c.id: c for c in calls if statuses.get(c.id) == PENDING}
    decisions = _check_decisions(approvals, pending)
    run: list[ToolCall] = []
    for call in calls:
        if call.id not in slots:
            continue
        decision = decisions.get(call.id)
        if decision is not None and decision.action == "edit":
            call = msgspec.structs.replace(call, arguments=decision.arguments, arguments_error=None)
        run.append(call)
    return ResumePlan(answer, message, run, decisions, slots, placeholders[0][1])


async def check_edits(plan: ResumePlan, tools: Sequence[Any]) -> None:
    """An edit's arguments must be what the tool takes (its ``prepare_arguments`` and
    schema): a mistake of the approver is a ``ResumeError`` before the run, not a failed
    call the model sees."""
    for call in plan.calls:
        decision = plan.decisions.get(call.id)
        if decision is None or decision.action != "edit":
            continue
        checked = await prepare_call(call, tools)
        if not isinstance(checked, PreparedCall):
            content = checked.result.content
            text = content[0].text if content and content[0].type == "text" else ""
            raise ResumeError(
                f"edit(...) for call {call.id!r} ({call.name}): {text}; give arguments the "
                "tool's schema takes"
            )
