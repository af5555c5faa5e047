"""Fan-out: jobs per second for N faux agent jobs on a local Ray cluster against the same
jobs in one process, and what Ray costs per job.

    python -m benchmarks.fanout [--jobs 10000] [--runs 3] [--concurrency 64] [--cpus 2]

Each job is one agent run on the faux provider: a request that calls a tool, the tool, a
request that answers (two model requests, one tool call). Three ways to run them, in
alternation, one round after another after a warm-up round (the machine may be shared):

- ``local``: one process, one trio loop, ``run_shard`` with ``--concurrency`` agents at
  a time (no Ray at all);
- ``ray-1``: the ``Harness`` with one shard: the same single loop in a Ray worker, plus
  shipping the jobs there and every result back through the mailbox;
- ``ray-N``: the ``Harness`` with one shard per CPU (``--cpus``).

Ray's overhead per job is ``(ray-1 - local) / jobs`` (the median over rounds, each ray-1
run against the local run of its round): what Ray adds when it gains nothing from more
cores. The cluster's start-up (``ray.init``) is measured once, apart.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

import anyio
import ray
from pi_trio.agent import Agent, AgentTool
from pi_trio.fanout import AgentJob, Harness, JobResult, run_shard
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}


async def _add(tool_call_id: str, params: Any) -> str:
    return str(params["a"] + params["b"])


ADD = AgentTool(name="add", description="Add two integers.", parameters=SCHEMA, execute=_add)


def make_agent(job: int) -> Agent:
    faux = FauxProvider(api="faux-bench")
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text(f"Adding {job} and 1."), faux_tool_call("add", {"a": job, "b": 1})],
                stop_reason="toolUse",
            ),
            faux_assistant_message(f"{job} + 1 = {job + 1}."),
        ]
    )
    return Agent(model=faux.get_model(), tools=[ADD], stream_fn=faux)


def make_jobs(n: int) -> list[AgentJob]:
    return [AgentJob(i, f"What is {i} + 1?", functools.partial(make_agent, i)) for i in range(n)]


def _check(results: list[JobResult], n: int, how: str) -> None:
    ids = sorted(r.id for r in results)  # type: ignore[type-var]
    if ids != list(range(n)) or any(r.status != "stop" for r in results):
        raise SystemExit(f"{how}: expected {n} finished jobs, got {len(results)}")


def run_local(n: int, concurrency: int) -> float:
    jobs = make_jobs(n)
    results: list[JobResult] = []

    async def deliver(batch: list[JobResult]) -> None:
        results.extend(batch)

    async def main() -> None:
        await run_shard(jobs, deliver, concurrency=concurrency)

    started = time.perf_counter()
    anyio.run(main, backend="trio")
    seconds = time.perf_counter() - started
    _check(results, n, "local")
    return seconds


def run_ray(n: int, concurrency: int, shards: int) -> float:
    jobs = make_jobs(n)
    started = time.perf_counter()
    results = Harness(jobs, shards=shards, concurrency=concurrency, progress=False).run()
    seconds = time.perf_counter() - started
    _check(results, n, f"ray-{shards}")
    return seconds


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    init_s = time.perf_counter() - started
    ways = {
        "local": lambda: run_local(args.jobs, args.concurrency),
        "ray-1": lambda: run_ray(args.jobs, args.concurrency, 1),
        f"ray-{args.cpus}": lambda: run_ray(args.jobs, args.concurrency, args.cpus),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for round_ in range(args.runs + 1):  # round 0 warms up (worker processes, imports)
            for name, way in ways.items():
                seconds = way()
                if round_:
                    times[name].append(seconds)
                print(json.dumps({"round": round_, "way": name, "seconds": round(seconds, 3)}))
    finally:
        ray.shutdown()

    medians = {name: statistics.median(values) for name, values in times.items()}
    summary = {
        "jobs": args.jobs,
        "concurrency": args.concurrency,
        "ray_init_s": round(init_s, 2),
        "seconds": {name: round(s, 3) for name, s in medians.items()},
        "jobs_per_s": {name: round(args.jobs / s) for name, s in medians.items()},
        # paired: each round's ray-1 run against the same round's local run
        "ray_overhead_ms_per_job": round(
            statistics.median(
                r - loc for r, loc in zip(times["ray-1"], times["local"], strict=True)
            )
            / args.jobs
            * 1000,
            3,
        ),
    }
    print(json.dumps({"summary": summary}))
    return summary


if __name__ == "__main__":
    main()
