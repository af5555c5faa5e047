"""``TemporalAgent``: agent runs as Temporal workflows that survive a worker's death.

The workflow runs the agent loop (deterministic: the loop's own decisions); each model
request and each tool call is an activity whose result Temporal records. A worker that
dies halfway is replaced by another, which replays the history: recorded requests are
answered from it (the model is not called), recorded tool results are reused (the tool
does not run), and the run goes on from where it was.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import msgspec
from temporalio.client import Client
from temporalio.common import RetryPolicy, WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.worker import Worker

from ..agent import Agent, AgentMessage
from ..ai import ImageContent, TextContent, UserMessage, messages_to_json
from ..ai.providers import now_ms
from ._activities import build_activities
from ._codec import encode
from ._core import AgentCore
from ._result import RunInput, TemporalResult, TemporalRun
from ._workflow import QUEUE_SIGNAL, build_workflow

__all__ = ["TemporalAgent"]

DEFAULT_TASK_QUEUE = "pi-trio"


def _prompt_messages(
    prompt: str | AgentMessage | Sequence[AgentMessage], images: Sequence[ImageContent] | None
) -> list[Any]:
    if isinstance(prompt, str):
        content: list[TextContent | ImageContent] = [TextContent(text=prompt)]
        content.extend(images or [])
        return [UserMessage(content=content, timestamp=now_ms())]
    if isinstance(prompt, (list, tuple)):
        return list(prompt)
    return [prompt]


class TemporalAgent:
    """Agent runs that survive a worker's death, as Temporal workflows.

    ``factory()`` builds the ``Agent`` (model, tools, stream function, hooks). The workflow
    calls it for every run, and again whenever a worker replays the run, so it must build
    the same agent; the activities call it once per process and take the stream function,
    the keys (``get_api_key``, ``stream_options``) and the tools from that agent. ``name``
    names the workflow (``pi_trio.agent:<name>``) and the activities; it must be stable
    across deployments. ``task_queue`` is where runs start and where ``worker`` polls.

    Every activity heartbeats; ``heartbeat_timeout`` is how soon a dead worker's activity
    is given to another, ``activity_timeout`` how long one attempt may run at most, and
    ``retry_policy`` (Temporal's default when ``None``) how often it is tried again.
    """

    def __init__(
        self,
        name: str,
        factory: Callable[[], Agent],
        *,
        task_queue: str = DEFAULT_TASK_QUEUE,
        activity_timeout: timedelta = timedelta(minutes=10),
        heartbeat_timeout: timedelta = timedelta(seconds=30),
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError(f"TemporalAgent needs a non-empty name, got {name!r}")
        if heartbeat_timeout <= timedelta(0) or activity_timeout <= timedelta(0):
            raise ValueError(
                f"TemporalAgent {name!r}: heartbeat_timeout and activity_timeout must be "
                f"positive, got {heartbeat_timeout!r} and {activity_timeout!r}"
            )
        self.name = name
        self.task_queue = task_queue
        self.core = AgentCore(
            name,
            factory,
            activity_timeout=activity_timeout,
            heartbeat_timeout=heartbeat_timeout,
            retry_policy=retry_policy,
        )
        self.workflow_name = self.core.workflow_name
        self.workflow = build_workflow(self.core)
        self.activities = build_activities(self.core)

    def __repr__(self) -> str:
        return f"<TemporalAgent {self.name!r}>"

    # ------------------------------------------------------------------ listeners, worker

    def subscribe(
        self, listener: Callable[..., Any], *, replayed: bool = False
    ) -> Callable[[], None]:
        """Call ``listener(event)`` or ``listener(event, info)`` (a
        ``TemporalEventInfo``) for the events of every run whose activities run in this
        process. By default each event once at most (an event carried by an activity that
        a dying worker had started is not delivered again); ``replayed=True`` also
        delivers, when another worker resumes a run, the events of its recorded part
        again (marked ``info.replayed``), so a reconnecting UI rebuilds the whole run."""
        return self.core.listeners.subscribe(listener, replayed)

    def worker(self, client: Client, **options: Any) -> Worker:
        """A Temporal ``Worker`` on ``task_queue`` running this agent's workflow and
        activities (``options`` go to ``Worker``; to run several agents in one worker,
        give it their ``workflow`` and ``activities`` yourself)."""
        options.setdefault("task_queue", self.task_queue)
        return Worker(client, workflows=[self.workflow], activities=self.activities, **options)

    # ------------------------------------------------------------------ runs

    async def start(
        self,
        client: Client,
        prompt: str | AgentMessage | Sequence[AgentMessage],
        *,
        images: Sequence[ImageContent] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        workflow_id: str | None = None,
    ) -> TemporalRun:
        """Start a run on ``prompt`` and return its handle. ``messages`` is the
        conversation so far (e.g. an earlier result's ``messages``); without it the run
        starts from the factory's agent. Starting a ``workflow_id`` that exists, running
        or finished, returns that run instead of starting another."""
        run_input = RunInput(
            prompts=msgspec.Raw(messages_to_json(_prompt_messages(prompt, images))),
            history=None if messages is None else msgspec.Raw(messages_to_json(list(messages))),
        )
        workflow_id = workflow_id or f"{self.name}-{uuid.uuid4()}"
        try:
            handle = await client.start_workflow(
                self.workflow_name,
                encode(run_input),
                id=workflow_id,
                task_queue=self.task_queue,
                result_type=str,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )
        except WorkflowAlreadyStartedError:
            return self.get_run(client, workflow_id)
        return TemporalRun(handle, QUEUE_SIGNAL)

    async def run(
        self,
        client: Client,
        prompt: str | AgentMessage | Sequence[AgentMessage],
        *,
        images: Sequence[ImageContent] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        workflow_id: str | None = None,
    ) -> TemporalResult:
        """``start`` and wait for the result."""
        run = await self.start(
            client, prompt, images=images, messages=messages, workflow_id=workflow_id
        )
        return await run.result()

    def get_run(self, client: Client, workflow_id: str) -> TemporalRun:
        """The handle of an existing run."""
        return TemporalRun(client.get_workflow_handle(workflow_id, result_type=str), QUEUE_SIGNAL)
