"""Each optional part of pi_trio, imported without its extra, says which extra to install;
``pi_trio.session`` needs none. Run in a subprocess whose imports of the extra's packages
fail as they do when it is not installed (``sys.modules[name] = None``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the module, the extra, the top-level packages the extra installs
EXTRAS = [
    ("pi_trio.mcp", "mcp", ["mcp"]),
    ("pi_trio.otel", "otel", ["opentelemetry"]),
    ("pi_trio.durable", "dbos", ["dbos"]),
    ("pi_trio.fanout", "ray", ["ray"]),
    ("pi_trio.agui", "agui", ["ag_ui"]),
]
EVERY_EXTRA = [
    "mcp", "opentelemetry", "dbos", "ray", "hypercorn", "rich", "botocore", "google", "ag_ui",
]  # fmt: skip


def without(packages: list[str], code: str) -> subprocess.CompletedProcess[str]:
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in packages)
    return subprocess.run(
        [sys.executable, "-c", f"import sys\n{blocked}{code}"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize(("module", "extra", "packages"), EXTRAS, ids=[e[0] for e in EXTRAS])
def test_importing_an_optional_part_without_its_extra_names_the_extra(module, extra, packages):
    done = without(
        packages,
        f"try:\n    import {module}\nexcept ImportError as exc:\n    print(exc)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{module} ")
    assert f"pip install 'pi-trio[{extra}]'" in done.stdout
    assert done.stdout.count("\n") == 1


def test_the_core_and_sessions_need_no_extra():
    done = without(
        EVERY_EXTRA,
        "import pi_trio, pi_trio.ai, pi_trio.agent, pi_trio.testing, pi_trio.session\n"
        "print('ok')\n",
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


@pytest.mark.parametrize("missing", ["opentelemetry", "opentelemetry.sdk"])
def test_the_otel_example_without_the_extra_says_which_to_install(missing):
    done = without(
        [missing],
        "import runpy\nrunpy.run_path('examples/otel_traces.py', run_name='__main__')\n",
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"otel_traces: {missing}")  # the module it did not find
    assert done.stderr.endswith(
        " is missing; install the otel extra: pip install 'pi-trio[otel]'\n"
    )
    assert done.stderr.count("\n") == 1
