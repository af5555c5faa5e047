"""The contract chaos suite's engine: seeded random agent runs cut by every kind of
interruption, each checked against the abort contract's invariants.

A scenario is drawn from ``random.Random(f"{seed}:{index}")``, so one failing run can be
replayed alone (``PI_TRIO_CHAOS_REPLAY=<seed>:<index>``). Each run has three listeners
(synchronous or asynchronous, the asynchronous ones awaiting a random number of times),
tools that finish, fail, block until interrupted or report progress, steering and
follow-up messages queued from listeners and from outside, and one interruption: an
abort from a listener, from another task or from another thread, the caller's cancel
scope, its deadline, an abort then a cancellation, or none. In some scenarios calls need
approval: the run pauses, and is resumed with random decisions (approve, deny, edit)
until it ends or the interruption came, which may so fall into a resumed run; an agent
left paused is resumed before the second run. After every run:

1. every listener saw the identical event sequence (the same objects, in the same
   order); ``agent_start`` first and ``agent_end`` last, each once;
2. no listener call was interrupted (each records its entry and exit; a cancellation
   inside a listener is a violation);
3. every tool call in the transcript has exactly one result after it; the provider is
   never called after an abort or a cancellation;
4. every queued steering and follow-up message is delivered exactly once, in order (a
   ledger of every enqueue against the transcript and the queues, checked after a
   second run);
5. after the run ``is_streaming`` is false, no tool call is pending, no task or thread
   of the run is left, and the agent runs again;
6. a call that needs approval runs only once approved (or edited), a denied one never,
   and every run of a pause-and-resume sequence starts with ``agent_start`` and ends with
   ``agent_end``.

``python -m tests.chaos_support --runs 100000`` is the soak (both backends).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import trio
import trio.testing

from pi_trio.agent import Agent, AgentTool, AgentToolResult, approve, deny, edit
from pi_trio.agent.extend import pending_approvals
from pi_trio.ai import TextContent, ToolCall
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

BACKENDS = ("trio", "asyncio")
INTERRUPTIONS = (
    "abort-listener",  # a listener calls agent.abort() on the k-th event
    "abort-task",  # another task aborts once the k-th event was delivered
    "abort-thread",  # another thread aborts, started on the k-th event
    "abort-tool",  # a tool aborts at its k-th step
    "cancel",  # the caller's cancel scope is cancelled on the k-th event
    "deadline",  # the caller's deadline is set to now on the k-th event
    "abort-then-cancel",  # an abort, then the caller's cancellation a few events later
    "none",
)
TOOL_KINDS = ("finish", "fail", "block", "progress")
LISTENER_KINDS = ("sync", "async", "async-quiet")
SPARE_ANSWERS = 16
# A run that has not ended after this long hangs (trio: virtual seconds, on the autojump
# clock; asyncio: real ones, far above any run's time).
HANG_AFTER = {
    "trio": 3600.0,
    "asyncio": 30.0,
}  # answers for the turns queued messages add, and for the second run


class Violation(AssertionError):
    """An invariant of the contract did not hold."""


@dataclass
class Scenario:
    seed: str
    turns: list[list[tuple[str, int]]]  # per turn: (kind, steps) of each tool call
    sequential: bool
    listeners: list[str]  # three listener kinds, in subscription order
    awaits: int  # at most this many awaits per asynchronous listener call
    interruption: str
    at: int  # the event (or tool step) the interruption happens at
    then: int  # abort-then-cancel: the cancellation this many events later
    by: int  # which listener (index) triggers listener-side actions
    queue_at: list[tuple[int, str]]  # (event index, "steer" | "follow_up") from listeners
    queue_outside: list[tuple[int, str]]  # (delay in checkpoints, kind) from another task
    queue_all: bool
    faux_seed: int
    token_size: tuple[int, int]
    approvals: list[list[bool]]  # per turn: whether each tool call needs approval


def draw(seed: int, index: int) -> Scenario:
    """The scenario of run ``index`` under ``seed``."""
    name = f"{seed}:{index}"
    r = random.Random(name)
    turns = [
        [(r.choice(TOOL_KINDS), r.randint(0, 3)) for _ in range(r.randint(1, 3))]
        for _ in range(r.choice((0, 1, 1, 2, 2, 3)))
    ]
    interruption = r.choice(INTERRUPTIONS)
    if interruption == "none":
        # nothing would ever unblock a blocking tool
        turns = [[("finish" if k == "block" else k, n) for k, n in turn] for turn in turns]
    kinds = ["steer", "follow_up"]
    return Scenario(
        seed=name,
        turns=turns,
        sequential=r.random() < 0.3,
        listeners=[r.choice(LISTENER_KINDS) for _ in range(3)],
        awaits=r.randint(0, 3),
        interruption=interruption,
        at=r.randint(1, 40),
        then=r.randint(0, 6),
        by=r.randrange(3),
        queue_at=[(r.randint(1, 40), r.choice(kinds)) for _ in range(r.randint(0, 3))],
        queue_outside=[(r.randint(0, 60), r.choice(kinds)) for _ in range(r.randint(0, 2))],
        queue_all=r.random() < 0.3,
        faux_seed=r.randrange(2**32),
        token_size=r.choice(((1, 1), (1, 3), (2, 6))),
        # drawn last: the scenarios' other draws stay what they were before approvals
        approvals=_draw_approvals(r, turns),
    )


def _draw_approvals(r: random.Random, turns: list[list[tuple[str, int]]]) -> list[list[bool]]:
    if r.random() >= 0.5:
        return [[False] * len(turn) for turn in turns]
    return [[r.random() < 0.5 for _ in turn] for turn in turns]


@dataclass
class Record:
    """What one run did, as its listeners and tools saw it."""

    seen: list[list[Any]] = field(default_factory=lambda: [[], [], []])
    entered: list[int] = field(default_factory=lambda: [0, 0, 0])
    exited: list[int] = field(default_factory=lambda: [0, 0, 0])
    interrupted: list[str] = field(default_factory=list)
    queued: dict[str, list[str]] = field(default_factory=lambda: {"steer": [], "follow_up": []})
    interrupted_at: str | None = None  # what interrupted the run, once it did
    requests_after: int = 0  # provider calls after the interruption
    tool_steps: int = 0
    decided: dict[str, str] = field(default_factory=dict)  # call id -> decision's action
    unapproved: list[str] = field(default_factory=list)  # calls that ran without approval


def _script(scenario: Scenario) -> list[Any]:
    answers: list[Any] = []
    for n, turn in enumerate(scenario.turns):
        blocks: list[Any] = [faux_text(f"turn {n}")]
        blocks += [
            faux_tool_call(
                "work",
                {"kind": kind, "steps": steps, "approve": scenario.approvals[n][i]},
                id=f"t{n}c{i}",
            )
            for i, (kind, steps) in enumerate(turn)
        ]
        answers.append(faux_assistant_message(blocks, stop_reason="toolUse"))
    answers.append(faux_assistant_message("all done"))
    return answers + [faux_assistant_message("more")] * SPARE_ANSWERS


def live_tasks(backend: str) -> set[Any]:
    """The tasks alive now (trio: the whole task tree; asyncio: the loop's tasks)."""
    if backend == "asyncio":
        return set(asyncio.all_tasks())
    found: set[Any] = set()
    stack = [trio.lowlevel.current_root_task()]
    while stack:
        task = stack.pop()
        found.add(task)
        for nursery in task.child_nurseries:
            stack.extend(nursery.child_tasks)
    return found


async def pause(r: random.Random, backend: str, most: int) -> None:
    """Wait a random while: virtual time on trio, scheduler passes on asyncio."""
    for _ in range(r.randint(0, most)):
        if backend == "trio" and r.random() < 0.5:
            await anyio.sleep(r.choice((0.001, 0.01, 0.05)))
        else:
            await anyio.lowlevel.checkpoint()


async def run_scenario(scenario: Scenario, backend: str) -> list[str]:
    """Run ``scenario`` and check the invariants (``Violation`` names the broken one).
    Returns how the run ended: "cancelled", "aborted" or "completed", then what its
    approvals did ("approval:paused", "approval:resumed", "approval:interrupted in a
    resume", "approval:resumed after the chaotic run")."""
    r = random.Random(scenario.seed + ":run")
    paced = backend == "trio"
    faux = FauxProvider(
        token_size=scenario.token_size,
        tokens_per_second=500 if paced else None,
        rng=random.Random(scenario.faux_seed),
    )
    faux.set_responses(_script(scenario))
    record = Record()
    flags: list[str] = []
    outer = anyio.CancelScope()
    threads: list[threading.Thread] = []
    delivered = anyio.Event()  # the k-th event reached the triggering listener
    agent: Agent

    def interrupted(what: str) -> None:
        if record.interrupted_at is None:
            record.interrupted_at = what

    def abort() -> None:
        interrupted("abort")
        agent.abort()

    def cancel() -> None:
        interrupted("cancel")
        outer.cancel()

    def interrupt() -> None:
        """The scenario's interruption, once."""
        if record.interrupted_at is not None:
            return
        interruption = scenario.interruption
        if interruption in ("abort-listener", "abort-then-cancel", "abort-tool"):
            abort()
        elif interruption == "cancel":
            cancel()
        elif interruption == "deadline":
            interrupted("deadline")
            outer.deadline = anyio.current_time()
        elif interruption == "abort-thread":
            interrupted("abort")
            thread = threading.Thread(target=agent.abort, name="chaos abort")
            threads.append(thread)
            thread.start()
        elif interruption == "abort-task":
            delivered.set()

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        # (an abort from another thread is not ordered with the loop's own steps)
        if record.interrupted_at is not None and scenario.interruption != "abort-thread":
            record.requests_after += 1
        await faux(model, context, options, send)

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        kind, steps = params["kind"], params["steps"]
        if params.get("approve") and record.decided.get(call_id) not in ("approve", "edit"):
            record.unapproved.append(f"{call_id} ({record.decided.get(call_id)})")
        for i in range(steps):
            record.tool_steps += 1
            if scenario.interruption == "abort-tool" and record.tool_steps == scenario.at:
                abort()
            await pause(r, backend, 1)
            if kind == "progress" or r.random() < 0.3:
                on_update(AgentToolResult(content=[TextContent(text=f"{call_id} step {i}")]))
        if kind == "block":
            if not chaotic[0]:
                # a waiting call of a paused turn, resumed after the chaos: an abort ends it
                agent.abort()
                await anyio.sleep_forever()
            if record.interrupted_at is None:
                interrupt()  # its moment never came: interrupt now, or block forever
            if scenario.interruption != "abort-thread":
                await anyio.sleep_forever()
            # Wait for the other thread's abort busily: on the autojump clock an idle
            # loop would jump virtual time past the hang guard before the thread ran.
            while True:
                await anyio.lowlevel.checkpoint()
        if kind == "fail":
            raise RuntimeError(f"{call_id} failed")
        return f"{call_id} done"

    work = AgentTool(
        name="work",
        description="work",
        parameters={"type": "object"},
        execute=execute,
        needs_approval=lambda args: bool(args.get("approve")),
    )
    decide = random.Random(scenario.seed + ":decide")

    def decisions(pending: Any, *, may_block: bool) -> dict[str, Any]:
        """Random decisions; a blocking call is approved only while an interruption
        can still end it."""
        chosen: dict[str, Any] = {}
        for call in pending:
            action = decide.choice(("approve", "deny", "edit"))
            if action == "approve" and call.arguments["kind"] == "block" and not may_block:
                action = "edit"
            if action == "approve":
                chosen[call.tool_call_id] = approve()
            elif action == "deny":
                chosen[call.tool_call_id] = deny(f"denied {call.tool_call_id}")
            else:
                kind = decide.choice(("finish", "fail", "progress"))
                new = {"kind": kind, "steps": decide.randint(0, 2), "approve": True}
                chosen[call.tool_call_id] = edit(new)
            record.decided[call.tool_call_id] = action
        return chosen

    agent = Agent(
        model=faux.get_model(),
        tools=[work],
        stream_fn=stream_fn,
        tool_execution="sequential" if scenario.sequential else "parallel",
        steering_mode="all" if scenario.queue_all else "one-at-a-time",
        follow_up_mode="all" if scenario.queue_all else "one-at-a-time",
    )
    queue_at = dict(scenario.queue_at)
    chaotic = [True]  # listeners act during the chaotic run only

    def act(index: int, count: int) -> None:
        """What the triggering listener does on its ``count``-th event."""
        if not chaotic[0] or index != scenario.by:
            return
        kind = queue_at.get(count)
        if kind is not None:
            text = f"{kind} {count}"
            record.queued[kind].append(text)
            (agent.steer if kind == "steer" else agent.follow_up)(text)
        if count == scenario.at and scenario.interruption != "abort-tool":
            interrupt()
        if scenario.interruption == "abort-then-cancel" and count == scenario.at + scenario.then:
            cancel()

    def make_listener(index: int, kind: str) -> Any:
        seen = record.seen[index]

        def enter(event: Any) -> int:
            record.entered[index] += 1
            seen.append(event)
            return len(seen)

        if kind == "sync":

            def listener(event: Any) -> None:
                count = enter(event)
                act(index, count)
                record.exited[index] += 1

            return listener

        async def async_listener(event: Any) -> None:
            count = enter(event)
            try:
                act(index, count)
                if kind == "async":
                    await pause(r, backend, scenario.awaits)
            except BaseException as exc:
                record.interrupted.append(f"listener {index} on {event.type}: {exc!r}")
                raise
            record.exited[index] += 1

        return async_listener

    for index, kind in enumerate(scenario.listeners):
        agent.subscribe(make_listener(index, kind))

    async def from_outside() -> None:
        for delay, kind in scenario.queue_outside:
            for _ in range(delay):
                await anyio.lowlevel.checkpoint()
            text = f"{kind} outside {delay}"
            record.queued[kind].append(text)
            (agent.steer if kind == "steer" else agent.follow_up)(text)

    async def abort_from_task() -> None:
        await delivered.wait()
        abort()

    threads_before = set(threading.enumerate())
    tasks_before = live_tasks(backend)
    with outer:
        async with anyio.create_task_group() as group:
            group.start_soon(from_outside)
            if scenario.interruption == "abort-task":
                group.start_soon(abort_from_task)
            result = await agent.prompt("go")
            if result.pending_approvals:
                flags.append("approval:paused")
            resumes = 0
            # paused: resumed while the interruption has not come (it may come in a
            # resumed run)
            while result.pending_approvals and record.interrupted_at is None and resumes < 3:
                resumes += 1
                flags.append("approval:resumed")
                result = await agent.resume(
                    decisions(result.pending_approvals, may_block=scenario.interruption != "none")
                )
            group.cancel_scope.cancel()
    chaotic[0] = False
    for thread in threads:
        while thread.is_alive():  # busily, for the autojump clock (see ``execute``)
            await anyio.lowlevel.checkpoint()
    ended = "cancelled" if outer.cancelled_caught else "completed"
    if any(
        getattr(m, "stop_reason", None) == "aborted"
        or (m.role == "toolResult" and m.content and m.content[0].text == "Operation aborted")
        for m in agent.state.messages
    ):
        ended = "aborted" if ended == "completed" else ended

    _check_listeners(record, scenario)
    _check_transcript(agent)
    _expect(
        record.requests_after == 0, f"{record.requests_after} request(s) after the interruption"
    )
    _expect(not agent.state.is_streaming, "is_streaming after the run")
    _expect(agent.state.pending_tool_calls == frozenset(), "pending tool calls after the run")
    left = live_tasks(backend) - tasks_before
    _expect(not left, f"tasks left over: {left}")
    extra = {t for t in set(threading.enumerate()) - threads_before if t.name == "chaos abort"}
    _expect(not extra, f"threads left over: {extra}")

    # the agent runs again (resumed first when it was left paused), and every queued
    # message is delivered exactly once, in order
    faux.set_responses([faux_assistant_message("again")] * SPARE_ANSWERS)
    again: list[Any] = []
    unsubscribe = agent.subscribe(again.append)
    pending = pending_approvals(agent.state.messages)
    if pending:
        flags.append("approval:resumed after the chaotic run")
        resumed = await agent.resume(decisions(pending, may_block=False))
        _expect(not pending_approvals(agent.state.messages), "paused again after a resume")
        _expect(resumed.pending_approvals == (), "a resume's result lists pending calls")
        _check_sequence(again, "resumed run")
        _check_transcript(agent)
        again.clear()
    await agent.prompt("again")
    unsubscribe()
    _check_sequence(again, "second run")
    _expect(not record.unapproved, f"ran without approval: {record.unapproved}")
    _check_transcript(agent)
    last = agent.state.messages[-1]
    _expect(
        last.role == "assistant" and last.stop_reason == "stop",
        f"second run ended {getattr(last, 'stop_reason', last.role)}",
    )
    texts = _user_texts(agent)
    for kind, queued in record.queued.items():
        got = [t for t in texts if t in queued]
        _expect(got == queued, f"{kind} queued {queued}, delivered {got}")
    _expect(not agent.has_queued_messages(), "messages left in the queues")
    if "approval:resumed" in flags and record.interrupted_at is not None:
        flags.append("approval:interrupted in a resume")
    return [ended, *sorted(set(flags))]


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise Violation(what)


def _check_sequence(events: list[Any], who: str) -> None:
    kinds = [event.type for event in events]
    _expect(kinds.count("agent_start") == 1, f"{who}: agent_start {kinds.count('agent_start')}x")
    _expect(kinds.count("agent_end") == 1, f"{who}: agent_end {kinds.count('agent_end')}x")
    _expect(kinds[0] == "agent_start", f"{who}: first event {kinds[0]}")
    _expect(kinds[-1] == "agent_end", f"{who}: last event {kinds[-1]}")


def _check_listeners(record: Record, scenario: Scenario) -> None:
    _expect(not record.interrupted, f"listener interrupted: {record.interrupted}")
    _expect(
        record.entered == record.exited,
        f"listener calls entered {record.entered}, exited {record.exited}",
    )
    first = record.seen[0]
    for index, seen in enumerate(record.seen[1:], 1):
        if len(seen) != len(first) or any(a is not b for a, b in zip(first, seen, strict=False)):
            diff = next(
                (i for i, (a, b) in enumerate(zip(first, seen, strict=False)) if a is not b),
                min(len(first), len(seen)),
            )
            raise Violation(
                f"listener {index} saw a different sequence from event {diff}: "
                f"{[e.type for e in first[diff : diff + 3]]} vs "
                f"{[e.type for e in seen[diff : diff + 3]]} "
                f"({len(first)} vs {len(seen)} events)"
            )
    start = 0
    for end, event in enumerate(first):
        if event.type == "agent_end":  # each run of the sequence, prompt or resume
            _check_sequence(first[start : end + 1], f"listener 0, run from event {start}")
            start = end + 1
    _expect(start == len(first), f"listener 0: {len(first) - start} event(s) after agent_end")


def _check_transcript(agent: Agent) -> None:
    messages = agent.state.messages
    results = Counter(m.tool_call_id for m in messages if m.role == "toolResult")
    for index, message in enumerate(messages):
        # an aborted or failed response's calls are never run (nor sent again)
        if message.role != "assistant" or message.stop_reason in ("error", "aborted"):
            continue
        for block in message.content:
            if isinstance(block, ToolCall):
                later = [m.tool_call_id for m in messages[index:] if m.role == "toolResult"]
                _expect(
                    later.count(block.id) == 1 and results[block.id] == 1,
                    f"tool call {block.id}: {results[block.id]} result(s)",
                )


def _user_texts(agent: Agent) -> list[str]:
    texts = []
    for message in agent.state.messages:
        if message.role == "user":
            content = message.content
            texts.append(content if isinstance(content, str) else content[0].text)
    return texts


def _seed_trio_scheduler(seed: str) -> None:
    """Trio shuffles its run queue with a module-level generator; seeding it makes a run
    replayable (threads aside). It is private, so only when it is there."""
    generator = getattr(getattr(trio, "_core", None), "_run", None)
    generator = getattr(generator, "_r", None)
    if isinstance(generator, random.Random):
        generator.seed(seed)


async def run_many(
    seed: int, indices: range | list[int], backend: str, failures: list[str]
) -> Counter[str]:
    ends: Counter[str] = Counter()
    for index in indices:
        scenario = draw(seed, index)
        if backend == "trio":
            _seed_trio_scheduler(scenario.seed)
        try:
            # a hang is a violation too: virtual time on trio, real time on asyncio
            with anyio.fail_after(HANG_AFTER[backend]):
                ends.update(await run_scenario(scenario, backend))
        except TimeoutError:
            failures.append(f"PI_TRIO_CHAOS_REPLAY={scenario.seed} ({backend}): hung\n  {scenario}")
            ends["violation"] += 1
        except Violation as exc:
            failures.append(
                f"PI_TRIO_CHAOS_REPLAY={scenario.seed} ({backend}): {exc}\n  {scenario}"
            )
            ends["violation"] += 1
        except Exception as exc:  # the run itself failed: a bug, reported with its run
            trace = "".join(traceback.format_exception(exc)[-12:])
            failures.append(f"PI_TRIO_CHAOS_REPLAY={scenario.seed} ({backend}): {exc!r}\n{trace}")
            ends["violation"] += 1
    return ends


def run_backend(
    seed: int, indices: range | list[int], backend: str, failures: list[str]
) -> Counter[str]:
    """Run the scenarios ``indices`` of ``seed`` on ``backend`` in one event loop (trio
    with the autojump clock)."""
    if backend == "trio":
        clock = trio.testing.MockClock(autojump_threshold=0)
        return trio.run(run_many, seed, indices, backend, failures, clock=clock)
    return anyio.run(run_many, seed, indices, backend, failures, backend="asyncio")


def chosen_seed() -> int:
    """``PI_TRIO_CHAOS_SEED``, or a new seed each time."""
    given = os.environ.get("PI_TRIO_CHAOS_SEED")
    return int(given) if given else random.SystemRandom().randrange(2**32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs in all, both backends")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--chunk", type=int, default=1_000, help="runs per event loop")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else chosen_seed()
    print(f"chaos soak: seed {seed}, {args.runs} runs", flush=True)
    failures: list[str] = []
    ends: Counter[str] = Counter()
    started = time.perf_counter()
    for start in range(0, args.runs, args.chunk):
        for n, backend in enumerate(BACKENDS):
            # even indices on trio, odd ones on asyncio
            indices = range(start + n, min(start + args.chunk, args.runs), 2)
            ends += run_backend(seed, indices, backend, failures)
        done = min(start + args.chunk, args.runs)
        rate = done / (time.perf_counter() - started)
        print(
            f"{done} runs, {dict(ends)}, {len(failures)} violation(s), {rate:.0f} runs/s",
            flush=True,
        )
    for failure in failures[:20]:
        print(failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
