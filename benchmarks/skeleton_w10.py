"""The trio floor of W10: ``skeleton.py``'s direct variant (provider iterated in the agent
task, listeners called inline, one nursery per tool batch) with N agents of 3 tool turns
of (10, 2) then (10, 0), measured like ``w10_many_agents`` (each size in a fresh process,
per-agent time, peak RSS above the baseline, the garbage collector's share).

The same event sequence as pi_trio's W10 (110 events per agent) and none of its work: no
validation, no state, no queues, no message types. ``--agents N`` runs one size.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

import trio

from ._scale import GcClock, reset_peak, rss_kb, run_sizes, size_line

DELTA = "abcdefgh"
TURNS = [(10, 2)] * 3 + [(10, 0)]
PER_AGENT = 110


class TextBlock:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)


async def scripted_provider(spec: tuple[int, int], turn_no: int) -> Any:
    """Provider events of one call; one checkpoint per network chunk."""
    out: dict[str, Any] = {
        "role": "assistant",
        "content": [],
        "stopReason": "toolUse" if spec[1] else "stop",
    }
    await trio.lowlevel.checkpoint()
    yield {"type": "start", "partial": out}
    if spec[0]:
        block = TextBlock()
        out["content"].append(block)
        index = len(out["content"]) - 1
        yield {"type": "text_start", "contentIndex": index, "partial": out}
        for _ in range(spec[0]):
            await trio.lowlevel.checkpoint()
            block.parts.append(DELTA)
            yield {"type": "text_delta", "contentIndex": index, "delta": DELTA, "partial": out}
        yield {"type": "text_end", "contentIndex": index, "partial": out}
    for j in range(spec[1]):
        call = {"type": "toolCall", "id": f"call_{turn_no}_{j}", "name": "echo", "arguments": {}}
        out["content"].append(call)
        index = len(out["content"]) - 1
        yield {"type": "toolcall_start", "contentIndex": index, "partial": out}
        await trio.lowlevel.checkpoint()
        text = json.dumps({"i": j})
        call["arguments"] = json.loads(text)
        yield {"type": "toolcall_delta", "contentIndex": index, "delta": text, "partial": out}
        yield {"type": "toolcall_end", "contentIndex": index, "toolCall": call, "partial": out}
    await trio.lowlevel.checkpoint()
    yield {"type": "done", "message": out}


async def echo_tool(call_id: str, args: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "ok"}], "details": {}}


class Agent:
    def __init__(self, listener: Any) -> None:
        self.listeners = [listener]
        self.messages: list[Any] = []

    async def prompt(self) -> None:
        listeners = self.listeners

        async def emit(event: dict[str, Any]) -> None:
            for fn in listeners:
                fn(event)

        await emit({"type": "agent_start"})
        await emit({"type": "turn_start"})
        user = {"role": "user", "content": "go"}
        await emit({"type": "message_start", "message": user})
        await emit({"type": "message_end", "message": user})
        self.messages.append(user)
        message: Any = None
        for turn, spec in enumerate(TURNS):
            if turn:
                await emit({"type": "turn_start"})
            agen = scripted_provider(spec, turn)
            try:
                async for event in agen:
                    kind = event["type"]
                    if kind == "start":
                        message = event["partial"]
                        await emit({"type": "message_start", "message": message})
                    elif kind == "done":
                        await emit({"type": "message_end", "message": message})
                    else:
                        await emit(
                            {
                                "type": "message_update",
                                "assistantMessageEvent": event,
                                "message": message,
                            }
                        )
            finally:
                await agen.aclose()
            self.messages.append(message)
            calls = [c for c in message["content"] if isinstance(c, dict)]
            results: list[Any] = [None] * len(calls)
            for call in calls:
                await emit(
                    {
                        "type": "tool_execution_start",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "args": call["arguments"],
                    }
                )

            async def run_one(i: int, call: dict[str, Any], results: list[Any]) -> None:
                result = await echo_tool(call["id"], call["arguments"])
                await emit(
                    {
                        "type": "tool_execution_end",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "result": result,
                        "isError": False,
                    }
                )
                results[i] = {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "content": result["content"],
                }

            if calls:
                async with trio.open_nursery() as nursery:
                    for i, call in enumerate(calls):
                        nursery.start_soon(run_one, i, call, results)
            for result in results:
                await emit({"type": "message_start", "message": result})
                await emit({"type": "message_end", "message": result})
                self.messages.append(result)
            await emit({"type": "turn_end", "message": message, "toolResults": results})
        await emit({"type": "agent_end", "messages": self.messages})


async def _agents(agents: int, counter: list[int]) -> list[Agent]:
    def count(event: Any) -> None:
        counter[0] += 1

    made = [Agent(count) for _ in range(agents)]
    async with trio.open_nursery() as nursery:
        for agent in made:
            nursery.start_soon(agent.prompt)
    return made


async def run_one(agents: int) -> dict[str, Any]:
    await _agents(1, [0])
    gc.collect()
    base = rss_kb()
    reset_peak()
    counter = [0]
    with GcClock() as clock:
        t0 = time.perf_counter()
        made = await _agents(agents, counter)
        wall = time.perf_counter() - t0
    line = size_line(agents, counter[0], wall, base, clock)
    if counter[0] != PER_AGENT * agents or {len(a.messages) for a in made} != {11}:
        raise AssertionError(f"W10 floor: {counter[0]} events, expected {PER_AGENT * agents}")
    return line


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.skeleton_w10")
    parser.add_argument("--agents", type=int, help="run one size in this process")
    args = parser.parse_args()
    if args.agents is None:
        line = run_sizes("benchmarks.skeleton_w10", "trio-skeleton direct", "W10")
    else:
        line = trio.run(run_one, args.agents)
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
