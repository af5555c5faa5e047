"""The transcripts compaction and sub-agents write, made the same on every run, for the
check that the original 1.6 loads them (``tests/load_in_pi16.mjs``, recorded in
``tests/fixtures/pi16/features.json``).

``python -m tests.pi16_features <dir with the original installed>`` records the fixture
again: it builds the transcripts, has node load and continue each in the original, and
writes what the original sent to its model and its transcript afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import trio
import trio.testing

from pi_trio.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    Compaction,
    RunPolicy,
    sub_agent_tool,
)
from pi_trio.ai import TextContent, messages_to_json
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "pi16" / "features.json"
LOADER = HERE / "load_in_pi16.mjs"
WORDS = "lorem ipsum dolor sit amet " * 40


def normalized(value: Any, clock: list[int] | None = None) -> Any:
    """``value`` (the JSON of a transcript) with timestamps counted 1000, 1001, … in
    order (0 stays 0) and without ``durationMs`` (absent when a stream took under a
    millisecond): the only parts of it that depend on the clock."""
    clock = clock if clock is not None else [1000]
    if isinstance(value, list):
        return [normalized(item, clock) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "timestamp" and isinstance(item, int) and item:
            out[key] = clock[0]
            clock[0] += 1
        elif key == "durationMs":
            continue
        else:
            out[key] = normalized(item, clock)
    return out


def transcript_json(messages: list[Any]) -> list[Any]:
    return normalized(json.loads(messages_to_json(messages)))  # type: ignore[no-any-return]


def _echo() -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="echoed " + WORDS)])

    return AgentTool(
        name="echo",
        description="Echo",
        parameters={"type": "object", "properties": {"n": {"type": "number"}}},
        execute=execute,
    )


async def compacted() -> list[Any]:
    """A run compacted twice: the system head, the summary, the kept tool turns."""
    faux = FauxProvider(
        api="faux", models=[{"id": "faux-1", "context_window": 3000}], token_size=(3, 3)
    )
    turns = [
        faux_assistant_message(
            [faux_text(f"step {n} " + WORDS), faux_tool_call("echo", {"n": n}, id=f"c{n}")],
            stop_reason="toolUse",
        )
        for n in range(8)
    ]
    answers = iter([*turns, faux_assistant_message("done")])
    summaries = iter(range(1, 100))

    def respond(context: Any, *_: Any) -> Any:
        first = context.messages[0]
        if first.role == "system" and first.content.startswith("You condense"):
            return faux_assistant_message(f"## Goal\nEcho things (summary {next(summaries)})")
        return next(answers)

    faux.set_responses([respond] * 40)
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt="You are terse.",
        tools=[_echo()],
        policy=RunPolicy(compaction=Compaction(reserve_tokens=1000, keep_recent_tokens=600)),
    )
    await agent.prompt("go")
    return transcript_json(agent.state.messages)


async def delegated(abort: bool) -> tuple[list[Any], list[Any]]:
    """A parent that delegated two tasks to sub-agents (aborted while they ran, with
    ``abort``), and the first child's transcript."""
    children: list[Agent] = []

    def factory() -> Agent:
        faux = FauxProvider(api="faux", token_size=(3, 3), tokens_per_second=5 if abort else None)
        faux.set_responses([faux_assistant_message(f"child answer {len(children)} " + WORDS)])
        child = Agent(model=faux.get_model(), stream_fn=faux, system_prompt="You help.")
        children.append(child)
        return child

    faux = FauxProvider(api="faux", token_size=(3, 3))
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("helper", {"task": f"task {i}"}, id=f"h{i}") for i in range(2)],
                stop_reason="toolUse",
            ),
            faux_assistant_message("both helped"),
        ]
    )
    parent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt="You delegate.",
        tools=[sub_agent_tool("helper", "Delegate a task", factory)],
    )

    async with anyio.create_task_group() as group:
        if abort:

            async def abort_later() -> None:
                await anyio.sleep(2.0)  # virtual: a few chunks into both answers
                parent.abort()

            group.start_soon(abort_later)
        await parent.prompt("help me twice")
    return transcript_json(parent.state.messages), transcript_json(children[0].state.messages)


async def cases() -> list[dict[str, Any]]:
    parent, child = await delegated(abort=False)
    aborted, aborted_child = await delegated(abort=True)
    return [
        {"name": "compaction", "transcript": await compacted()},
        {"name": "subagent_parent", "transcript": parent},
        {"name": "subagent_child", "transcript": child},
        {"name": "subagent_parent_aborted", "transcript": aborted},
        {"name": "subagent_child_aborted", "transcript": aborted_child},
    ]


def load_in_original(package: Path, given: list[dict[str, Any]]) -> dict[str, Any]:
    """What the original does with each transcript (``load_in_pi16.mjs``' output)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cases.json"
        path.write_text(json.dumps({"cases": given}))
        done = subprocess.run(
            ["node", str(LOADER), str(package), str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def build() -> list[dict[str, Any]]:
    """``cases()`` on trio's mock clock (time moves only when every task waits), so the
    paced answers are cut at the same place on every run."""
    return trio.run(cases, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[no-any-return]


def record(package: Path) -> None:
    given = build()
    loaded = load_in_original(package, given)
    for case, result in zip(given, loaded["results"], strict=True):
        result["transcript"] = case["transcript"]
    FIXTURE.write_text(json.dumps(loaded, indent=1) + "\n")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
    print(f"wrote {FIXTURE}")
