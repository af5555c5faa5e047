"""The agent loop engine: the control flow of one run.

``LoopRun`` is stateless across runs: given prompt messages, a context and a config it
runs turns until nothing is left to do and returns the messages it added. It decides;
``RunLifecycle`` records what is open and emits the structural events.

All of the engine's work runs inside one cancel scope, the run's abort scope, which the
run's ``AbortSignal`` cancels. Every hook and every structural event is followed by
``check`` (hooks through ``call``, except ``after_tool_call``, whose answer is kept first;
the structural events in ``RunLifecycle``), and so are a tool's events and the start of
its execution once the signal is set (``ToolBatch``): the one place where an abort, or
the caller's own cancellation, requested during synchronous work (a sync hook, a
listener) takes effect, before anything else runs. After an abort the engine, outside
that scope, writes the outcome from the lifecycle's phase (``close_aborted``); the
provider is never called after an abort. When the caller's scope is cancelled the same
outcome is written under a shield bounded by ``close_timeout``, and the cancellation
propagates. The requests themselves, and the model and thinking level they are made
with, are ``RunRequests``'.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel

from ..ai import (
    AbortSignal,
    AssistantMessage,
    ToolCall,
    ToolResultMessage,
)
from ._backend import scheduler_calls
from ._batch import ToolBatch
from ._closing import close_aborted, close_by_limit
from ._config import AgentLoopConfig, turn_decision
from ._dispatch import Dispatcher
from ._hooks import positional_arity
from ._lifecycle import RunLifecycle
from ._parallel import ToolGroup
from ._request import RunRequests
from ._resume import ResumePlan
from ._types import (
    AgentContext,
    AgentMessage,
    AgentTurnContext,
)
from ._view import Transcript

__all__ = ["LoopRun"]


class LoopRun:
    """One invocation of the loop. ``await run(prompts)`` (``prompts=None`` continues
    from the context) returns the new messages; see the module docstring for abort."""

    __slots__ = (
        "again",
        "calls",
        "compactor",
        "config",
        "dispatcher",
        "gate",
        "life",
        "owned",
        "requests",
        "scope",
        "scope_left",
        "signal",
        "tool_group",
    )

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        stream_fn: Any = None,
        *,
        owned: bool = False,
    ) -> None:
        # ``owned``: the caller made ``context`` (and its lists) for this run alone.
        # Otherwise a prompt run leaves the caller's lists as they were, while continuing
        # extends the caller's message list in place.
        self.owned = owned
        if not owned:
            context = AgentContext(messages=context.messages, tools=list(context.tools))
        self.config = config
        self.dispatcher = dispatcher
        self.signal = signal
        self.calls = scheduler_calls()
        self.scope = anyio.CancelScope()
        # one task group for the run's parallel tool calls, opened when first needed
        self.tool_group = ToolGroup()
        self.scope_left = False  # the abort scope's body has ended: an abort changes nothing
        self.life = RunLifecycle(context, dispatcher, signal, self.check, self._new_batch)
        # the model and thinking level, the options, the request itself; and what asks
        # for or forbids one: compaction, the run limits, retries and fallbacks
        requests = self.requests = RunRequests(
            config, self.life, dispatcher, signal, stream_fn, self.call, self.calls
        )
        self.compactor = requests.compactor
        self.gate = requests.gate
        self.again = requests.again

    @property
    def context(self) -> AgentContext:
        return self.life.context

    # ------------------------------------------------------------------ abort

    async def check(self) -> None:
        """The one abort check. An abort of the run's signal (from a hook, a listener or
        another thread) or a cancellation of the caller's scope that was requested
        while synchronous code ran takes effect here, before anything else runs."""
        if self.signal.aborted:
            # From another thread, the abort's callbacks may not have run here yet: run
            # them now (this run's own, and its sub-agents', which pass the reason on).
            self.signal.run_pending_callbacks()
            self._abort_requested()
        await self.calls.checkpoint_if_cancelled()

    async def call(self, hook: Callable[..., Any], *args: Any) -> Any:
        """Call a hook (sync or async) with the arguments it accepts, then ``check``.
        A deadline of the caller that passed while synchronous code ran (no scheduler
        pass has seen it yet) stops the call before the hook runs."""
        if self.calls.deadline_passed():
            # a deadline set by synchronous code (a listener) takes effect only at the
            # next scheduler pass, which has not come yet: here it does
            await anyio.lowlevel.checkpoint()
        result = hook(*args[: positional_arity(hook)])
        if inspect.isawaitable(result):
            result = await result
        await self.check()
        return result

    def _abort_requested(self) -> None:
        # Once, and only while the abort scope's body runs (the callback of an abort
        # from another thread can come late). No event of the request is accepted from
        # now on, and no delivery starts inside the cancelled scope: events wait for the
        # closing sequence (a delivery in progress is shielded and ends first).
        if self.scope_left or self.scope.cancel_called:
            return
        self.life.stop_request()
        self.dispatcher.hold()
        self.scope.cancel()

    # ------------------------------------------------------------------ entry

    async def run(
        self, prompts: list[AgentMessage] | None, resume: ResumePlan | None = None
    ) -> list[AgentMessage]:
        """Run the loop on ``prompts`` (``None``: continue from the context), or resume
        the paused turn that ``resume`` describes."""
        life = self.life
        try:
            with self.scope:
                unregister = self.signal.on_abort(self._abort_requested)
                try:
                    try:
                        if prompts is not None and not self.owned:
                            life.context.messages = Transcript(life.context.messages)
                        if resume is None:
                            await life.start(prompts)
                            await self._loop()
                        else:
                            batch = self._new_batch(resume.message, resume.calls, resume)
                            await life.start_resume(resume, batch)
                            await batch.run()
                            await self._loop(batch)
                    except BaseException as exc:
                        if not self.tool_group.opened or not await self.tool_group.close(exc):
                            raise
                    else:
                        if self.tool_group.opened:
                            await self.tool_group.close(None)
                    return life.new_messages
                finally:
                    unregister()
                    self.scope_left = True
            # The abort scope caught the cancellation: the run was aborted.
            self.dispatcher.release()
            await close_aborted(life, self.requests.model, self.requests.thinking_level)
            # The caller may have been cancelled meanwhile (a second Ctrl-C while the
            # closing events were delivered): that takes effect here.
            await anyio.lowlevel.checkpoint_if_cancelled()
            return life.new_messages
        except anyio.get_cancelled_exc_class():
            # Cancellation escaped the abort scope: the caller's scope was cancelled
            # (perhaps on top of an abort). Leave the same consistent state as an abort,
            # delivering the closing events within ``close_timeout``: the deliveries
            # are bounded (``closing``), the closing sequence is not, so that past the
            # bound every closing event still reaches every listener (a listener that
            # waits is cut at once) and the run still ends with ``agent_end``.
            dispatcher = self.dispatcher
            dispatcher.release()
            dispatcher.closing()
            with anyio.CancelScope(shield=True):
                await close_aborted(life, self.requests.model, self.requests.thinking_level)
            raise

    # ------------------------------------------------------------------ the turn loop

    async def _poll(self, fn: Callable[..., Any] | None) -> list[AgentMessage]:
        if fn is None:
            return []
        if not self.dispatcher.idle:
            await self.dispatcher.settle()
        messages = await self.call(fn)
        return list(messages) if messages else []

    async def _loop(self, resumed: ToolBatch | None = None) -> None:
        config = self.config
        life = self.life
        last_turn: AgentTurnContext | None = None
        explicit_continuation = False
        has_more_tool_calls = True
        if resumed is None:
            pending = await self._poll(config.get_steering_messages)
        else:
            # a resumed run: the paused turn's batch ran; the run goes on as after any
            # batch (the steering poll comes after it: nothing may come between the calls
            # and their results)
            turn_results = life.commit_batch()
            if resumed.paused:
                await self._end_paused(resumed.message, turn_results)
                return
            closed = await self._close_turn(resumed.message, turn_results)
            if closed is None:
                return
            last_turn, decision = closed
            has_more_tool_calls = not resumed.terminates()
            pending = await self._poll(config.get_steering_messages)
            explicit_continuation = decision == "continue" and not (has_more_tool_calls or pending)
        while True:
            while has_more_tool_calls or pending:
                if self.gate is not None and self.gate.before_request() is not None:
                    await self._close_by_limit(pending)
                    return
                prepared: list[AgentMessage] = []
                if last_turn is not None:
                    if config.prepare_next_turn is not None:
                        prepared = await self.requests.prepare_next_turn(last_turn)
                    if not pending:
                        pending = await self._poll(config.get_steering_messages)
                    await life.start_turn()
                await life.accept_inputs([*prepared, *pending])
                pending = []
                if config.prepare_request is not None:
                    await self.requests.prepare_request()
                    # the messages steered while it ran join this request
                    late = await self._poll(config.get_request_steering_messages)
                    if late:
                        await life.accept_inputs(late)

                if self.again is not None:
                    message = await self.again.respond(self.requests)
                elif self.compactor is not None:
                    message = await self.requests.request()
                else:  # one coroutine frame less for every agent in flight
                    message = await self.requests.request_once()
                if message.stop_reason in ("error", "aborted"):
                    life.without_tools()
                    last_turn = self._turn_context(message, [])
                    if config.finish_turn is not None:
                        await self.call(config.finish_turn, last_turn, self.signal)
                    await life.end_turn()
                    await life.end_run()
                    return

                tool_calls = [b for b in message.content if isinstance(b, ToolCall)]
                results: list[ToolResultMessage] = []
                has_more_tool_calls = False
                if tool_calls:
                    batch = await self._run_batch(message, tool_calls)
                    results = life.commit_batch()
                    if batch.paused:
                        await self._end_paused(message, results)
                        return
                    has_more_tool_calls = not batch.terminates()
                    # not held through the next request: a batch keeps its outcomes, its
                    # calls and its bound methods (about 1.4 KB per agent in W10)
                    del batch
                else:
                    life.without_tools()
                closed = await self._close_turn(message, results)
                if closed is None:
                    return
                last_turn, decision = closed
                explicit_continuation = decision == "continue"
                pending = await self._poll(config.get_steering_messages)
                if has_more_tool_calls or pending:
                    explicit_continuation = False
            follow_ups = await self._poll(config.get_follow_up_messages)
            if follow_ups:
                explicit_continuation = False
                pending = follow_ups
                continue
            if explicit_continuation:
                explicit_continuation = False
                has_more_tool_calls = True
                continue
            break
        await life.end_run()

    async def _close_turn(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> tuple[AgentTurnContext, str | None] | None:
        """The end of a turn that may go on: ``finish_turn``, ``turn_end`` and
        ``should_stop_after_turn``. Returns the turn and ``finish_turn``'s decision, or
        ``None`` when the run ended here."""
        config = self.config
        life = self.life
        turn = self._turn_context(message, results)
        decision = None
        if config.finish_turn is not None:
            await self.dispatcher.settle()
            decision = turn_decision(await self.call(config.finish_turn, turn, self.signal))
        await life.end_turn()
        if self.gate is not None and self.gate.hit is not None:
            await self._close_by_limit([])  # the response's tool calls were refused
            return None
        if decision == "end":
            await life.end_run()
            return None
        stop = config.should_stop_after_turn
        if stop is not None and await self.call(stop, turn, self.signal):
            await life.end_run()
            return None
        return turn, decision

    async def _end_paused(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> None:
        """A call waits for approval: the run ends with this turn, whatever the hooks
        would decide (``finish_turn`` still sees the turn); the queues are not polled,
        so what they hold waits for the resumed run."""
        config = self.config
        if config.finish_turn is not None:
            await self.dispatcher.settle()
            await self.call(config.finish_turn, self._turn_context(message, results), self.signal)
        await self.life.end_turn()
        await self.life.end_run()

    def _turn_context(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> AgentTurnContext:
        return AgentTurnContext(
            message=message,
            tool_results=results,
            context=self.context,
            new_messages=self.life.new_messages,
        )

    # ------------------------------------------------------------------ the limit outcome

    async def _close_by_limit(self, pending: list[AgentMessage]) -> None:
        """End the run because a limit was reached (``LimitGate.hit``); ``pending``, the
        messages taken from the queues for the request it forbids, join its last turn."""
        gate = self.gate
        assert gate is not None
        assert gate.hit is not None
        await self.dispatcher.settle()
        requests = self.requests
        message = gate.hit.message(requests.model)
        await close_by_limit(self.life, message, requests.thinking_level, pending)

    # ------------------------------------------------------------------ tools

    async def _run_batch(self, message: AssistantMessage, calls: list[ToolCall]) -> ToolBatch:
        """Run the tool calls of ``message``; the caller commits their results."""
        batch = self._new_batch(message, calls)
        self.life.begin_batch(batch)
        hit = None if self.gate is None else self.gate.before_tools(len(calls))
        if hit is not None:
            await batch.refuse(hit.text)
        elif message.stop_reason == "length":
            await batch.fail_truncated()
        else:
            await batch.run()
        return batch

    def _new_batch(
        self, message: AssistantMessage, calls: list[ToolCall], plan: ResumePlan | None = None
    ) -> ToolBatch:
        return ToolBatch(
            message=message,
            calls=calls,
            context=self.context,
            config=self.config,
            dispatcher=self.dispatcher,
            signal=self.signal,
            call_hook=self.call,
            check=self.check,
            tool_group=self.tool_group,
            decisions=None if plan is None else plan.decisions,
            fingerprint=None if plan is None else plan.fingerprint,
        )
