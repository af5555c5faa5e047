"""The lifecycle of one run: what it has opened and not yet closed, in one place.

``RunLifecycle`` owns the run's transcript (the working context's messages and the new
messages the run returns) and emits every structural event: ``agent_start``,
``turn_start``, the ``message_start``/``message_end`` of inputs and responses,
``turn_end`` and ``agent_end``. Its ``phase`` says what is open::

    NOT_STARTED -> RUN -> TURN -> (INPUT -> TURN)* -> REQUEST -> ASSISTANT -> RESPONSE
                                -> TOOLS -> RESULTS -> RUN (turn_end) -> ... -> FINISHED

A compaction (``COMPACTING``) opens before a request (in ``TURN``) or after a response
that overflowed (in ``RESPONSE``) and returns to the phase it opened in (to ``TURN`` when
the overflowed response leaves the transcript to be asked again).

``close_aborted`` writes the aborted outcome from the phase alone: it closes the innermost
open thing until the run is finished (an open input gets its ``message_end``, a request
becomes the aborted message with the content received so far, tool calls get one result
each, then ``turn_end`` and ``agent_end``). The loop (``LoopRun``) decides what happens
next; the lifecycle only records and announces it.

After each structural event the run's abort check runs (``check``), so an abort or a
cancellation requested by a listener takes effect right there; while closing, nothing is
checked: the outcome is written whole.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Final

from ..ai import AbortSignal, AssistantMessage, Model, ToolCall, ToolResultMessage
from ..ai._seam import InlineStream, empty_message
from ._batch import ToolBatch
from ._declarations import ToolDeclarations
from ._dispatch import Dispatcher
from ._limits import RunCounters
from ._outcomes import aborted_text
from ._resume import ResumePlan
from ._types import (
    AgentContext,
    AgentEndEvent,
    AgentMessage,
    AgentStartEvent,
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ModelFallbackEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from ._view import Transcript

__all__ = ["Phase", "RunLifecycle"]


class _NothingToSend:
    """An awaitable that completes at once without a checkpoint (the terminal events
    have no agent event of their own)."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        yield from ()


_NOTHING_TO_SEND: Final = _NothingToSend()


class Phase(enum.Enum):
    """What the run has emitted and not yet closed."""

    NOT_STARTED = "nothing emitted yet"
    RUN = "agent_start emitted, no turn open"
    TURN = "turn_start emitted, nothing open in the turn"
    INPUT = "an input's message_start emitted, not its message_end"
    REQUEST = "a provider request running"
    ASSISTANT = "the response's message_start emitted, not its message_end"
    RESPONSE = "the response ended; its tool calls have not run"
    COMPACTING = "compaction_start emitted, not its compaction_end"
    TOOLS = "a tool batch running"
    RESULTS = "the turn's results are in; turn_end not emitted"
    FINISHED = "agent_end emitted"


class RunLifecycle:
    """See the module docstring. ``context`` is the run's working context (its messages
    list belongs to the run); ``make_batch`` builds the tool batch of a response."""

    __slots__ = (
        "_check",
        "_closing",
        "_compaction",
        "_declarations",
        "_input",
        "_make_batch",
        "_placeholder",
        "_resume",
        "_retry",
        "_stream",
        "_unannounced",
        "assistant",
        "batch",
        "context",
        "counters",
        "dispatcher",
        "new_messages",
        "phase",
        "results",
        "signal",
    )

    def __init__(
        self,
        context: AgentContext,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        check: Callable[[], Awaitable[None]],
        make_batch: Callable[[AssistantMessage, list[ToolCall]], ToolBatch],
    ) -> None:
        self.context = context
        self.dispatcher = dispatcher
        self.signal = signal
        self.phase = Phase.NOT_STARTED
        self.new_messages: list[AgentMessage] = []
        self.assistant: AssistantMessage | None = None
        self.results: list[ToolResultMessage] = []
        self.batch: ToolBatch | None = None
        self._check = check
        self._make_batch = make_batch
        self._closing = False
        self._declarations = ToolDeclarations()
        # prompt messages already in the transcript whose events were not emitted yet
        self._unannounced: list[AgentMessage] = []
        self._input: tuple[AgentMessage, bool] | None = None
        self._stream: InlineStream | None = None
        self._placeholder = False  # the response's partial is in the transcript
        # a retry in progress: (attempt, the error retried, waiting for the backoff)
        self._retry: tuple[int, str, bool] | None = None
        # an open compaction: (the phase it opened in, its start event)
        self._compaction: tuple[Phase, CompactionStartEvent] | None = None
        self._resume: ResumePlan | None = None  # a resumed run's batch not committed yet
        # what the run spends, when it has limits: every response of a request and every
        # tool result is counted here, where it enters the transcript
        self.counters: RunCounters | None = None

    async def _emit(self, event: Any) -> None:
        await self.dispatcher.emit(event)
        if not self._closing:
            await self._check()

    # ------------------------------------------------------------------ run and turns

    async def start(self, prompts: list[AgentMessage] | None) -> None:
        """``agent_start`` and the first ``turn_start``, then the prompts (``None``:
        continuing). The prompts enter the transcript first, so an abort during these
        events still keeps them."""
        if prompts is not None:
            context = self.context
            initial = self._declarations.declare(context, prompts)
            context.messages.extend(initial)
            self.new_messages.extend(initial)
            self._unannounced.extend(initial)
        self.phase = Phase.RUN
        await self._emit(AgentStartEvent())
        self.phase = Phase.TURN
        await self._emit(TurnStartEvent())
        await self._announce()

    async def start_resume(self, plan: ResumePlan, batch: ToolBatch) -> None:
        """``agent_start`` and the ``turn_start`` of a resumed run: the paused turn goes
        on with ``batch``, which is open from ``turn_start`` on (an abort from then on
        gives its calls their results)."""
        self.phase = Phase.RUN
        await self._emit(AgentStartEvent())
        self._resume = plan
        self.assistant = plan.message
        self.results = []
        self.begin_batch(batch)
        await self._emit(TurnStartEvent())

    async def start_turn(self) -> None:
        self.assistant = None
        self.results = []
        self.phase = Phase.TURN
        await self._emit(TurnStartEvent())

    async def end_turn(self) -> None:
        assert self.assistant is not None
        self.phase = Phase.RUN
        await self._emit(TurnEndEvent(message=self.assistant, tool_results=self.results))

    async def end_run(self) -> None:
        self.phase = Phase.FINISHED
        await self._emit(AgentEndEvent(messages=self.new_messages))

    # ------------------------------------------------------------------ inputs

    async def accept_inputs(self, pending: list[AgentMessage]) -> None:
        """Declare tool changes, then emit and append each pending message."""
        for message in self._declarations.declare(self.context, pending):
            await self._open_input(message, append=True)

    async def _announce(self) -> None:
        """Emit the prompt messages (already in the transcript) not emitted yet."""
        unannounced = self._unannounced
        while unannounced:
            await self._open_input(unannounced.pop(0), append=False)

    async def _open_input(self, message: AgentMessage, *, append: bool) -> None:
        self._input = (message, append)
        self.phase = Phase.INPUT
        await self._emit(MessageStartEvent(message=message))
        await self._close_input()

    async def _close_input(self) -> None:
        """End the open input (once started, a message is accepted, so events stay well
        nested also after an abort)."""
        assert self._input is not None
        message, append = self._input
        self._input = None
        self.phase = Phase.TURN
        if append:
            self.context.messages.append(message)
            self.new_messages.append(message)
        await self._emit(MessageEndEvent(message=message))

    # ------------------------------------------------------------------ the response

    def begin_request(self, stream: InlineStream) -> None:
        self._stream = stream
        self._placeholder = False
        self.assistant = None
        self.phase = Phase.REQUEST

    def stop_request(self) -> None:
        """The run was aborted: the running request accepts no more events."""
        if self._stream is not None:
            self._stream.stop()

    def _stream_event(self, event: Any) -> Any:
        """The agent event of a provider event the stream accepted (``None`` for the
        terminal ones): the partial enters the working transcript at ``start``; block
        events become ``message_update``s."""
        kind = event.type
        if kind == "done" or kind == "error":
            return None
        stream = self._stream
        assert stream is not None
        partial = stream.message
        if kind == "start":
            self.context.messages.append(partial)
            self._placeholder = True
            return MessageStartEvent(message=partial)
        if self._placeholder:
            return MessageUpdateEvent(message=partial, assistant_message_event=event)
        return None

    def deliver_stream_event(self, event: Any) -> None:
        """``_stream_event``, delivered synchronously (the dispatcher is ``ready()``)."""
        if self._placeholder:
            # the hot path, ``_stream_event`` inlined: a block event of a started response
            kind = event.type
            if kind != "done" and kind != "error" and kind != "start":
                stream = self._stream
                assert stream is not None
                self.dispatcher.deliver_now(
                    MessageUpdateEvent(message=stream.message, assistant_message_event=event)
                )
                return
        agent_event = self._stream_event(event)
        if agent_event is not None:
            self.dispatcher.deliver_now(agent_event)

    def send_stream_event(self, event: Any) -> Awaitable[None]:
        """``_stream_event``, delivered whatever the listeners: the awaitable delivering
        it (it may wait for them). A plain function returning the dispatcher's coroutine,
        so an event crosses one coroutine fewer on its way to asynchronous listeners."""
        agent_event = self._stream_event(event)
        if agent_event is None:
            return _NOTHING_TO_SEND
        return self.dispatcher.send(agent_event)

    async def accept_response(self, final: AssistantMessage, thinking_level: str) -> None:
        """The request's final message replaces its partial in the transcript."""
        if self._stream is not None:
            self._stream = None
            if self.counters is not None:
                self.counters.count_response(final)
        final.thinking_level = thinking_level
        self.assistant = final
        self.new_messages.append(final)
        messages = self.context.messages
        started = self._placeholder
        if started:
            if isinstance(messages, Transcript):
                messages.replace_last(final)
            else:
                messages[-1] = final
            self._placeholder = False
        else:
            messages.append(final)
        self.phase = Phase.ASSISTANT
        if not started:
            await self.dispatcher.send(MessageStartEvent(message=final))
        self.phase = Phase.RESPONSE
        await self._emit(MessageEndEvent(message=final))

    # ------------------------------------------------------------------ retries

    def _withdraw(self) -> str:
        """The response that just ended failed and is asked for again: it leaves the
        transcript (the event that says so makes the Agent's reducer drop it too).
        Returns its error."""
        failed = self.assistant
        assert failed is not None
        assert self.phase is Phase.RESPONSE
        messages = self.context.messages
        if messages and messages[-1] is failed:
            messages.pop()
        self.new_messages.remove(failed)
        self.assistant = None
        self.phase = Phase.TURN
        return failed.error_message or "Unknown error"

    async def withdraw_response(self, attempt: int, max_attempts: int, delay_ms: int) -> None:
        """The failed response is retried (``auto_retry_start``)."""
        error = self._withdraw()
        self._retry = (attempt, error, True)
        await self._emit(
            AutoRetryStartEvent(
                attempt=attempt, max_attempts=max_attempts, delay_ms=delay_ms, error_message=error
            )
        )

    async def withdraw_for_fallback(
        self, from_model: str, to_model: str, kind: str, position: int
    ) -> None:
        """The failed response goes on to the next model (``model_fallback``); retries
        of the model that failed end with it (``auto_retry_end``)."""
        error = self._withdraw()
        await self._emit(
            ModelFallbackEvent(
                from_model=from_model,
                to_model=to_model,
                kind=kind,
                error_message=error,
                position=position,
            )
        )
        if self._retry is not None:
            await self.end_retries(False, error)

    def retrying(self) -> None:
        """The backoff is over; the retried request starts."""
        if self._retry is not None:
            attempt, error, _ = self._retry
            self._retry = (attempt, error, False)

    async def end_retries(self, success: bool, final_error: str | None = None) -> None:
        """``auto_retry_end``, once a response that was retried settled."""
        retry, self._retry = self._retry, None
        if retry is not None:
            await self._emit(
                AutoRetryEndEvent(success=success, attempt=retry[0], final_error=final_error)
            )

    # ------------------------------------------------------------------ compaction

    async def begin_compaction(self, event: CompactionStartEvent) -> None:
        self._compaction = (self.phase, event)
        self.phase = Phase.COMPACTING
        await self._emit(event)

    async def end_compaction(
        self,
        event: CompactionEndEvent,
        compacted: list[AgentMessage] | None,
        withdrawn: AssistantMessage | None,
    ) -> None:
        """Close the compaction; with ``compacted``, the working transcript becomes it
        (in place: whoever holds the list sees it) and ``withdrawn``, the overflowed
        response that is asked again, leaves the run's new messages."""
        assert self._compaction is not None
        phase, _ = self._compaction
        self._compaction = None
        if compacted is not None:
            self.context.messages[:] = compacted
            self._declarations = ToolDeclarations()  # the list changed under its cache
            if withdrawn is not None:
                self.new_messages.remove(withdrawn)
                self.assistant = None
                phase = Phase.TURN
        self.phase = phase
        await self._emit(event)

    async def _close_compaction(self) -> None:
        assert self._compaction is not None
        start = self._compaction[1]
        await self.end_compaction(
            CompactionEndEvent(
                reason=start.reason,
                tokens_before=start.tokens_before,
                aborted=True,
                error_message=aborted_text(self.signal),
            ),
            None,
            None,
        )

    # ------------------------------------------------------------------ tools

    def begin_batch(self, batch: ToolBatch) -> None:
        self.batch = batch
        self.phase = Phase.TOOLS

    def commit_batch(self) -> list[ToolResultMessage]:
        """The batch's result messages join the transcript (in source order); those of a
        resumed batch take their placeholders' places."""
        batch = self.batch
        assert batch is not None
        self.batch = None
        results = batch.result_messages()
        if self.counters is not None:
            self.counters.count_results(results)
        plan = self._resume
        if plan is None:
            self.context.messages.extend(results)
            self.results = results
        else:
            self._resume = None
            self.results = plan.commit(self.context.messages, results)
        self.new_messages.extend(results)
        self.phase = Phase.RESULTS
        return self.results

    def without_tools(self) -> None:
        self.results = []
        self.phase = Phase.RESULTS

    # ------------------------------------------------------------------ limit outcome

    async def close_by_limit(
        self, message: AssistantMessage, thinking_level: str, inputs: list[AgentMessage]
    ) -> None:
        """End the run where the next request would start, with ``message`` (an empty
        ``aborted`` answer naming the limit) as the answer of a turn of its own; no hook
        is called. ``inputs`` (messages already taken from the queues for that request)
        enter the turn first; messages still queued stay queued."""
        if self.phase is Phase.RUN:
            await self.start_turn()
        await self.accept_inputs(inputs)
        await self.accept_response(message, thinking_level)
        self.without_tools()
        await self.end_turn()
        await self.end_run()

    # ------------------------------------------------------------------ abort outcome

    async def close_aborted(self, model: Model, thinking_level: str) -> None:
        """Write the aborted outcome: close what is open, innermost first, until
        ``agent_end`` (see the module docstring). Called outside the cancelled scope."""
        self._closing = True
        while True:
            match self.phase:
                case Phase.NOT_STARTED:
                    self.phase = Phase.RUN
                    await self._emit(AgentStartEvent())
                case Phase.RUN if self._unannounced:
                    # A prompt is part of the run once it started: it reaches the
                    # transcript (and the listeners) before the aborted answer to it.
                    self.phase = Phase.TURN
                    await self._emit(TurnStartEvent())
                case Phase.RUN:
                    await self.end_run()
                case Phase.TURN if self._unannounced:
                    await self._announce()
                case Phase.TURN:
                    response = empty_message(
                        model, "aborted", error_message=aborted_text(self.signal)
                    )
                    await self.accept_response(response, thinking_level)
                case Phase.INPUT:
                    await self._close_input()
                case Phase.REQUEST:
                    stream = self._stream
                    assert stream is not None
                    final = stream.aborted_message(aborted_text(self.signal))
                    await self.accept_response(final, thinking_level)
                case Phase.ASSISTANT:
                    assert self.assistant is not None
                    self.phase = Phase.RESPONSE
                    await self._emit(MessageEndEvent(message=self.assistant))
                case Phase.RESPONSE:
                    self._close_response()
                case Phase.COMPACTING:
                    await self._close_compaction()
                case Phase.TOOLS:
                    assert self.batch is not None
                    await self.batch.finish_aborted()
                    self.commit_batch()
                case Phase.RESULTS if self._retry is not None:
                    # aborted while retrying: during the backoff, the error it retried
                    _, error, waiting = self._retry
                    await self.end_retries(False, error if waiting else None)
                case Phase.RESULTS:
                    await self.end_turn()
                case Phase.FINISHED:
                    return

    def _close_response(self) -> None:
        """Aborted after the response arrived but before its tools started: every call
        still gets its one result."""
        assistant = self.assistant
        assert assistant is not None
        calls: list[ToolCall] = []
        if assistant.stop_reason not in ("error", "aborted"):
            calls = [b for b in assistant.content if isinstance(b, ToolCall)]
        if calls:
            self.begin_batch(self._make_batch(assistant, calls))
        else:
            self.without_tools()
