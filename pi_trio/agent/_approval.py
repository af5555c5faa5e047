"""Tool approval: which calls wait for a person, the decisions, and how a waiting call is
written into the transcript.

A tool asks for approval with ``needs_approval`` (``True``, or a predicate on the call's
validated arguments). When the model calls it, the call does not run: it ends the turn
with a **placeholder result**, an ordinary ``ToolResultMessage`` (``is_error=True``, a
text telling the model the call has not run, and ``details`` marking it), so the
transcript stays valid pi JSON with one result for every call. ``Agent.resume`` later
replaces each placeholder by the result of the decision (``_resume``).

Two kinds of placeholder: **pending** (the call waits for a decision) and **waiting** (a
call of a sequential batch after a pending one: it needs no decision, and runs on
resume, in order). Both carry the paused answer's fingerprint (``Fingerprint``), so a
resume can tell that the turn it continues is the one that paused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal

import msgspec

from ..ai import TextContent, ToolCall, to_json
from ._tool_call import ToolCallOutcome
from ._types import AgentToolResult

__all__ = [
    "APPROVAL_KEY",
    "PENDING",
    "WAITING",
    "ApprovalDecision",
    "ApprovalPolicy",
    "Fingerprint",
    "PendingApproval",
    "approve",
    "check_approval_policy",
    "denied_text",
    "deny",
    "digest",
    "edit",
    "edited_note",
    "is_approval_placeholder",
    "needs_approval",
    "placeholder_outcome",
    "placeholder_status",
]

APPROVAL_KEY: Final = "piTrioApproval"
"""The key of a placeholder result's ``details`` (a dict pi_trio writes; the tool never
ran, so no tool's details can be there)."""

PENDING: Final = "pending"
WAITING: Final = "waiting"

ApprovalPolicy = bool | Callable[[Any], bool | Awaitable[bool]] | None
"""A tool's ``needs_approval``: ``False``/``None`` (never), ``True`` (every call), or a
predicate called with the call's validated arguments (sync or async; it should decide from
the arguments alone, as a durable run asks it again when it replays)."""


def check_approval_policy(where: str, policy: object) -> None:
    if policy is None or isinstance(policy, bool) or callable(policy):
        return
    raise TypeError(
        f"{where}: needs_approval takes True, False or a function of the call's arguments "
        f"returning a bool (e.g. lambda args: args['amount'] > 100), got {policy!r}"
    )


async def needs_approval(
    policy: Callable[[Any], Any], args: Any, call_hook: Callable[..., Awaitable[Any]]
) -> bool:
    """Whether a call with ``args`` waits for approval under ``policy`` (a callable; the
    caller has handled ``True``). ``call_hook`` calls it as the run calls a hook."""
    answer = await call_hook(policy, args)
    if not isinstance(answer, bool):
        raise TypeError(
            f"needs_approval predicate {policy!r} returned {answer!r}; it must return True "
            "(the call waits for approval) or False"
        )
    return answer


# --------------------------------------------------------------------------- decisions


class ApprovalDecision(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    """What a person decided about a pending call: ``approve()``, ``deny(reason)`` or
    ``edit(arguments)``. JSON-serialisable (a durable run receives it as a message)."""

    action: Literal["approve", "deny", "edit"]
    reason: str | None = None
    arguments: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.action not in ("approve", "deny", "edit"):
            raise ValueError(
                f"ApprovalDecision(action=...) must be 'approve', 'deny' or 'edit'; "
                f"got {self.action!r}: use approve(), deny(reason) or edit(arguments)"
            )
        if self.action == "edit" and not isinstance(self.arguments, dict):
            raise TypeError(
                "edit(arguments) takes the call's new arguments as a dict (a JSON object), "
                f"got {self.arguments!r}"
            )
        if self.reason is not None and not isinstance(self.reason, str):
            raise TypeError(f"deny(reason) takes a str, got {self.reason!r}")


_APPROVE: Final = ApprovalDecision(action="approve")


def approve() -> ApprovalDecision:
    """Run the call as the model wrote it."""
    return _APPROVE


def deny(reason: str | None = None) -> ApprovalDecision:
    """Do not run the call; the model gets an error result with ``reason``."""
    return ApprovalDecision(action="deny", reason=reason)


def edit(arguments: dict[str, Any]) -> ApprovalDecision:
    """Run the call with ``arguments`` instead (validated against the tool's schema)."""
    return ApprovalDecision(action="edit", arguments=arguments)


def denied_text(name: str, reason: str | None) -> str:
    return reason if reason else f'Tool call "{name}" was denied by the approver.'


def edited_note(arguments: dict[str, Any]) -> TextContent:
    """Told to the model before the result of an edited call: it ran with other
    arguments than the ones it wrote."""
    return TextContent(
        text="The approver edited the arguments before the call ran; it ran with: "
        + to_json(arguments).decode()
    )


class PendingApproval(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A tool call waiting for a decision: its id, its tool and the arguments the model
    wrote."""

    tool_call_id: str
    tool_name: str
    arguments: Any


# --------------------------------------------------------------------------- placeholders


class Fingerprint(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The paused answer, as a hash of its JSON (``answer``): what a resume must find
    again. The messages before it may change (a host that compacts or redacts the history,
    a hook that replaces the context); the paused answer and its results may not."""

    answer: str

    @classmethod
    def of(cls, answer: Any) -> Fingerprint:
        return cls(answer=digest([answer]))


def digest(messages: Sequence[Any]) -> str:
    h = hashlib.blake2b(digest_size=8)
    for message in messages:
        h.update(to_json(message))
        h.update(b"\n")
    return h.hexdigest()


def placeholder_outcome(call: ToolCall, status: str, fingerprint: Fingerprint) -> ToolCallOutcome:
    """The outcome of a call that does not run now: ``pending`` (it waits for a decision)
    or ``waiting`` (a later call of a sequential batch, run on resume)."""
    if status == PENDING:
        text = f'Tool call "{call.name}" is waiting for approval; it has not run.'
    else:
        text = (
            f'Tool call "{call.name}" has not run: it runs after an earlier call of this '
            "turn is approved."
        )
    marker = {"status": status, **msgspec.to_builtins(fingerprint)}
    result = AgentToolResult(content=[TextContent(text=text)], details={APPROVAL_KEY: marker})
    return ToolCallOutcome(tool_call=call, result=result, is_error=True)


def placeholder_status(message: Any) -> tuple[str, Fingerprint] | None:
    """``(status, fingerprint)`` of a placeholder result, ``None`` for any other message."""
    if getattr(message, "role", None) != "toolResult" or not message.is_error:
        return None
    details = message.details
    if not isinstance(details, dict):
        return None
    marker = details.get(APPROVAL_KEY)
    if not isinstance(marker, dict) or marker.get("status") not in (PENDING, WAITING):
        return None
    try:
        fingerprint = msgspec.convert(
            {k: v for k, v in marker.items() if k != "status"}, Fingerprint
        )
    except msgspec.ValidationError:
        return None
    return str(marker["status"]), fingerprint


def is_approval_placeholder(message: Any) -> bool:
    """Whether ``message`` is the placeholder result of a call that waits for approval
    (or waits behind one): ``Agent.resume`` replaces it by the call's result, and a
    listener that keeps its own copy of the transcript does the same when the result of
    a call with a placeholder reaches ``message_end``."""
    return placeholder_status(message) is not None
