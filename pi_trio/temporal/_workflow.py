"""The workflow of a Temporal agent: the agent loop itself, deterministic, with every model
request and tool call an activity.

The workflow builds the agent with the factory and runs the prompt in Temporal's
workflow event loop (unsandboxed: the loop is pi_trio's own code, deterministic given the
recorded activity results; the hooks run here too and must be deterministic). Its stream
function and its tools are replaced by activity calls; what the activities return is
recorded, so a worker that replays the history (after a crash, or after evicting the
workflow from its cache) takes the same decisions without calling the model or a tool.

Run limits and model fallback belong to the agent loop, which runs here: both are
decided from recorded data (the failed message, the usage of the responses and results),
so they hold across replays by construction (``tests/test_temporal.py`` replays a
fallback and a limit from a history with no workflow cache). A decision taken from the
wall clock would have to use ``workflow.now()``.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

from ..agent import Agent, AgentTool
from ..ai import (
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    from_json,
    messages_from_json,
    to_json,
)
from ..ai.providers import replay_events
from ._activities import (
    CANCELLED_REASON,
    DELIVER_ACTIVITY,
    MODEL_ACTIVITY,
    TOOL_ACTIVITY,
    Recorded,
)
from ._codec import (
    Carried,
    DeliverRequest,
    ModelRequest,
    QueuedMessage,
    ToolRequest,
    decode,
    encode,
    encode_options,
    event_json,
)
from ._core import AgentCore
from ._result import RunInput, encode_outcome

__all__ = ["QUEUE_SIGNAL", "Execution", "ToolCallFailed", "build_workflow"]

# The signal that queues a steering or follow-up message on a run.
QUEUE_SIGNAL = "pi_trio.queue"

_MESSAGE_EVENTS = frozenset(("message_start", "message_update", "message_end"))


async def _activity_result(call: workflow.ActivityHandle[str]) -> str:
    """The activity's result. When the run is aborted meanwhile (anyio cancels this
    task), the activity is asked once to stop and the cancellation goes on at once.

    Awaiting the handle itself would not do: the SDK keeps a cancelled handle waiting
    until the server answers, which happens only after the workflow yields, while anyio
    cancels the waiting task again on every turn of the event loop: the workflow would
    never yield."""
    try:
        return await asyncio.shield(call)
    except asyncio.CancelledError:
        call.cancel()
        call.add_done_callback(_retrieve)
        raise


def _retrieve(call: asyncio.Future[Any]) -> None:
    """An abandoned activity's outcome, taken so that asyncio does not report it."""
    if not call.cancelled():
        call.exception()


class ToolCallFailed(Exception):
    """A recorded tool failure, raised again so the agent reports it as it did then."""


class Execution:
    """One execution of a run's workflow: the agent, the events not delivered yet, and
    how a cancellation becomes the agent's abort."""

    def __init__(self, owner: AgentCore, run: RunInput) -> None:
        self.owner = owner
        info = workflow.info()
        self.key = f"{info.workflow_id}/{info.run_id}"
        self.run_input = run
        self.agent = agent = owner.factory()
        if not isinstance(agent, Agent):
            raise ApplicationError(
                f"the factory of TemporalAgent {owner.name!r} must return an Agent, got {agent!r}",
                non_retryable=True,
            )
        if run.history is not None:
            history = messages_from_json(bytes(run.history))
            if history and getattr(history[0], "role", None) != "system":
                head = [m for m in agent.state.messages[:1] if m.role == "system"]
                history = [*head, *history]
            agent.state.messages = history
        agent.stream_fn = self._stream
        agent.state.tools = [self._tool(t) for t in agent.state.tools]
        # keys are the worker's business: the model activity asks its own agent
        agent.hooks = msgspec.structs.replace(agent.hooks, get_api_key=None)
        agent.subscribe(self._collect)
        self.pending: list[Carried] = []
        # replaying a run whose events this process delivered (its cache evicted it):
        # nothing to deliver again, not even to listeners of replays
        self.delivered_here = self.key in owner.live_runs
        self.streamed = False  # the agent re-sends an answer the model activity delivered
        self.model_call: workflow.ActivityHandle[str] | None = None
        self.cancelled = False

    # ------------------------------------------------------------------ events

    def _collect(self, event: Any) -> None:
        """The workflow agent's listener: keep each event for the next activity."""
        replaying = workflow.unsafe.is_replaying()
        if self.streamed and event.type in _MESSAGE_EVENTS:
            if event.type == "message_end":
                self.streamed = False
            if not replaying:
                return  # the model activity delivered it
        if replaying:
            if self.delivered_here:
                return
        else:
            self.owner.live_runs.add(self.key)
        self.pending.append(Carried(replaying, event_json(event)))

    def take_events(self) -> list[Carried]:
        """The events for the activity about to be scheduled. While replaying, that
        activity is in the history already (it will not run again): the events stay
        here for the first activity that runs."""
        if workflow.unsafe.is_replaying():
            return []
        events, self.pending = self.pending, []
        return events

    def _options(self, name: str) -> dict[str, Any]:
        owner = self.owner
        return {
            "activity": f"{name}:{owner.name}",
            "start_to_close_timeout": owner.activity_timeout,
            "heartbeat_timeout": owner.heartbeat_timeout,
            "retry_policy": owner.retry_policy,
        }

    # ------------------------------------------------------------------ requests, tools

    async def _stream(
        self, model: Model, context: Context, options: StreamOptions, send: Any
    ) -> None:
        request = ModelRequest(
            events=self.take_events(),
            model=event_json(model),
            context=msgspec.Raw(to_json(context)),
            options=encode_options(options),
            thinking_level=options.reasoning or "off",
        )
        call: workflow.ActivityHandle[str] = workflow.start_activity(
            args=[encode(request)],
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
            **self._options(MODEL_ACTIVITY),
        )
        self.model_call = call
        try:
            raw = await _activity_result(call)
        except ActivityError as exc:
            if self.cancelled and is_cancelled_exception(exc):
                await self._abort_now()
            raise RuntimeError(
                f"the model request activity of TemporalAgent {self.owner.name!r} failed: "
                f"{exc.cause or exc}"
            ) from exc
        finally:
            self.model_call = None
        message = from_json(raw, AssistantMessage)
        self.streamed = True
        for event in replay_events(message, model):
            await send.send(event)

    def _tool(self, tool: AgentTool) -> AgentTool:
        name = tool.name
        options = self._options(TOOL_ACTIVITY)

        async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            request = ToolRequest(
                events=self.take_events(),
                tool_call_id=tool_call_id,
                tool_name=name,
                params=msgspec.Raw(msgspec.json.encode(params)),
            )
            call: workflow.ActivityHandle[str] = workflow.start_activity(
                args=[encode(request)],
                cancellation_type=workflow.ActivityCancellationType.TRY_CANCEL,
                **options,
            )
            try:
                raw = await _activity_result(call)
            except ActivityError as exc:
                if signal.aborted and is_cancelled_exception(exc):
                    await self._abort_now()
                raise ToolCallFailed(
                    f"Tool {name} failed in its activity: {exc.cause or exc}"
                ) from exc
            recorded = decode(raw, Recorded)
            if recorded.failure is not None:
                raise ToolCallFailed(recorded.failure)
            return recorded.result

        # every other field as the tool has it; its timeout applies in the activity
        wrapped = copy.copy(tool)
        wrapped.execute = execute
        wrapped.timeout = None
        return wrapped

    async def _abort_now(self) -> None:
        """Abort the agent and take the abort's cancellation here: the agent writes the
        outcome (``Operation aborted``, the aborted answer)."""
        self.agent.abort(CANCELLED_REASON)
        while True:
            await anyio.lowlevel.checkpoint()

    # ------------------------------------------------------------------ the run

    def queue(self, item: QueuedMessage) -> None:
        message = from_json(bytes(item.message))
        if item.queue == "steer":
            self.agent.steer(message)
        else:
            self.agent.follow_up(message)

    def cancel(self) -> None:
        """The workflow was cancelled: abort the run with the abort contract. While the
        model streams, its activity is asked to stop and returns the partial answer,
        which ends the run as aborted; otherwise the agent is aborted at once."""
        self.cancelled = True
        if self.model_call is not None and not self.model_call.done():
            self.model_call.cancel()
        else:
            self.agent.abort(CANCELLED_REASON)

    async def run(self) -> str:
        """The run, with Temporal's cancellation of this task turned into ``cancel()``:
        the run ends with the abort contract's outcome, which becomes the result."""
        inner = asyncio.ensure_future(self._run())
        while True:
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                if inner.done():
                    return inner.result()
                if inner.cancelling():  # the worker evicts the workflow: no outcome
                    raise
                self.cancel()
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()

    async def _run(self) -> str:
        agent = self.agent
        before = len(agent.state.messages)
        await agent.prompt(messages_from_json(bytes(self.run_input.prompts)))
        # the run's last events; messages sent meanwhile join ``queued``
        await workflow.execute_activity(
            args=[encode(DeliverRequest(events=self.take_events()))],
            **self._options(DELIVER_ACTIVITY),
        )
        # (not when the worker evicts the workflow: it may replay it here again)
        self.owner.live_runs.discard(self.key)
        queued = agent.take_queued_messages(lambda _: True)
        return encode_outcome(agent, len(agent.state.messages) - before, queued, self.cancelled)


def build_workflow(owner: AgentCore) -> type[Any]:
    """The workflow class of ``owner`` (named ``pi_trio.agent:<name>``).

    Temporal refuses workflow classes defined inside a function, because its sandbox
    re-imports a workflow's class by name. This workflow runs unsandboxed (the agent and
    its factory live in the worker's own interpreter), so the class of each agent is made
    here, its methods named as a module-level ``AgentWorkflow``'s would be."""

    def __init__(self: Any, payload: str) -> None:
        self.execution = Execution(owner, decode(payload, RunInput))

    async def run(self: Any, payload: str) -> str:
        return await self.execution.run()  # type: ignore[no-any-return]

    def queue(self: Any, payload: str) -> None:
        self.execution.queue(decode(payload, QueuedMessage))

    for method in (__init__, run, queue):
        method.__qualname__ = f"AgentWorkflow.{method.__name__}"
    namespace = {
        "__module__": __name__,
        "__qualname__": "AgentWorkflow",
        "__doc__": f"The runs of TemporalAgent {owner.name!r}.",
        "__init__": workflow.init(__init__),
        "run": workflow.run(run),
        "queue": workflow.signal(name=QUEUE_SIGNAL)(queue),
    }
    cls = type("AgentWorkflow", (), namespace)
    return workflow.defn(name=owner.workflow_name, sandboxed=False)(cls)
