"""What ``Agent.prompt()`` / ``continue_()`` return: the run's new messages and how it ended.

A failed request is data in the event stream (an assistant message with
``stop_reason="error"``), so a run never raises for it; ``RunResult.raise_for_error()``
turns such an ending into an exception for callers who want one, as httpx's
``raise_for_status()`` does for a response::

    result = await agent.prompt("Summarize the report.")
    print(result.raise_for_error().text)
"""

from __future__ import annotations

from typing import Any

from ..ai import AssistantMessage
from ..ai._errors import PiError
from ._types import AgentMessage

__all__ = ["ABORTED_BETWEEN_TURNS", "RunAbortedError", "RunError", "RunResult"]


class RunError(PiError):
    """The run ended with an error (``stop_reason="error"``); ``result`` is the run."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


class RunAbortedError(RunError):
    """The run was aborted (``stop_reason="aborted"``); ``result`` is the run."""


# The stop reason and text of a run aborted after its last response (between turns, or
# before the first request): no assistant message says so, the run does.
ABORTED_BETWEEN_TURNS = "The run was aborted before its final answer"


class RunResult:
    """The messages a run added to the transcript (``agent_end.messages``) and how it
    ended: ``final`` is its last assistant message, ``stop_reason`` and
    ``error_message`` are that message's, ``ok`` is false when it ended in ``error`` or
    ``aborted``. A run aborted after a response was complete (while its tool results came
    in, or before the first request) ends without an assistant message of its own: its
    ``stop_reason`` is ``"aborted"`` all the same."""

    __slots__ = ("_aborted", "messages")

    def __init__(self, messages: list[AgentMessage], *, aborted: bool = False) -> None:
        self.messages = messages
        # ``aborted``: the run's signal was aborted; it matters only when the run's last
        # message is not an assistant message (else that message tells how it ended)
        self._aborted = aborted and not (messages and isinstance(messages[-1], AssistantMessage))

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
    def ok(self) -> bool:
        return self.stop_reason not in ("error", "aborted")

    @property
    def text(self) -> str:
        """The text of the final assistant message (its text blocks joined)."""
        final = self.final
        if final is None:
            return ""
        return "".join(block.text for block in final.content if block.type == "text")

    def raise_for_error(self) -> RunResult:
        """Return the result, or raise ``RunError`` (``RunAbortedError`` for an abort)
        whose message is the run's ``error_message``."""
        reason = self.stop_reason
        if reason == "aborted":
            raise RunAbortedError(self.error_message or "The run was aborted", self)
        if reason == "error":
            raise RunError(self.error_message or "The run failed", self)
        return self

    def __repr__(self) -> str:
        return (
            f"<RunResult {len(self.messages)} messages, stop_reason={self.stop_reason!r}"
            + (f", error_message={self.error_message!r}" if self.error_message else "")
            + ">"
        )

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, RunResult)
            and other.messages == self.messages
            and other.stop_reason == self.stop_reason
        )

    __hash__ = None  # type: ignore[assignment]
