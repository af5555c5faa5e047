"""Soak: a long-lived trio service doing 100 000 agent runs over loopback HTTP
(``openai-completions``) with a seeded mix of faults, reporting the process's resident
memory and open file descriptors every 10 000 runs. Both must stay flat.

    python -m benchmarks.soak [--runs 100000] [--every 10000] [--concurrency 32] [--seed 1]

``--concurrency`` workers each keep one ``Agent`` for the whole soak (``reset()`` before
every run) and share one provider registry, as a service would. The loopback server is a
separate process (``--serve`` runs it), so the figures are the service's alone. The mix
(weights in ``MIX``): a tool turn and an answer; a tool that raises; a 500 and a 429 from
the provider; a connection reset mid-stream; a stalled response ending in the request
timeout; an ``abort()`` and an external cancellation at a random event; a deadline of a
few milliseconds. Every run is checked (nothing streaming, no pending tool call, one
result per tool call); each checkpoint prints one JSON line, the end a table.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import trio
from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import StreamOptions, ToolCall
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import SSEReply, serve_sse

from .scripted import echo_tool
from .w5_http_stream import bench_model, response_events

ROOT = Path(__file__).resolve().parent.parent

# Run kinds and their weights (per 100 runs).
MIX: dict[str, int] = {
    "answer": 35,
    "tool_fails": 10,
    "http_500": 10,
    "http_429": 5,
    "reset": 5,
    "stall": 5,
    "abort": 15,
    "cancel": 10,
    "deadline": 5,
}
# Kinds that wait on the real clock (left out of the test suite's small soak).
TIMED = frozenset({"stall", "deadline"})
# The request timeout a stalled response ends in, in ms: long next to a normal run.
TIMEOUT_MS = 200
TEXT_CHUNKS = 20
TAG = "soak:"


# --------------------------------------------------------------------------- the server


def _json_reply(status: int, message: str) -> SSEReply:
    return SSEReply(json.dumps({"error": {"message": message}}).encode(), status=status)


def make_reply() -> Callable[[Any], SSEReply]:
    """The server's answer per request, chosen by the run kind tagged in the prompt."""
    tools = {
        name: response_events(TEXT_CHUNKS, [f"call_{name}_0", f"call_{name}_1"])
        for name in ("echo", "boom")
    }
    for name, events in tools.items():
        tools[name] = [e.replace(b'"name":"echo"', f'"name":"{name}"'.encode()) for e in events]
    answer = response_events(TEXT_CHUNKS)

    def reply(request: Any) -> SSEReply:
        content: bytes = request.content
        start = content.find(TAG.encode())
        kind = content[start + len(TAG) : content.find(b"]", start)].decode()
        if kind == "http_500":
            return _json_reply(500, "upstream exploded")
        if kind == "http_429":
            return _json_reply(429, "rate limited")
        if kind == "stall":
            return SSEReply([b": waiting\n\n"], hold_open=True)
        if content.count(b'"role":"assistant"'):
            return SSEReply(answer, write_size=16384)
        body = tools["boom" if kind == "tool_fails" else "echo"]
        if kind == "reset":
            return SSEReply(body, reset_after=len(body) // 2)
        return SSEReply(body, write_size=16384)

    return reply


def serve_forever() -> None:
    """Run the loopback server until killed; prints ``PORT <n>``."""

    async def main() -> None:
        reply = make_reply()
        async with serve_sse(lambda request: reply(request)) as server:
            print(f"PORT {server.url.rsplit(':', 1)[1]}", flush=True)
            while True:
                await trio.sleep(1)
                server.requests.clear()  # the server keeps no history over a soak

    trio.run(main)


# --------------------------------------------------------------------------- the service


async def _boom(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    raise RuntimeError("the tool failed")


boom_tool = AgentTool(
    name="boom", description="fails", parameters={"type": "object"}, execute=_boom
)


def rss_mb() -> float:
    """The current resident set size in MB (not the peak)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def check_settled(agent: Agent) -> None:
    state = agent.state
    assert not state.is_streaming, "a run ended still streaming"
    assert state.pending_tool_calls == frozenset(), "a run ended with pending tool calls"
    results = Counter(m.tool_call_id for m in state.messages if m.role == "toolResult")
    for message in state.messages:
        if message.role == "assistant" and message.stop_reason not in ("error", "aborted"):
            for block in message.content:
                if isinstance(block, ToolCall):
                    assert results[block.id] == 1, f"tool call {block.id}: {results[block.id]}"


def outcome(agent: Agent, scope: anyio.CancelScope) -> str:
    """How a run ended: "cancelled" (the cancellation reached the caller), the last
    answer's stop reason, "tools aborted" (an abort while tools ran ends with their
    results) or "no answer" (cut before the request)."""
    if scope.cancelled_caught:
        return "cancelled"
    last = agent.state.messages[-1]
    if last.role == "assistant":
        return str(last.stop_reason)
    return "tools aborted" if last.role == "toolResult" else "no answer"


class Soak:
    def __init__(self, url: str, runs: int, every: int, seed: int, mix: dict[str, int]) -> None:
        self.url = url
        self.runs = runs
        self.every = every
        self.seed = seed
        self.kinds = [kind for kind, weight in mix.items() for _ in range(weight)]
        self.next_run = 0
        self.done = 0
        self.outcomes: Counter[str] = Counter()
        self.series: list[dict[str, Any]] = []
        self.started = time.perf_counter()
        self.registry = ProviderRegistry()

    def checkpoint(self) -> None:
        gc.collect()
        point = {
            "runs": self.done,
            "s": round(time.perf_counter() - self.started, 1),
            "rss_mb": rss_mb(),
            "open_fds": open_fds(),
            **{k: self.outcomes[k] for k in sorted(self.outcomes)},
        }
        self.series.append(point)
        print(json.dumps(point), flush=True)

    async def worker(self) -> None:
        agent = Agent(
            model=bench_model(self.url),
            tools=[echo_tool, boom_tool],
            registry=self.registry,
            stream_options=StreamOptions(api_key="sk-soak", timeout_ms=TIMEOUT_MS),
        )
        events = 0
        trigger: tuple[int, Callable[[], None]] | None = None

        def listener(event: Any) -> None:
            nonlocal events
            events += 1
            if trigger is not None and events == trigger[0]:
                trigger[1]()

        agent.subscribe(listener)
        while self.next_run < self.runs:
            index = self.next_run
            self.next_run += 1
            rng = random.Random(self.seed * 1_000_003 + index)
            kind = rng.choice(self.kinds)
            agent.reset()
            events = 0
            scope = anyio.CancelScope()
            trigger = None
            if kind == "abort":
                trigger = (rng.randint(1, 60), agent.abort)
            elif kind == "cancel":
                trigger = (rng.randint(1, 60), scope.cancel)
            elif kind == "deadline":
                scope.deadline = anyio.current_time() + rng.uniform(0.001, 0.01)
            with scope:
                await agent.prompt(f"[{TAG}{kind}] go")
            check_settled(agent)
            self.outcomes[outcome(agent, scope)] += 1
            self.done += 1
            if self.done % self.every == 0:
                self.checkpoint()

    async def run(self, concurrency: int) -> dict[str, Any]:
        self.checkpoint()
        try:
            async with anyio.create_task_group() as group:
                for _ in range(concurrency):
                    group.start_soon(self.worker)
        finally:
            await self.registry.aclose()
        first, last = self.series[1] if len(self.series) > 1 else self.series[0], self.series[-1]
        return {
            "runs": self.done,
            "wall_s": round(time.perf_counter() - self.started, 1),
            "rss_growth_mb": round(last["rss_mb"] - first["rss_mb"], 1),
            "fd_spread": max(p["open_fds"] for p in self.series[1:] or self.series)
            - min(p["open_fds"] for p in self.series[1:] or self.series),
            "outcomes": dict(self.outcomes),
            "series": self.series,
        }


async def soak(
    url: str,
    runs: int,
    every: int,
    concurrency: int,
    seed: int = 1,
    mix: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Run the soak against the server at ``url``; the series and a summary."""
    return await Soak(url, runs, every, seed, mix or MIX).run(concurrency)


# --------------------------------------------------------------------------- the command


def table(summary: dict[str, Any]) -> str:
    kinds = sorted({k for p in summary["series"] for k in p} - {"runs", "s", "rss_mb", "open_fds"})
    head = ["runs", "s", "RSS MB", "fds", *kinds]
    rows = [head] + [
        [str(p["runs"]), str(p["s"]), str(p["rss_mb"]), str(p["open_fds"])]
        + [str(p.get(k, 0)) for k in kinds]
        for p in summary["series"]
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append(
        f"RSS growth after the first checkpoint: {summary['rss_growth_mb']} MB; "
        f"open fds spread: {summary['fd_spread']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve_forever()
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.soak", "--serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        url = f"http://127.0.0.1:{int(line.split()[1])}"
        summary = trio.run(soak, url, args.runs, args.every, args.concurrency, args.seed)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print()
    print(table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
