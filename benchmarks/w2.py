"""W2 tool-turns: one agent, 200 turns of (20 deltas, 4 echo calls), then a final answer."""

from __future__ import annotations

from typing import Any

from ._result import check, report
from .scripted import expected_events, make_agent, non_system, tool_turns


async def run(turns_with_tools: int = 200, text: int = 20, tools: int = 4) -> dict[str, Any]:
    counter = [0]
    turns = tool_turns(turns_with_tools, text, tools)
    agent, model = make_agent(turns, counter)
    await agent.prompt("go")
    messages = non_system(agent.state.messages)
    tool_calls = sum(
        1 for m in messages if m.role == "assistant" for b in m.content if b.type == "toolCall"
    )
    results = [m for m in messages if m.role == "toolResult"]
    calls = turns_with_tools + 1
    expected = expected_events(turns, calls)
    check(counter[0] == expected, f"W2: {counter[0]} events, expected {expected}")
    check(model.calls == calls, f"W2: {model.calls} provider calls, expected {calls}")
    n_messages = 2 + turns_with_tools * (1 + tools)
    check(len(messages) == n_messages, f"W2: {len(messages)} messages, expected {n_messages}")
    n_tools = turns_with_tools * tools
    check(tool_calls == n_tools, f"W2: {tool_calls} tool calls, expected {n_tools}")
    bad = [r for r in results if r.is_error or r.content[0].text != "ok"]
    check(len(results) == n_tools and not bad, f"W2: tool results not all ok: {bad[:1]!r}")
    return {
        "events": counter[0],
        "messages": len(messages),
        "provider_calls": model.calls,
        "tool_calls": tool_calls,
    }


if __name__ == "__main__":
    report("W2", run)
