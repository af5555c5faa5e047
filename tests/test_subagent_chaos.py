"""The abort contract under chaos, for sub-agents: seeded random runs of a parent whose
calls delegate to sub-agents two levels deep, half on trio and half on asyncio, each cut
by an abort (from a listener of the parent or of a sub-agent, a tool at any depth,
another task, another thread), a cancellation or a deadline of the parent's caller, a
sub-agent aborting itself, or nothing, and checked on every agent of the tree (see
``tests/subagent_chaos_support.py``).

The seed is the contract chaos suite's (``PI_TRIO_CHAOS_SEED``, printed in the report
header); a failure names the run to replay (``PI_TRIO_SUBAGENT_CHAOS_REPLAY=<seed>:<index>``).
``PI_TRIO_SUBAGENT_CHAOS_RUNS`` changes the number of runs."""

from __future__ import annotations

import os
import random
import traceback
from collections import Counter

import anyio
import pytest
import trio
import trio.testing

from .chaos_support import BACKENDS, HANG_AFTER, Violation
from .subagent_chaos_checks import CUT
from .subagent_chaos_support import draw, run_scenario
from .test_contract_chaos import SEED

RUNS = int(os.environ.get("PI_TRIO_SUBAGENT_CHAOS_RUNS", "400"))
CHUNKS = 2  # per backend


def _seed_trio_scheduler(seed: str) -> None:
    """Trio shuffles its run queue with a module-level generator; seeding it makes a run
    replayable (threads aside). It is private, so only when it is there."""
    generator = getattr(getattr(getattr(trio, "_core", None), "_run", None), "_r", None)
    if isinstance(generator, random.Random):
        generator.seed(seed)


async def _run_many(
    seed: int, indices: range | list[int], backend: str, failures: list[str]
) -> Counter[str]:
    ends: Counter[str] = Counter()
    for index in indices:
        scenario = draw(seed, index)
        if backend == "trio":
            _seed_trio_scheduler(scenario.seed)
        replay = f"PI_TRIO_SUBAGENT_CHAOS_REPLAY={seed}:{index} ({backend})"
        try:
            # a hang is a violation too: virtual time on trio, real time on asyncio
            with anyio.fail_after(HANG_AFTER[backend]):
                ends[await run_scenario(scenario, backend, ends)] += 1
        except TimeoutError:
            failures.append(f"{replay}: hung\n  {scenario}")
        except Violation as exc:
            failures.append(f"{replay}: {exc}\n  {scenario}")
        except Exception as exc:  # the run itself failed: a bug, reported with its run
            trace = "".join(traceback.format_exception(exc)[-12:])
            failures.append(f"{replay}: {exc!r}\n{trace}")
    return ends


def _run(backend: str, indices: range | list[int], seed: int) -> Counter[str]:
    """The runs ``indices`` of ``seed`` in one event loop (trio: the autojump clock)."""
    failures: list[str] = []
    if backend == "trio":
        clock = trio.testing.MockClock(autojump_threshold=0)
        ends = trio.run(_run_many, seed, indices, backend, failures, clock=clock)
    else:
        ends = anyio.run(_run_many, seed, indices, backend, failures, backend="asyncio")
    if failures:
        shown = "\n".join(failures[:5])
        pytest.fail(f"{len(failures)} run(s) broke the contract (seed {seed}):\n{shown}")
    return ends


def _replay() -> tuple[int, int] | None:
    given = os.environ.get("PI_TRIO_SUBAGENT_CHAOS_REPLAY")
    if not given:
        return None
    seed, index = given.split(":")
    return int(seed), int(index)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_agent_of_a_tree_keeps_the_abort_contract(backend: str, chunk: int) -> None:
    replay = _replay()
    if replay is not None:
        seed, index = replay
        if chunk == 0:
            _run(backend, [index], seed)
        return
    # run k goes to backend k % 2, chunk (k // 2) % CHUNKS
    indices = range(BACKENDS.index(backend) + 2 * chunk, RUNS, 2 * CHUNKS)
    ends = _run(backend, indices, SEED)
    assert sum(ends[end] for end in ("aborted", "cancelled", "completed")) == len(indices)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_chaos_cuts_sub_agents_at_every_depth(backend: str) -> None:
    """The suite is not vacuous: with a fixed seed, parents end aborted, cancelled and
    completed, and sub-agents and their own sub-agents are cut short in many runs."""
    ends = _run(backend, range(0, 300, 2) if backend == "trio" else range(1, 300, 2), 7)
    assert ends["aborted"] >= 40, ends
    assert ends["cancelled"] >= 20, ends
    assert ends["completed"] >= 30, ends
    assert ends[CUT[0]] >= 60, ends
    assert ends[CUT[1]] >= 4, ends
