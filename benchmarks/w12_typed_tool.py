"""W12 typed tools: one agent, 300 tool turns through a ``@tool`` whose parameter is a
nested msgspec type (a Struct holding a list of Structs, an optional field, an Enum and a
Literal: its schema has ``$ref``/``$defs``, nullable ``anyOf`` and ``enum`` without a
type), then a final answer. Every call's arguments are validated against that schema.

Reports the run's time per turn and the validation time per call: the run's 300 tool
calls validated again, alone, in a loop (``validate_tool_arguments``; the median of
rounds), next to what jsonschema alone takes for the same arguments.
"""

from __future__ import annotations

import enum
import statistics
import time
from typing import Any, Literal

import jsonschema
import msgspec
import trio
from pi_trio.agent import Agent, tool
from pi_trio.ai import ToolCall, validate_tool_arguments
from pi_trio.ai.providers import MessageBuilder

from ._result import check, report
from .scripted import DELTA, MODEL, non_system

ROUNDS = 7  # validation rounds over all calls; the median is reported
JSONSCHEMA_CALLS = 50  # calls validated by jsonschema alone, for comparison


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Step(msgspec.Struct):
    name: str
    minutes: int
    done: bool = False
    note: str | None = None


class Plan(msgspec.Struct):
    title: str
    steps: list[Step]
    priority: Priority
    owner: str | None = None
    kind: Literal["task", "bug"] = "task"
    tags: list[str] = []


@tool
async def make_plan(plan: Plan, urgent: bool = False) -> str:
    """Record a plan."""
    if not isinstance(plan, Plan) or not isinstance(plan.priority, Priority):
        raise TypeError(f"make_plan got {plan!r}")
    return f"planned {len(plan.steps)} steps"


def plan_arguments(turn: int) -> str:
    """The argument JSON of call ``turn``: three steps, optional fields set and unset."""
    steps = [
        {"name": f"step {turn}.{k}", "minutes": 5 * k + 1, "done": k == 0}
        | ({"note": None} if k == 1 else {"note": "check"} if k == 2 else {})
        for k in range(3)
    ]
    plan = {
        "title": f"plan {turn}",
        "steps": steps,
        "priority": "high" if turn % 2 else "low",
        "owner": None if turn % 3 else "ana",
        "kind": "bug" if turn % 5 == 0 else "task",
        "tags": ["w12", str(turn)],
    }
    return msgspec.json.encode({"plan": plan, "urgent": turn % 7 == 0}).decode()


class TypedModel:
    """Call k < ``tool_turns``: 2 text deltas and one ``make_plan`` call whose arguments
    stream in one delta; then a text answer. One scheduler pass per network chunk."""

    def __init__(self, tool_turns: int) -> None:
        self.tool_turns = tool_turns
        self.calls = 0

    async def __call__(self, model: Any, context: Any, options: Any, send: Any) -> None:
        turn = self.calls
        self.calls += 1
        builder = MessageBuilder(model)
        with_tool = turn < self.tool_turns
        builder.message.stop_reason = "toolUse" if with_tool else "stop"
        await trio.lowlevel.checkpoint()
        await send.send(builder.start())
        start = builder.text_start()
        await send.send(start)
        for _ in range(2):
            await trio.lowlevel.checkpoint()
            await send.send(builder.text_delta(start.content_index, DELTA))
        await send.send(builder.text_end(start.content_index))
        if with_tool:
            call = builder.toolcall_start(f"call_{turn}", "make_plan")
            await send.send(call)
            await trio.lowlevel.checkpoint()
            await send.send(builder.toolcall_delta(call.content_index, plan_arguments(turn)))
            await send.send(builder.toolcall_end(call.content_index))
        await trio.lowlevel.checkpoint()
        await send.send(builder.done())


def _time_validation(calls: list[ToolCall]) -> float:
    """Seconds per call of validating ``calls`` (the median of ``ROUNDS`` rounds)."""
    rounds = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for call in calls:
            validate_tool_arguments(make_plan, call)
        rounds.append((time.perf_counter() - t0) / len(calls))
    return statistics.median(rounds)


def _time_jsonschema(calls: list[ToolCall]) -> float:
    """Seconds per call of jsonschema alone (what every call cost without a fast path)."""
    validator = jsonschema.Draft202012Validator(make_plan.parameters)
    sample = calls[:JSONSCHEMA_CALLS]
    t0 = time.perf_counter()
    for call in sample:
        check(validator.is_valid(call.arguments), f"W12: jsonschema rejects {call.arguments}")
    return (time.perf_counter() - t0) / len(sample)


async def run(tool_turns: int = 300) -> dict[str, Any]:
    counter = [0]
    model = TypedModel(tool_turns)
    agent = Agent(model=MODEL, system_prompt="bench", tools=[make_plan], stream_fn=model)

    def count(event: Any) -> None:
        counter[0] += 1

    agent.subscribe(count)
    t0 = time.perf_counter()
    await agent.prompt("go")
    wall = time.perf_counter() - t0
    messages = non_system(agent.state.messages)
    results = [m for m in messages if m.role == "toolResult"]
    failed = [m for m in results if m.is_error]
    check(not failed, f"W12: {len(failed)} tool calls failed, first: {failed[:1]}")
    check(len(results) == tool_turns, f"W12: {len(results)} tool results, expected {tool_turns}")
    calls = [
        b for m in messages if m.role == "assistant" for b in m.content if b.type == "toolCall"
    ]
    per_call = _time_validation(calls)
    per_call_jsonschema = _time_jsonschema(calls)
    return {
        "events": counter[0],
        "wall_s": wall,
        "turns": model.calls,
        "us_per_turn": round(wall / model.calls * 1e6, 1),
        "us_validation_per_call": round(per_call * 1e6, 2),
        "us_jsonschema_per_call": round(per_call_jsonschema * 1e6, 1),
    }


if __name__ == "__main__":
    report("W12", run)
