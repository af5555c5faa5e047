"""The model's view of a long transcript is converted incrementally, and stays exact when
the transcript is edited in place, replaced, or holds messages a model does not take."""

from __future__ import annotations

from typing import Any

from pi_trio.agent import Agent
from pi_trio.agent._view import LlmView, Transcript
from pi_trio.agent.hooks import AgentLoopTurnUpdate
from pi_trio.ai import UserMessage
from pi_trio.testing import FauxProvider, faux_assistant_message


class Note:
    """An application message: kept in the transcript, never sent to the model."""

    role = "note"


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=0)


def test_appended_messages_are_converted_and_edits_start_over() -> None:
    view = LlmView()
    messages = Transcript([user("a"), Note()])
    assert [m.content for m in view.convert(messages)] == ["a"]
    messages.append(user("b"))
    assert [m.content for m in view.convert(messages)] == ["a", "b"]
    messages[0] = user("A")
    assert [m.content for m in view.convert(messages)] == ["A", "b"]
    del messages[0]
    assert [m.content for m in view.convert(messages)] == ["b"]
    messages += [user("c")]
    assert [m.content for m in view.convert(messages)] == ["b", "c"]
    other = Transcript([user("x")])
    assert [m.content for m in view.convert(other)] == ["x"]
    assert [m.content for m in view.convert([user("plain")])] == ["plain"]


def test_each_conversion_is_a_new_list() -> None:
    view = LlmView()
    messages = Transcript([user("a")])
    first = view.convert(messages)
    messages.append(user("b"))
    view.convert(messages)
    assert [m.content for m in first] == ["a"]


async def test_a_hook_that_edits_the_transcript_in_place_is_seen_by_the_next_request() -> None:
    seen: list[list[str]] = []

    def factory(context: Any, *_: Any) -> Any:
        seen.append([_text(m) for m in context.messages if m.role == "user"])
        return faux_assistant_message("ok")

    provider = FauxProvider()
    provider.set_responses([factory, factory])

    def redact_first_prompt(turn: Any) -> AgentLoopTurnUpdate | None:
        messages = turn.context.messages
        messages[0] = user("[redacted]")
        return AgentLoopTurnUpdate(messages=[user("second")])

    calls = 0

    def continue_once(turn: Any) -> str | None:
        nonlocal calls
        calls += 1
        return "continue" if calls == 1 else None

    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        prepare_next_turn=redact_first_prompt,
        finish_turn=continue_once,
    )
    await agent.prompt("secret")
    assert seen == [["secret"], ["[redacted]", "second"]]


def _text(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content)
