"""The hooks that reshape what comes next: ``prepare_next_turn`` (before a follow-on
turn: messages to add, a new context, model or thinking level) and ``prepare_request``
(right before each request, with messages steered meanwhile joining that request).

Both run after every event emitted so far was delivered (the decision-point barrier) and
inside the run's abort scope; an abort requested during a synchronous hook takes effect
as soon as it returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._hooks import call_hook, coerce_result, first_parameter_name, positional_arity
from ._types import (
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentRequestUpdate,
    AgentTurnContext,
    PrepareRequestContext,
)

if TYPE_CHECKING:
    from ._loop import LoopRun

__all__ = ["prepare_next_turn", "prepare_request"]


def _apply_update(run: LoopRun, update: AgentLoopTurnUpdate | AgentRequestUpdate) -> None:
    if update.context is not None:
        run.context = update.context
    if update.model is not None:
        run.model = update.model
    if update.thinking_level is not None:
        run.thinking_level = update.thinking_level


async def prepare_next_turn(run: LoopRun, turn: AgentTurnContext) -> list[AgentMessage]:
    """Call the ``prepare_next_turn`` hook (either form); return the messages it adds."""
    hook = run.config.prepare_next_turn
    if hook is None:
        return []
    await run.dispatcher.settle()
    first = first_parameter_name(hook)
    if first == "signal" or positional_arity(hook) == 0:
        raw = await call_hook(hook, run.signal)
    else:
        raw = await call_hook(hook, turn, run.signal)
    if run.signal._aborted:
        await run._abort_now()
    update = coerce_result(raw, AgentLoopTurnUpdate, "prepare_next_turn")
    if update is None:
        return []
    _apply_update(run, update)
    return list(update.messages or [])


async def prepare_request(run: LoopRun) -> None:
    """Call the ``prepare_request`` hook, apply its update, then accept the messages
    steered while it ran (they join this request)."""
    hook = run.config.prepare_request
    if hook is None:
        return
    await run.dispatcher.settle()
    request = PrepareRequestContext(
        context=run.context, model=run.model, thinking_level=run.thinking_level
    )
    raw = await call_hook(hook, request, run.signal)
    if run.signal._aborted:
        await run._abort_now()
    update = coerce_result(raw, AgentRequestUpdate, "prepare_request")
    if update is not None:
        _apply_update(run, update)
    late = await run._poll(run.config.get_request_steering_messages)
    if late:
        await run._accept_input(late)
