"""openai-agents' rows: ``agents.Agent`` run by ``Runner`` with a scripted ``Model``
subclass at the model boundary (``get_response`` for requests, ``stream_response``
yielding Responses API events for streamed ones). Tracing is off (nothing to export to).
A stream is consumed with ``Runner.run_streamed(...).stream_events()``, counting the raw
text-delta events; cancelling is ``result.cancel()``, the documented way to stop a
streamed run."""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.testing import assistant_message, function_call
from openai.types.responses import Response, ResponseCompletedEvent, ResponseTextDeltaEvent

from ._common import FINAL, Probe, Reply, Sizes, script

VERSION = importlib.metadata.version("openai-agents")
PROBE = Probe()
set_tracing_disabled(True)


@function_tool
async def echo(i: int) -> str:
    """returns ok"""
    PROBE.tool_calls += 1
    return "ok"


def _output(k: int, reply: Reply, text: str) -> list[Any]:
    output: list[Any] = []
    if text:
        output.append(assistant_message(text))
    if reply.tool:
        output.append(function_call("echo", f'{{"i":{k}}}', call_id=f"call_{k}"))
    return output


class ScriptModel(Model):
    """The model of one run: call k answers with ``replies[k]``."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies
        self.calls = 0
        self.cancelled = False

    def _next(self) -> tuple[int, Reply]:
        k = self.calls
        self.calls = k + 1
        PROBE.provider_calls += 1
        return k, self.replies[min(k, len(self.replies) - 1)]

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            PROBE.deltas_produced += reply.deltas
            return ModelResponse(
                output=_output(k, reply, reply.text * reply.deltas),
                usage=Usage(),
                response_id=None,
            )
        finally:
            PROBE.model_ended += 1

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        k, reply = self._next()
        try:
            await asyncio.sleep(0)
            for n in range(reply.deltas):
                await asyncio.sleep(0)
                PROBE.deltas_produced += 1
                PROBE.deltas_after_cancel += self.cancelled
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="scripted-message",
                    output_index=0,
                    content_index=0,
                    delta=reply.text,
                    logprobs=[],
                    sequence_number=n,
                )
            response = Response(
                id="scripted-response",
                created_at=0,
                model="scripted-model",
                object="response",
                output=_output(k, reply, reply.text * reply.deltas),
                tool_choice="auto",
                tools=[],
                parallel_tool_calls=False,
                status="completed",
            )
            yield ResponseCompletedEvent(
                type="response.completed", response=response, sequence_number=reply.deltas
            )
        finally:
            PROBE.model_ended += 1


def new_agent(replies: list[Reply]) -> tuple[Agent[Any], ScriptModel]:
    model = ScriptModel(replies)
    return Agent(name="bench", model=model, tools=[echo]), model


def _is_delta(event: Any) -> bool:
    return event.type == "raw_response_event" and isinstance(event.data, ResponseTextDeltaEvent)


async def stream(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("stream", sizes))
    result = Runner.run_streamed(agent, "go")
    async for event in result.stream_events():
        if _is_delta(event):
            PROBE.deltas_consumed += 1
    PROBE.runs += 1
    return {"final_text_len": len(result.final_output)}


async def turns(sizes: Sizes, backend: str) -> dict[str, Any]:
    agent, _ = new_agent(script("turns", sizes))
    result = await Runner.run(agent, "go", max_turns=sizes.turns + 1)
    PROBE.runs += 1
    PROBE.deltas_consumed += result.final_output == FINAL
    return {"final_text": result.final_output}


async def concurrent(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("concurrent", sizes)

    async def one() -> None:
        agent, _ = new_agent(replies)
        result = await Runner.run(agent, "go")
        PROBE.runs += result.final_output == FINAL
        PROBE.deltas_consumed += result.final_output == FINAL

    await asyncio.gather(*(one() for _ in range(sizes.concurrent)))
    return {}


async def cancelled(sizes: Sizes, backend: str) -> dict[str, Any]:
    replies = script("cancelled", sizes)

    async def one() -> None:
        agent, model = new_agent(replies)
        result = Runner.run_streamed(agent, "go")
        async for event in result.stream_events():
            if _is_delta(event):
                PROBE.deltas_consumed += 1
                if not model.cancelled:
                    model.cancelled = True
                    result.cancel()
        PROBE.runs += 1

    await asyncio.gather(*(one() for _ in range(sizes.cancelled)))
    return {"model_ended_when_settled": PROBE.model_ended}


_IDLE_MODEL = ScriptModel([])


def idle_agent() -> Any:
    return Agent(name="bench", model=_IDLE_MODEL, tools=[echo])


def run_loop(body: Any, backend: str) -> Any:
    return asyncio.run(body())
