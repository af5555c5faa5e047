"""What a fan-out runs and what it returns: ``AgentJob`` and ``JobResult``.

Both travel between processes (pickled by Ray), so a job holds only what pickles: the
prompt, and either the ``Agent`` keyword arguments (model, tools, stream function,
settings) or a factory that builds the agent in the worker. A result holds the transcript
as pi JSON text.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..agent import Agent, AgentMessage
from ..ai import Message, messages_from_json

__all__ = ["STATUSES", "AgentJob", "JobResult"]

STATUSES = (
    "stop",  # the run ended normally (any other final stop reason is reported as is)
    "error",  # the provider failed: the last assistant message has stop_reason "error"
    "aborted",  # the harness was cancelled while the job ran: the abort contract's transcript
    "deadline",  # the job's own deadline passed: the same consistent transcript
    "failed",  # building the agent or running it raised; ``error`` says what
    "cancelled",  # the harness was cancelled before the job started: no transcript
)


@dataclass(frozen=True)
class AgentJob:
    """One agent run: ``prompt`` (a ``str`` or messages) for the agent that ``agent``
    describes, either ``Agent`` keyword arguments or a zero-argument factory called in the
    worker (use ``functools.partial`` for arguments). ``deadline`` (seconds) ends the run
    like an external cancellation."""

    id: Hashable
    prompt: str | AgentMessage | Sequence[AgentMessage]
    agent: Mapping[str, Any] | Callable[[], Agent]
    deadline: float | None = None

    def build(self) -> Agent:
        spec = self.agent
        if isinstance(spec, Mapping):
            return Agent(**spec)
        agent = spec()
        if not isinstance(agent, Agent):
            raise TypeError(
                f"job {self.id!r}: its agent factory must return an Agent, got {agent!r}"
            )
        return agent


@dataclass(frozen=True)
class JobResult:
    """How a job ended (``status``, one of ``STATUSES`` or a final stop reason), its
    whole transcript as pi JSON (``transcript``; ``"[]"`` when it never started), the
    failure text if any, the seconds it ran and the shard that ran it."""

    id: Hashable
    status: str
    transcript: str
    error: str | None = None
    seconds: float = 0.0
    shard: int = 0

    def messages(self) -> list[Message]:
        """The transcript, decoded."""
        return messages_from_json(self.transcript)
