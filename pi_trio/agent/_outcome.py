"""The aborted outcome of a run, written by the engine after its abort scope caught the
cancellation (or under a bounded shield when the caller was cancelled): the aborted
assistant message with the content received so far, one result per tool call of the
batch (``Operation aborted`` for calls without one), then ``turn_end`` and ``agent_end``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ai import AbortSignal, AssistantMessage, ToolCall
from ..ai._builder import empty_message
from ..ai._stream import ABORTED_TEXT
from ._types import AgentEndEvent, AgentStartEvent, MessageEndEvent, TurnEndEvent, TurnStartEvent

if TYPE_CHECKING:
    from ._loop import LoopRun

__all__ = ["write_aborted_outcome"]


async def write_aborted_outcome(run: LoopRun) -> None:
    """After an abort (outside the cancelled scope): finish what the run started, so
    events stay well nested and every tool call has exactly one result."""
    if run.finished:
        return
    emit = run.dispatcher.emit
    if not run.agent_started:
        run.agent_started = True
        await emit(AgentStartEvent())
    await run._close_input()
    if run.unannounced:
        # A prompt is part of the run once it started: it reaches the transcript (and
        # the listeners) before the aborted answer to it.
        if not run.turn_open:
            run.turn_open = True
            await emit(TurnStartEvent())
        await run._announce_prompts()
    stream = run.stream
    if stream is not None:
        run.stream = None
        final = stream.aborted_message(_abort_text(run.signal))
        await run._accept_assistant(final)
    elif run.batch is not None:
        await run.batch.finish_aborted()
        run._commit_batch()
    elif run.turn_open and run.assistant is None:
        await run._accept_assistant(_synthetic_aborted(run))
    elif run.assistant is not None and not run.assistant_ended:
        run.assistant_ended = True
        await emit(MessageEndEvent(message=run.assistant))
    assistant = run.assistant
    if (
        run.turn_open
        and assistant is not None
        and not run.batch_committed
        and assistant.stop_reason not in ("error", "aborted")
    ):
        calls = [b for b in assistant.content if isinstance(b, ToolCall)]
        if calls:
            # Aborted after the response arrived but before its tools started:
            # every call still gets its one result.
            run._new_batch(assistant, calls)
            assert run.batch is not None
            await run.batch.finish_aborted()
            run._commit_batch()
    if run.turn_open and run.assistant is not None:
        run.turn_open = False
        await emit(TurnEndEvent(message=run.assistant, tool_results=run.turn_results))
    run.finished = True
    await emit(AgentEndEvent(messages=run.new_messages))


def _synthetic_aborted(run: LoopRun) -> AssistantMessage:
    return empty_message(run.model, "aborted", error_message=_abort_text(run.signal))


def _abort_text(signal: AbortSignal) -> str:
    reason = signal.reason
    if isinstance(reason, str) and reason:
        return reason
    if isinstance(reason, BaseException) and str(reason):
        return str(reason)
    return ABORTED_TEXT
