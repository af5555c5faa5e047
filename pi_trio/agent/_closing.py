"""The two endings a run's lifecycle writes on its own, without the loop deciding.

``close_aborted`` writes the aborted outcome from the lifecycle's ``Phase`` alone: it
closes the innermost open thing until the run is finished (an open input gets its
``message_end``, a request becomes the aborted message with the content received so far,
an open compaction its ``compaction_end``, tool calls get one result each, then
``turn_end`` and ``agent_end``). While closing, nothing is checked: the outcome is written
whole.

``close_by_limit`` ends the run where the next request would start, with the answer that
names the limit (``LimitHit.message``).
"""

from __future__ import annotations

from ..ai import AssistantMessage, Model, ToolCall
from ..ai._seam import empty_message
from ._again import end_retries
from ._lifecycle import Phase, RunLifecycle
from ._outcomes import aborted_text
from ._types import (
    AgentMessage,
    AgentStartEvent,
    CompactionEndEvent,
    MessageEndEvent,
    TurnStartEvent,
)

__all__ = ["close_aborted", "close_by_limit"]


async def close_by_limit(
    life: RunLifecycle, message: AssistantMessage, thinking_level: str, inputs: list[AgentMessage]
) -> None:
    """End the run where the next request would start, with ``message`` (an empty
    ``aborted`` answer naming the limit) as the answer of a turn of its own; no hook
    is called. ``inputs`` (messages already taken from the queues for that request)
    enter the turn first; messages still queued stay queued."""
    if life.phase is Phase.RUN:
        await life.start_turn()
    await life.accept_inputs(inputs)
    await life.accept_response(message, thinking_level)
    life.without_tools()
    await life.end_turn()
    await life.end_run()


async def close_aborted(life: RunLifecycle, model: Model, thinking_level: str) -> None:
    """Write the aborted outcome: close what is open, innermost first, until
    ``agent_end`` (see the module docstring). Called outside the cancelled scope."""
    life.closing = True
    while True:
        match life.phase:
            case Phase.NOT_STARTED:
                life.phase = Phase.RUN
                await life.emit(AgentStartEvent())
            case Phase.RUN if life.unannounced:
                # A prompt is part of the run once it started: it reaches the
                # transcript (and the listeners) before the aborted answer to it.
                life.phase = Phase.TURN
                await life.emit(TurnStartEvent())
            case Phase.RUN:
                await life.end_run()
            case Phase.TURN if life.unannounced:
                await life.announce()
            case Phase.TURN:
                response = empty_message(model, "aborted", error_message=aborted_text(life.signal))
                await life.accept_response(response, thinking_level)
            case Phase.INPUT:
                await life.close_input()
            case Phase.REQUEST:
                stream = life.stream
                assert stream is not None
                final = stream.aborted_message(aborted_text(life.signal))
                await life.accept_response(final, thinking_level)
            case Phase.ASSISTANT:
                assert life.assistant is not None
                life.phase = Phase.RESPONSE
                await life.emit(MessageEndEvent(message=life.assistant))
            case Phase.RESPONSE:
                _close_response(life)
            case Phase.COMPACTING:
                await _close_compaction(life)
            case Phase.TOOLS:
                assert life.batch is not None
                await life.batch.finish_aborted()
                life.commit_batch()
            case Phase.RESULTS if life.retry is not None:
                # aborted while retrying: during the backoff, the error it retried
                _, error, waiting = life.retry
                await end_retries(life, False, error if waiting else None)
            case Phase.RESULTS:
                await life.end_turn()
            case Phase.FINISHED:
                return


def _close_response(life: RunLifecycle) -> None:
    """Aborted after the response arrived but before its tools started: every call
    still gets its one result."""
    assistant = life.assistant
    assert assistant is not None
    calls: list[ToolCall] = []
    if assistant.stop_reason not in ("error", "aborted"):
        calls = [b for b in assistant.content if isinstance(b, ToolCall)]
    if calls:
        life.begin_batch(life.make_batch(assistant, calls))
    else:
        life.without_tools()


async def _close_compaction(life: RunLifecycle) -> None:
    """Aborted during a compaction: its ``compaction_end`` says so."""
    assert life.compaction is not None
    start = life.compaction[1]
    await life.end_compaction(
        CompactionEndEvent(
            reason=start.reason,
            tokens_before=start.tokens_before,
            aborted=True,
            error_message=aborted_text(life.signal),
        ),
        None,
        None,
    )
