"""W7 big-tool-args: one tool call whose argument JSON (``{"content": "xx…"}``) streams as
64-byte ``toolcall_delta``s, at 256 KiB, 1 MiB and 4 MiB. Cost must grow linearly: the
seconds per MiB should stay flat across the sizes.

Each size is one agent run (the big call, then an empty final answer), smallest first;
``wall_s`` covers all three, ``wall_by_size`` and ``s_per_mib`` give each size.
"""

from __future__ import annotations

import time
from typing import Any

from ._result import check, report
from .scripted import ARG_CHUNK, Turn, big_arguments, expected_events, make_agent, non_system

MIB = 1 << 20
SIZES = {"256KiB": 256 << 10, "1MiB": MIB, "4MiB": 4 * MIB}


async def run_size(size: int) -> dict[str, Any]:
    counter = [0]
    turns = [Turn(0, 0, big_args=size), Turn(0, 0)]
    agent, model = make_agent(turns, counter)
    await agent.prompt("go")
    check(model.calls == 2, f"W7 {size}: {model.calls} provider calls, expected 2")
    expected = expected_events(turns, 2)
    check(counter[0] == expected, f"W7 {size}: {counter[0]} events, expected {expected}")
    messages = non_system(agent.state.messages)
    call = messages[1].content[0]
    content = call.arguments.get("content")
    want = len(big_arguments(size)) - len('{"content":""}')
    check(
        isinstance(content, str) and len(content) == want,
        f"W7 {size}: tool call content has {len(content or '')} chars, expected {want}",
    )
    result = messages[2]
    check(
        result.role == "toolResult" and not result.is_error,
        f"W7 {size}: the write call failed: {result!r:.300}",
    )
    return {"events": counter[0], "deltas": -(-size // ARG_CHUNK)}


async def run(sizes: dict[str, int] = SIZES) -> dict[str, Any]:
    events = 0
    per_mib: dict[str, float] = {}
    wall: dict[str, float] = {}
    deltas: dict[str, int] = {}
    for label, size in sizes.items():
        t0 = time.perf_counter()
        out = await run_size(size)
        elapsed = time.perf_counter() - t0
        events += out["events"]
        wall[label] = round(elapsed, 4)
        per_mib[label] = round(elapsed / (size / MIB), 4)
        deltas[label] = out["deltas"]
    labels = list(sizes)
    growth = per_mib[labels[-1]] / per_mib[labels[0]] if per_mib[labels[0]] else 0.0
    return {
        "events": events,
        "wall_by_size": wall,
        "s_per_mib": per_mib,
        "per_mib_growth": round(growth, 2),
        "toolcall_deltas": deltas,
    }


if __name__ == "__main__":
    report("W7", run)
