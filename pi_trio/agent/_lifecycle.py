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

The loop (``LoopRun``) decides what happens next; the lifecycle only records and announces
it. The endings it writes on its own, the aborted outcome and the one a run limit forces,
are ``_closing``'s (``close_aborted``, ``close_by_limit``): they read the phase and close
what it says is open.

After each structural event the run's abort check runs (``check``), so an abort or a
cancellation requested by a listener takes effect right there; while ``closing``, nothing
is checked: the outcome is written whole.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Final

from ..ai import AbortSignal, AssistantMessage, ToolCall, ToolResultMessage
from ..ai._seam import InlineStream
from ._batch import ToolBatch
from ._declarations import ToolDeclarations
from ._dispatch import Dispatcher
from ._limits import RunCounters
from ._resume import ResumePlan
from ._types import (
    AgentContext,
    AgentEndEvent,
    AgentMessage,
    AgentStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
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
        "_declarations",
        "_input",
        "_placeholder",
        "_resume",
        "assistant",
        "batch",
        "closing",
        "compaction",
        "context",
        "counters",
        "dispatcher",
        "make_batch",
        "new_messages",
        "phase",
        "results",
        "retry",
        "signal",
        "stream",
        "unannounced",
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
        self.make_batch = make_batch
        self.closing = False
        self._declarations = ToolDeclarations()
        # prompt messages already in the transcript whose events were not emitted yet
        self.unannounced: list[AgentMessage] = []
        self._input: tuple[AgentMessage, bool] | None = None
        self.stream: InlineStream | None = None
        self._placeholder = False  # the response's partial is in the transcript
        # a retry in progress: (attempt, the error retried, waiting for the backoff)
        self.retry: tuple[int, str, bool] | None = None
        # an open compaction: (the phase it opened in, its start event)
        self.compaction: tuple[Phase, CompactionStartEvent] | None = None
        self._resume: ResumePlan | None = None  # a resumed run's batch not committed yet
        # what the run spends, when it has limits: every response of a request and every
        # tool result is counted here, where it enters the transcript
        self.counters: RunCounters | None = None

    async def emit(self, event: Any) -> None:
        await self.dispatcher.emit(event)
        if not self.closing:
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
            self.unannounced.extend(initial)
        self.phase = Phase.RUN
        await self.emit(AgentStartEvent())
        self.phase = Phase.TURN
        await self.emit(TurnStartEvent())
        await self.announce()

    async def start_resume(self, plan: ResumePlan, batch: ToolBatch) -> None:
        """``agent_start`` and the ``turn_start`` of a resumed run: the paused turn goes
        on with ``batch``, which is open from ``turn_start`` on (an abort from then on
        gives its calls their results)."""
        self.phase = Phase.RUN
        await self.emit(AgentStartEvent())
        self._resume = plan
        self.assistant = plan.message
        self.results = []
        self.begin_batch(batch)
        await self.emit(TurnStartEvent())

    async def start_turn(self) -> None:
        self.assistant = None
        self.results = []
        self.phase = Phase.TURN
        await self.emit(TurnStartEvent())

    async def end_turn(self) -> None:
        assert self.assistant is not None
        self.phase = Phase.RUN
        await self.emit(TurnEndEvent(message=self.assistant, tool_results=self.results))

    async def end_run(self) -> None:
        self.phase = Phase.FINISHED
        await self.emit(AgentEndEvent(messages=self.new_messages))

    # ------------------------------------------------------------------ inputs

    async def accept_inputs(self, pending: list[AgentMessage]) -> None:
        """Declare tool changes, then emit and append each pending message."""
        for message in self._declarations.declare(self.context, pending):
            await self._open_input(message, append=True)

    async def announce(self) -> None:
        """Emit the prompt messages (already in the transcript) not emitted yet."""
        unannounced = self.unannounced
        while unannounced:
            await self._open_input(unannounced.pop(0), append=False)

    async def _open_input(self, message: AgentMessage, *, append: bool) -> None:
        self._input = (message, append)
        self.phase = Phase.INPUT
        await self.emit(MessageStartEvent(message=message))
        await self.close_input()

    async def close_input(self) -> None:
        """End the open input (once started, a message is accepted, so events stay well
        nested also after an abort)."""
        assert self._input is not None
        message, append = self._input
        self._input = None
        self.phase = Phase.TURN
        if append:
            self.context.messages.append(message)
            self.new_messages.append(message)
        await self.emit(MessageEndEvent(message=message))

    # ------------------------------------------------------------------ the response

    def begin_request(self, stream: InlineStream) -> None:
        self.stream = stream
        self._placeholder = False
        self.assistant = None
        self.phase = Phase.REQUEST

    def stop_request(self) -> None:
        """The run was aborted: the running request accepts no more events."""
        if self.stream is not None:
            self.stream.stop()

    def _stream_event(self, event: Any) -> Any:
        """The agent event of a provider event the stream accepted (``None`` for the
        terminal ones): the partial enters the working transcript at ``start``; block
        events become ``message_update``s."""
        kind = event.type
        if kind == "done" or kind == "error":
            return None
        stream = self.stream
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
                stream = self.stream
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
        if self.stream is not None:
            self.stream = None
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
        await self.emit(MessageEndEvent(message=final))

    # ------------------------------------------------------------------ asked again

    def withdraw(self) -> str:
        """The response that just ended failed and is asked for again: it leaves the
        transcript (the event that says so, ``_again``'s, makes the Agent's reducer drop
        it too). Returns its error."""
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

    # ------------------------------------------------------------------ compaction

    async def begin_compaction(self, event: CompactionStartEvent) -> None:
        self.compaction = (self.phase, event)
        self.phase = Phase.COMPACTING
        await self.emit(event)

    async def end_compaction(
        self,
        event: CompactionEndEvent,
        compacted: list[AgentMessage] | None,
        withdrawn: AssistantMessage | None,
    ) -> None:
        """Close the compaction; with ``compacted``, the working transcript becomes it
        (in place: whoever holds the list sees it) and ``withdrawn``, the overflowed
        response that is asked again, leaves the run's new messages."""
        assert self.compaction is not None
        phase, _ = self.compaction
        self.compaction = None
        if compacted is not None:
            self.context.messages[:] = compacted
            self._declarations = ToolDeclarations()  # the list changed under its cache
            if withdrawn is not None:
                self.new_messages.remove(withdrawn)
                self.assistant = None
                phase = Phase.TURN
        self.phase = phase
        await self.emit(event)

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
