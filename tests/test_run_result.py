"""What prompt() and continue_() return: the run's messages and how it ended."""

from __future__ import annotations

import pytest

from pi_trio.agent import Agent, RunAbortedError, RunError, RunResult
from pi_trio.testing import FauxProvider, faux_assistant_message


def make_agent(*responses: object) -> Agent:
    provider = FauxProvider()
    provider.set_responses(list(responses))
    return Agent(model=provider.get_model(), stream_fn=provider)


async def test_a_successful_run_returns_its_new_messages_and_text() -> None:
    agent = make_agent(faux_assistant_message("hello there"))
    result = await agent.prompt("hi")
    assert isinstance(result, RunResult)
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.messages == agent.state.messages[-2:]
    assert result.ok
    assert result.text == "hello there"
    assert result.stop_reason == "stop"
    assert result.raise_for_error() is result


async def test_a_failed_request_is_returned_and_raise_for_error_names_the_reason() -> None:
    agent = make_agent(
        faux_assistant_message("", stop_reason="error", error_message="503 overloaded")
    )
    result = await agent.prompt("hi")
    assert not result.ok
    assert result.error_message == "503 overloaded"
    with pytest.raises(RunError, match=r"^503 overloaded$") as caught:
        result.raise_for_error()
    assert caught.value.result is result
    assert not isinstance(caught.value, RunAbortedError)


async def test_an_aborted_run_raises_run_aborted_error() -> None:
    agent = make_agent(faux_assistant_message("a long answer " * 20))
    agent.subscribe(lambda event: agent.abort() if event.type == "message_update" else None)
    result = await agent.prompt("hi")
    assert result.stop_reason == "aborted"
    with pytest.raises(RunAbortedError, match="Request was aborted"):
        result.raise_for_error()


async def test_a_hook_that_raises_returns_the_failure_message() -> None:
    agent = make_agent(faux_assistant_message("never"))

    def broken(messages: list[object]) -> list[object]:
        raise ValueError("the context is broken")

    agent.hooks.transform_context = broken
    result = await agent.prompt("hi")
    assert result.error_message == "the context is broken"
    assert len(result.messages) == 1


async def test_continue_returns_the_result_too() -> None:
    agent = make_agent(faux_assistant_message("first"), faux_assistant_message("second"))
    await agent.prompt("hi")
    agent.follow_up("more")
    result = await agent.continue_()
    assert result.text == "second"
