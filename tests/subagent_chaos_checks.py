"""The invariants the sub-agent chaos suite (``subagent_chaos_support``) checks after
each run, on every agent of the tree (see that module's list)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pi_trio.agent import Agent
from pi_trio.ai import ToolCall, Usage

from .chaos_support import Violation

CUT = ("children cut", "grandchildren cut")  # counts beside the runs' endings


@dataclass
class Member:
    """One agent of the tree, as its recorder saw it."""

    name: str
    agent: Agent
    up: Member | None  # the agent whose call started it
    seen: list[Any] = field(default_factory=list)
    reason: str | None = None  # the reason it was aborted with, by the scenario
    started_late: bool = False  # its run started after the parent's abort

    def cut_by(self) -> str | None:
        """The reason of the nearest abort of it or of an agent above it."""
        member: Member | None = self
        while member is not None:
            if member.reason is not None:
                return member.reason
            member = member.up
        return None

    def depth(self) -> int:
        return 0 if self.up is None else 1 + self.up.depth()


@dataclass
class Record:
    seen: list[list[Any]] = field(default_factory=lambda: [[], []])
    open: int = 0  # asynchronous listener calls entered and not (yet) returned
    interrupted: list[str] = field(default_factory=list)
    child_events: int = 0
    tool_steps: int = 0
    interrupted_at: str | None = None  # what interrupted the parent, once it was
    late: list[str] = field(default_factory=list)  # requests after an interruption
    done: bool = False  # the chaotic run is over: listeners only record
    members: dict[str, Member] = field(default_factory=dict)


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise Violation(what)


def interrupted(messages: list[Any]) -> bool:
    return any(
        getattr(m, "stop_reason", None) == "aborted"
        or (m.role == "toolResult" and m.content and m.content[0].text == "Operation aborted")
        for m in messages
    )


def check_sequence(events: list[Any], who: str) -> None:
    kinds = [event.type for event in events]
    expect(kinds.count("agent_start") == 1, f"{who}: agent_start {kinds.count('agent_start')}x")
    expect(kinds.count("agent_end") == 1, f"{who}: agent_end {kinds.count('agent_end')}x")
    expect(kinds[0] == "agent_start", f"{who}: first event {kinds[0]}")
    expect(kinds[-1] == "agent_end", f"{who}: last event {kinds[-1]}")


def check_member(member: Member, record: Record) -> None:
    """Invariants 2 to 6 for one agent of the tree."""
    who = f"agent {member.name or '(unnamed)'}"
    agent = member.agent
    messages = agent.state.messages
    if member.seen or messages:
        check_sequence(member.seen, who)
    expect(not member.started_late, f"{who} started after the parent's abort")
    expect(not agent.state.is_streaming, f"{who} is streaming after the run")
    expect(agent.state.pending_tool_calls == frozenset(), f"{who} has pending tool calls")
    results = Counter(m.tool_call_id for m in messages if m.role == "toolResult")
    for index, message in enumerate(messages):
        if message.role != "assistant":
            continue
        expect(message.stop_reason != "error", f"{who} failed: {message.error_message}")
        if message.stop_reason == "aborted" and member.cut_by() is not None:
            expect(
                message.error_message == member.cut_by(),
                f"{who}: aborted with {message.error_message!r}, not {member.cut_by()!r}",
            )
        if message.stop_reason in ("error", "aborted"):
            continue  # its calls are never run
        for block in message.content:
            if isinstance(block, ToolCall):
                later = [m.tool_call_id for m in messages[index:] if m.role == "toolResult"]
                expect(
                    later.count(block.id) == 1 and results[block.id] == 1,
                    f"{who}: tool call {block.id} has {results[block.id]} result(s)",
                )
    uncut = member.cut_by() is None and record.interrupted_at is None
    for message in messages:
        if message.role != "toolResult" or not message.tool_name.startswith("delegate"):
            continue
        child = record.members.get(message.tool_call_id)
        spent = _spent(child.agent.state.messages) if child is not None else Usage()
        got = message.usage or Usage()
        expect(
            _tokens(got) == _tokens(spent),
            f"{who}: {message.tool_call_id} reports usage {_tokens(got)}, "
            f"its sub-agent spent {_tokens(spent)}",
        )
        if child is None or message.tool_name != "delegate":
            continue
        forwarded = [
            e.partial_result.details
            for e in member.seen
            if e.type == "tool_execution_update"
            and e.tool_call_id == child.name
            and e.partial_result.details is not None
        ]
        expect(
            len(forwarded) <= len(child.seen)
            and all(a is b for a, b in zip(forwarded, child.seen, strict=False)),
            f"{who}: the events of {child.name} were forwarded out of order",
        )
        if uncut:
            expect(
                len(forwarded) == len(child.seen),
                f"{who}: {len(forwarded)} of the {len(child.seen)} events of {child.name} "
                "were forwarded",
            )


def _spent(messages: list[Any]) -> Usage:
    total = Usage()
    for message in messages:
        usage = getattr(message, "usage", None)
        if isinstance(usage, Usage):
            total.input += usage.input
            total.output += usage.output
            total.cache_read += usage.cache_read
            total.cache_write += usage.cache_write
    return total


def _tokens(usage: Usage) -> tuple[int, int, int, int]:
    return usage.input, usage.output, usage.cache_read, usage.cache_write


def check_tree(record: Record, members: list[Member], counts: Counter[str]) -> None:
    """Invariants 1 to 6 (``members``: the parent first); ``counts`` gets the sub-agents
    cut short, by depth."""
    expect(not record.interrupted, f"listener calls interrupted: {record.interrupted}")
    expect(record.open == 0, f"{record.open} listener call(s) never returned")
    first, second = record.seen
    expect(
        len(first) == len(second) and all(a is b for a, b in zip(first, second, strict=True)),
        f"the parent's listeners saw different events ({len(first)} and {len(second)})",
    )
    for member in members:
        check_member(member, record)
        if member.up is not None and interrupted(member.agent.state.messages):
            counts[CUT[member.depth() - 1]] += 1
    expect(not record.late, f"requests after an interruption, by {record.late}")
