"""pi_trio's rows: the workloads on ``Agent`` with a stream function at the model
boundary, on trio (``BACKEND = "trio"``) or asyncio. A run's stream is consumed by a
listener (``agent.subscribe``), pi's way of reading a stream; cancelling a run is
``agent.abort()``."""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

import anyio
import trio
from pi_trio.agent import Agent, AgentTool, AgentToolResult, RunPolicy
from pi_trio.ai import Model, TextContent
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageBuilder

from ._common import FINAL, Probe, Reply, Sizes, script

VERSION = importlib.metadata.version("pi-trio")

MODEL = Model(
    id="scripted",
    name="scripted",
    api="scripted",
    provider="scripted",
    base_url="",
    reasoning=False,
    input=["text"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=1_000_000,
    max_tokens=100_000,
)
PROBE = Probe()


async def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    PROBE.tool_calls += 1
    return AgentToolResult(content=[TextContent(text="ok")], details={})


ECHO = AgentTool(
    name="echo",
    description="returns ok",
    parameters={"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
    execute=_echo,
)


class ScriptModel:
    """The stream function of one run: call k answers with ``replies[k]`` (the last
    repeats), events built by ``MessageBuilder`` as the HTTP providers build them."""

    __slots__ = ("calls", "cancelled", "pause", "replies")

    def __init__(self, replies: list[Reply], pause: Any) -> None:
        self.replies = replies
        self.pause = pause
        self.calls = 0
        self.cancelled = False

    async def __call__(self, model: Model, context: Any, options: Any, send: Any) -> None:
        k = self.calls
        self.calls = k + 1
        reply = self.replies[min(k, len(self.replies) - 1)]
        PROBE.provider_calls += 1
        pause = self.pause
        send_nowait = send.send_nowait

        async def put(event: Any) -> None:
            try:
                send_nowait(event)
            except anyio.WouldBlock:
                await send.send(event)

        builder = MessageBuilder(model)
        builder.message.stop_reason = "toolUse" if reply.tool else "stop"
        try:
            await pause()
            await put(builder.start())
            if reply.deltas:
                start = builder.text_start()
                await put(start)
                index = start.content_index
                text = reply.text
                for _ in range(reply.deltas):
                    await pause()
                    PROBE.deltas_produced += 1
                    PROBE.deltas_after_cancel += self.cancelled
                    await put(builder.text_delta(index, text))
                await put(builder.text_end(index))
            if reply.tool:
                start_call = builder.toolcall_start(f"call_{k}", "echo")
                await put(start_call)
                await put(builder.toolcall_delta(start_call.content_index, f'{{"i":{k}}}'))
                await put(builder.toolcall_end(start_call.content_index))
            await put(builder.done())
        finally:
            PROBE.model_ended += 1


def _pause(backend: str) -> Any:
    return trio.lowlevel.checkpoint if backend == "trio" else _sleep0


async def _sleep0() -> None:
    await asyncio.sleep(0)


def new_agent(replies: list[Reply], backend: str) -> tuple[Agent, ScriptModel]:
    model = ScriptModel(replies, _pause(backend))
    agent = Agent(
        model=MODEL, tools=[ECHO], stream_fn=model, policy=RunPolicy(tool_execution="parallel")
    )
    return agent, model


def _count_deltas(event: Any) -> None:
    if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
        PROBE.deltas_consumed += 1


async def _gather(runs: list[Any]) -> None:
    async with anyio.create_task_group() as group:
        for run in runs:
            group.start_soon(run)


async def stream(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("stream", sizes), backend)
    agent.subscribe(_count_deltas)
    await agent.prompt("go")
    PROBE.runs += 1
    return {"final_text_len": len(agent.state.messages[-1].content[0].text)}


async def turns(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("turns", sizes), backend)
    agent.subscribe(_count_deltas)
    await agent.prompt("go")
    PROBE.runs += 1
    return {"final_text": agent.state.messages[-1].content[0].text}


async def concurrent(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("concurrent", sizes)

    async def one() -> None:
        agent, _ = new_agent(replies, backend)
        agent.subscribe(_count_deltas)
        await agent.prompt("go")
        PROBE.runs += agent.state.messages[-1].content[0].text == FINAL

    await _gather([one] * sizes.concurrent)
    return {}


async def cancelled(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("cancelled", sizes)

    async def one() -> None:
        agent, model = new_agent(replies, backend)

        def cancel_at_first_delta(event: Any) -> None:
            if (
                event.type == "message_update"
                and event.assistant_message_event.type == "text_delta"
            ):
                PROBE.deltas_consumed += 1
                if not model.cancelled:
                    model.cancelled = True
                    agent.abort()

        agent.subscribe(cancel_at_first_delta)
        await agent.prompt("go")
        PROBE.runs += agent.state.messages[-1].stop_reason == "aborted"

    await _gather([one] * sizes.cancelled)
    return {"model_ended_when_settled": PROBE.model_ended}


def idle_agent() -> Any:
    """One idle agent with the shared tool and a model (as each framework's own)."""
    return Agent(model=MODEL, tools=[ECHO], stream_fn=_IDLE_MODEL)


_IDLE_MODEL = ScriptModel([], _sleep0)


def run_loop(body: Any, backend: str) -> Any:
    if backend == "trio":
        return trio.run(body)
    return asyncio.run(body())
