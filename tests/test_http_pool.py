"""No connection outlives its run: 1 000 streams aborted at random points mid-stream, mixed
with streams that finish, leave the shared pool holding no more connections than it keeps
idle (``HTTP_MAX_KEEPALIVE``), and closing the registry closes those too. Counted by the
loopback server, which sees every connection open and close.

Each aborted stream's response is held open by the server (it never ends on its own), so
the only way its connection can close is the client giving it up; a leaked connection
(one the abort left open, or a pool slot that never came back) keeps the server's count
up and the check fails."""

from __future__ import annotations

import random
from typing import Any

import anyio
import msgspec

from pi_trio.ai import AbortController, Context, UserMessage, get_model, open_stream
from pi_trio.ai._stream._registry import HTTP_MAX_KEEPALIVE
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import ServedRequest, SSEReply, serve_sse, sse_body

ABORTED_RUNS = 1000
FINISHED_RUNS = 200
CONCURRENCY = 64
CHUNKS = 12
SEED = 14

MODEL = get_model("groq", "openai/gpt-oss-120b")  # openai-completions
assert MODEL is not None
assert MODEL.api == "openai-completions"


def chunk(text: str, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }


# one SSE event per HTTP chunk, so an abort can land between any two of them
EVENTS = [sse_body([chunk(f"part {i} ")]) for i in range(CHUNKS)]
ENDING = sse_body([chunk("", "stop")], done=True)


def reply(request: ServedRequest) -> SSEReply:
    if b"finish" in request.content:
        return SSEReply([*EVENTS, ENDING])
    return SSEReply(EVENTS, hold_open=True)  # never ends: only the client can close it


async def one_run(registry: ProviderRegistry, url: str, abort_at: int | None) -> str:
    """One stream; ``abort_at`` counts the text deltas received before the abort (``None``:
    read it to the end). Returns the stop reason."""
    model = msgspec.structs.replace(MODEL, base_url=url)
    prompt = "finish" if abort_at is None else "abort"
    context = Context(messages=[UserMessage(content=prompt)])
    controller = AbortController()
    deltas = 0
    async with open_stream(
        model, context, registry=registry, api_key="k", signal=controller.signal
    ) as stream:
        async for event in stream:
            if abort_at is not None and event.type in ("start", "text_delta"):
                if deltas == abort_at:
                    controller.abort()
                deltas += event.type == "text_delta"
    return stream.result().stop_reason


async def test_aborted_and_finished_streams_leave_only_the_idle_keep_alive_connections():
    rng = random.Random(SEED)
    plan: list[int | None] = [rng.randrange(CHUNKS) for _ in range(ABORTED_RUNS)]
    plan += [None] * FINISHED_RUNS
    rng.shuffle(plan)
    outcomes: list[str] = []
    registry = ProviderRegistry()
    # a hang guard, not a timing claim: generous, since the machine may be loaded
    with anyio.fail_after(300):
        async with serve_sse(reply) as server:
            try:
                limiter = anyio.CapacityLimiter(CONCURRENCY)

                async def run(abort_at: int | None) -> None:
                    async with limiter:
                        outcomes.append(await one_run(registry, server.url, abort_at))

                async with anyio.create_task_group() as group:
                    for abort_at in plan:
                        group.start_soon(run, abort_at)
                assert outcomes.count("aborted") == ABORTED_RUNS
                assert outcomes.count("stop") == FINISHED_RUNS
                # every held-open response was given up by the client ...
                await server.wait_until(lambda s: s.client_closed == ABORTED_RUNS)
                # ... and what stays open is what the pool keeps idle for reuse
                assert 0 < server.open_connections <= HTTP_MAX_KEEPALIVE
                kept = server.open_connections
                opened = server.connections
            finally:
                await registry.aclose()
            await server.wait_until(lambda s: s.open_connections == 0)
    # the finished streams reused connections instead of opening one each
    assert opened < ABORTED_RUNS + FINISHED_RUNS
    print(f"kept idle: {kept}, connections opened: {opened}")  # the figures, with -s
