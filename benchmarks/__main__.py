"""``python -m benchmarks [W1 W2 ...] [--runs N] [--paired] [--json]``

Runs every workload in a fresh subprocess per run (so peak RSS is per workload): one
warm-up round, then ``--runs`` rounds, each round running pi_trio, the trio floor
(``skeleton.py`` run directly, or the workload's own floor module) and with ``--paired``
the TypeScript original one after the other (A B C A B C …), so the ratios survive
machine noise. Prints every run's JSON line, then a table of medians and ratios
(``--json``: one summary JSON line per workload instead). Exits non-zero when a
workload's checks failed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from . import _ts

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class Workload(NamedTuple):
    module: str
    floor: bool | str  # True: skeleton.py implements it; a name: that module is its floor
    ts: str | None  # "mjs": ts/bench.mjs runs it; "module": the module's own ``--ts DIR``


WORKLOADS = {
    "W1": Workload("w1", True, "mjs"),
    "W2": Workload("w2", True, "mjs"),
    "W3": Workload("w3", True, "mjs"),
    "W4": Workload("w4", True, "mjs"),
    "W5": Workload("w5_http_stream", False, "module"),
    "W6": Workload("w6_http_many", False, "module"),
    "W7": Workload("w7_big_tool_args", False, None),
    "W8": Workload("w8_footprint", False, None),
    "W9": Workload("w9_long_conversation", False, "mjs"),
    "W9c": Workload("w9c_compaction", False, None),
    "W10": Workload("w10_many_agents", "skeleton_w10", "mjs"),
    "W11": Workload("w11_async_listeners", False, "mjs"),
    "W12": Workload("w12_typed_tool", False, None),
}

# Workload-specific figures shown under the table.
NOTES = {
    "W9": ("us_per_turn_at_100", "us_per_turn_late", "late_over_early"),
    "W9c": (
        "us_per_turn_at_100",
        "us_per_turn_late",
        "late_over_early",
        "compactions",
        "longest_transcript",
    ),
    "W11": ("us_cpu_per_event", "us_cpu_per_event_sync", "us_first_async_listener"),
    "W6": ("runs_per_s", "open_connections_after_run", "open_connections_after_close"),
    "W4": (
        "settled",
        "stop_aborted",
        "deltas_produced",
        "deltas_delivered",
        "deltas_after_abort",
        "tasks_left",
    ),
    "W7": ("s_per_mib", "per_mib_growth", "s_per_mib_reading", "per_mib_growth_reading"),
    "W8": (
        "cpu_ms_per_run",
        "retained_blocks_per_run",
        "retained_objects_per_run",
        "retained_bytes_per_run",
    ),
    "W10": (
        "us_per_agent_1k",
        "us_per_agent_10k",
        "time_growth",
        "kb_per_agent_1k",
        "kb_per_agent_10k",
        "gc_share_1k",
        "gc_share_10k",
    ),
    "W12": ("us_per_turn", "us_validation_per_call", "us_jsonschema_per_call"),
}


class RunFailed(Exception):
    pass


def available() -> list[str]:
    return [w for w, spec in WORKLOADS.items() if (HERE / f"{spec.module}.py").is_file()]


def _run(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-12:])
        raise RunFailed(f"{' '.join(command)} exited {done.returncode}:\n{tail}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def commands(workload: str, ts_dir: Path | None) -> dict[str, tuple[list[str], Any]]:
    spec = WORKLOADS[workload]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out: dict[str, tuple[list[str], Any]] = {
        "pi_trio": ([sys.executable, "-m", f"benchmarks.{spec.module}"], env),
    }
    if spec.floor is True:
        out["floor"] = ([sys.executable, str(HERE / "skeleton.py"), workload], None)
    elif spec.floor:
        out["floor"] = ([sys.executable, "-m", f"benchmarks.{spec.floor}"], env)
    if spec.ts == "mjs" and ts_dir is not None:
        out["ts"] = _ts.ts_command(workload, ts_dir)
    elif spec.ts == "module" and ts_dir is not None:
        out["ts"] = ([*out["pi_trio"][0], "--ts", str(ts_dir)], env)
    return out


def measure(workload: str, runs: int, ts_dir: Path | None, echo: bool) -> dict[str, Any]:
    """Warm-up round, then ``runs`` interleaved rounds; the medians per implementation."""
    impls = commands(workload, ts_dir)
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in impls}
    for round_no in range(runs + 1):
        for name, (command, env) in impls.items():
            line = _run(command, env)
            if round_no == 0:
                continue
            samples[name].append(line)
            if echo:
                print(json.dumps(line), flush=True)
    summary: dict[str, Any] = {"workload": workload, "runs": runs}
    for name, lines in samples.items():
        walls = [ln["wall_s"] for ln in lines]
        median = statistics.median(walls)
        typical = min(lines, key=lambda ln: abs(ln["wall_s"] - median))
        summary[name] = {
            "wall_s": round(median, 4),
            "events": typical["events"],
            "events_per_s": round(typical["events"] / median) if median else 0,
            "peak_rss_mb": statistics.median(ln["peak_rss_mb"] for ln in lines),
            "spread": [min(walls), max(walls)],
            "checks": {k: v for k, v in typical.items() if k not in _COMMON},
        }
    pi = samples["pi_trio"]
    for name in ("floor", "ts"):
        other = samples.get(name)
        if other:
            # Paired: the median of the per-round ratios (each round ran A B back to back).
            summary[f"x_{name}"] = _median_ratio(pi, other, "wall_s")
            summary[f"rss_x_{name}"] = _median_ratio(pi, other, "peak_rss_mb")
    return summary


def _median_ratio(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str) -> float | None:
    ratios = [x[key] / y[key] for x, y in zip(a, b, strict=True) if y[key]]
    return round(statistics.median(ratios), 2) if ratios else None


_COMMON = frozenset(
    {"workload", "impl", "wall_s", "events", "events_per_s", "peak_rss_mb", "cpu_s"}
)


def _cell(value: Any, fmt: str = "{}") -> str:
    return "—" if value is None else fmt.format(value)


def table(summaries: Sequence[dict[str, Any]], paired: bool) -> str:
    head = ["workload", "pi_trio s", "events/s", "RSS MB", "floor s", "x floor", "floor RSS"]
    if paired:
        head += ["TS s", "x TS", "TS RSS", "RSS x TS"]
    rows = [head]
    for s in summaries:
        pi, floor, ts = s["pi_trio"], s.get("floor") or {}, s.get("ts") or {}
        row = [
            s["workload"],
            f"{pi['wall_s']:.3f}",
            f"{pi['events_per_s']:,}",
            f"{pi['peak_rss_mb']:.1f}",
            _cell(floor.get("wall_s"), "{:.3f}"),
            _cell(s.get("x_floor"), "{:.2f}"),
            _cell(floor.get("peak_rss_mb"), "{:.1f}"),
        ]
        if paired:
            row += [
                _cell(ts.get("wall_s"), "{:.3f}"),
                _cell(s.get("x_ts"), "{:.2f}"),
                _cell(ts.get("peak_rss_mb"), "{:.1f}"),
                _cell(s.get("rss_x_ts"), "{:.2f}"),
            ]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for s in summaries:
        keys = NOTES.get(s["workload"], ())
        checks = s["pi_trio"]["checks"]
        floor = (s.get("floor") or {}).get("checks", {})
        shown = [
            f"{k}={checks[k]}" + (f" (floor {floor[k]})" if k in floor else "")
            for k in keys
            if k in checks
        ]
        if shown:
            lines.append(f"{s['workload']}: " + ", ".join(shown))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument(
        "workloads", nargs="*", metavar="W", help="workload ids (default: all present)"
    )
    parser.add_argument(
        "--runs", type=int, default=5, help="measured runs per implementation (default 5)"
    )
    parser.add_argument("--paired", action="store_true", help="also run the TypeScript original")
    parser.add_argument(
        "--json", action="store_true", help="print one summary JSON line per workload"
    )
    parser.add_argument(
        "--ts-dir",
        type=Path,
        help="with --paired: an installed original (a folder holding node_modules, pi 0.73 "
        "or 1.x) instead of installing 0.73.1 into benchmarks/.cache/ts",
    )
    args = parser.parse_args(argv)
    present = available()
    by_upper = {w.upper(): w for w in WORKLOADS}
    chosen = [by_upper.get(w.upper(), w.upper()) for w in args.workloads] or present
    unknown = [w for w in chosen if w not in present]
    if unknown:
        parser.error(f"unknown or missing workloads {unknown}; available: {present}")
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    ts_dir = None
    if args.paired:
        ts_dir, message = _ts.prepare(given=args.ts_dir)
        print(message, file=sys.stderr, flush=True)
    summaries = []
    failed = []
    for workload in chosen:
        try:
            summary = measure(workload, args.runs, ts_dir, echo=not args.json)
        except RunFailed as exc:
            failed.append(workload)
            print(f"{workload} FAILED: {exc}", file=sys.stderr, flush=True)
            continue
        summaries.append(summary)
        if args.json:
            print(json.dumps(summary), flush=True)
    if not args.json and summaries:
        print()
        print(f"medians of {args.runs} runs after a warm-up, one subprocess per run")
        print(table(summaries, ts_dir is not None))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
