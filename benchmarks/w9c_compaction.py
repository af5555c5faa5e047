"""W9c long conversation with compaction: W9's 5 000 short tool turns on a model whose
context window holds about 150 of them, with ``RunPolicy(compaction=Compaction(...))``.
The transcript is condensed every hundred turns or so (a summary request the scripted model
answers in one text delta), so the time per turn must not grow with the conversation:
``late_over_early`` stays near 1 and the transcript stays short."""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

import msgspec
from pi_trio.agent import Agent, Compaction, RunPolicy
from pi_trio.agent.compaction import SUMMARIZER_SYSTEM_PROMPT
from pi_trio.ai import SystemMessage
from pi_trio.ai.providers import MessageBuilder

from ._result import check, report
from .scripted import MODEL, ScriptedModel, echo_tool, tool_turns

WINDOW = 100  # turns whose durations make each median
# about 8 tokens a turn (two 8-character deltas, one echo call, its result): the threshold
# (window - reserve) is reached every ~150 turns, and ~50 turns are kept
SMALL_WINDOW = msgspec.structs.replace(MODEL, context_window=2_000)
COMPACTION = Compaction(reserve_tokens=800, keep_recent_tokens=400)


class SummarizingModel:
    """The scripted model, answering summary requests with one short text."""

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted
        self.summaries = 0

    async def __call__(self, model: Any, context: Any, options: Any, send: Any) -> None:
        first = context.messages[0] if context.messages else None
        if isinstance(first, SystemMessage) and first.content == SUMMARIZER_SYSTEM_PROMPT:
            self.summaries += 1
            builder = MessageBuilder(model)
            await send.send(builder.start())
            start = builder.text_start()
            await send.send(start)
            await send.send(builder.text_delta(start.content_index, "the echo loop goes on"))
            await send.send(builder.text_end(start.content_index))
            await send.send(builder.done())
            return
        await self.scripted(model, context, options, send)


async def run(turns_with_tools: int = 5_000) -> dict[str, Any]:
    scripted = ScriptedModel(tool_turns(turns_with_tools, 2, 1))
    model = SummarizingModel(scripted)
    agent = Agent(
        model=SMALL_WINDOW,
        system_prompt="bench",
        tools=[echo_tool],
        stream_fn=model,
        policy=RunPolicy(compaction=COMPACTION),
    )
    ends: list[float] = []
    longest = [0]
    counter = [0]

    def on_turn_end(event: Any) -> None:
        counter[0] += 1
        if event.type == "turn_end":
            ends.append(time.perf_counter())
            longest[0] = max(longest[0], len(agent.state.messages))

    agent.subscribe(on_turn_end)
    result = await agent.prompt("go")
    durations = [b - a for a, b in itertools.pairwise(ends)]
    early = statistics.median(durations[max(0, 100 - WINDOW // 2) : 100 + WINDOW // 2])
    late = statistics.median(durations[-WINDOW:])
    calls = turns_with_tools + 1
    check(result.ok, f"W9c: the run ended {result.stop_reason}: {result.error_message}")
    check(scripted.calls == calls, f"W9c: {scripted.calls} provider calls, expected {calls}")
    check(
        model.summaries >= turns_with_tools // 200,
        f"W9c: {model.summaries} compactions in {turns_with_tools} turns",
    )
    check(longest[0] < 600, f"W9c: the transcript grew to {longest[0]} messages")
    return {
        "events": counter[0],
        "turns": calls,
        "compactions": model.summaries,
        "longest_transcript": longest[0],
        "us_per_turn_at_100": round(early * 1e6, 1),
        "us_per_turn_late": round(late * 1e6, 1),
        "late_over_early": round(late / early, 2),
    }


if __name__ == "__main__":
    report("W9c", run)
