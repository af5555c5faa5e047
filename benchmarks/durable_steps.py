"""``python -m benchmarks.durable_steps [--db sqlite,postgres] [--turns N] [--runs N]``

What a durable step costs on DBOS, against DBOS's own step cost. One run of a
``DurableAgent`` makes ``turns`` tool-call turns (one call of a tool that does nothing)
and answers: ``turns + 1`` model requests and ``turns`` tool calls, which the README's
accounting counts as ``3 * turns + 1`` steps (a tool call is two). The model is the faux
provider answering at once, so what is left is the durable machinery. The baseline is a
DBOS workflow running the same number of steps whose bodies do nothing: what DBOS itself
charges per step on the same database. For scale, each round also runs the same agent
without DBOS (``agent_ms_per_step``): what the agent loop and the faux model cost anyway.

Each database runs in a process of its own (DBOS is one per process): SQLite in a
temporary file, and PostgreSQL on a private server this script starts from Debian's
``postgresql`` package (``benchmarks/_postgres.py``) and stops at the end. In a process,
one warm-up round, then ``--runs`` rounds of both, the order alternating (ABBA), so each
round's ratio is paired. Prints a JSON line per round, then one summary line per
database with the medians: ``ms_per_step`` (wall / steps), ``base_ms_per_step`` and
``ratio`` (the median of the rounds' ratios), and ``ops_per_run``: the operations DBOS
recorded for one agent run (steps, and each ``recv`` of the steering queue with its
sleep).

``--db URL`` runs one database in this process (a ``sqlite:///`` or ``postgresql://``
URL); ``--replay safe`` declares the tool ``replay="safe"``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TURNS = 20
RUNS = 7


# --------------------------------------------------------------------------- one database


def _define(turns: int, replay: str) -> tuple[Any, Any, Any]:
    """The durable agent, the baseline workflow (both before ``DBOS.launch``) and the
    factory of the plain agent."""
    from dbos import DBOS
    from pi_trio.agent import Agent, AgentTool
    from pi_trio.durable import DurableAgent
    from pi_trio.testing import (
        FauxProvider,
        faux_assistant_message,
        faux_text,
        faux_tool_call,
    )

    async def noop_tool(tool_call_id: str, params: Any) -> str:
        return "ok"

    tool = AgentTool(
        name="noop",
        description="Does nothing.",
        parameters={"type": "object", "properties": {}},
        execute=noop_tool,
        replay=replay,  # type: ignore[arg-type]
    )

    def build() -> Agent:
        faux = FauxProvider(api="faux-durable-bench", token_size=(1_000_000, 1_000_000))
        script = [
            faux_assistant_message(
                [faux_text(f"Step {i}."), faux_tool_call("noop", {}, id=f"call-{i}")],
                stop_reason="toolUse",
            )
            for i in range(turns)
        ]
        faux.set_responses([*script, faux_assistant_message("Done.")])
        return Agent(model=faux.get_model(), tools=[tool], stream_fn=faux)

    agent = DurableAgent("durable-steps-bench", build)

    async def noop_step() -> str:
        return "ok"

    @DBOS.workflow(name="durable-steps-bench.baseline")
    async def baseline(steps: int) -> int:
        for _ in range(steps):
            await DBOS.run_step_async({"name": "noop"}, noop_step)
        return steps

    return agent, baseline, build


async def _one_database(url: str, turns: int, runs: int, replay: str) -> dict[str, Any]:
    from dbos import DBOS

    agent, baseline, build = _define(turns, replay)
    DBOS(config={"name": "pi-trio-durable-steps", "system_database_url": url, "log_level": "ERROR"})
    DBOS.launch()
    steps = 3 * turns + 1
    try:

        async def pi_trio_run() -> tuple[float, float, int]:
            workflow_id = f"pi-{uuid.uuid4()}"
            cpu0, t0 = time.process_time(), time.perf_counter()
            result = await agent.run("Go.", workflow_id=workflow_id)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            tools = sum(1 for m in result.messages if m.role == "toolResult")
            if tools != turns or result.stop_reason != "stop":
                raise AssertionError(f"{tools} tool results (expected {turns}): {result!r}")
            ops = len(await DBOS.list_workflow_steps_async(workflow_id))
            return wall, cpu, ops

        async def baseline_run() -> tuple[float, float, int]:
            workflow_id = f"base-{uuid.uuid4()}"
            cpu0, t0 = time.process_time(), time.perf_counter()
            handle = await DBOS.start_workflow_async(baseline, steps)
            assert await handle.get_result() == steps
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            return wall, cpu, len(await DBOS.list_workflow_steps_async(workflow_id))

        async def plain_run() -> float:
            plain = build()
            t0 = time.perf_counter()
            await plain.prompt("Go.")
            return time.perf_counter() - t0

        await pi_trio_run()
        await baseline_run()
        await plain_run()
        rounds: list[dict[str, Any]] = []
        for i in range(runs):
            if i % 2 == 0:
                pi, base = await pi_trio_run(), await baseline_run()
            else:
                base = await baseline_run()
                pi = await pi_trio_run()
            plain = await plain_run()
            line = {
                "round": i,
                "ms_per_step": round(pi[0] / steps * 1000, 3),
                "base_ms_per_step": round(base[0] / steps * 1000, 3),
                "ratio": round(pi[0] / base[0], 3),
                "agent_ms_per_step": round(plain / steps * 1000, 3),
                "cpu_ms_per_step": round(pi[1] / steps * 1000, 3),
                "base_cpu_ms_per_step": round(base[1] / steps * 1000, 3),
                "ops_per_run": pi[2],
            }
            print(json.dumps(line), flush=True)
            rounds.append(line)
    finally:
        DBOS.destroy()
    summary: dict[str, Any] = {"steps_per_run": steps, "turns": turns, "replay": replay}
    for key in rounds[0]:
        if key != "round":
            summary[key] = round(statistics.median(r[key] for r in rounds), 3)
    return summary


# --------------------------------------------------------------------------- the driver


def _child(url: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.durable_steps",
        "--db",
        url,
        "--turns",
        str(args.turns),
        "--runs",
        str(args.runs),
        "--replay",
        args.replay,
    ]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise SystemExit(f"durable_steps: {url.split('@')[-1]} failed ({out.returncode})")
    lines = out.stdout.strip().splitlines()
    for line in lines[:-1]:
        print(line, flush=True)
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--db", default="sqlite,postgres", help="sqlite,postgres or one URL")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--replay", choices=("never", "safe"), default="never")
    args = parser.parse_args(argv)
    if "://" in args.db:
        summary = asyncio.run(_one_database(args.db, args.turns, args.runs, args.replay))
        print(json.dumps({"db": args.db.split("://")[0], **summary}), flush=True)
        return

    from ._postgres import local_postgres

    results: list[dict[str, Any]] = []
    for db in args.db.split(","):
        if db == "sqlite":
            with tempfile.TemporaryDirectory(prefix="pi-trio-dbos-") as tmp:
                results.append({"db": db, **_child(f"sqlite:///{tmp}/dbos.sqlite", args)})
        elif db == "postgres":
            with local_postgres() as url:
                results.append({"db": db, **_child(url, args)})
        else:
            raise SystemExit(f"durable_steps: unknown database {db!r}; use sqlite or postgres")
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f}; {args.turns} tool turns = {3 * args.turns + 1} steps")
    print(
        f"{'db':10} {'ms/step':>9} {'DBOS ms/step':>13} {'ratio':>7} {'ops/run':>8} "
        f"{'agent ms/step':>14}"
    )
    for r in results:
        print(
            f"{r['db']:10} {r['ms_per_step']:>9.2f} {r['base_ms_per_step']:>13.2f} "
            f"{r['ratio']:>7.3f} {r['ops_per_run']:>8} {r['agent_ms_per_step']:>14.3f}"
        )
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
