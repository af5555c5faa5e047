"""The peer benchmark's harness with pi_trio's own rows at a tiny size (no timing, and
no peer framework: those live in ``make bench-peers``'s environment only)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peers import __main__ as peers
from benchmarks.peers import run
from benchmarks.peers._common import Sizes

TINY = Sizes(stream=50, turns=3, concurrent=4, cancelled=4, cancel_deltas=20, idle=5)


@pytest.mark.parametrize("impl", ["pi_trio", "pi_trio-asyncio"])
def test_pi_trios_rows_do_the_scripted_work_on_both_backends(impl: str) -> None:
    stream = run.measure(impl, "stream", TINY)
    assert (stream["provider_calls"], stream["deltas_consumed"]) == (1, 50)
    assert stream["final_text_len"] == 50 * 8
    turns = run.measure(impl, "turns", TINY)
    assert (turns["provider_calls"], turns["tool_calls"], turns["final_text"]) == (4, 3, "done")
    concurrent = run.measure(impl, "concurrent", TINY)
    assert (concurrent["provider_calls"], concurrent["tool_calls"], concurrent["runs"]) == (8, 4, 4)
    cancelled = run.measure(impl, "cancelled", TINY)
    assert (cancelled["provider_calls"], cancelled["runs"], cancelled["tool_calls"]) == (4, 4, 0)
    assert cancelled["model_ended_when_settled"] == 4
    assert cancelled["deltas_after_cancel"] == 0
    assert peers.stop_check(cancelled) == "stopped"
    idle = run.measure(impl, "idle", TINY)
    assert idle["agents"] == 5
    assert idle["kb_per_agent"] > 0
    assert idle["us_construct"] > 0


def line(**work: Any) -> dict[str, Any]:
    return {"provider_calls": 1, "tool_calls": 0, "runs": 1, "deltas_consumed": 5, **work}


def test_a_framework_that_does_less_work_fails_the_comparison() -> None:
    same = {"a": [line(final_text_len=40)], "b": [line(final_text_len=40)]}
    assert peers.check_equal_work("stream", same) == []
    less = {"a": [line(final_text_len=40)], "b": [line(deltas_consumed=4, final_text_len=32)]}
    (problem,) = peers.check_equal_work("stream", less)
    assert problem.startswith("stream: b did {")
    assert "'deltas_consumed': 4" in problem


def test_a_cancelled_run_that_keeps_going_is_named() -> None:
    open_calls = line(provider_calls=10, model_ended=10, model_ended_when_settled=7)
    assert peers.stop_check({**open_calls, "deltas_after_cancel": 3}) == (
        "3 model calls still open at return; 3 deltas after cancel"
    )
    assert peers.stop_check({**open_calls, "deltas_after_cancel": 0, "tool_calls": 2}) == (
        "3 model calls still open at return; 2 tools ran"
    )


def test_the_harness_runs_pi_trios_rows_in_fresh_processes_and_prints_the_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--impls", "pi_trio", "pi_trio-asyncio", "--runs", "1", "--scale", "0.002"]
    assert peers.main([*argv, "--workloads", "cancelled", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out
    assert "(d) 1 000 runs cancelled mid-stream" in out
    assert "(d) stopped when the run returned: pi_trio: stopped, pi_trio-asyncio: stopped" in out
    assert "work done (cancelled, equal for all): {'provider_calls': 2, 'runs': 2}" in out


def test_the_peer_frameworks_stay_out_of_the_projects_own_environments() -> None:
    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].values()
    declared = [*project["dependencies"], *(spec for extra in extras for spec in extra)]
    names = {re.split(r"[<>=\[; ]", spec, maxsplit=1)[0].lower() for spec in declared}
    pinned = (root / "benchmarks/peers/requirements.txt").read_text().splitlines()
    peers_only = {"pydantic-ai-slim", "pydantic-graph", "openai-agents", "agno"}
    assert peers_only <= {line.split("==")[0] for line in pinned if "==" in line}
    assert not names & peers_only
