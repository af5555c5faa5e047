"""An abort and the caller's own cancellation take effect at the same places.

A listener (or a sync hook) that aborts the run or cancels the caller's scope stops
everything that would come next: no later hook runs, and no request is made. Both leave
the agent consistent and reusable.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pi_trio.agent import Agent
from pi_trio.testing import FauxProvider, faux_assistant_message


class Calls:
    def __init__(self) -> None:
        self.names: list[str] = []

    def transform_context(self, messages: list[Any]) -> list[Any]:
        self.names.append("transform_context")
        return messages

    def convert_to_llm(self, messages: list[Any]) -> list[Any]:
        self.names.append("convert_to_llm")
        return messages

    def get_api_key(self, provider: str) -> str:
        self.names.append("get_api_key")
        return "key"


def make_agent(calls: Calls) -> tuple[Agent, FauxProvider]:
    provider = FauxProvider()
    provider.set_responses([faux_assistant_message("answer")])
    agent = Agent(
        model=provider.get_model(),
        stream_fn=provider,
        transform_context=calls.transform_context,
        convert_to_llm=calls.convert_to_llm,
        get_api_key=calls.get_api_key,
    )
    return agent, provider


@pytest.mark.parametrize("how", ["abort", "cancel the caller's scope"])
async def test_a_listener_stopping_the_run_on_the_prompt_stops_every_later_hook(how: str) -> None:
    calls = Calls()
    agent, provider = make_agent(calls)
    seen: list[str] = []
    with anyio.CancelScope() as scope:

        def listener(event: Any) -> None:
            seen.append(event.type)
            if event.type == "message_end" and event.message.role == "user":
                if how == "abort":
                    agent.abort()
                else:
                    scope.cancel()

        agent.subscribe(listener)
        await agent.prompt("hello")
    assert calls.names == []
    assert provider.state.call_count == 0
    assert seen[-1] == "agent_end"
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert not agent.state.is_streaming


@pytest.mark.parametrize("how", ["abort", "cancel the caller's scope"])
@pytest.mark.parametrize("hook", ["transform_context", "convert_to_llm", "get_api_key"])
async def test_a_sync_hook_stopping_the_run_stops_what_comes_after_it(how: str, hook: str) -> None:
    calls = Calls()
    agent, provider = make_agent(calls)
    order = ["transform_context", "convert_to_llm", "get_api_key"]
    with anyio.CancelScope() as scope:
        original = getattr(calls, hook)

        def stopping(value: Any) -> Any:
            if how == "abort":
                agent.abort()
            else:
                scope.cancel()
            return original(value)

        setattr(agent.hooks, hook, stopping)
        await agent.prompt("hello")
    assert calls.names == order[: order.index(hook) + 1]
    assert provider.state.call_count == 0
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_after_the_callers_cancellation_the_agent_runs_again() -> None:
    calls = Calls()
    agent, provider = make_agent(calls)
    with anyio.CancelScope() as scope:
        unsubscribe = agent.subscribe(
            lambda event: scope.cancel() if event.type == "turn_start" else None
        )
        await agent.prompt("hello")
    unsubscribe()
    assert not agent.state.is_streaming
    provider.set_responses([faux_assistant_message("again")])
    await agent.prompt("once more")
    assert [(m.role, getattr(m, "stop_reason", None)) for m in agent.state.messages] == [
        ("user", None),
        ("assistant", "aborted"),
        ("user", None),
        ("assistant", "stop"),
    ]
    assert agent.state.messages[-1].content[0].text == "again"
    assert provider.state.call_count == 1
