"""W4 abort-storm: 1 000 concurrent agents streaming (1 000, 0); a second listener aborts
each on its first ``text_delta``.

Checks: every prompt settled and left the agent idle; every final message is aborted and
holds exactly the deltas its listeners saw as ``message_update`` events; the scripted
model produced no delta after ``abort()`` was called; no task of the workload is left.
"""

from __future__ import annotations

from typing import Any

import trio

from ._result import check, report
from .scripted import DELTA, ScriptedModel, Turn, make_agent


class _TaskCounter(trio.abc.Instrument):
    """The tasks spawned while installed that have not exited yet."""

    def __init__(self) -> None:
        self.live: set[trio.lowlevel.Task] = set()
        self.spawned = 0

    def task_spawned(self, task: trio.lowlevel.Task) -> None:
        self.spawned += 1
        self.live.add(task)

    def task_exited(self, task: trio.lowlevel.Task) -> None:
        self.live.discard(task)


class _Aborter:
    """The second listener: aborts on the first text delta; counts delivered deltas."""

    __slots__ = ("agent", "delivered", "model", "produced_at_abort")

    def __init__(self, agent: Any, model: ScriptedModel) -> None:
        self.agent = agent
        self.model = model
        self.delivered = 0
        self.produced_at_abort: int | None = None

    def __call__(self, event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            self.delivered += 1
            if self.produced_at_abort is None:
                self.produced_at_abort = self.model.deltas_produced
                self.agent.abort()


async def run(agents: int = 1_000, deltas: int = 1_000) -> dict[str, Any]:
    counter = [0]
    turns = [Turn(deltas, 0)]
    runs = []
    for _ in range(agents):
        agent, model = make_agent(turns, counter)
        aborter = _Aborter(agent, model)
        agent.subscribe(aborter)
        runs.append((agent, model, aborter))
    settled = 0

    async def prompt(agent: Any) -> None:
        nonlocal settled
        await agent.prompt("go")
        settled += 1

    tasks = _TaskCounter()
    trio.lowlevel.add_instrument(tasks)
    try:
        async with trio.open_nursery() as nursery:
            for agent, _, _ in runs:
                nursery.start_soon(prompt, agent)
    finally:
        trio.lowlevel.remove_instrument(tasks)

    check(settled == agents, f"W4: {settled} of {agents} prompts settled")
    streaming = sum(agent.state.is_streaming for agent, _, _ in runs)
    check(streaming == 0, f"W4: {streaming} agents still streaming after prompt() returned")
    aborted = 0
    late = 0
    mismatched: list[str] = []
    for agent, model, aborter in runs:
        final = agent.state.messages[-1]
        aborted += final.stop_reason == "aborted"
        check(aborter.produced_at_abort is not None, "W4: an agent never saw a text_delta")
        late += model.deltas_produced - aborter.produced_at_abort  # type: ignore[operator]
        text = "".join(b.text for b in final.content if b.type == "text")
        if text != DELTA * aborter.delivered:
            mismatched.append(
                f"{len(text) // len(DELTA)} deltas held, {aborter.delivered} delivered"
            )
    check(aborted == agents, f"W4: {aborted} of {agents} final messages are aborted")
    check(not mismatched, f"W4: aborted message differs from delivered deltas: {mismatched[:3]}")
    check(late == 0, f"W4: {late} deltas produced after abort() was called")
    check(
        not tasks.live,
        f"W4: {len(tasks.live)} tasks left: {sorted(t.name for t in tasks.live)[:5]}",
    )
    minimum = 10 * agents
    check(counter[0] >= minimum, f"W4: {counter[0]} events, expected at least {minimum}")
    delivered = sum(aborter.delivered for _, _, aborter in runs)
    produced = sum(model.deltas_produced for _, model, _ in runs)
    return {
        "events": counter[0],
        "settled": settled,
        "stop_aborted": aborted,
        "deltas_produced": produced,
        "deltas_delivered": delivered,
        "deltas_after_abort": late,
        "tasks_spawned": tasks.spawned,
        "tasks_left": len(tasks.live),
    }


if __name__ == "__main__":
    report("W4", run)
