"""``python -m benchmarks.catalog_load [--runs N] [--vs DIR]``: what the model catalog costs.

Each run is a fresh interpreter (first use is the point), which measures in-process:

- ``import_ms``: ``import pi_trio.ai`` (the catalog must not be read here);
- ``first_get_model_ms``: the first ``get_model`` (reads the data file, inflates one
  provider, decodes one model);
- ``later_get_model_us``: a ``get_model`` of the same provider afterwards, per call;
- ``first_other_provider_ms``: the first look-up in another, large provider (openrouter);
- ``all_models_ms``: ``get_models`` of every provider, every model decoded (what
  ``pi-trio models`` does);
- ``close_match_error_ms``: ``resolve_model`` of a misspelt id, error included (where
  ``resolve_model`` exists).

``--vs DIR`` runs the same probe against the ``pi_trio`` package found in ``DIR`` (for
example ``git archive main | tar -x -C /tmp/main``) in alternation with this checkout
(A B A B ...), and prints paired ratios, so machine noise (the machine is shared) moves
both sides alike. Prints one JSON line per run, then medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import json, time
t0 = time.perf_counter()
import pi_trio.ai as ai
t1 = time.perf_counter()
ai.get_model("anthropic", "claude-haiku-4-5")
t2 = time.perf_counter()
N = 1000
for _ in range(N):
    ai.get_model("anthropic", "claude-sonnet-4-5")
t3 = time.perf_counter()
ai.get_model("openrouter", "openai/gpt-5")
t4 = time.perf_counter()
models = [m for p in ai.get_providers() for m in ai.get_models(p)]
t5 = time.perf_counter()
error_ms = None
if hasattr(ai, "resolve_model"):
    try:
        ai.resolve_model("anthropic/claude-hiku-4-5")
    except LookupError:
        error_ms = (time.perf_counter() - t5) * 1e3
print(json.dumps({
    "import_ms": (t1 - t0) * 1e3,
    "first_get_model_ms": (t2 - t1) * 1e3,
    "later_get_model_us": (t3 - t2) / N * 1e6,
    "first_other_provider_ms": (t4 - t3) * 1e3,
    "all_models_ms": (t5 - t4) * 1e3,
    "close_match_error_ms": error_ms,
    "models": len(models),
    "providers": len(ai.get_providers()),
    "package": ai.__file__,
}))
"""

FIGURES = (
    "import_ms",
    "first_get_model_ms",
    "later_get_model_us",
    "first_other_provider_ms",
    "all_models_ms",
    "close_match_error_ms",
)


def run_probe(source_dir: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(source_dir), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        cwd=source_dir,
        check=True,
        timeout=120,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    expected = source_dir / "pi_trio"
    if not Path(result["package"]).resolve().is_relative_to(expected.resolve()):
        raise SystemExit(f"the probe imported {result['package']}, not the package in {expected}")
    return result


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--vs", type=Path, default=None, help="a directory holding pi_trio")
    args = parser.parse_args(argv)
    sides = {"this": ROOT, **({"vs": args.vs.resolve()} if args.vs else {})}
    for directory in sides.values():
        run_probe(directory)  # warm-up: the file cache, the bytecode of the imports
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    for _ in range(args.runs):
        for name, directory in sides.items():
            result = run_probe(directory)
            runs[name].append(result)
            print(json.dumps({"side": name, **result}))
    header = f"{'figure':<26}" + "".join(f"{name:>12}" for name in sides)
    print(
        f"\nmedians of {args.runs} fresh processes per side\n{header}"
        + ("  ratio" * (len(sides) > 1))
    )
    for key in FIGURES:
        cells = "".join(f"{_cell(_median(runs[name], key)):>12}" for name in sides)
        ratio = ""
        if "vs" in runs:
            pairs = [
                a[key] / b[key]
                for a, b in zip(runs["this"], runs["vs"], strict=True)
                if a.get(key) is not None and b.get(key)
            ]
            ratio = f"  {statistics.median(pairs):.2f}" if pairs else "  —"
        print(f"{key:<26}{cells}{ratio}")
    for name in sides:
        last = runs[name][-1]
        print(f"{name}: {last['models']} models, {last['providers']} providers ({last['package']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
