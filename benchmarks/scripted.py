"""The scripted model and the echo tool of WORKLOADS.md, and the expected event counts.

One LLM call follows a ``Turn`` spec ``(text, tools)``: ``text`` deltas of ``"abcdefgh"``
and ``tools`` echo calls, with one scheduler pass (``trio.lowlevel.checkpoint``, as WORKLOADS.md defines the yield) per
network chunk. ``big_args`` (W7) replaces the echo calls with one ``write`` call whose
argument JSON is exactly ``big_args`` bytes and streams as 64-byte deltas, one chunk each.
Events are built with ``MessageBuilder`` and sent without a task switch while the channel
has room, as the HTTP providers do.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import anyio
import anyio.lowlevel
import trio
from pi_trio.agent import Agent, AgentTool, AgentToolResult, RunPolicy
from pi_trio.ai import Model, TextContent
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageBuilder

__all__ = [
    "ABORTED_TEXT",
    "ARG_CHUNK",
    "DELTA",
    "MODEL",
    "ScriptedModel",
    "Turn",
    "big_arguments",
    "echo_tool",
    "expected_events",
    "make_agent",
    "non_system",
    "tool_turns",
    "write_tool",
]

DELTA = "abcdefgh"
ARG_CHUNK = 64
ABORTED_TEXT = "Request was aborted"

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


class Turn(NamedTuple):
    """One LLM call: ``text`` text deltas, then ``tools`` echo calls (or, with
    ``big_args`` > 0, one ``write`` call whose argument JSON has that many bytes)."""

    text: int
    tools: int
    big_args: int = 0


def tool_turns(n: int, text: int, tools: int) -> list[Turn]:
    """``n`` turns of ``(text, tools)``, then the final answer ``(text, 0)``."""
    return [Turn(text, tools)] * n + [Turn(text, 0)]


def big_arguments(size: int) -> str:
    """The argument JSON ``{"content":"xx…"}`` of exactly ``size`` bytes."""
    overhead = len('{"content":""}')
    if size < overhead:
        raise ValueError(f"big_args must be at least {overhead} bytes, got {size!r}")
    return '{"content":"' + "x" * (size - overhead) + '"}'


class ScriptedModel:
    """A stream function answering call k with ``turns[min(k, len - 1)]``.

    ``calls`` counts provider calls; ``deltas_produced`` counts text deltas appended to
    the output (after the chunk's yield and abort check, as WORKLOADS.md defines it).
    """

    __slots__ = ("calls", "deltas_produced", "turns")

    def __init__(self, turns: list[Turn]) -> None:
        if not turns:
            raise ValueError("ScriptedModel needs at least one Turn")
        self.turns = turns
        self.calls = 0
        self.deltas_produced = 0

    async def __call__(self, model: Model, context: Any, options: Any, send: Any) -> None:
        turns = self.turns
        turn_no = self.calls
        spec = turns[min(turn_no, len(turns) - 1)]
        self.calls = turn_no + 1
        signal = options.signal
        checkpoint = trio.lowlevel.checkpoint
        send_nowait = send.send_nowait

        async def put(event: Any) -> None:
            try:
                send_nowait(event)
            except anyio.WouldBlock:
                await send.send(event)

        def aborted() -> bool:
            return signal is not None and signal.aborted

        builder = MessageBuilder(model)
        builder.message.stop_reason = "toolUse" if spec.tools or spec.big_args else "stop"

        await checkpoint()
        if aborted():
            await put(builder.error(ABORTED_TEXT, reason="aborted"))
            return
        await put(builder.start())
        if spec.text:
            start = builder.text_start()
            await put(start)
            index = start.content_index
            text_delta = builder.text_delta
            for _ in range(spec.text):
                await checkpoint()
                if aborted():
                    await put(builder.error(ABORTED_TEXT, reason="aborted"))
                    return
                event = text_delta(index, DELTA)
                self.deltas_produced += 1
                await put(event)
            await put(builder.text_end(index))
        if spec.big_args:
            start = builder.toolcall_start(f"call_{turn_no}_0", "write")
            await put(start)
            index = start.content_index
            payload = big_arguments(spec.big_args)
            toolcall_delta = builder.toolcall_delta
            for offset in range(0, len(payload), ARG_CHUNK):
                await checkpoint()
                if aborted():
                    await put(builder.error(ABORTED_TEXT, reason="aborted"))
                    return
                await put(toolcall_delta(index, payload[offset : offset + ARG_CHUNK]))
            await put(builder.toolcall_end(index))
        for j in range(spec.tools):
            start = builder.toolcall_start(f"call_{turn_no}_{j}", "echo")
            await put(start)
            index = start.content_index
            await checkpoint()
            if aborted():
                await put(builder.error(ABORTED_TEXT, reason="aborted"))
                return
            await put(builder.toolcall_delta(index, f'{{"i":{j}}}'))
            await put(builder.toolcall_end(index))
        await checkpoint()
        if aborted():
            await put(builder.error(ABORTED_TEXT, reason="aborted"))
            return
        await put(builder.done())


async def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=[TextContent(text="ok")], details={})


echo_tool = AgentTool(
    name="echo",
    description="returns ok",
    parameters={
        "type": "object",
        "properties": {"i": {"type": "number"}},
        "required": ["i"],
    },
    execute=_echo,
)

write_tool = AgentTool(
    name="write",
    description="stores content, returns ok",
    parameters={
        "type": "object",
        "properties": {"content": {"type": "string"}},
        "required": ["content"],
    },
    execute=_echo,
)


PARALLEL = RunPolicy(tool_execution="parallel")  # one policy, shared by every agent


def make_agent(turns: list[Turn], counter: list[int]) -> tuple[Agent, ScriptedModel]:
    """An agent as WORKLOADS.md sets it up, with a synchronous listener adding each
    event to ``counter[0]``."""
    model = ScriptedModel(turns)
    tools = [write_tool] if any(t.big_args for t in turns) else [echo_tool]
    agent = Agent(
        model=MODEL,
        system_prompt="bench",
        tools=tools,
        stream_fn=model,
        policy=PARALLEL,
    )

    def count(event: Any) -> None:
        counter[0] += 1

    agent.subscribe(count)
    return agent, model


def expected_events(turns: list[Turn], calls: int) -> int:
    """Events of a run that made ``calls`` provider calls (WORKLOADS.md's formula)."""
    total = 4 + 1  # prelude, agent_end
    for k in range(calls):
        spec = turns[min(k, len(turns) - 1)]
        updates = spec.text + 2 if spec.text else 0
        tool_calls = spec.tools
        updates += 3 * spec.tools
        if spec.big_args:
            tool_calls += 1
            updates += 2 + -(-spec.big_args // ARG_CHUNK)
        total += (1 if k else 0) + 1 + updates + 1 + 4 * tool_calls + 1
    return total


def non_system(messages: list[Any]) -> list[Any]:
    """The transcript without the system head (the original keeps the prompt apart)."""
    return [m for m in messages if getattr(m, "role", None) != "system"]
