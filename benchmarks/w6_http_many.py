"""W6 http-many: 200 concurrent Agents, provider ``openai-completions``, against the loopback
server (a separate process): each agent runs 5 turns of (50 content chunks + 2 echo tool
calls), then a final answer of 50 chunks. Reports runs/s, events/s, peak RSS, and the
server's count of connections still open after the run (at most the pool's idle
keep-alive) and after the registry is closed (zero).

    python -m benchmarks.w6_http_many            # pi_trio, one JSON line
    python -m benchmarks.w6_http_many --ts DIR   # the TypeScript original
"""

from __future__ import annotations

import sys
import time
from typing import Any

import trio
from pi_trio.agent import Agent, RunPolicy
from pi_trio.ai import StreamOptions
from pi_trio.ai._stream._registry import HTTP_MAX_KEEPALIVE

from ._result import check, report
from .scripted import echo_tool, expected_events, non_system, tool_turns
from .w5_http_stream import (
    W6_TEXT,
    W6_TOOLS,
    W6_TURNS,
    WRITE_SIZE,
    LoopbackServer,
    bench_model,
    bench_registry,
    run_ts,
    server_stats,
    wait_for_connections,
)

AGENTS = 200


async def run_w6(url: str, agents: int = AGENTS) -> dict[str, Any]:
    registry, workaround = bench_registry()
    counter = [0]

    def count(event: Any) -> None:
        counter[0] += 1

    model = bench_model(url)
    crowd = []
    for _ in range(agents):
        agent = Agent(
            model=model,
            system_prompt="bench",
            tools=[echo_tool],
            registry=registry,
            policy=RunPolicy(tool_execution="parallel"),
            stream_options=StreamOptions(api_key="bench"),
        )
        agent.subscribe(count)
        crowd.append(agent)
    t0 = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for agent in crowd:
            nursery.start_soon(agent.prompt, "go")
    wall = time.perf_counter() - t0

    failed = [
        m
        for a in crowd
        for m in a.state.messages
        if getattr(m, "stop_reason", None) in ("error", "aborted")
    ]
    check(
        not failed,
        f"W6: {len(failed)} failed responses, first: {failed[0].error_message if failed else None}",
    )
    turns = tool_turns(W6_TURNS, W6_TEXT, W6_TOOLS)
    calls = W6_TURNS + 1
    expected = expected_events(turns, calls) * agents
    check(counter[0] == expected, f"W6: {counter[0]} events, expected {expected}")
    per_agent = {len(non_system(a.state.messages)) for a in crowd}
    n_messages = 2 + W6_TURNS * (1 + W6_TOOLS)
    check(per_agent == {n_messages}, f"W6: messages per agent {per_agent}, expected {n_messages}")
    stats = await server_stats(url)
    check(
        stats["requests"] == calls * agents,
        f"W6: {stats['requests']} provider calls, expected {calls * agents}",
    )
    open_after = stats["open_connections"]
    check(
        open_after <= HTTP_MAX_KEEPALIVE,
        f"W6: {open_after} connections open after the run, more than the pool keeps idle "
        f"({HTTP_MAX_KEEPALIVE})",
    )
    await registry.aclose()
    open_closed = await wait_for_connections(url, 0)
    check(open_closed == 0, f"W6: {open_closed} connections still open after closing the pool")
    return {
        "wall_s": wall,
        "events": counter[0],
        "runs": agents,
        "runs_per_s": round(agents / wall, 1),
        "provider_calls": stats["requests"],
        "messages_per_agent": n_messages,
        "connections_opened": stats["connections"],
        "open_connections_after_run": open_after,
        "open_connections_after_close": open_closed,
        "registry_workaround": workaround,
        "server_write_bytes": WRITE_SIZE,
    }


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--ts"]:
        run_ts("W6", args[1], AGENTS)
    else:
        with LoopbackServer("W6") as url:
            report("W6", lambda: run_w6(url))


if __name__ == "__main__":
    main()
