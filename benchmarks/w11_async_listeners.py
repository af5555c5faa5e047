"""W11 async-listeners: one agent streams 100 000 text deltas to 10 asynchronous
listeners (each counts the event and returns without waiting). Reports CPU per event,
and the same stream with the listeners synchronous, so the difference is what async
delivery costs."""

from __future__ import annotations

import time
from typing import Any

from ._result import check, report
from .scripted import Turn, expected_events, make_agent


async def _stream(deltas: int, listeners: int, asynchronous: bool) -> tuple[int, float]:
    counter = [0]
    turns = [Turn(deltas, 0)]
    agent, _ = make_agent(turns, counter)
    counts = [0] * listeners

    def sync_listener(index: int) -> Any:
        def listener(event: Any) -> None:
            counts[index] += 1

        return listener

    def async_listener(index: int) -> Any:
        async def listener(event: Any) -> None:
            counts[index] += 1

        return listener

    for index in range(listeners):
        agent.subscribe(async_listener(index) if asynchronous else sync_listener(index))
    cpu = time.process_time()
    await agent.prompt("go")
    cpu = time.process_time() - cpu
    expected = expected_events(turns, 1)
    check(counter[0] == expected, f"W11: {counter[0]} events, expected {expected}")
    check(set(counts) == {expected}, f"W11: listeners saw {set(counts)}, expected {expected}")
    return counter[0], cpu


async def run(deltas: int = 100_000, listeners: int = 10) -> dict[str, Any]:
    events, cpu_async = await _stream(deltas, listeners, True)
    _, cpu_sync = await _stream(deltas, listeners, False)
    _, cpu_one = await _stream(deltas, 1, True)
    _, cpu_none = await _stream(deltas, 1, False)
    return {
        "events": events,
        "wall_s": cpu_async,
        "us_cpu_per_event": round(cpu_async / events * 1e6, 2),
        "us_cpu_per_event_sync": round(cpu_sync / events * 1e6, 2),
        "us_first_async_listener": round((cpu_one - cpu_none) / events * 1e6, 2),
    }


if __name__ == "__main__":
    report("W11", run)
