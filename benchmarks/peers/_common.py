"""What every framework's rows share: the sizes, the script its test model follows, and
the counters that prove each framework did the same work.

The test model of every framework follows one script (``script``): call ``k`` of a run
answers with ``replies[min(k, len - 1)]``, a ``Reply`` of ``deltas`` text deltas (of
``DELTA``, or the final answer ``FINAL``) and then, when ``tool`` is set, one call of the ``echo`` tool with ``{"i": k}``.
A model yields to the event loop once when a request starts and once before each delta
(one network chunk each; ``await asyncio.sleep(0)``, trio's checkpoint, node's
``setImmediate``), and records what it did on the run's ``Probe``.
"""

from __future__ import annotations

import json
import resource
import sys
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

__all__ = [
    "DELTA",
    "FINAL",
    "SIZES",
    "Probe",
    "Reply",
    "Sizes",
    "counts",
    "emit",
    "peak_rss_mb",
    "script",
]

DELTA = "abcdefgh"  # one streamed text delta, 8 characters as in W1
FINAL = "done"  # the answer after the last tool call, as one delta when streamed


class Sizes(NamedTuple):
    stream: int = 100_000  # (a) text deltas in one streamed answer
    turns: int = 200  # (b) sequential tool-call turns, then the answer
    concurrent: int = 1_000  # (c) runs at once, each one tool call then the answer
    cancelled: int = 1_000  # (d) runs at once, each cancelled at its first delta
    cancel_deltas: int = 1_000  # (d) deltas each of those would stream, then a tool call
    idle: int = 1_000  # (e) idle agents with one tool, kept alive together

    def scaled(self, factor: float) -> Sizes:
        return Sizes(*(max(1, int(n * factor)) for n in self))


SIZES = Sizes()


class Reply(NamedTuple):
    deltas: int  # text deltas (0: no text)
    tool: bool  # then one echo call
    text: str = DELTA  # each delta's text


def script(workload: str, sizes: Sizes) -> list[Reply]:
    """The replies of one run of ``workload``, call by call (the last one repeats)."""
    if workload == "stream":
        return [Reply(sizes.stream, False)]
    if workload == "turns":
        return [Reply(0, True)] * sizes.turns + [Reply(1, False, FINAL)]
    if workload == "concurrent":
        return [Reply(0, True), Reply(1, False, FINAL)]
    if workload == "cancelled":
        return [Reply(sizes.cancel_deltas, True), Reply(1, False, FINAL)]
    raise ValueError(f"no script for workload {workload!r}")


@dataclass
class Probe:
    """What the test models and tools of one workload did, summed over its runs."""

    provider_calls: int = 0  # requests the framework made to its model
    model_ended: int = 0  # model calls whose code ran to its end or was closed
    deltas_produced: int = 0  # text deltas the models produced
    deltas_consumed: int = 0  # text deltas the consumer saw
    tool_calls: int = 0  # tool executions
    runs: int = 0  # runs that settled (returned or were cancelled, not failed)
    deltas_after_cancel: int = 0  # (d) deltas produced after the consumer cancelled


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def emit(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)
    sys.stdout.flush()


def counts(probe: Probe) -> dict[str, int]:
    return asdict(probe)
