"""W3 many-agents: 1 000 concurrent agents, each 5 turns of (10, 2), then (10, 0)."""

from __future__ import annotations

from typing import Any

import trio

from ._result import check, report
from .scripted import expected_events, make_agent, non_system, tool_turns


async def run(agents: int = 1_000, turns_with_tools: int = 5) -> dict[str, Any]:
    counter = [0]
    turns = tool_turns(turns_with_tools, 10, 2)
    pairs = [make_agent(turns, counter) for _ in range(agents)]
    async with trio.open_nursery() as nursery:
        for agent, _ in pairs:
            nursery.start_soon(agent.prompt, "go")
    calls = turns_with_tools + 1
    expected = expected_events(turns, calls) * agents
    check(counter[0] == expected, f"W3: {counter[0]} events, expected {expected}")
    provider_calls = sum(model.calls for _, model in pairs)
    check(
        provider_calls == calls * agents,
        f"W3: {provider_calls} provider calls, expected {calls * agents}",
    )
    per_agent = {len(non_system(agent.state.messages)) for agent, _ in pairs}
    n_messages = 2 + turns_with_tools * 3
    check(per_agent == {n_messages}, f"W3: messages per agent {per_agent}, expected {n_messages}")
    return {
        "events": counter[0],
        "provider_calls": provider_calls,
        "messages_per_agent": n_messages,
    }


if __name__ == "__main__":
    report("W3", run)
