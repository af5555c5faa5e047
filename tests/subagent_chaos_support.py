"""Sub-agents under chaos: seeded random runs of a parent agent whose tool calls delegate
to sub-agents (which call tools of their own and delegate again, two levels deep), each
run cut by one interruption and checked against the abort contract on every agent of
the tree. It borrows the contract chaos suite's public pieces (``chaos_support``: the
backends, the hang guard, ``Violation``, the seed) and draws scenarios of its own.

A scenario is drawn from ``random.Random(f"{seed}:sub:{index}")`` (replay one with
``PI_TRIO_SUBAGENT_CHAOS_REPLAY=<seed>:<index>``). A delegating call's ``task`` is the
plan of its sub-agent (JSON: the calls its first response makes), so each child runs
the part of the tree the parent's model wrote for it. Tools finish, fail, block until
interrupted or report progress; the delegate tools forward the child's events or not.
The interruption is one of ``INTERRUPTIONS``. After every run:

1. the parent's two listeners saw the same events (the same objects, in order),
   ``agent_start`` first and ``agent_end`` last; no listener call of any agent was
   interrupted;
2. every agent of the tree: ``agent_start`` first and ``agent_end`` last, once each;
   every tool call one result; not streaming, no pending tool call;
3. no agent sends a request after an abort or a cancellation that reaches it, and no
   sub-agent starts after an abort of the parent;
4. each delegating call's result has as ``usage`` exactly what its child spent (the
   usage of every message of the child's transcript);
5. a forwarded child's events reach its caller's listeners as ``tool_execution_update``
   (the same objects, in order; all of them when the caller was not cut short);
6. an abort's reason reaches every response it cut, however deep;
7. no task or thread of the run is left, and the parent runs again.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from pi_trio.agent import Agent, AgentTool, AgentToolResult, sub_agent_tool
from pi_trio.ai import TextContent
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

from .chaos_support import live_tasks, pause
from .subagent_chaos_checks import (
    Member,
    Record,
    check_sequence,
    check_tree,
    expect,
    interrupted,
)

INTERRUPTIONS = (
    "abort-listener",  # a listener of the parent aborts it on its k-th event
    "abort-in-child",  # a sub-agent's listener aborts the parent on the k-th child event
    "abort-tool",  # a tool, at any depth, aborts the parent at the k-th tool step
    "abort-task",  # another task aborts the parent once the tree's k-th event was seen
    "abort-thread",  # another thread aborts the parent, started on the tree's k-th event
    "cancel",  # the parent's caller is cancelled on the tree's k-th event
    "deadline",  # the parent's caller's deadline is set to now on the tree's k-th event
    "abort-then-cancel",  # an abort of the parent, then its caller's cancellation
    "abort-child",  # a sub-agent aborts itself (itself only); the parent goes on
    "none",
)
TOOL_KINDS = ("finish", "fail", "block", "progress")
# the interruptions that come at the k-th event of a sub-agent (counted across the tree)
TREE_LEVEL = ("abort-task", "abort-thread", "cancel", "deadline", "abort-then-cancel")
PARENT_REASON = "chaos: the parent was aborted"
SPARE_ANSWERS = 4  # answers for the parent's second run


@dataclass
class Scenario:
    seed: str
    turns: list[list[Any]]  # the parent's turns: per turn, its calls (see ``_calls``)
    sequential: bool
    max_concurrent: int | None
    listeners: list[str]  # the parent's two listeners: "sync", "async" or "async-quiet"
    child_listener: str  # every sub-agent's recorder: "sync" or "async"
    interruption: str
    at: int  # the event (or tool step) the interruption happens at
    then: int  # abort-then-cancel: the cancellation this many events later
    by: int  # abort-listener: which listener of the parent; abort-child: which child
    faux_seed: int


def _calls(r: random.Random, depth: int, block: bool) -> list[Any]:
    """A plan: ``["work", kind, steps]`` or ``["delegate" | "delegate_quiet", plan]``."""
    calls: list[Any] = []
    for _ in range(r.randint(1, 3) if depth == 0 else r.randint(0, 2)):
        if depth < 2 and r.random() < (0.7 if depth == 0 else 0.4):
            tool = r.choice(("delegate", "delegate_quiet"))
            calls.append([tool, _calls(r, depth + 1, block)])
        else:
            kinds = TOOL_KINDS if block else ("finish", "fail", "progress")
            calls.append(["work", r.choice(kinds), r.randint(0, 3)])
    return calls


def draw(seed: int, index: int) -> Scenario:
    """The scenario of run ``index`` under ``seed``."""
    name = f"{seed}:sub:{index}"
    r = random.Random(name)
    interruption = r.choice(INTERRUPTIONS)
    # nothing would unblock a blocking tool of a run that is never interrupted
    block = interruption != "none"
    turns = [_calls(r, 0, block) for _ in range(r.choice((1, 1, 2)))]
    if interruption == "abort-child":  # a blocking tool aborts its own agent: not the parent
        turns = [[c if c[1] != "block" else ["work", "finish", c[2]] for c in t] for t in turns]
    return Scenario(
        seed=name,
        turns=turns,
        sequential=r.random() < 0.3,
        max_concurrent=r.choice((None, None, 1, 2)),
        listeners=[r.choice(("sync", "async", "async-quiet")) for _ in range(2)],
        child_listener=r.choice(("sync", "async")),
        interruption=interruption,
        at=r.randint(1, 30),
        then=r.randint(0, 6),
        by=r.randrange(2) if interruption == "abort-listener" else r.randrange(4),
        faux_seed=r.randrange(2**32),
    )


def _answer(name: str, n: int, plan: list[Any]) -> Any:
    """The response that makes the calls of ``plan`` (ids under the agent's ``name``)."""
    blocks: list[Any] = [faux_text(f"{name} turn {n}")]
    for i, call in enumerate(plan):
        call_id = f"{name}.{n}{'abcdefgh'[i]}"
        if call[0] == "work":
            blocks.append(faux_tool_call("work", {"kind": call[1], "steps": call[2]}, id=call_id))
        else:
            task = json.dumps({"name": call_id, "plan": call[1]})
            blocks.append(faux_tool_call(call[0], {"task": task}, id=call_id))
    return faux_assistant_message(blocks, stop_reason="toolUse")


async def run_scenario(scenario: Scenario, backend: str, counts: Counter[str]) -> str:
    """Run ``scenario`` and check the invariants (``Violation`` names the broken one).
    Returns how the parent's run ended; ``counts`` gets the sub-agents cut short."""
    r = random.Random(scenario.seed + ":run")
    paced = backend == "trio"
    record = Record()
    outer = anyio.CancelScope()
    threads: list[threading.Thread] = []
    delivered = anyio.Event()  # abort-task: the tree's k-th event was seen
    kind = scenario.interruption
    children: list[Member] = []

    def abort_parent() -> None:
        if record.interrupted_at is None and not record.done:
            record.interrupted_at = "abort"
            root.reason = PARENT_REASON
            root.agent.abort(PARENT_REASON)

    def cancel() -> None:
        if record.interrupted_at in (None, "abort"):
            record.interrupted_at = "cancel"
            outer.cancel()

    def interrupt() -> None:
        """The scenario's interruption of the parent, once."""
        if record.interrupted_at is not None or kind in ("none", "abort-child"):
            return
        if kind == "cancel":
            cancel()
        elif kind == "deadline":
            record.interrupted_at = "cancel"
            outer.deadline = anyio.current_time()
        elif kind == "abort-task":
            delivered.set()
        elif kind == "abort-thread":
            record.interrupted_at = "abort"
            root.reason = PARENT_REASON
            thread = threading.Thread(
                target=root.agent.abort, args=(PARENT_REASON,), name="sub-agent chaos abort"
            )
            threads.append(thread)
            thread.start()
        else:
            abort_parent()

    def child_event() -> None:
        """A sub-agent's listener got an event: the tree-level interruptions count them."""
        record.child_events += 1
        count = record.child_events
        if kind == "abort-in-child" and count == scenario.at:
            abort_parent()
        if count == scenario.at and kind in TREE_LEVEL:
            interrupt()
        if kind == "abort-then-cancel" and count == scenario.at + scenario.then:
            cancel()

    def abort_self(member: Member) -> None:
        """A sub-agent aborts itself; the first abort to reach an agent gives the reason
        (one of an agent above it may have come first)."""
        if member.cut_by() is None:
            member.reason = f"chaos: {member.name} aborted itself"
            member.agent.abort(member.reason)

    def late(member: Member) -> bool:
        # (an abort from another thread is not ordered with the loop's own steps)
        return kind != "abort-thread" and (
            record.interrupted_at is not None or member.cut_by() is not None
        )

    def make_member(up: Member | None, faux: FauxProvider, sequential: bool, most: Any) -> Member:
        """An agent of the tree, with a work tool and two delegate tools of its own."""
        holder: list[Member] = []

        async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
            if late(holder[0]):
                record.late.append(holder[0].name)
            await faux(model, context, options, send)

        async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            work, steps = params["kind"], params["steps"]
            for i in range(steps):
                record.tool_steps += 1
                if kind == "abort-tool" and record.tool_steps == scenario.at:
                    abort_parent()
                await pause(r, backend, 1)
                if work == "progress" or r.random() < 0.3:
                    on_update(AgentToolResult(content=[TextContent(text=f"{call_id} step {i}")]))
            if work == "block":
                owner = holder[0]
                if kind == "abort-child":
                    abort_self(owner)
                else:
                    interrupt()  # its moment never came: interrupt now, or block forever
                if kind != "abort-thread":
                    await anyio.sleep_forever()
                while True:  # busily, so the autojump clock waits for the thread's abort
                    await anyio.lowlevel.checkpoint()
            if work == "fail":
                raise RuntimeError(f"{call_id} failed")
            return f"{call_id} done"

        def factory() -> Agent:
            n = len(children)
            faux = FauxProvider(
                token_size=(1, 3),
                tokens_per_second=500 if paced else None,
                rng=random.Random(f"{scenario.faux_seed}:{n}"),
            )

            def first(context: Any, *_: Any) -> Any:
                user = next(m for m in context.messages if m.role == "user")
                task = json.loads(user.content[0].text)
                if not task["plan"]:
                    return faux_assistant_message(f"{task['name']} has nothing to do")
                return _answer(task["name"], 0, task["plan"])

            faux.set_responses([first, faux_assistant_message("done")])
            settings = random.Random(f"{scenario.seed}:child {n}")
            child = make_member(
                holder[0], faux, settings.random() < 0.3, settings.choice((None, None, 1, 2))
            )
            children.append(child)
            child.agent.subscribe(recorder(child))
            if record.interrupted_at == "abort" and kind != "abort-thread":
                child.started_late = True
            return child.agent

        tools = [
            AgentTool(
                name="work", description="work", parameters={"type": "object"}, execute=execute
            ),
            sub_agent_tool("delegate", "delegate", factory, forward_events=True),
            sub_agent_tool("delegate_quiet", "delegate quietly", factory),
        ]
        agent = Agent(
            model=faux.get_model(),
            tools=tools,
            stream_fn=stream_fn,
            tool_execution="sequential" if sequential else "parallel",
            max_concurrent_tools=most,
        )
        member = Member(name="p" if up is None else "", agent=agent, up=up)
        holder.append(member)
        return member

    def recorder(member: Member) -> Any:
        def enter(event: Any) -> None:
            member.seen.append(event)
            if event.type == "message_start" and event.message.role == "user" and not member.name:
                member.name = json.loads(event.message.content[0].text)["name"]
                record.members[member.name] = member
            mine = kind == "abort-child" and children.index(member) == scenario.by
            if mine and not record.done and len(member.seen) == 1 + scenario.at % 24:
                abort_self(member)
            child_event()

        async def listen(event: Any) -> None:
            record.open += 1
            try:
                enter(event)
                if scenario.child_listener == "async":
                    await pause(r, backend, 2)
            except BaseException as exc:
                record.interrupted.append(f"{member.name} on {event.type}: {exc!r}")
                raise
            record.open -= 1

        def listen_sync(event: Any) -> None:
            enter(event)

        return listen if scenario.child_listener == "async" else listen_sync

    faux = FauxProvider(
        token_size=(1, 3),
        tokens_per_second=500 if paced else None,
        rng=random.Random(scenario.faux_seed),
    )
    script = [_answer("p", n, plan) for n, plan in enumerate(scenario.turns)]
    faux.set_responses([*script, faux_assistant_message("all done")])
    root = make_member(None, faux, scenario.sequential, scenario.max_concurrent)
    root.seen = record.seen[0]

    def parent_listener(index: int, how: str) -> Any:
        seen = record.seen[index]

        def enter(event: Any) -> None:
            seen.append(event)
            if kind == "abort-listener" and index == scenario.by and len(seen) == scenario.at:
                abort_parent()

        if how == "sync":
            return enter

        async def listen(event: Any) -> None:
            record.open += 1
            try:
                enter(event)
                if how == "async":
                    await pause(r, backend, 3)
            except BaseException as exc:
                record.interrupted.append(f"parent listener {index} on {event.type}: {exc!r}")
                raise
            record.open -= 1

        return listen

    for index, how in enumerate(scenario.listeners):
        root.agent.subscribe(parent_listener(index, how))

    async def abort_from_task() -> None:
        await delivered.wait()
        abort_parent()

    threads_before = set(threading.enumerate())
    tasks_before = live_tasks(backend)
    with outer:
        async with anyio.create_task_group() as group:
            if kind == "abort-task":
                group.start_soon(abort_from_task)
            await root.agent.prompt("go")
            group.cancel_scope.cancel()
    record.done = True
    for thread in threads:
        while thread.is_alive():  # busily, for the autojump clock
            await anyio.lowlevel.checkpoint()
    ended = "cancelled" if outer.cancelled_caught else "completed"
    if ended == "completed" and interrupted(root.agent.state.messages):
        ended = "aborted"

    check_tree(record, [root, *children], counts)
    left = live_tasks(backend) - tasks_before
    expect(not left, f"tasks left over: {left}")
    extra = {t for t in set(threading.enumerate()) - threads_before if t.name.startswith("sub-")}
    expect(not extra, f"threads left over: {extra}")

    # the parent runs again
    faux.set_responses([faux_assistant_message("again")] * SPARE_ANSWERS)
    again: list[Any] = []
    unsubscribe = root.agent.subscribe(again.append)
    await root.agent.prompt("again")
    unsubscribe()
    check_sequence(again, "the parent's second run")
    last = root.agent.state.messages[-1]
    expect(last.stop_reason == "stop", f"the second run ended {last.stop_reason}")
    return ended
