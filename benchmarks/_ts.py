"""Paired mode: the TypeScript original driven by ``ts/bench.mjs`` (W1-W4, W9-W11) and by
the HTTP workloads' own driver (W5, W6). By default pi 0.73.1 (``@mariozechner/pi-agent-core``)
is installed once into ``benchmarks/.cache/ts``; ``--ts-dir DIR`` uses a copy installed
elsewhere, of that line or of pi 1.x (``@earendil-works/pi-agent-core``), which the drivers
tell apart by the packages they find."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["CACHE_DIR", "TS_WORKLOADS", "prepare", "ts_command"]

HERE = Path(__file__).resolve().parent
CACHE_DIR = HERE / ".cache" / "ts"
BENCH_MJS = HERE / "ts" / "bench.mjs"
PACKAGES = ("@mariozechner/pi-agent-core", "@mariozechner/pi-ai")
PACKAGES_1X = ("@earendil-works/pi-agent-core", "@earendil-works/pi-ai")
TS_WORKLOADS = frozenset({"W1", "W2", "W3", "W4", "W9", "W10", "W11"})


def _installed(cache: Path, packages: tuple[str, ...] = PACKAGES) -> bool:
    modules = cache / "node_modules"
    return all((modules / name / "package.json").is_file() for name in packages)


def prepare(cache: Path = CACHE_DIR, given: Path | None = None) -> tuple[Path | None, str]:
    """Install the original into ``cache`` unless it is there already, or use ``given``
    (a folder holding ``node_modules`` of either line). Returns the folder (``None`` when
    paired mode cannot run) and a line saying what happened."""
    if given is not None:
        if shutil.which("node") is None:
            return None, "paired mode skipped: node not found on PATH"
        if _installed(given, PACKAGES_1X) or _installed(given):
            return given, f"TypeScript original: using {given}"
        return None, (
            f"paired mode skipped: {given} holds neither {' and '.join(PACKAGES_1X)} nor "
            f"{' and '.join(PACKAGES)} under node_modules"
        )
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        missing = " and ".join(n for n, p in (("node", node), ("npm", npm)) if p is None)
        return None, f"paired mode skipped: {missing} not found on PATH"
    if _installed(cache):
        return cache, f"TypeScript original: reusing {cache}"
    cache.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache), *PACKAGES]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not _installed(cache):
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        return None, "paired mode skipped: npm install failed:\n  " + "\n  ".join(tail)
    return cache, f"TypeScript original: installed into {cache}"


def ts_command(workload: str, cache: Path) -> tuple[list[str], dict[str, str]]:
    """The command running ``workload`` on the original, and its environment."""
    node = shutil.which("node") or "node"
    return [node, str(BENCH_MJS), workload], {**os.environ, "PI_TS_DIR": str(cache)}
