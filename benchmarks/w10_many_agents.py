"""W10 ten-thousand-agents: N concurrent agents, each 3 tool turns of (10, 2) then the
final (10, 0) answer, at N = 1 000 and N = 10 000, each size in a fresh process.

Reports the time per agent, the peak RSS per agent above the process's baseline (RSS with
everything imported and one agent already run), the garbage collector's share of the
time (``gc.callbacks``), and how the time per agent grows from 1 000 to 10 000 agents.

``python -m benchmarks.w10_many_agents --agents N [--census]`` runs one size;
``--census`` also prints, to stderr, what each agent holds while all of them are in
their last turn: gc-tracked objects per agent by type, and the largest allocation sites
(``tracemalloc``, which slows the run down).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections import Counter
from typing import Any

import trio

from ._result import IMPL, check
from ._scale import GcClock, reset_peak, rss_kb, run_sizes, size_line
from .scripted import expected_events, make_agent, non_system, tool_turns

TURNS = tool_turns(3, 10, 2)
CALLS = len(TURNS)
PER_AGENT = expected_events(TURNS, CALLS)
MESSAGES = 2 + (CALLS - 1) * 3  # prompt, 3 x (answer, 2 results), final answer
CENSUS_ROWS = 70


async def _agents(agents: int, counter: list[int], census: bool = False) -> list[Any]:
    pairs = [make_agent(TURNS, counter) for _ in range(agents)]
    if census:
        _watch_last_turn(pairs[-1][0], agents)
    async with trio.open_nursery() as nursery:
        for agent, _ in pairs:
            nursery.start_soon(agent.prompt, "go")
    return pairs


def _watch_last_turn(agent: Any, agents: int) -> None:
    """Take the census when the last agent started (it runs last in each round) begins its
    last turn: then every agent is in its last turn."""
    starts = [0]

    def on_event(event: Any) -> None:
        if event.type == "turn_start":
            starts[0] += 1
            if starts[0] == CALLS:
                _print_census(agents)

    agent.subscribe(on_event)


_BEFORE: Counter[str] = Counter()


def _type_census() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def _print_census(agents: int) -> None:
    now = _type_census()
    grown = {name: (now[name] - _BEFORE[name]) / agents for name in now}
    rows = sorted(grown.items(), key=lambda kv: -kv[1])[:CENSUS_ROWS]
    total = sum(v for v in grown.values() if v > 0)
    print(f"gc-tracked objects per agent: {total:.1f}", file=sys.stderr)
    for name, per in rows:
        print(f"  {per:8.2f}  {name}", file=sys.stderr)
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot()
        stats = snapshot.statistics("lineno")
        size = sum(s.size for s in stats)
        print(f"traced bytes per agent: {size / agents:.0f}", file=sys.stderr)
        for stat in stats[:CENSUS_ROWS]:
            frame = stat.traceback[0]
            print(
                f"  {stat.size / agents:8.0f} B {stat.count / agents:6.2f} blocks  "
                f"{frame.filename.rsplit('/', 2)[-2:]}:{frame.lineno}",
                file=sys.stderr,
            )


async def run_one(agents: int, census: bool = False) -> dict[str, Any]:
    """One size in this process: a warm-up agent, then ``agents`` at once."""
    await _agents(1, [0])
    gc.collect()
    if census:
        _BEFORE.update(_type_census())
        tracemalloc.start()
    base = rss_kb()
    reset_peak()
    counter = [0]
    with GcClock() as clock:
        t0 = time.perf_counter()
        pairs = await _agents(agents, counter, census)
        wall = time.perf_counter() - t0
    if census:
        tracemalloc.stop()
    line = size_line(agents, counter[0], wall, base, clock)
    expected = PER_AGENT * agents
    check(counter[0] == expected, f"W10: {counter[0]} events, expected {expected}")
    calls = sum(model.calls for _, model in pairs)
    check(calls == CALLS * agents, f"W10: {calls} provider calls, expected {CALLS * agents}")
    per_agent = {len(non_system(agent.state.messages)) for agent, _ in pairs}
    check(per_agent == {MESSAGES}, f"W10: messages per agent {per_agent}, expected {MESSAGES}")
    return line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.w10_many_agents")
    parser.add_argument("--agents", type=int, help="run one size in this process")
    parser.add_argument("--census", action="store_true", help="print what each agent holds")
    args = parser.parse_args(argv)
    if args.agents is None:
        line = run_sizes("benchmarks.w10_many_agents", IMPL, "W10")
    else:
        line = trio.run(run_one, args.agents, args.census)
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
