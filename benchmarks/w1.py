"""W1 long-stream: one agent, one call of 100 000 text deltas (100 010 events)."""

from __future__ import annotations

from typing import Any

from ._result import check, report
from .scripted import DELTA, Turn, expected_events, make_agent


async def run(deltas: int = 100_000) -> dict[str, Any]:
    counter = [0]
    turns = [Turn(deltas, 0)]
    agent, model = make_agent(turns, counter)
    await agent.prompt("go")
    final = agent.state.messages[-1]
    text_len = len(final.content[0].text)
    expected = expected_events(turns, 1)
    check(counter[0] == expected, f"W1: {counter[0]} events, expected {expected}")
    check(
        text_len == len(DELTA) * deltas, f"W1: final text {text_len} chars, expected {8 * deltas}"
    )
    check(model.calls == 1, f"W1: {model.calls} provider calls, expected 1")
    check(final.stop_reason == "stop", f"W1: final stop reason {final.stop_reason!r}")
    return {"events": counter[0], "final_text_len": text_len, "provider_calls": model.calls}


if __name__ == "__main__":
    report("W1", run)
