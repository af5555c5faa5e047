"""W7 big-tool-args: one tool call whose argument JSON (``{"content": "xx…"}``) streams as
64-byte ``toolcall_delta``s, at 256 KiB, 1 MiB and 4 MiB. Cost must grow linearly: the
seconds per MiB should stay flat across the sizes.

Each size is one agent run (the big call, then an empty final answer), smallest first;
``wall_s`` covers all three, ``wall_by_size`` and ``s_per_mib`` give each size. The same
runs again with a second listener that reads the partial arguments on every
``toolcall_delta`` (as a UI showing the call as it streams does): ``s_per_mib_reading``
and ``per_mib_growth_reading`` must stay flat too.
"""

from __future__ import annotations

import time
from typing import Any

from ._result import check, report
from .scripted import ARG_CHUNK, Turn, big_arguments, expected_events, make_agent, non_system

MIB = 1 << 20
SIZES = {"256KiB": 256 << 10, "1MiB": MIB, "4MiB": 4 * MIB}


def _read_partial_arguments(seen: list[int]) -> Any:
    def read(event: Any) -> None:
        if event.type != "message_update":
            return
        update = event.assistant_message_event
        if update.type == "toolcall_delta":
            arguments = update.partial.content[update.content_index].arguments
            seen[0] = max(seen[0], len(arguments.get("content", "")))

    return read


async def run_size(size: int, *, reading: bool = False) -> dict[str, Any]:
    counter = [0]
    turns = [Turn(0, 0, big_args=size), Turn(0, 0)]
    agent, model = make_agent(turns, counter)
    seen = [0]
    if reading:
        agent.subscribe(_read_partial_arguments(seen))
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
    if reading:
        # the preview may lag a little behind the text, never by more than a few percent
        check(seen[0] >= want * 0.9, f"W7 {size}: the reader saw {seen[0]} of {want} chars")
    return {"events": counter[0], "deltas": -(-size // ARG_CHUNK)}


async def run(sizes: dict[str, int] = SIZES) -> dict[str, Any]:
    events = 0
    result: dict[str, Any] = {}
    for reading, suffix in ((False, ""), (True, "_reading")):
        per_mib: dict[str, float] = {}
        wall: dict[str, float] = {}
        deltas: dict[str, int] = {}
        for label, size in sizes.items():
            t0 = time.perf_counter()
            out = await run_size(size, reading=reading)
            elapsed = time.perf_counter() - t0
            events += out["events"]
            wall[label] = round(elapsed, 4)
            per_mib[label] = round(elapsed / (size / MIB), 4)
            deltas[label] = out["deltas"]
        labels = list(sizes)
        growth = per_mib[labels[-1]] / per_mib[labels[0]] if per_mib[labels[0]] else 0.0
        result[f"wall_by_size{suffix}"] = wall
        result[f"s_per_mib{suffix}"] = per_mib
        result[f"per_mib_growth{suffix}"] = round(growth, 2)
        result["toolcall_deltas"] = deltas
    return {"events": events, **result}


if __name__ == "__main__":
    report("W7", run)
