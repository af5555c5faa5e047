"""W5 http-stream: one Agent, provider ``openai-completions``, against a loopback HTTP server
(a separate process) that streams a chat-completions body of 20 000 content chunks, one
``data:`` event per write, then a finish chunk, a usage chunk and ``[DONE]``.

Measures the whole path: httpx, SSE framing, JSON decoding, event building, dispatch.

    python -m benchmarks.w5_http_stream            # pi_trio, one JSON line
    python -m benchmarks.w5_http_stream --ts DIR   # the TypeScript original against the
                                                   # same kind of server (DIR holds node_modules)

This module also holds the loopback server process and the chat-completions body builders
that W6 uses (``--serve W5|W6`` runs the server and prints ``PORT <n>``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2
import trio
from pi_trio.agent import Agent
from pi_trio.ai import Model, StreamOptions, TextContent
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import SSEReply, registry_with_transport, serve_sse

from ._result import check, report
from .scripted import Turn, expected_events

ROOT = Path(__file__).resolve().parent.parent
DELTA = "abcdefgh"
W5_CHUNKS = 20_000
# The server gathers consecutive SSE events (each its own HTTP chunk) into writes of about
# this many bytes, like the socket buffer of a server that produces faster than the client
# reads; one write per event would make the Python server the bottleneck of the run.
WRITE_SIZE = int(os.environ.get("PI_BENCH_WRITE_SIZE", "16384"))
USAGE = {
    "prompt_tokens": 12,
    "completion_tokens": 34,
    "total_tokens": 46,
    "prompt_tokens_details": {"cached_tokens": 0},
}


# --------------------------------------------------------------------------- bodies


def _event(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1718000000,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def response_events(texts: int, tool_ids: Sequence[str] = ()) -> list[bytes]:
    """One chat-completions response, one bytes object per SSE event: ``texts`` content
    chunks of ``"abcdefgh"``, one chunk per echo tool call (``{"i": j}``), the finish
    chunk, the usage chunk and ``[DONE]``."""
    events = [_event(_chunk({"content": DELTA})) for _ in range(texts)]
    for j, call_id in enumerate(tool_ids):
        call = {
            "index": j,
            "id": call_id,
            "type": "function",
            "function": {"name": "echo", "arguments": json.dumps({"i": j})},
        }
        events.append(_event(_chunk({"tool_calls": [call]})))
    events.append(_event(_chunk({}, "tool_calls" if tool_ids else "stop")))
    events.append(
        _event(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 1718000000,
                "model": "bench",
                "choices": [],
                "usage": USAGE,
            }
        )
    )
    events.append(b"data: [DONE]\n\n")
    return events


W6_TURNS = 5
W6_TEXT = 50
W6_TOOLS = 2


def w6_events(turn: int) -> list[bytes]:
    """The W6 response for a request that follows ``turn`` assistant turns."""
    if turn < W6_TURNS:
        return response_events(W6_TEXT, [f"call_{turn}_{j}" for j in range(W6_TOOLS)])
    return response_events(W6_TEXT)


# --------------------------------------------------------------------------- server process


def serve_forever(workload: str) -> None:
    """Run the loopback server for ``workload`` until killed; prints ``PORT <n>``.
    ``GET /stats`` answers with the server's counts."""
    w5_body = response_events(W5_CHUNKS) if workload == "W5" else []
    w6_bodies = [w6_events(turn) for turn in range(W6_TURNS + 1)] if workload == "W6" else []

    async def main() -> None:
        holder: list[Any] = []

        def reply(request: Any) -> SSEReply:
            server = holder[0]
            if request.path == "/stats":
                stats = {
                    "open_connections": server.open_connections - 1,
                    "connections": server.connections - 1,
                    "requests": sum(1 for r in server.requests if r.path != "/stats"),
                    "client_closed": server.client_closed,
                }
                return SSEReply(
                    json.dumps(stats).encode(), headers={"content-type": "application/json"}
                )
            if workload == "W5":
                return SSEReply(w5_body, write_size=WRITE_SIZE)
            turn = request.content.count(b'"role":"assistant"')
            return SSEReply(w6_bodies[min(turn, W6_TURNS)], write_size=WRITE_SIZE)

        async with serve_sse(reply) as server:
            holder.append(server)
            print(f"PORT {server.url.rsplit(':', 1)[1]}", flush=True)
            await trio.sleep_forever()

    trio.run(main)


class LoopbackServer:
    """The server process of a workload (``with LoopbackServer("W5") as url:``)."""

    def __init__(self, workload: str) -> None:
        self.workload = workload
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> str:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.w5_http_stream", "--serve", self.workload],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"the loopback server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        return self.url

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)


async def server_stats(url: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as client:
        response = await client.get(f"{url}/stats")
        return response.json()  # type: ignore[no-any-return]


# How long to wait for the server to see the client's connections close.
CLOSE_WAIT_S = 5.0


async def wait_for_connections(url: str, at_most: int) -> int:
    """Poll the server until at most ``at_most`` connections are open (the server sees a
    client close a moment later), for up to ``CLOSE_WAIT_S``; the last count."""
    deadline = time.monotonic() + CLOSE_WAIT_S
    while True:
        count = int((await server_stats(url))["open_connections"])
        if count <= at_most or time.monotonic() > deadline:
            return count
        await trio.sleep(0.01)


# --------------------------------------------------------------------------- client side


def bench_model(url: str) -> Model:
    return Model(
        id="bench",
        name="bench",
        api="openai-completions",
        provider="bench",
        base_url=url,
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=1_000_000,
        max_tokens=100_000,
    )


def bench_registry() -> tuple[ProviderRegistry, bool]:
    """The registry the agents use, and whether a workaround was needed: when
    ``ProviderRegistry.http_client()`` does not return the same client twice (a known bug
    at the time of writing), a registry with one client of the same limits is used."""
    registry = ProviderRegistry()
    first, second = registry.http_client(), registry.http_client()
    if first is second:
        return registry, False
    from pi_trio.ai._stream._registry import (
        HTTP_CONNECT_TIMEOUT_S,
        HTTP_MAX_CONNECTIONS,
        HTTP_MAX_KEEPALIVE,
        HTTP_READ_TIMEOUT_S,
    )

    transport = httpx2.AsyncHTTPTransport(
        limits=httpx2.Limits(
            max_connections=HTTP_MAX_CONNECTIONS, max_keepalive_connections=HTTP_MAX_KEEPALIVE
        )
    )
    del first, second
    patched = registry_with_transport(transport)
    patched.http_client().timeout = httpx2.Timeout(
        HTTP_READ_TIMEOUT_S, connect=HTTP_CONNECT_TIMEOUT_S
    )
    return patched, True


def final_text(agent: Agent) -> str:
    last = agent.state.messages[-1]
    return "".join(b.text for b in last.content if isinstance(b, TextContent))


async def run_w5(url: str) -> dict[str, Any]:
    registry, workaround = bench_registry()
    counter = [0]

    def count(event: Any) -> None:
        counter[0] += 1

    agent = Agent(
        model=bench_model(url),
        system_prompt="bench",
        registry=registry,
        stream_options=StreamOptions(api_key="bench"),
    )
    agent.subscribe(count)
    t0 = time.perf_counter()
    await agent.prompt("go")
    wall = time.perf_counter() - t0
    last = agent.state.messages[-1]
    check(
        getattr(last, "stop_reason", None) == "stop",
        f"W5: run ended with {getattr(last, 'stop_reason', None)!r}: "
        f"{getattr(last, 'error_message', None)}",
    )
    expected = expected_events([Turn(W5_CHUNKS, 0)], 1)
    check(counter[0] == expected, f"W5: {counter[0]} events, expected {expected}")
    text_len = len(final_text(agent))
    check(text_len == W5_CHUNKS * len(DELTA), f"W5: final text {text_len} chars")
    stats = await server_stats(url)
    check(stats["requests"] == 1, f"W5: {stats['requests']} provider calls, expected 1")
    check(last.usage.total_tokens == USAGE["total_tokens"], "W5: usage chunk not applied")
    open_after = stats["open_connections"]
    await registry.aclose()
    open_closed = await wait_for_connections(url, 0)
    return {
        "wall_s": wall,
        "events": counter[0],
        "final_text_len": text_len,
        "provider_calls": stats["requests"],
        "open_connections_after_run": open_after,
        "open_connections_after_close": open_closed,
        "registry_workaround": workaround,
        "server_write_bytes": WRITE_SIZE,
    }


# --------------------------------------------------------------------------- TypeScript peer

TS_DRIVER = r"""
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const DIR = process.env.PI_TS_DIR;
const mod = (p) => import(pathToFileURL(join(DIR, "node_modules", p)).href);
// pi 1.x (@earendil-works): the Agent needs a stream function; tool parameters are plain
// JSON Schema. pi 0.73 (@mariozechner): the Agent defaults to streamSimple; TypeBox schemas.
const LINE16 = existsSync(join(DIR, "node_modules/@earendil-works/pi-agent-core/package.json"));
const SCOPE = LINE16 ? "@earendil-works" : "@mariozechner";
const { Agent } = await mod(`${SCOPE}/pi-agent-core/dist/index.js`);
const ai = await mod(LINE16 ? `${SCOPE}/pi-ai/dist/compat.js` : `${SCOPE}/pi-ai/dist/index.js`);
const VERSION = (await import(pathToFileURL(join(DIR, `node_modules/${SCOPE}/pi-ai/package.json`)).href, { with: { type: "json" } })).default.version;
const [workload, url, agentsArg] = process.argv.slice(2);
const MODEL = { id: "bench", name: "bench", api: "openai-completions", provider: "bench", baseUrl: url,
  reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000, maxTokens: 100_000 };
const parameters = LINE16
  ? { type: "object", properties: { i: { type: "number" } }, required: ["i"] }
  : ai.Type.Object({ i: ai.Type.Number() });
const echo = { name: "echo", label: "echo", description: "returns ok", parameters,
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }) };
let events = 0;
const make = (tools) => {
  const agent = new Agent({ initialState: { systemPrompt: "bench", model: MODEL, tools },
    getApiKey: () => "bench", toolExecution: "parallel",
    ...(LINE16 ? { streamFn: ai.streamSimple } : {}) });
  agent.subscribe(() => { events++; });
  return agent;
};
const n = workload === "W5" ? 1 : Number(agentsArg);
const agents = Array.from({ length: n }, () => make(workload === "W5" ? [] : [echo]));
const t0 = process.hrtime.bigint();
await Promise.all(agents.map((a) => a.prompt("go")));
const wall = Number(process.hrtime.bigint() - t0) / 1e9;
const last = agents[0].state.messages.at(-1);
console.log(JSON.stringify({ workload, impl: `ts-pi-ai@${VERSION}`, node: process.version,
  wall_s: +wall.toFixed(4), events, events_per_s: Math.round(events / wall),
  peak_rss_mb: +(process.resourceUsage().maxRSS / 1024).toFixed(1),
  stop_reason: last.stopReason, error: last.errorMessage ?? null,
  messages_per_agent: agents[0].state.messages.length }));
"""


def run_ts(workload: str, ts_dir: str, agents: int = 1) -> None:
    """Run the TypeScript original against a fresh loopback server; print its JSON line."""
    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(workload) as url:
        script = Path(tmp) / "http_bench.mjs"
        script.write_text(TS_DRIVER)
        done = subprocess.run(
            ["node", str(script), workload, url, str(agents)],
            env={**os.environ, "PI_TS_DIR": ts_dir},
            capture_output=True,
            text=True,
            check=False,
        )
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise SystemExit(done.returncode)


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--serve"]:
        serve_forever(args[1])
    elif args[:1] == ["--ts"]:
        run_ts("W5", args[1])
    else:
        with LoopbackServer("W5") as url:
            report("W5", lambda: run_w5(url))


if __name__ == "__main__":
    main()
