"""Timing one workload in this process and printing its JSON line."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio

__all__ = ["IMPL", "check", "peak_rss_mb", "report"]

IMPL = "pi_trio"


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def report(workload: str, body: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Run ``body`` under ``trio.run``, time it like the floor does (around ``trio.run``)
    and print ``{workload, impl, wall_s, events, events_per_s, peak_rss_mb, cpu_s, ...}``.

    ``body`` returns the checks and ``events``; a ``wall_s`` it returns replaces the
    measured one (for workloads that time a part of their run). ``cpu_s`` is this
    process's CPU time over the whole ``trio.run``: far below ``wall_s`` means the machine
    was busy with something else.
    """
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    extra = trio.run(body)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    wall = extra.pop("wall_s", None) or elapsed
    events = extra.pop("events")
    line = {
        "workload": workload,
        "impl": IMPL,
        "wall_s": round(wall, 4),
        "events": events,
        "events_per_s": round(events / wall) if wall > 0 else 0,
        "peak_rss_mb": peak_rss_mb(),
        "cpu_s": round(cpu, 4),
        **extra,
    }
    print(json.dumps(line), flush=True)
    sys.stdout.flush()
    return line


def check(condition: object, message: str) -> None:
    """A workload check: a mismatch means the semantics differ from the original."""
    if not condition:
        raise AssertionError(message)
