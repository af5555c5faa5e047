"""One measurement in this process: ``python -m benchmarks.peers.run IMPL WORKLOAD
[--scale F]`` prints one JSON line. ``__main__`` runs it in a fresh process per
measurement. Nothing of any framework is imported before the workload asks for it, so
``import`` times a cold import."""

from __future__ import annotations

import argparse
import gc
import importlib
import time
import tracemalloc
from typing import Any

from ._common import SIZES, Probe, Sizes, counts, emit, peak_rss_mb

# implementation -> (module of its rows, backend)
IMPLS = {
    "pi_trio": ("pi_trio_rows", "trio"),
    "pi_trio-asyncio": ("pi_trio_rows", "asyncio"),
    "pydantic-ai": ("pydantic_ai_rows", "asyncio"),
    "openai-agents": ("openai_agents_rows", "asyncio"),
    "agno": ("agno_rows", "asyncio"),
}
# What a program using each framework with its test model imports (cold, in a fresh process).
IMPORTS = {
    "pi_trio_rows": ("pi_trio.agent", "pi_trio.ai"),
    "pydantic_ai_rows": ("pydantic_ai", "pydantic_ai.models.function"),
    "openai_agents_rows": ("agents",),
    "agno_rows": ("agno.agent", "agno.models.base"),
}
WARM_UP = 0.01  # the size of the warm-up run, relative to the measured one
RUN_WORKLOADS = ("stream", "turns", "concurrent", "cancelled")
WORKLOADS = (*RUN_WORKLOADS, "idle", "import")


def _rss_kb() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4  # resident pages of 4 KiB


def measure_idle(rows: Any, n: int) -> dict[str, Any]:
    """Construction time and live memory per idle agent with one tool: ``n`` agents
    kept alive together, after a warm-up agent; memory as tracemalloc counts it
    (agno's method) and as resident memory grows."""
    keep = [rows.idle_agent() for _ in range(10)]  # warm-up: lazily built module state
    del keep
    gc.collect()
    gc.disable()
    rss0 = _rss_kb()
    t0 = time.perf_counter()
    agents = [rows.idle_agent() for _ in range(n)]
    construct = time.perf_counter() - t0
    rss = (_rss_kb() - rss0) / n
    gc.enable()
    del agents
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    agents = [rows.idle_agent() for _ in range(n)]
    gc.collect()
    live = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {
        "wall_s": construct,
        "agents": len(agents),
        "us_construct": round(construct / n * 1e6, 2),
        "kb_per_agent": round(live / n / 1024, 2),
        "kb_rss_per_agent": round(rss, 2),
    }


def measure(impl: str, workload: str, sizes: Sizes) -> dict[str, Any]:
    module, backend = IMPLS[impl]
    line: dict[str, Any] = {"impl": impl, "workload": workload}
    if workload == "import":
        t0 = time.perf_counter()
        for name in IMPORTS[module]:
            importlib.import_module(name)
        line["wall_s"] = round(time.perf_counter() - t0, 5)
        line["ms_import"] = round(line["wall_s"] * 1e3, 1)
        return line
    rows = importlib.import_module(f"{__package__}.{module}")
    vars(rows.PROBE).update(vars(Probe()))  # a fresh count (tests measure in one process)
    line["version"] = rows.VERSION
    if workload == "idle":
        line.update(measure_idle(rows, sizes.idle))
    else:
        body = getattr(rows, workload)
        # A small run first, in this process: what a framework builds once (lazy imports,
        # caches) is not per-run cost; (f) measures the cold import on its own.
        warm = sizes.scaled(WARM_UP)
        rows.run_loop(lambda: body(warm, backend), backend)
        vars(rows.PROBE).update(vars(Probe()))
        gc.collect()
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        extra = rows.run_loop(lambda: body(sizes, backend), backend)
        line["wall_s"] = time.perf_counter() - t0
        line["cpu_s"] = round(time.process_time() - cpu0, 4)
        line.update(extra)
        line.update(counts(rows.PROBE))
    line["wall_s"] = round(line["wall_s"], 5)
    line["peak_rss_mb"] = peak_rss_mb()
    return line


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers.run")
    parser.add_argument("impl", choices=sorted(IMPLS))
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    args = parser.parse_args()
    emit(measure(args.impl, args.workload, SIZES.scaled(args.scale)))


if __name__ == "__main__":
    main()
