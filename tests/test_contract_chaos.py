"""The abort contract under chaos: about 3 000 seeded random runs per test session, half on
trio and half on asyncio, each interrupted in one of the ways ``chaos_support`` draws and
checked against the contract's five invariants (see ``tests/chaos_support.py``).

The seed is new for every session (``PI_TRIO_CHAOS_SEED`` fixes it) and printed in the
report header; a failure names the run to replay (``PI_TRIO_CHAOS_REPLAY=<seed>:<index>``
runs that one alone). ``PI_TRIO_CHAOS_RUNS`` changes the number of runs."""

from __future__ import annotations

import os
from collections import Counter

import pytest

from .chaos_support import BACKENDS, chosen_seed, run_backend

SEED = chosen_seed()
RUNS = int(os.environ.get("PI_TRIO_CHAOS_RUNS", "3000"))
# The runs are split into chunks so each backend's share runs in a few event loops; a
# chunk is one test, so a failure points at a few hundred runs, not all of them.
CHUNKS = 6


def chaos_seed_header() -> str:
    return f"contract chaos: PI_TRIO_CHAOS_SEED={SEED}, {RUNS} runs"


def _replay() -> tuple[int, int] | None:
    given = os.environ.get("PI_TRIO_CHAOS_REPLAY")
    if not given:
        return None
    seed, index = given.split(":")
    return int(seed), int(index)


def _run(backend: str, indices: range | list[int], seed: int) -> Counter[str]:
    failures: list[str] = []
    ends = run_backend(seed, indices, backend, failures)
    if failures:
        shown = "\n".join(failures[:5])
        pytest.fail(f"{len(failures)} run(s) broke the contract (seed {seed}):\n{shown}")
    return ends


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_the_abort_contract_holds_under_random_interruptions(backend: str, chunk: int) -> None:
    replay = _replay()
    if replay is not None:
        seed, index = replay
        if chunk == 0:
            _run(backend, [index], seed)
        return
    # run k of the seed goes to backend k % 2, chunk (k // 2) % CHUNKS
    offset = BACKENDS.index(backend)
    indices = range(offset + 2 * chunk, RUNS, 2 * CHUNKS)
    ends = _run(backend, indices, SEED)
    assert sum(n for end, n in ends.items() if not end.startswith("approval:")) == len(indices)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_chaos_interrupts_runs_every_way(backend: str) -> None:
    """The suite is not vacuous: with a fixed seed, its runs end aborted, cancelled and
    completed, and pause for approval and resume, in proportions far from zero."""
    ends = _run(backend, range(0, 200, 2) if backend == "trio" else range(1, 200, 2), 7)
    assert ends["aborted"] >= 25, ends
    assert ends["cancelled"] >= 20, ends
    assert ends["completed"] >= 20, ends
    # runs paused for approval and were resumed, and interruptions fell into resumed runs
    assert ends["approval:paused"] >= 10, ends
    assert ends["approval:resumed"] >= 5, ends
    assert ends["approval:interrupted in a resume"] >= 3, ends
    assert ends["approval:resumed after the chaotic run"] >= 3, ends
