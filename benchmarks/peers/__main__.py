"""``python -m benchmarks.peers [--runs N] [--scale F] [--impls ...] [--workloads ...]``

The same workloads on pi_trio (trio and asyncio), pydantic-ai, openai-agents, agno and the
original (pi 1.6 under node), each with its own test model at the model boundary (see
``_common.py`` for the script they all follow). Every measurement is a fresh process
(``run.py``, ``pi_node.mjs``); after a warm-up round, each round runs every
implementation once, one after the other, so the ratios to pi_trio on trio (medians of
the per-round ratios) survive a machine whose speed drifts. The machine's load is printed
with each workload. The work each implementation did (provider calls, tool calls, settled
runs, text deltas consumed) must be equal, or the command fails: nobody gets to do less.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .run import IMPLS, RUN_WORKLOADS, WORKLOADS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NODE_DIR = HERE.parent / ".cache" / "pi16"
NODE = "pi-node"
BASE = "pi_trio"
TITLES = {
    "stream": "(a) one answer of 100 000 streamed deltas",
    "turns": "(b) 200 sequential tool-call turns",
    "concurrent": "(c) 1 000 concurrent single-tool runs",
    "cancelled": "(d) 1 000 runs cancelled mid-stream",
    "idle": "(e) idle agent with one tool: KB live / µs to construct",
    "import": "(f) cold import, ms",
}
# The package each implementation's rows need (looked up, not imported).
PACKAGES = {
    "pi_trio_rows": "pi_trio",
    "pydantic_ai_rows": "pydantic_ai",
    "openai_agents_rows": "agents",
    "agno_rows": "agno",
}
# The work that must be equal between implementations, per workload.
EQUAL = {
    "stream": ("provider_calls", "tool_calls", "runs", "deltas_consumed", "final_text_len"),
    "turns": ("provider_calls", "tool_calls", "runs", "deltas_consumed", "final_text"),
    "concurrent": ("provider_calls", "tool_calls", "runs", "deltas_consumed"),
    "cancelled": ("provider_calls", "runs"),
}


class RunFailed(Exception):
    pass


def available_impls(node_dir: Path) -> tuple[list[str], list[str]]:
    """The implementations this interpreter (and node) can run, and why others cannot."""
    found, missing = [], []
    for impl, (module, _) in IMPLS.items():
        (found if importlib.util.find_spec(PACKAGES[module]) else missing).append(impl)
    node = shutil.which("node")
    if node and (node_dir / "node_modules/@earendil-works/pi-agent-core/package.json").is_file():
        found.append(NODE)
    else:
        missing.append(NODE)
    return found, missing


def command(impl: str, workload: str, scale: float, node_dir: Path) -> tuple[list[str], Any]:
    if impl == NODE:
        node = shutil.which("node") or "node"
        script = str(HERE / "pi_node.mjs")
        return [node, "--expose-gc", script, workload, f"--scale={scale}"], {
            **os.environ,
            "PI_TS_DIR": str(node_dir),
        }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return [sys.executable, "-m", "benchmarks.peers.run", impl, workload, f"--scale={scale}"], env


def run_one(impl: str, workload: str, scale: float, node_dir: Path) -> dict[str, Any]:
    cmd, env = command(impl, workload, scale, node_dir)
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
        raise RunFailed(f"{impl} {workload} exited {done.returncode}:\n{tail}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def measure(
    workload: str, impls: Sequence[str], runs: int, scale: float, node_dir: Path, echo: bool
) -> dict[str, list[dict[str, Any]]]:
    """A warm-up round, then ``runs`` rounds of every implementation in turn."""
    samples: dict[str, list[dict[str, Any]]] = {impl: [] for impl in impls}
    for round_no in range(runs + 1):
        for impl in impls:
            line = run_one(impl, workload, scale, node_dir)
            if round_no:
                samples[impl].append(line)
                if echo:
                    print(json.dumps(line), flush=True)
    return samples


def check_equal_work(workload: str, samples: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Mismatches in the work done, as lines naming the implementation and the count."""
    problems = []
    keys = EQUAL.get(workload, ())
    reference: dict[str, Any] | None = None
    for impl, lines in samples.items():
        for line in lines:
            work = {key: line.get(key) for key in keys}
            if reference is None:
                reference, first = work, impl
            elif work != reference:
                problems.append(f"{workload}: {impl} did {work}, {first} did {reference}")
    return problems


def stop_check(line: dict[str, Any]) -> str:
    """(d): whether a cancelled run really stopped when it returned."""
    issues = []
    still_open = line["provider_calls"] - line["model_ended_when_settled"]
    if still_open:
        issues.append(f"{still_open} model calls still open at return")
    if line["deltas_after_cancel"]:
        issues.append(f"{line['deltas_after_cancel']} deltas after cancel")
    if line["tool_calls"]:
        issues.append(f"{line['tool_calls']} tools ran")
    return "; ".join(issues) or "stopped"


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def summarise(workload: str, samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {"workload": workload}
    base = samples.get(BASE)
    for impl, lines in samples.items():
        entry: dict[str, Any] = {"version": lines[0].get("version")}
        if workload == "idle":
            entry["kb_per_agent"] = round(_median([ln["kb_per_agent"] for ln in lines]), 2)
            entry["us_construct"] = round(_median([ln["us_construct"] for ln in lines]), 1)
            entry["kb_rss_per_agent"] = round(_median([ln["kb_rss_per_agent"] for ln in lines]), 2)
        elif workload == "import":
            entry["ms_import"] = round(_median([ln["ms_import"] for ln in lines]), 1)
        else:
            entry["wall_s"] = round(_median([ln["wall_s"] for ln in lines]), 4)
            entry["cpu_s"] = round(_median([ln["cpu_s"] for ln in lines]), 4)
            entry["peak_rss_mb"] = _median([ln["peak_rss_mb"] for ln in lines])
            typical = lines[0]
            entry["work"] = {k: typical.get(k) for k in EQUAL[workload]}
            if workload == "cancelled":
                entry["stop"] = stop_check(typical)
        if base and impl != BASE and workload != "idle":
            ratios = [a["wall_s"] / b["wall_s"] for a, b in zip(lines, base, strict=True)]
            entry["x_pi_trio"] = round(_median(ratios), 2)
            if workload != "import":
                cpu = [a["cpu_s"] / b["cpu_s"] for a, b in zip(lines, base, strict=True)]
                entry["cpu_x_pi_trio"] = round(_median(cpu), 2)
        out[impl] = entry
    return out


def table(summaries: Sequence[dict[str, Any]], impls: Sequence[str]) -> str:
    head = ["workload", *impls]
    rows = [head]
    for s in summaries:
        row = [TITLES[s["workload"]]]
        for impl in impls:
            e = s.get(impl)
            if e is None:
                row.append("—")
            elif s["workload"] == "idle":
                row.append(f"{e['kb_per_agent']:.2f} / {e['us_construct']:.1f}")
            elif s["workload"] == "import":
                ratio = f" ({e['x_pi_trio']:.2f}x)" if "x_pi_trio" in e else ""
                row.append(f"{e['ms_import']:.0f}{ratio}")
            else:
                ratio = f" ({e['x_pi_trio']:.2f}x)" if "x_pi_trio" in e else ""
                row.append(f"{e['wall_s']:.3f} s{ratio}")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    cpu = [
        f"{TITLES[s['workload']][:3]} "
        + ", ".join(
            f"{i} {s[i]['cpu_x_pi_trio']:.2f}x" for i in impls if "cpu_x_pi_trio" in s.get(i, {})
        )
        for s in summaries
        if s["workload"] in RUN_WORKLOADS
    ]
    if cpu:
        lines.append("CPU time, median of the per-round ratios to pi_trio: " + "; ".join(cpu))
    for s in summaries:
        if s["workload"] == "cancelled":
            lines.append(
                "(d) stopped when the run returned: "
                + ", ".join(f"{impl}: {s[impl]['stop']}" for impl in impls if impl in s)
            )
        if s["workload"] == "idle":
            lines.append(
                "(e) resident memory per agent, KB: "
                + ", ".join(
                    f"{impl}: {s[impl]['kb_rss_per_agent']:.2f}" for impl in impls if impl in s
                )
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.peers", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--runs", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--impls", nargs="*", help=f"default: all available ({[*IMPLS, NODE]})")
    parser.add_argument("--workloads", nargs="*", choices=WORKLOADS, help="default: all")
    parser.add_argument("--node-dir", type=Path, default=NODE_DIR, help="pi 1.6 installed here")
    parser.add_argument("--quiet", action="store_true", help="no JSON line per measurement")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    found, missing = available_impls(args.node_dir)
    impls = [i for i in (args.impls or [*IMPLS, NODE]) if i in found]
    skipped = [i for i in (args.impls or [*IMPLS, NODE]) if i in missing or i not in found]
    if skipped:
        print(f"not available here, skipped: {', '.join(skipped)}", file=sys.stderr)
    if BASE not in impls:
        parser.error(f"{BASE} must be among the implementations run (the ratios are to it)")
    print(
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; sizes x {args.scale}",
        flush=True,
    )
    summaries, problems = [], []
    for workload in args.workloads or WORKLOADS:
        print(f"{workload}: {load()}", flush=True)
        try:
            samples = measure(workload, impls, args.runs, args.scale, args.node_dir, not args.quiet)
        except RunFailed as exc:
            problems.append(str(exc))
            continue
        if workload in RUN_WORKLOADS:
            problems += check_equal_work(workload, samples)
        summaries.append(summarise(workload, samples))
    print(
        f"\nmedians of {args.runs} rounds after a warm-up, a fresh process per measurement; "
        f"x = median of the per-round ratios to {BASE} on trio; {load()}"
    )
    versions = {
        impl: summaries[0][impl]["version"] for impl in impls if summaries and impl in summaries[0]
    }
    print("versions: " + ", ".join(f"{impl} {v}" for impl, v in versions.items() if v))
    print(table(summaries, impls))
    for s in summaries:
        if s["workload"] in EQUAL:
            work = s[BASE]["work"]
            print(f"work done ({s['workload']}, equal for all): {work}")
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
