"""What ``Agent.prompt()`` / ``continue_()`` return: the run's new messages and how it ended.

A failed request is data in the event stream (an assistant message with
``stop_reason="error"``), so a run never raises for it; ``RunResult.raise_for_error()``
turns such an ending into an exception for callers who want one, as httpx's
``raise_for_status()`` does for a response::

    result = await agent.prompt("Summarize the report.")
    print(result.raise_for_error().text)

A run asked for a typed output (``output_type=``) carries it as ``result.output``, a
``RunResult[T]`` for ``prompt(..., output_type=T)``. A run that paused because a tool call
waits for approval says so in ``status`` (``"approval_pending"``) and lists the calls in
``pending_approvals``; ``agent.resume(approvals={...})`` continues it.
"""

from __future__ import annotations

from typing import Any, Final, Generic, Literal, TypeAlias, TypeVar

from ..ai import AssistantMessage, PiError, Usage
from ._approval import PendingApproval
from ._limits import run_limit_details
from ._types import AgentMessage
from ._usage import usage_of

__all__ = [
    "ABORTED_BETWEEN_TURNS",
    "NO_OUTPUT",
    "ApprovalPendingError",
    "RunStatus",
    "OutputValidationError",
    "RunAbortedError",
    "RunError",
    "RunLimitExceeded",
    "RunResult",
]

T = TypeVar("T")

_NOT_ASKED = (
    "this run was not asked for a typed output: pass output_type=... to prompt(), "
    "continue_() or Agent()"
)


class _NoOutput:
    def __repr__(self) -> str:
        return "NO_OUTPUT"


NO_OUTPUT: Final = _NoOutput()
"""The output of a run that has none (yet)."""

# The text of a run aborted after its last response (between turns, or before the first
# request): no assistant message says how it ended, so the run does.
ABORTED_BETWEEN_TURNS: Final = "The run was aborted before its final answer"


class RunError(PiError):
    """The run ended with an error (``stop_reason="error"``); ``result`` is the run."""

    def __init__(self, message: str, result: RunResult[Any]) -> None:
        super().__init__(message)
        self.result = result


class RunAbortedError(RunError):
    """The run was aborted (``stop_reason="aborted"``); ``result`` is the run."""


class ApprovalPendingError(RunError):
    """The run paused: tool calls wait for approval (``result.pending_approvals``), so
    there is no final answer yet; ``agent.resume(approvals={...})`` continues it."""


RunStatus: TypeAlias = Literal["completed", "approval_pending", "aborted", "error"]


class RunLimitExceeded(RunAbortedError):
    """The run was stopped by one of its ``RunLimits``: ``limit`` names it
    (``"max_cost"``), ``maximum`` is its value and ``spent`` what the run had counted
    when it stopped; ``result`` is the run. An abort of a kind: ``except
    RunAbortedError`` catches it too."""

    def __init__(
        self,
        message: str,
        result: RunResult[Any],
        *,
        limit: str,
        maximum: float,
        spent: float,
    ) -> None:
        super().__init__(message, result)
        self.limit = limit
        self.maximum = maximum
        self.spent = spent


class OutputValidationError(RunError):
    """The run was asked for a typed output and has none: the model's answers did not
    validate within the retries (the message has the last error, naming the field), or
    the run ended before a final answer. ``result`` is the run."""


class RunResult(Generic[T]):
    """The messages a run added to the transcript (``agent_end.messages``) and how it
    ended: ``final`` is its last assistant message, ``stop_reason`` and
    ``error_message`` are that message's, ``ok`` is false when it ended in ``error`` or
    ``aborted``, paused for approval, or has no typed output although one was asked for
    (``output_type``). ``output`` is that typed output. A run aborted after a response
    was complete (while its tool results came in, or before the first request) ends
    without an assistant message of its own: its ``stop_reason`` is ``"aborted"`` all the
    same. ``pending_approvals`` are the tool calls the run paused for (``status``)."""

    __slots__ = (
        "_aborted",
        "_output",
        "_output_error",
        "_spent",
        "messages",
        "output_type",
        "pending_approvals",
    )

    def __init__(
        self,
        messages: list[AgentMessage],
        *,
        output_type: Any = None,
        output: Any = NO_OUTPUT,
        output_error: str | None = None,
        aborted: bool = False,
        spent: Usage | None = None,
        pending_approvals: tuple[PendingApproval, ...] = (),
    ) -> None:
        self.messages = messages
        self._spent = spent  # what the run spent outside its messages (summaries)
        self.pending_approvals = pending_approvals
        self.output_type = output_type
        self._output = output
        self._output_error = output_error
        # ``aborted``: the run's signal was aborted; it matters only when the run's last
        # message is not an assistant message (else that message tells how it ended)
        self._aborted = aborted and not (messages and isinstance(messages[-1], AssistantMessage))

    @property
    def output(self) -> T:
        """The run's answer as ``output_type``. Raises what ``raise_for_error()`` raises
        when the run failed (``OutputValidationError`` when the answer never validated),
        and ``RuntimeError`` when no output type was asked for."""
        if self.output_type is None:
            raise RuntimeError(_NOT_ASKED)
        self.raise_for_error()
        output: T = self._output
        return output

    @property
    def usage(self) -> Usage:
        """What the run spent: its responses' usage and cost, its tools' own (a
        sub-agent's, as its result's ``usage``) and its compactions' summary requests."""
        return usage_of(self.messages, self._spent)

    @property
    def final(self) -> AssistantMessage | None:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None

    @property
    def stop_reason(self) -> str | None:
        if self._aborted:
            return "aborted"
        final = self.final
        return final.stop_reason if final is not None else None

    @property
    def error_message(self) -> str | None:
        if self._aborted:
            return ABORTED_BETWEEN_TURNS
        final = self.final
        return final.error_message if final is not None else None

    @property
    def status(self) -> RunStatus:
        """How the run ended: ``"completed"``, ``"approval_pending"`` (paused: tool calls
        wait for approval), ``"aborted"`` or ``"error"``."""
        reason = self.stop_reason
        if reason == "aborted":
            return "aborted"
        if reason == "error":
            return "error"
        return "approval_pending" if self.pending_approvals else "completed"

    @property
    def ok(self) -> bool:
        if self.stop_reason in ("error", "aborted") or self.pending_approvals:
            return False
        return self.output_type is None or self._output is not NO_OUTPUT

    @property
    def text(self) -> str:
        """The text of the final assistant message (its text blocks joined)."""
        final = self.final
        if final is None:
            return ""
        return "".join(block.text for block in final.content if block.type == "text")

    def raise_for_error(self) -> RunResult[T]:
        """Return the result, or raise ``RunError`` (``RunAbortedError`` for an abort,
        ``RunLimitExceeded`` for a run a ``RunLimits`` stopped) whose message is the
        run's ``error_message``, ``ApprovalPendingError`` when the run paused for
        approval, or ``OutputValidationError`` when a typed output was asked for and the
        run has none."""
        reason = self.stop_reason
        if reason == "aborted":
            text = self.error_message or "The run was aborted"
            details = None if self._aborted else run_limit_details(self.final)
            if details is not None:
                raise RunLimitExceeded(
                    text,
                    self,
                    limit=str(details.get("limit", "")),
                    maximum=details.get("maximum", 0),
                    spent=details.get("spent", 0),
                )
            raise RunAbortedError(text, self)
        if reason == "error":
            raise RunError(self.error_message or "The run failed", self)
        if self.pending_approvals:
            calls = ", ".join(f"{p.tool_name} ({p.tool_call_id})" for p in self.pending_approvals)
            raise ApprovalPendingError(
                f"The run paused: {len(self.pending_approvals)} tool call(s) wait for "
                f"approval: {calls}; continue it with agent.resume(approvals={{call_id: "
                "approve() | deny(reason) | edit(arguments)}})",
                self,
            )
        if self.output_type is not None and self._output is NO_OUTPUT:
            raise OutputValidationError(
                self._output_error or "The run ended without a typed output", self
            )
        return self

    def __repr__(self) -> str:
        output = ""
        if self.output_type is not None:
            output = f", output={self._output!r}"
            if self._output_error is not None:
                output += f", output_error={self._output_error!r}"
        pending = self.pending_approvals
        return (
            f"<RunResult {len(self.messages)} messages, stop_reason={self.stop_reason!r}"
            + (f", {len(pending)} pending approval(s)" if pending else "")
            + (f", error_message={self.error_message!r}" if self.error_message else "")
            + output
            + ">"
        )

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, RunResult)
            and other.messages == self.messages
            and other.stop_reason == self.stop_reason
            and other.output_type == self.output_type
            and other._output == self._output
            and other.pending_approvals == self.pending_approvals
        )

    __hash__ = None  # type: ignore[assignment]
