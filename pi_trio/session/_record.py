"""Recording an agent's conversation into a ``SessionStore`` as it happens
(``record_session``): every finished message appended, and the whole session replaced
when the agent's transcript is rewritten under it (a compaction, a resumed approval)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..agent import Agent, AgentMessage
from ..agent.extend import is_approval_placeholder
from ..ai import to_json
from ._store import SessionError, SessionStore

__all__ = ["record_session"]


def _placeholders(messages: list[AgentMessage]) -> set[str]:
    """The call ids of the placeholders among the tool results that end ``messages``."""
    found: set[str] = set()
    index = len(messages)
    while index and getattr(messages[index - 1], "role", None) == "toolResult":
        index -= 1
        if is_approval_placeholder(messages[index]):
            found.add(messages[index].tool_call_id)
    return found


def _no_replace(store: Any) -> str:
    return (
        f"{store!r} has no replace(messages): a run of this agent can pause for "
        "approval (a tool has needs_approval), and resuming it puts each decided call's "
        "result in place of the placeholder saved at the pause; give the store a replace "
        "method that makes the messages the whole session (FileSessionStore has one)"
    )


def record_session(agent: Agent, store: SessionStore) -> Callable[[], None]:
    """Save ``agent``'s conversation in ``store`` as it happens: every message is
    appended when its ``message_end`` arrives (a listener; abort never interrupts
    listeners, so an aborted answer is saved too), a failed response with the next event,
    unless that is the ``auto_retry_start`` or ``model_fallback`` that withdraws it.
    Returns the function that stops.

    The store must hold the start of the agent's transcript: none of it (a new session:
    the agent's messages so far, such as its system prompt, are appended first) or all
    of it (the agent was resumed with ``Agent(model=..., messages=store.load())``).

    When the agent compacts its transcript (``compaction_end`` with the new transcript),
    the store is rewritten with it (``store.replace(messages)``; an overflowed response
    that is asked again is never saved). A run that paused for approval saves the
    placeholders of the waiting calls like any message; when ``agent.resume(...)``
    continues it, each call's result replaces its placeholder (``store.replace`` with
    the agent's transcript), so the store holds the transcript the agent holds. A store
    without ``replace`` cannot follow either: recording an agent that compacts
    (``RunPolicy(compaction=...)``), or one with a tool that needs approval, into such a
    store is refused.
    """
    if agent.state.is_streaming:
        raise SessionError(
            "record_session(agent, store) while the agent runs would miss the messages "
            "of the run so far; call it before prompt()"
        )
    replace = getattr(store, "replace", None)
    if agent.policy.compaction is not None and not callable(replace):
        raise SessionError(
            f"{store!r} has no replace(messages), so it cannot follow the compactions "
            "of an agent with RunPolicy(compaction=...): give the store a replace method "
            "(make the messages the whole session), or record an agent without compaction"
        )
    saved = store.load()
    held = agent.state.messages
    if len(saved) > len(held) or any(
        to_json(a) != to_json(b) for a, b in zip(saved, held, strict=False)
    ):
        raise SessionError(
            f"{store!r} holds {len(saved)} messages that are not the start of the agent's "
            f"{len(held)}; resume the agent from the store (Agent(model=..., "
            "messages=store.load())) or record into a new store"
        )
    for message in held[len(saved) :]:
        store.append(message)
    # The placeholders of a paused turn (by call id): a resumed run's results come before
    # any other message of the run, and each takes its placeholder's place; any other
    # message means the turn was not resumed.
    placeholders = _placeholders(held)
    approvals = any(getattr(t, "needs_approval", False) for t in agent.state.tools)
    if (placeholders or approvals) and not callable(replace):
        raise SessionError(_no_replace(store))
    # A failed response is saved once the next event shows it stays: with a retry policy
    # (``RunPolicy(retry=...)``) ``auto_retry_start`` withdraws it from the transcript
    # instead, as ``model_fallback`` does with a fallback (``RunPolicy(fallback=...)``).
    failed: list[AgentMessage] = []

    def keep(message: AgentMessage) -> None:
        if getattr(message, "role", None) != "toolResult":
            placeholders.clear()
        elif message.tool_call_id in placeholders:
            placeholders.discard(message.tool_call_id)
            if not callable(replace):
                raise SessionError(_no_replace(store))
            # the agent's state has the result in the placeholder's place already (an
            # event is reduced before listeners see it), and the store holds what the
            # agent holds
            replace(list(agent.state.messages))
            return
        elif is_approval_placeholder(message):
            placeholders.add(message.tool_call_id)
        store.append(message)

    def save(event: Any) -> None:
        kind = event.type
        if kind == "compaction_start" or kind == "compaction_end":
            # neither settles a failed response: an overflowed one leaves the transcript
            # when the compaction succeeds, else the event after it decides (a fallback
            # may still withdraw it)
            if kind == "compaction_end" and event.messages is not None:
                failed.clear()
                if not callable(replace):
                    raise SessionError(
                        f"the agent compacted its transcript, and {store!r} has no "
                        "replace(messages) to follow it; the store holds the transcript as "
                        "it was before the compaction"
                    )
                replace(event.messages)
            return
        if failed:
            message = failed.pop()
            if kind == "auto_retry_start" or kind == "model_fallback":
                return
            keep(message)
        if kind == "message_end":
            message = event.message
            if getattr(message, "role", None) == "assistant" and message.stop_reason == "error":
                failed.append(message)
            else:
                keep(message)

    return agent.subscribe(save)
