"""One batch of tool calls: the events around each call, running them (in order or
concurrently), and their result messages.

Each call goes through the steps of ``_tool_call`` (prepare, validate, ``before_tool_call``,
execute, ``after_tool_call``). A call whose tool ``needs_approval`` stops after validation
with a pending placeholder (``_approval``), and the batch is ``paused``; in a sequential
batch the calls after it wait too. A resumed batch (``decisions``) runs the calls of a
paused turn as decided. Every call of a batch ends with exactly one outcome and one
result message, whatever happens: a call that is cancelled by an abort, or never started
because of one, gets ``Operation aborted``. After each event, and before each execution, an
aborted signal goes through the run's abort check, so an abort a listener (or a sync tool)
requests runs no further step. ``finish_aborted()`` writes the outcomes after the abort
scope; an aborted call keeps the ``usage`` its tool last reported in a progress update
(what a sub-agent spent before the abort is spent all the same).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import msgspec

from ..ai import AbortSignal, AssistantMessage, ToolCall, ToolResultMessage, Usage
from ._approval import (
    PENDING,
    WAITING,
    ApprovalDecision,
    Fingerprint,
    denied_text,
    edited_note,
    needs_approval,
    placeholder_outcome,
)
from ._dispatch import Dispatcher
from ._parallel import ToolGroup, run_concurrently
from ._tool_call import (
    ABORTED_TOOL_TEXT,
    PreparedCall,
    ToolCallOutcome,
    after_call,
    before_call,
    execute_call,
    immediate,
    prepare_call,
    truncated_call_text,
)
from ._types import (
    AgentContext,
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)

__all__ = ["ToolBatch"]


class ToolBatch:
    """The tool calls of one assistant message. ``run()`` executes them; after an abort,
    ``finish_aborted()`` (called outside the cancelled scope) completes every call."""

    def __init__(
        self,
        *,
        message: AssistantMessage,
        calls: list[ToolCall],
        context: AgentContext,
        config: Any,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        call_hook: Callable[..., Awaitable[Any]],
        check: Callable[[], Awaitable[None]],
        tool_group: ToolGroup | None = None,
        decisions: dict[str, ApprovalDecision] | None = None,
        fingerprint: Fingerprint | None = None,
    ) -> None:
        self.message = message
        self.calls = calls
        self.context = context
        self.config = config
        self.dispatcher = dispatcher
        self.signal = signal
        self._call_hook = call_hook
        self._check = check
        n = len(calls)
        self.outcomes: list[ToolCallOutcome | None] = [None] * n
        # progress flags per call (0/1); bytearrays are not tracked by the garbage
        # collector, which matters with hundreds of runs in flight
        self.started = bytearray(n)
        self.ended = bytearray(n)
        self.results: list[ToolResultMessage | None] = [None] * n
        self.results_started = bytearray(n)
        self.results_emitted = bytearray(n)
        self._failure: BaseException | None = None
        self._spent: dict[int, Usage] | None = None  # usage reported in progress updates
        self._tool_group = tool_group
        self._closing = False  # ``finish_aborted`` runs: the outcome is written whole
        # approvals: a resumed batch's decisions by call id; the transcript's fingerprint
        # for placeholders (made when the first one is); whether a call waits (``paused``)
        # and, in a sequential batch, the calls after it too (``held``)
        self.decisions = decisions
        self._fingerprint = fingerprint
        self.paused = False
        self.held = False

    # ------------------------------------------------------------------ events

    async def _emit(self, event: Any) -> None:
        """Deliver ``event``; if the run was aborted meanwhile (a listener, a sync tool,
        another thread), the run's abort check stops the batch before its next step. Only
        then: the check's checkpoint costs ~1 us, several times per tool call."""
        await self.dispatcher.emit(event)
        if self.signal.aborted and not self._closing:
            await self._check()

    async def _emit_start(self, i: int) -> None:
        call = self.calls[i]
        self.started[i] = 1
        await self._emit(
            ToolExecutionStartEvent(tool_call_id=call.id, tool_name=call.name, args=call.arguments)
        )

    async def _emit_end(self, i: int) -> None:
        call = self.calls[i]
        outcome = self.outcomes[i]
        assert outcome is not None
        self.ended[i] = 1
        await self._emit(
            ToolExecutionEndEvent(
                tool_call_id=call.id,
                tool_name=call.name,
                result=outcome.result,
                is_error=outcome.is_error,
                duration_ms=outcome.duration_ms,
            )
        )

    async def _emit_result_message(self, i: int) -> None:
        call = self.calls[i]
        outcome = self.outcomes[i]
        assert outcome is not None
        result = outcome.result
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=list(result.content) if result.content is not None else [],
            details=result.details,
            usage=result.usage,
            is_error=outcome.is_error,
            duration_ms=outcome.duration_ms,
        )
        self.results[i] = message
        self.results_started[i] = 1
        await self._emit(MessageStartEvent(message=message))
        await self._end_result_message(i)

    async def _end_result_message(self, i: int) -> None:
        self.results_emitted[i] = 1
        await self._emit(MessageEndEvent(message=self.results[i]))

    # ------------------------------------------------------------------ running

    def is_sequential(self) -> bool:
        if self.config.tool_execution == "sequential":
            return True
        names = {call.name for call in self.calls}
        return any(
            getattr(tool, "execution_mode", None) == "sequential"
            for tool in self.context.tools
            if tool.name in names
        )

    async def run(self) -> None:
        if self.is_sequential():
            for i in range(len(self.calls)):
                await self._emit_start(i)
                prepared = await self._preflight(i)
                if isinstance(prepared, PreparedCall):
                    prepared = await self._execute(i, prepared)
                elif self.paused:
                    self.held = True  # the calls after a waiting one wait too
                self.outcomes[i] = prepared
                await self._emit_end(i)
                await self._emit_result_message(i)
            return
        jobs: list[tuple[int, PreparedCall]] = []
        for i in range(len(self.calls)):
            await self._emit_start(i)
            prepared = await self._preflight(i)
            if isinstance(prepared, PreparedCall):
                jobs.append((i, prepared))
            else:
                self.outcomes[i] = prepared
                await self._emit_end(i)
        if len(jobs) == 1:
            await self._job(*jobs[0], None)
        elif jobs:
            await self._run_parallel(jobs)
        if self._failure is not None:
            raise self._failure
        for i in range(len(self.calls)):
            await self._emit_result_message(i)

    async def _run_parallel(self, jobs: list[tuple[int, PreparedCall]]) -> None:
        limit = self.config.max_concurrent_tools
        limiter = anyio.CapacityLimiter(limit) if limit else None
        await run_concurrently(
            [
                (
                    partial(self._job, i, prepared, limiter),
                    f"tool {self.calls[i].name} {self.calls[i].id}",
                )
                for i, prepared in jobs
            ],
            self._tool_group,
        )

    async def _job(
        self, i: int, prepared: PreparedCall, limiter: anyio.CapacityLimiter | None
    ) -> None:
        if limiter is None:
            outcome = await self._execute(i, prepared)
        else:
            async with limiter:
                outcome = await self._execute(i, prepared)
        self.outcomes[i] = outcome
        try:
            await self._emit_end(i)
        except Exception as exc:
            # A listener failed. Sibling tools keep running to completion; the batch
            # reports the failure once every call has settled.
            if self._failure is None:
                self._failure = exc

    def terminates(self) -> bool:
        outcomes = [o for o in self.outcomes if o is not None]
        return bool(outcomes) and all(o.result.terminate is True for o in outcomes)

    # ------------------------------------------------------------------ preflight

    async def _preflight(self, i: int) -> ToolCallOutcome | PreparedCall:
        call = self.calls[i]
        decision = None
        if self.decisions is not None:
            decision = self.decisions.get(call.id)
            if decision is not None and decision.action == "deny":
                return immediate(call, denied_text(call.name, decision.reason))
        prepared = await prepare_call(call, self.context.tools)
        if isinstance(prepared, PreparedCall):
            if prepared.adapted:
                await self._check()  # the tool's prepare_arguments ran
            policy = getattr(prepared.tool, "needs_approval", None)
            if policy and decision is None:
                waits = await self._waits_for_approval(i, policy, prepared.args)
                if waits is not None:
                    return waits
            if self.held:
                return self._placeholder(i, WAITING)
        hook = self.config.before_tool_call
        if hook is None or not isinstance(prepared, PreparedCall):
            return prepared
        return await before_call(
            hook, self._call_hook, self.message, call, prepared, self.context, self.signal
        )

    async def _waits_for_approval(self, i: int, policy: Any, args: Any) -> ToolCallOutcome | None:
        """The pending placeholder of a call that waits for approval, an error outcome when
        the tool's predicate failed (the call does not run), else ``None``."""
        if policy is not True:
            try:
                if not await needs_approval(policy, args, self._call_hook):
                    return None
            except Exception as exc:
                return immediate(self.calls[i], str(exc) or type(exc).__name__)
        return self._placeholder(i, PENDING)

    def _placeholder(self, i: int, status: str) -> ToolCallOutcome:
        fingerprint = self._fingerprint
        if fingerprint is None:
            fingerprint = self._fingerprint = Fingerprint.of(self.message)
        self.paused = True
        return placeholder_outcome(self.calls[i], status, fingerprint)

    # ------------------------------------------------------------------ execution

    async def _execute(self, i: int, prepared: PreparedCall) -> ToolCallOutcome:
        # a parallel call may start after a sibling (or a listener of its events) aborted
        # the run: it becomes a task that would run a sync tool before any checkpoint
        if self.signal.aborted:
            await self._check()
        call = self.calls[i]
        dispatcher = self.dispatcher

        def on_update(partial_result: AgentToolResult) -> None:
            if partial_result.usage is not None:
                if self._spent is None:
                    self._spent = {}
                self._spent[i] = partial_result.usage
            dispatcher.push(
                ToolExecutionUpdateEvent(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    args=call.arguments,
                    partial_result=partial_result,
                )
            )

        if dispatcher.all_sync:
            outcome = await execute_call(call, prepared, self.signal, on_update)
        else:
            # asynchronous listeners get the tool's updates while it runs
            finished = False
            async with anyio.create_task_group() as group:
                group.start_soon(dispatcher.pump, lambda: finished)
                try:
                    outcome = await execute_call(call, prepared, self.signal, on_update)
                    # an abort while the pump stops keeps this result too (see below)
                    self.outcomes[i] = outcome
                finally:
                    finished = True
                    dispatcher.wake()
        # The call has finished: an abort from here on keeps this result.
        self.outcomes[i] = outcome
        if not dispatcher.idle:
            try:
                await dispatcher.settle()
            except Exception as exc:
                # a listener failed on an update: the batch reports it once every call
                # has settled (see ``_job``)
                if self._failure is None:
                    self._failure = exc
        if self.decisions is not None:
            outcome = self.outcomes[i] = self._noted(call, outcome)
        hook = self.config.after_tool_call
        if hook is None:
            return outcome
        # The hook's answer is kept even when the run is aborted while it runs.
        final = self.outcomes[i] = await after_call(
            hook, self.message, prepared, outcome, self.context, self.signal
        )
        await self._check()
        return final

    def _noted(self, call: ToolCall, outcome: ToolCallOutcome) -> ToolCallOutcome:
        """An edited call's outcome, telling the model the arguments it ran with."""
        assert self.decisions is not None
        decision = self.decisions.get(call.id)
        if decision is None or decision.action != "edit":
            return outcome
        result = outcome.result
        content = [edited_note(call.arguments), *(result.content or [])]
        return msgspec.structs.replace(
            outcome, result=msgspec.structs.replace(result, content=content)
        )

    # ------------------------------------------------------------------ truncated / aborted

    async def fail_truncated(self) -> None:
        """The message hit the output limit: no call is executed; each gets an error."""
        await self.refuse(None)

    async def refuse(self, text: str | None) -> None:
        """No call is executed: each gets the error ``text`` (``None``: the text of a
        call cut off by the output limit)."""
        for i, call in enumerate(self.calls):
            await self._emit_start(i)
            self.outcomes[i] = immediate(call, text or truncated_call_text(call.name))
            await self._emit_end(i)
            await self._emit_result_message(i)

    async def finish_aborted(self) -> None:
        """After an abort: every call without an outcome gets ``Operation aborted``; the
        missing start/end events and result messages are emitted in source order."""
        self._closing = True
        spent = self._spent or {}
        for i in range(len(self.calls)):
            if self.outcomes[i] is None:
                outcome = self.outcomes[i] = self._unfinished(i)
                outcome.result.usage = spent.get(i)
            if not self.started[i]:
                await self._emit_start(i)
            if not self.ended[i]:
                await self._emit_end(i)
        for i in range(len(self.calls)):
            if self.results_started[i] and not self.results_emitted[i]:
                await self._end_result_message(i)
        for i in range(len(self.calls)):
            if not self.results_started[i]:
                await self._emit_result_message(i)

    def _unfinished(self, i: int) -> ToolCallOutcome:
        """The outcome of a call an abort left without one: ``Operation aborted``, or the
        denial a resumed batch had for it."""
        call = self.calls[i]
        decision = self.decisions.get(call.id) if self.decisions is not None else None
        if decision is not None and decision.action == "deny":
            return immediate(call, denied_text(call.name, decision.reason))
        return immediate(call, ABORTED_TOOL_TEXT)

    def result_messages(self) -> list[ToolResultMessage]:
        return [r for r in self.results if r is not None]
