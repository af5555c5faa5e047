"""What a Temporal run starts with and ends with: ``RunInput``, the outcome the workflow
returns, ``TemporalResult``, and the ``TemporalRun`` handle."""

from __future__ import annotations

from typing import Any

import msgspec
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from ..agent import Agent, AgentMessage
from ..ai import TextContent, UserMessage, messages_from_json, messages_to_json, to_json
from ..ai.providers import now_ms
from ._codec import QueuedMessage, encode

__all__ = [
    "RunInput",
    "TemporalResult",
    "TemporalRun",
    "decode_outcome",
    "encode_outcome",
    "queued_message",
]


class RunInput(msgspec.Struct, rename="camel", omit_defaults=True):
    """The workflow's input: the prompt messages and, optionally, the conversation so
    far (pi JSON)."""

    prompts: msgspec.Raw
    history: msgspec.Raw | None = None


class TemporalResult:
    """The end of a Temporal run: the whole transcript (``messages``), the messages the
    run added (``new_messages``), steering or follow-up messages it took but did not
    deliver (``queued``: the run ended first), and whether the workflow was
    ``cancelled`` (the run was then aborted: its transcript is the aborted one)."""

    __slots__ = ("cancelled", "messages", "new_messages", "queued", "workflow_id")

    def __init__(
        self,
        workflow_id: str,
        messages: list[AgentMessage],
        new_messages: list[AgentMessage],
        queued: list[AgentMessage],
        cancelled: bool,
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
            f"<TemporalResult {self.workflow_id!r} messages={len(self.messages)} "
            f"stop_reason={self.stop_reason!r} cancelled={self.cancelled}>"
        )


class _Outcome(msgspec.Struct, rename="camel"):
    messages: msgspec.Raw
    new_count: int
    queued: msgspec.Raw
    cancelled: bool


def encode_outcome(agent: Agent, new_count: int, queued: list[Any], cancelled: bool) -> str:
    outcome = _Outcome(
        msgspec.Raw(messages_to_json(agent.state.messages)),
        new_count,
        msgspec.Raw(messages_to_json(queued)),
        cancelled,
    )
    return encode(outcome)


def decode_outcome(workflow_id: str, raw: str) -> TemporalResult:
    outcome = msgspec.json.decode(raw, type=_Outcome)
    messages: list[Any] = messages_from_json(bytes(outcome.messages))
    new = messages[len(messages) - outcome.new_count :] if outcome.new_count else []
    queued: list[Any] = messages_from_json(bytes(outcome.queued))
    return TemporalResult(workflow_id, messages, new, queued, outcome.cancelled)


def queued_message(queue: str, message: Any) -> str:
    """The payload of the queue signal for ``message`` (an agent message)."""
    return encode(QueuedMessage(queue, msgspec.Raw(to_json(message))))  # type: ignore[arg-type]


class TemporalRun:
    """A handle on one Temporal run (its workflow), from ``TemporalAgent.start`` or
    ``TemporalAgent.get_run``; it works from any process with a Temporal client."""

    def __init__(self, handle: WorkflowHandle[Any, str], signal_name: str) -> None:
        self.handle = handle
        self.workflow_id = handle.id
        self._signal = signal_name

    async def result(self) -> TemporalResult:
        """Wait for the run to end and return its result (also when it was cancelled:
        the aborted transcript, ``cancelled=True``)."""
        return decode_outcome(self.workflow_id, await self.handle.result())

    async def steer(self, message: str | AgentMessage) -> None:
        """Queue a steering message (a ``str`` is a user message) as a Temporal signal:
        recorded in the history, it reaches the run after its current turn, also across
        a crash."""
        await self.handle.signal(self._signal, queued_message("steer", _as_message(message)))

    async def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a follow-up message: delivered when the run would otherwise stop."""
        await self.handle.signal(self._signal, queued_message("followUp", _as_message(message)))

    async def cancel(self) -> None:
        """Cancel the workflow: the run is aborted with the abort contract (the aborted
        answer or ``Operation aborted`` results, ``turn_end``, ``agent_end``) and the
        aborted transcript becomes its result."""
        await self.handle.cancel()

    async def status(self) -> WorkflowExecutionStatus | None:
        """The workflow's status (``RUNNING``, ``COMPLETED``, ...)."""
        return (await self.handle.describe()).status

    def __repr__(self) -> str:
        return f"<TemporalRun {self.workflow_id!r}>"


def _as_message(message: Any) -> Any:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)], timestamp=now_ms())
    return message
