"""Per-agent figures of a many-agents workload (W10), shared by pi_trio's run and its floor.

Each size runs in a fresh process (``python -m <module> --agents N``), so one size's
freed memory cannot hide the next one's growth: the child measures its baseline (RSS with
everything imported and one agent already run, so caches filled once are not counted),
runs N agents at once, and prints one JSON line; `run_sizes` starts the children and
combines their lines into the workload's line.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["GcClock", "SIZES", "peak_kb", "reset_peak", "rss_kb", "run_sizes", "size_line"]

SIZES = (1_000, 10_000)
ROOT = Path(__file__).resolve().parent.parent
_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4


def rss_kb() -> int:
    """This process's resident set size now, in KiB (Linux; else the peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE_KB
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak() -> bool:
    """Make the peak RSS the current RSS (Linux's ``clear_refs``); false where that is
    not possible (the peak then counts from the process start)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


def peak_kb() -> int:
    """The peak RSS since the last `reset_peak` (or the process start), in KiB."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class GcClock:
    """Time spent in the garbage collector (``gc.callbacks``) while entered, and the
    collections per generation."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started
            self.collections[info["generation"]] += 1

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


def size_line(
    agents: int, events: int, wall: float, base_kb: int, clock: GcClock
) -> dict[str, Any]:
    """One size's figures (the child's JSON line)."""
    grown = peak_kb() - base_kb
    return {
        "agents": agents,
        "events": events,
        "wall_s": round(wall, 4),
        "us_per_agent": round(wall / agents * 1e6, 1),
        "kb_per_agent": round(grown / agents, 2),
        "base_mb": round(base_kb / 1024, 1),
        "peak_rss_mb": round(peak_kb() / 1024, 1),
        "gc_s": round(clock.seconds, 4),
        "gc_share": round(clock.seconds / wall, 3) if wall else 0.0,
        "gc_collections": clock.collections,
    }


def run_sizes(
    module: str, impl: str, workload: str, sizes: Sequence[int] = SIZES
) -> dict[str, Any]:
    """Run ``python -m module --agents N`` per size; the workload's JSON line: the largest
    size's time, events and peak RSS, each size's figures and the growth between the
    first and the last size's time per agent."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lines: list[dict[str, Any]] = []
    for agents in sizes:
        command = [sys.executable, "-m", module, "--agents", str(agents)]
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        found = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        if done.returncode != 0 or not found:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{tail}")
        lines.append(json.loads(found[-1]))
    last = lines[-1]
    out: dict[str, Any] = {
        "workload": workload,
        "impl": impl,
        "wall_s": last["wall_s"],
        "events": last["events"],
        "events_per_s": round(last["events"] / last["wall_s"]) if last["wall_s"] else 0,
        "peak_rss_mb": last["peak_rss_mb"],
    }
    for line in lines:
        tag = _tag(line["agents"])
        for key in ("us_per_agent", "kb_per_agent", "gc_share"):
            out[f"{key}_{tag}"] = line[key]
        out[f"gc_collections_{tag}"] = line["gc_collections"]
    first = lines[0]
    out["time_growth"] = round(last["us_per_agent"] / first["us_per_agent"], 2)
    return out


def _tag(agents: int) -> str:
    return f"{agents // 1000}k" if agents % 1000 == 0 else str(agents)
