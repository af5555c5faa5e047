"""W9 long-conversation: one agent, 5 000 short tool turns (2 deltas, 1 echo call), then
a final answer. Reports the time per turn around turn 100 and around turn 5 000: a
runtime whose per-turn cost grows with the transcript shows it here."""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

from ._result import check, report
from .scripted import make_agent, non_system, tool_turns

WINDOW = 100  # turns whose durations make each median


async def run(turns_with_tools: int = 5_000) -> dict[str, Any]:
    counter = [0]
    turns = tool_turns(turns_with_tools, 2, 1)
    agent, model = make_agent(turns, counter)
    ends: list[float] = []

    def on_turn_end(event: Any) -> None:
        if event.type == "turn_end":
            ends.append(time.perf_counter())

    agent.subscribe(on_turn_end)
    await agent.prompt("go")
    durations = [b - a for a, b in itertools.pairwise(ends)]
    early = statistics.median(durations[max(0, 100 - WINDOW // 2) : 100 + WINDOW // 2])
    late = statistics.median(durations[-WINDOW:])
    messages = non_system(agent.state.messages)
    calls = turns_with_tools + 1
    check(model.calls == calls, f"W9: {model.calls} provider calls, expected {calls}")
    n_messages = 2 + turns_with_tools * 2
    check(len(messages) == n_messages, f"W9: {len(messages)} messages, expected {n_messages}")
    return {
        "events": counter[0],
        "turns": calls,
        "us_per_turn_at_100": round(early * 1e6, 1),
        "us_per_turn_late": round(late * 1e6, 1),
        "late_over_early": round(late / early, 2),
    }


if __name__ == "__main__":
    report("W9", run)
