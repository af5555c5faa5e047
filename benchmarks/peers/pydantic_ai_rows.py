"""pydantic-ai's rows: ``pydantic_ai.Agent`` with a ``FunctionModel`` at the model
boundary (``function`` for requests, ``stream_function`` for streamed ones). A stream is
consumed with ``agent.run_stream`` and ``stream_text(delta=True, debounce_by=None)``
(every delta, none merged); cancelling is leaving the stream early, which closes it."""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import UsageLimits

from ._common import FINAL, Probe, Reply, Sizes, script

VERSION = importlib.metadata.version("pydantic-ai-slim")
PROBE = Probe()
NO_LIMITS = UsageLimits(request_limit=None)  # the default stops a run at 50 requests


async def echo(i: int) -> str:
    """returns ok"""
    PROBE.tool_calls += 1
    return "ok"


class ScriptModel:
    """The model functions of one run: call k answers with ``replies[k]``."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies
        self.calls = 0
        self.cancelled = False

    def _next(self) -> tuple[int, Reply]:
        k = self.calls
        self.calls = k + 1
        PROBE.provider_calls += 1
        return k, self.replies[min(k, len(self.replies) - 1)]

    async def request(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            parts: list[Any] = []
            if reply.deltas:
                PROBE.deltas_produced += reply.deltas
                parts.append(TextPart(reply.text * reply.deltas))
            if reply.tool:
                parts.append(ToolCallPart("echo", {"i": k}, tool_call_id=f"call_{k}"))
            return ModelResponse(parts=parts)
        finally:
            PROBE.model_ended += 1

    async def stream(self, messages: list[Any], info: AgentInfo) -> Any:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            for _ in range(reply.deltas):
                await asyncio.sleep(0)
                PROBE.deltas_produced += 1
                PROBE.deltas_after_cancel += self.cancelled
                yield reply.text
            if reply.tool:
                yield {0: DeltaToolCall("echo", f'{{"i":{k}}}', tool_call_id=f"call_{k}")}
        finally:
            PROBE.model_ended += 1

    def model(self) -> FunctionModel:
        return FunctionModel(self.request, stream_function=self.stream)


def new_agent(replies: list[Reply]) -> tuple[Agent[None, str], ScriptModel]:
    model = ScriptModel(replies)
    return Agent(model.model(), tools=[echo]), model


async def stream(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("stream", sizes))
    async with agent.run_stream("go", usage_limits=NO_LIMITS) as result:
        async for _ in result.stream_text(delta=True, debounce_by=None):
            PROBE.deltas_consumed += 1
        text = await result.get_output()
    PROBE.runs += 1
    return {"final_text_len": len(text)}


async def turns(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("turns", sizes))
    result = await agent.run("go", usage_limits=NO_LIMITS)
    PROBE.runs += 1
    PROBE.deltas_consumed += result.output == FINAL
    return {"final_text": result.output}


async def concurrent(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("concurrent", sizes)

    async def one() -> None:
        agent, _ = new_agent(replies)
        result = await agent.run("go", usage_limits=NO_LIMITS)
        PROBE.runs += result.output == FINAL
        PROBE.deltas_consumed += result.output == FINAL

    await asyncio.gather(*(one() for _ in range(sizes.concurrent)))
    return {}


async def cancelled(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("cancelled", sizes)

    async def one() -> None:
        agent, model = new_agent(replies)
        async with agent.run_stream("go", usage_limits=NO_LIMITS) as result:
            async for _ in result.stream_text(delta=True, debounce_by=None):
                PROBE.deltas_consumed += 1
                model.cancelled = True
                break
        PROBE.runs += 1

    await asyncio.gather(*(one() for _ in range(sizes.cancelled)))
    return {}


_IDLE_MODEL = ScriptModel([]).model()


def idle_agent() -> Any:
    return Agent(_IDLE_MODEL, tools=[echo])


def run_loop(body: Any, backend: str) -> Any:
    return asyncio.run(body())
