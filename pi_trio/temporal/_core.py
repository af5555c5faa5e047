"""``AgentCore``: what the workflow and the activities of one ``TemporalAgent`` share in a
process (its settings, its listeners, the agent the activities use)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from temporalio.common import RetryPolicy

from ..agent import Agent
from ._listeners import Listeners

__all__ = ["AgentCore"]


class AgentCore:
    """The settings and the process-wide state of one ``TemporalAgent``."""

    def __init__(
        self,
        name: str,
        factory: Callable[[], Agent],
        *,
        activity_timeout: timedelta,
        heartbeat_timeout: timedelta,
        retry_policy: RetryPolicy | None,
    ) -> None:
        self.name = name
        self.factory = factory
        self.workflow_name = f"pi_trio.agent:{name}"
        self.activity_timeout = activity_timeout
        self.heartbeat_timeout = heartbeat_timeout
        self.retry_policy = retry_policy
        self.listeners = Listeners()
        # runs whose workflow this process executed live (not by replaying its history)
        self.live_runs: set[str] = set()
        self._worker_agent: Agent | None = None

    def worker_agent(self) -> Agent:
        """The agent the activities of this process take their stream function, keys
        and tools from (built by the factory on first use)."""
        if self._worker_agent is None:
            agent = self.factory()
            if not isinstance(agent, Agent):
                raise TypeError(
                    f"the factory of TemporalAgent {self.name!r} must return an Agent, "
                    f"got {agent!r}"
                )
            self._worker_agent = agent
        return self._worker_agent
