"""W9 long-conversation: one agent, 5 000 short tool turns (2 deltas, 1 echo call), then
a final answer. Reports the time per turn around turn 100 and around turn 5 000: a
runtime whose per-turn cost grows with the transcript shows it here.

``--faux`` runs the same turns on ``FauxProvider`` (with a session id, so its prompt-cache
simulation runs too) instead of the scripted model: the test model's own cost per request
must not grow with the conversation either."""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from typing import Any

from pi_trio.agent import Agent, RunPolicy
from pi_trio.ai import StreamOptions
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

from ._result import check, report
from .scripted import DELTA, echo_tool, make_agent, non_system, tool_turns

WINDOW = 100  # turns whose durations make each median


class _FauxModel:
    """The faux provider answering as the scripted model's turns do: two 8-character
    text chunks and one echo call, then a final answer; ``calls`` counts requests."""

    def __init__(self, turns_with_tools: int) -> None:
        tool_turn = faux_assistant_message([faux_text(DELTA * 2), faux_tool_call("echo", {"i": 0})])
        self.faux = FauxProvider(token_size=(2, 2))
        self.faux.set_responses(
            [tool_turn] * turns_with_tools + [faux_assistant_message(DELTA * 2)]
        )

    @property
    def calls(self) -> int:
        return self.faux.call_count


def _faux_agent(turns_with_tools: int, counter: list[int]) -> tuple[Agent, _FauxModel]:
    model = _FauxModel(turns_with_tools)
    agent = Agent(
        model=model.faux.get_model(),
        system_prompt="bench",
        tools=[echo_tool],
        stream_fn=model.faux,
        policy=RunPolicy(tool_execution="parallel"),
        stream_options=StreamOptions(session_id="w9"),
    )

    def count(event: Any) -> None:
        counter[0] += 1

    agent.subscribe(count)
    return agent, model


async def run(turns_with_tools: int = 5_000, faux: bool = False) -> dict[str, Any]:
    counter = [0]
    turns = tool_turns(turns_with_tools, 2, 1)
    agent, model = _faux_agent(turns_with_tools, counter) if faux else make_agent(turns, counter)
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
    if "--faux" in sys.argv[1:]:
        report("W9-faux", lambda: run(faux=True))
    else:
        report("W9", run)
