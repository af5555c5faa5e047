"""What prompt() and continue_() return: the run's messages and how it ended."""

from __future__ import annotations

from typing import Any

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


async def test_a_run_aborted_between_turns_is_not_ok_although_no_answer_says_so() -> None:
    from pi_trio.agent import tool
    from pi_trio.testing import faux_tool_call

    @tool
    def lookup() -> str:
        """Look something up."""
        return "found"

    provider = FauxProvider()
    provider.set_responses(
        [
            faux_assistant_message([faux_tool_call("lookup", {})], stop_reason="toolUse"),
            faux_assistant_message("never asked for"),
        ]
    )
    agent = Agent(model=provider.get_model(), stream_fn=provider, tools=[lookup])

    def abort_on_tool_result(event: Any) -> None:
        if event.type == "message_end" and event.message.role == "toolResult":
            agent.abort()

    agent.subscribe(abort_on_tool_result)
    result = await agent.prompt("hi")
    assert [m.role for m in result.messages] == ["user", "assistant", "toolResult"]
    assert provider.call_count == 1
    assert not result.ok
    assert result.stop_reason == "aborted"
    assert result.error_message == "The run was aborted before its final answer"
    with pytest.raises(RunAbortedError, match="before its final answer"):
        result.raise_for_error()


async def test_an_abort_after_the_final_answer_keeps_the_answer_ok() -> None:
    agent = make_agent(faux_assistant_message("all done"))
    agent.subscribe(lambda event: agent.abort() if event.type == "turn_end" else None)
    result = await agent.prompt("hi")
    assert result.ok
    assert result.text == "all done"


async def test_an_unscripted_faux_provider_fails_the_run_with_its_reason() -> None:
    provider = FauxProvider()  # no responses queued
    agent = Agent(model=provider.get_model(), stream_fn=provider)
    result = await agent.prompt("hi")
    assert not result.ok
    assert result.error_message == "No more faux responses queued"
    with pytest.raises(RunError, match=r"^No more faux responses queued$"):
        result.raise_for_error()
