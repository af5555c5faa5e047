"""``DurableAgent``: agent runs as DBOS workflows that survive a crash.

The workflow of a run builds the agent with the factory, makes every model request and
every tool execution a DBOS step, and runs the prompt. After a crash DBOS resumes it from
its last completed step (on ``DBOS.launch()`` in the restarted process); the recorded steps
are replayed without calling the model or running a tool, so the resumed run ends with the
transcript an uninterrupted run would have.

Besides those steps a run records one operation when it ends (``LOOK_STEP``: did anyone
send it a message after its last step?), and takes messages only when someone did.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from functools import partial
from typing import Any

import anyio
import msgspec
from dbos import DBOS, DBOSClient, SetWorkflowID, WorkflowHandleAsync
from dbos import error as dbos_error

from ..agent import (
    Agent,
    AgentMessage,
    ApprovalDecision,
    PendingApproval,
    ResumeError,
    RunResult,
)
from ..agent.extend import call_hook
from ..ai import (
    AbortSignal,
    ImageContent,
    TextContent,
    UserMessage,
    messages_from_json,
    messages_to_json,
)
from ..ai.providers import now_ms
from ._approvals import announce, send_decisions, wait_for_decisions
from ._execution import Execution
from ._listeners import Subscription, agent_listener
from ._queue import drain_into, look, send
from ._result import DurableResult, DurableRun, encode_outcome
from ._steps import durable_stream_fn, durable_tool

__all__ = ["APPROVED_STEP", "DurableAgent"]

# Step id 1 of a run: drawn and left unused (earlier versions recorded a step there that
# only told a first execution from a resumed one; ``_STARTING`` tells that now).
RUN_STEP = "pi_trio.run"
APPROVED_STEP = "pi_trio.approved"

_logger = logging.getLogger("pi_trio.durable")

# Set around ``start`` only: the workflow task it creates inherits it, so the workflow
# knows it runs for the first time. DBOS creates the tasks of resumed and forked runs
# elsewhere, where it is unset.
_STARTING: ContextVar[bool] = ContextVar("pi_trio.durable.starting", default=False)


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


def _as_message(message: Any) -> Any:
    if isinstance(message, str):
        return UserMessage(content=[TextContent(text=message)], timestamp=now_ms())
    return message


class DurableAgent:
    """Agent runs that survive a crash, as DBOS workflows.

    ``factory()`` builds the ``Agent`` for a run (model, tools, stream function, hooks);
    it is called again when a run resumes, so it must build the same agent. Create the
    ``DurableAgent`` at import time, before ``DBOS.launch()``: launching resumes the
    interrupted runs of every durable agent known by then. ``name`` names the workflow
    (``pi_trio.agent:<name>``) and must be unique and stable across deployments.
    """

    def __init__(
        self,
        name: str,
        factory: Callable[[], Agent],
        *,
        max_recovery_attempts: int | None = None,
    ) -> None:
        if not name or not isinstance(name, str):
            raise ValueError(f"DurableAgent needs a non-empty name, got {name!r}")
        self.name = name
        self.factory = factory
        self._subscriptions: tuple[Subscription, ...] = ()
        self._runs: weakref.WeakValueDictionary[str, DurableRun] = weakref.WeakValueDictionary()
        self._running: dict[str, set[Agent]] = {}  # executions in this process
        # runs of this process waiting for approval: the scope of each wait
        self._waiting: dict[str, set[anyio.CancelScope]] = {}
        options: dict[str, Any] = {"name": f"pi_trio.agent:{name}"}
        if max_recovery_attempts is not None:
            options["max_recovery_attempts"] = max_recovery_attempts

        async def workflow(prompts_json: str, history_json: str | None) -> str:
            return await self._execute(prompts_json, history_json)

        self._workflow = DBOS.workflow(**options)(workflow)

    def __repr__(self) -> str:
        return f"<DurableAgent {self.name!r}>"

    # ------------------------------------------------------------------ listeners

    def subscribe(
        self, listener: Callable[..., Any], *, replayed: bool = False
    ) -> Callable[[], None]:
        """Call ``listener(event)`` or ``listener(event, info)`` (a ``DurableEventInfo``)
        for the events of every run of this agent started or resumed in this process from
        now on. ``replayed`` chooses what a resumed run delivers: by default only the
        events that come after the crash (at most once: an event emitted between a step's
        checkpoint and the crash is not delivered again); ``replayed=True`` also delivers
        the events re-emitted from the recorded steps (at least once: a reconnecting UI
        rebuilds the whole run from them)."""
        entry = Subscription(listener, replayed)
        self._subscriptions = (*self._subscriptions, entry)

        def unsubscribe() -> None:
            self._subscriptions = tuple(s for s in self._subscriptions if s is not entry)

        return unsubscribe

    # ------------------------------------------------------------------ runs

    async def start(
        self,
        prompt: str | AgentMessage | Sequence[AgentMessage],
        *,
        images: Sequence[ImageContent] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        workflow_id: str | None = None,
    ) -> DurableRun:
        """Start a run on ``prompt`` and return its handle. ``messages`` is the
        conversation so far (e.g. an earlier result's ``messages``); without it the run
        starts from the factory's agent. Starting an existing ``workflow_id`` again
        returns that run instead of starting another."""
        prompts = messages_to_json(_prompt_messages(prompt, images)).decode()
        history = None if messages is None else messages_to_json(list(messages)).decode()
        if workflow_id is not None and await DBOS.get_workflow_status_async(workflow_id):
            # Already started (perhaps being resumed right now): never a second execution.
            return await self.retrieve(workflow_id)
        token = _STARTING.set(True)
        try:
            if workflow_id is None:
                handle = await DBOS.start_workflow_async(self._workflow, prompts, history)
            else:
                with SetWorkflowID(workflow_id):
                    handle = await DBOS.start_workflow_async(self._workflow, prompts, history)
        finally:
            _STARTING.reset(token)
        run = DurableRun(handle.get_workflow_id(), handle)
        self._runs[run.workflow_id] = run
        return run

    async def run(
        self,
        prompt: str | AgentMessage | Sequence[AgentMessage],
        *,
        images: Sequence[ImageContent] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        workflow_id: str | None = None,
    ) -> DurableResult:
        """``start`` and wait for the result."""
        run = await self.start(prompt, images=images, messages=messages, workflow_id=workflow_id)
        return await run.result()

    async def retrieve(self, workflow_id: str) -> DurableRun:
        """The handle of an existing run (for example one resumed after a crash)."""
        handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(workflow_id)
        run = DurableRun(workflow_id, handle)
        self._runs[workflow_id] = run
        return run

    async def steer(
        self,
        workflow_id: str,
        message: str | AgentMessage,
        *,
        idempotency_key: str | None = None,
        client: DBOSClient | None = None,
    ) -> None:
        """Queue a steering message for the run (a ``str`` is a user message). It is
        stored by DBOS and reaches the run after its current turn, also across a crash;
        ``client`` sends from a process that does not run DBOS itself."""
        await send(
            workflow_id,
            "steer",
            _as_message(message),
            idempotency_key=idempotency_key,
            client=client,
        )

    async def follow_up(
        self,
        workflow_id: str,
        message: str | AgentMessage,
        *,
        idempotency_key: str | None = None,
        client: DBOSClient | None = None,
    ) -> None:
        """Queue a follow-up message: delivered when the run would otherwise stop."""
        await send(
            workflow_id,
            "followUp",
            _as_message(message),
            idempotency_key=idempotency_key,
            client=client,
        )

    async def resume(
        self,
        workflow_id: str,
        approvals: Mapping[str, ApprovalDecision],
        *,
        idempotency_key: str | None = None,
        client: DBOSClient | None = None,
    ) -> None:
        """Send the decisions for the calls a paused run waits for (``approvals``: each
        pending call id -> ``approve()``, ``deny(reason)`` or ``edit(arguments)``). DBOS
        keeps the message until the run takes it, also across a crash; the run then goes
        on as ``Agent.resume`` does. Raises ``ResumeError`` when the run waits for
        nothing or the ids are not the pending ones; ``client`` sends from a process that
        does not run DBOS itself."""
        await send_decisions(
            workflow_id, dict(approvals), idempotency_key=idempotency_key, client=client
        )

    def abort(self, workflow_id: str, reason: object = None) -> bool:
        """Abort the run if it is running in this process (the abort contract; the
        aborted transcript becomes the run's result). ``False`` when it is not, and
        while it waits for approval (nothing runs; deny the calls or ``cancel`` it)."""
        agents = self._running.get(workflow_id)
        if not agents:
            return False
        for agent in list(agents):
            agent.abort(reason)
        return True

    async def cancel(self, workflow_id: str) -> None:
        """Cancel the run through DBOS, wherever it runs: the process running it aborts
        it (listeners see the abort contract's outcome) within about a second, and
        ``DBOS.resume_workflow`` can continue it later. A run waiting for approval in
        this process stops waiting at once (in another one, within
        ``APPROVAL_RECHECK_S``); its result is the paused transcript."""
        await DBOS.cancel_workflow_async(workflow_id)
        for scope in self._waiting.get(workflow_id, ()):
            scope.cancel()

    # ------------------------------------------------------------------ the workflow

    async def _execute(self, prompts_json: str, history_json: str | None) -> str:
        workflow_id = DBOS.workflow_id
        assert workflow_id is not None
        first_execution = _STARTING.get()
        _STARTING.set(False)  # not for the workflows this one starts
        agent = self.factory()
        if not isinstance(agent, Agent):
            raise TypeError(
                f"the factory of DurableAgent {self.name!r} must return an Agent, got {agent!r}"
            )
        execution = Execution(workflow_id, agent)
        if history_json is not None:
            history = messages_from_json(history_json)
            if history and getattr(history[0], "role", None) != "system":
                head = [m for m in agent.state.messages[:1] if m.role == "system"]
                history = [*head, *history]
            agent.state.messages = history
        agent.stream_fn = durable_stream_fn(agent.stream_fn, execution)
        agent.state.tools = [durable_tool(tool, execution) for tool in agent.state.tools]
        # a copy: a hooks object may be shared by several agents
        agent.hooks = msgspec.structs.replace(
            agent.hooks,
            should_stop_after_turn=self._after_turn(agent.hooks.should_stop_after_turn, execution),
        )
        for subscription in self._subscriptions:
            agent.subscribe(agent_listener(subscription, execution))

        if first_execution:
            execution.mark_live()
        DBOS.reserve_step()  # RUN_STEP's id
        before = len(agent.state.messages)
        result = await self._running_agent(
            workflow_id, agent, lambda: agent.prompt(messages_from_json(prompts_json))
        )
        pause = 0
        while result.pending_approvals and not execution.cancelled:
            pause += 1
            pending = list(result.pending_approvals)
            decisions = await self._wait_for_approval(execution, pause, pending)
            if decisions is None:
                break
            try:
                result = await self._running_agent(
                    workflow_id, agent, partial(agent.resume, decisions)
                )
            except ResumeError as exc:  # e.g. an edit the tool's schema refuses
                _logger.warning("durable run %s: the decisions did not fit: %s", workflow_id, exc)
        new_count = len(agent.state.messages) - before
        if not execution.cancelled:
            # Messages sent after the last turn looked for them: the run has ended, so
            # they join ``queued`` (taken, recorded, not delivered) instead of staying
            # unread in the database.
            try:
                await self._take_at_end(execution)
            except dbos_error.DBOSWorkflowCancelledError:
                execution.note_cancelled()
        queued = agent.take_queued_messages(lambda _: True)
        outcome = encode_outcome(agent, new_count, queued)
        if execution.cancelled:
            run = self._runs.get(workflow_id)
            if run is not None:
                run.keep_cancelled_outcome(outcome)
            raise dbos_error.DBOSWorkflowCancelledError(
                f"Workflow {workflow_id} was cancelled; the run was aborted"
            )
        return outcome

    async def _running_agent(
        self, workflow_id: str, agent: Agent, run: Callable[[], Awaitable[RunResult[Any]]]
    ) -> RunResult[Any]:
        """``run()``, with the agent known as running here (``abort`` reaches it)."""
        executions = self._running.setdefault(workflow_id, set())
        executions.add(agent)
        try:
            return await run()
        finally:
            executions.discard(agent)
            if not executions:
                self._running.pop(workflow_id, None)

    async def _wait_for_approval(
        self, execution: Execution, pause: int, pending: list[PendingApproval]
    ) -> dict[str, ApprovalDecision] | None:
        """Announce the pause and wait for its decisions (``None``: cancelled)."""
        workflow_id = execution.workflow_id
        await announce(pause, pending)
        scope = anyio.CancelScope()
        waiting = self._waiting.setdefault(workflow_id, set())
        waiting.add(scope)
        try:
            decisions = await wait_for_decisions(pause, pending, scope)
        except (dbos_error.DBOSWorkflowCancelledError, dbos_error.DBOSWorkflowConflictIDError):
            # cancelled in another process (or another execution took the run over)
            decisions = None
        finally:
            waiting.discard(scope)
            if not waiting:
                self._waiting.pop(workflow_id, None)
        if decisions is None:
            execution.note_cancelled()
            return None

        async def decided() -> bool:
            # a body that runs only when the decisions are new: from here on, the
            # resumed run's events are too (a recovered run replays this step and the
            # events after it up to its next new step)
            execution.mark_live()
            return True

        await DBOS.run_step_async({"name": APPROVED_STEP}, decided)
        await announce(pause, [])
        return decisions

    @staticmethod
    async def _take_at_end(execution: Execution) -> None:
        await look(execution)
        if execution.take_after_turn():
            await drain_into(execution.agent)

    @staticmethod
    def _after_turn(user_hook: Callable[..., Any] | None, execution: Execution) -> Any:
        """The agent's ``should_stop_after_turn``: the user's hook, then (unless it ends
        the run or the run was aborted) the messages sent to the run meanwhile, when the
        turn's steps saw that something was sent (a turn whose steps did not read the
        mark reads it in a step of its own)."""

        async def should_stop_after_turn(turn: Any, signal: AbortSignal) -> bool:
            if user_hook is not None and await call_hook(user_hook, turn, signal):
                return True
            if signal.aborted:
                return False
            try:
                if not execution.looked():
                    await look(execution)
                if execution.take_after_turn():
                    await drain_into(execution.agent)
            except dbos_error.DBOSWorkflowCancelledError:
                execution.note_cancelled()
            return False

        return should_stop_after_turn
