"""agno's rows: ``agno.agent.Agent`` with a ``Model`` subclass at the model boundary
(``ainvoke`` for requests, ``ainvoke_stream`` yielding ``ModelResponse`` deltas for
streamed ones); telemetry off (it would call agno's API). A stream is consumed with
``agent.arun(..., stream=True)``, counting ``RunContent`` events; cancelling is
``agent.acancel_run(run_id)``, the documented way to stop a run."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging
import os
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")
logging.getLogger("agno").setLevel(logging.WARNING)  # one INFO line per cancelled run

from agno.agent import Agent  # noqa: E402
from agno.models.base import Model  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402

from ._common import FINAL, Probe, Reply, Sizes, script  # noqa: E402

VERSION = importlib.metadata.version("agno")
PROBE = Probe()


async def echo(i: int) -> str:
    """returns ok"""
    PROBE.tool_calls += 1
    return "ok"


def _tool_call(k: int) -> dict[str, Any]:
    return {
        "id": f"call_{k}",
        "type": "function",
        "function": {"name": "echo", "arguments": f'{{"i":{k}}}'},
    }


@dataclass
class ScriptModel(Model):
    """The model of one run: call k answers with ``replies[k]``."""

    id: str = "scripted"
    name: str = "scripted"
    provider: str = "scripted"
    replies: list[Reply] = field(default_factory=list)
    calls: int = 0
    cancelled: bool = False

    def _next(self) -> tuple[int, Reply]:
        k = self.calls
        self.calls = k + 1
        PROBE.provider_calls += 1
        return k, self.replies[min(k, len(self.replies) - 1)]

    async def ainvoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            PROBE.deltas_produced += reply.deltas
            return ModelResponse(
                role="assistant",
                content=reply.text * reply.deltas if reply.deltas else None,
                tool_calls=[_tool_call(k)] if reply.tool else [],
            )
        finally:
            PROBE.model_ended += 1

    async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            for _ in range(reply.deltas):
                await asyncio.sleep(0)
                PROBE.deltas_produced += 1
                PROBE.deltas_after_cancel += self.cancelled
                yield ModelResponse(role="assistant", content=reply.text)
            if reply.tool:
                yield ModelResponse(role="assistant", tool_calls=[_tool_call(k)])
        finally:
            PROBE.model_ended += 1

    def invoke(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise NotImplementedError("the benchmark runs agno's async path only")

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark runs agno's async path only")

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response  # type: ignore[no-any-return]


def new_agent(replies: list[Reply]) -> tuple[Agent, ScriptModel]:
    model = ScriptModel(replies=replies)
    return Agent(model=model, tools=[echo], telemetry=False), model


async def stream(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("stream", sizes))
    received = 0  # agno's stream keeps no final text: the consumer's characters count
    async for event in agent.arun("go", stream=True):
        if event.event == "RunContent" and event.content:
            PROBE.deltas_consumed += 1
            received += len(event.content)
    PROBE.runs += 1
    return {"final_text_len": received}


async def turns(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("turns", sizes))
    result = await agent.arun("go")
    PROBE.runs += 1
    PROBE.deltas_consumed += result.content == FINAL
    return {"final_text": result.content}


async def concurrent(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("concurrent", sizes)

    async def one() -> None:
        agent, _ = new_agent(replies)
        result = await agent.arun("go")
        PROBE.runs += result.content == FINAL
        PROBE.deltas_consumed += result.content == FINAL

    await asyncio.gather(*(one() for _ in range(sizes.concurrent)))
    return {}


async def cancelled(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("cancelled", sizes)

    async def one() -> None:
        agent, model = new_agent(replies)
        async for event in agent.arun("go", stream=True):
            if event.event == "RunContent" and event.content:
                PROBE.deltas_consumed += 1
                if not model.cancelled:
                    model.cancelled = True
                    await agent.acancel_run(event.run_id)
        PROBE.runs += 1

    await asyncio.gather(*(one() for _ in range(sizes.cancelled)))
    return {"model_ended_when_settled": PROBE.model_ended}


_IDLE_MODEL = ScriptModel()


def idle_agent() -> Any:
    return Agent(model=_IDLE_MODEL, tools=[echo], telemetry=False)


def run_loop(body: Any, backend: str) -> Any:
    return asyncio.run(body())
