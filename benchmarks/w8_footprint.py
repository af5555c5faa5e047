"""W8 footprint: 10 000 agent runs of one (10, 1) turn (then the final (10, 0) answer),
1 000 at a time, each on a fresh agent that is dropped when it finished.

Reports the process CPU per run and what stays alive per finished run after
``gc.collect()``: allocated blocks and gc-tracked objects over the measured runs, and
traced bytes (``tracemalloc``) over a further, separately traced batch. A warm-up batch
runs first so caches filled once are not counted as retention.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from typing import Any

import trio

from ._result import check, report
from .scripted import expected_events, make_agent, non_system, tool_turns

TURNS = tool_turns(1, 10, 1)
PER_RUN = expected_events(TURNS, 2)


async def _runs(total: int, concurrency: int, counter: list[int]) -> None:
    workers = min(concurrency, total)
    share, extra = divmod(total, workers)

    async def worker(n: int) -> None:
        for _ in range(n):
            agent, model = make_agent(TURNS, counter)
            await agent.prompt("go")
            if model.calls != 2 or len(non_system(agent.state.messages)) != 4:
                raise AssertionError(
                    f"W8: a run made {model.calls} provider calls and "
                    f"{len(non_system(agent.state.messages))} messages, expected 2 and 4"
                )

    async with trio.open_nursery() as nursery:
        for i in range(workers):
            nursery.start_soon(worker, share + (i < extra))


def _live() -> tuple[int, int]:
    gc.collect()
    return sys.getallocatedblocks(), len(gc.get_objects())


async def run(
    total: int = 10_000, concurrency: int = 1_000, warmup: int = 1_000, traced: int = 1_000
) -> dict[str, Any]:
    await _runs(warmup, concurrency, [0])
    blocks0, objects0 = _live()

    counter = [0]
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    await _runs(total, concurrency, counter)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    blocks1, objects1 = _live()
    check(counter[0] == PER_RUN * total, f"W8: {counter[0]} events, expected {PER_RUN * total}")

    tracemalloc.start()
    try:
        gc.collect()
        traced0 = tracemalloc.get_traced_memory()[0]
        await _runs(traced, concurrency, [0])
        gc.collect()
        traced1 = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()

    return {
        "events": counter[0],
        "wall_s": wall,
        "runs": total,
        "cpu_ms_per_run": round(cpu * 1000 / total, 4),
        "retained_blocks_per_run": round((blocks1 - blocks0) / total, 3),
        "retained_objects_per_run": round((objects1 - objects0) / total, 3),
        "retained_bytes_per_run": round((traced1 - traced0) / traced, 1),
    }


if __name__ == "__main__":
    report("W8", run)
