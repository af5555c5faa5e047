"""Sub-agents: an agent as a tool of another. The child's answer, usage and events reach
the parent; the parent's tool concurrency bounds the children; an abort or a cancellation
of the parent ends every child by the abort contract, every transcript whole."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pi_trio.agent import Agent, AgentTool, AgentToolResult, sub_agent_tool
from pi_trio.ai import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call


def check_transcript(messages: list[Any]) -> None:
    """Every tool call has exactly one result after it, and nothing dangles."""
    calls: list[str] = []
    results: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls += [b.id for b in message.content if isinstance(b, ToolCall)]
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in calls
            results.append(message.tool_call_id)
    assert sorted(results) == sorted(calls)
    assert len(set(results)) == len(results)


def usage_total(usage: Usage) -> tuple[int, int]:
    return usage.input, usage.output


def delegating_parent(
    tool: AgentTool, tasks: list[str], **settings: Any
) -> tuple[Agent, FauxProvider]:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text("delegating")]
                + [faux_tool_call(tool.name, {"task": t}, id=f"d{i}") for i, t in enumerate(tasks)],
                stop_reason="toolUse",
            ),
            faux_assistant_message("all delegated work is done"),
        ]
    )
    parent = Agent(
        model=faux.get_model(), stream_fn=faux, tools=[tool], system_prompt="lead", **settings
    )
    return parent, faux


def research_agent() -> tuple[Agent, FauxProvider]:
    faux = FauxProvider()
    faux.set_responses([lambda ctx, *_: faux_assistant_message(f"found: {_task(ctx)}")] * 10)
    return Agent(model=faux.get_model(), stream_fn=faux, system_prompt="You research."), faux


def _task(context: Any) -> str:
    return context.messages[-1].content[0].text


async def test_a_sub_agent_answers_and_its_usage_rolls_up_into_the_parent() -> None:
    child, _ = research_agent()
    parent, _ = delegating_parent(
        child.as_tool("research", "Research a question"), ["the moon", "the sun"]
    )
    events: list[Any] = []
    parent.subscribe(events.append)
    result = await parent.prompt("go")
    assert result.ok
    results = [m for m in parent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.content[0].text for r in results] == ["found: the moon", "found: the sun"]
    for tool_result in results:
        details = tool_result.details
        child_messages = details["messages"]
        assert [m.role for m in child_messages] == ["user", "assistant"]
        assert tool_result.usage is not None
        assert usage_total(tool_result.usage) == usage_total(child_messages[-1].usage)
        assert tool_result.usage.output > 0
    # the parent's usage: its two responses and both children
    own = [m.usage for m in result.messages if isinstance(m, AssistantMessage)]
    assert result.usage.output == sum(u.output for u in own) + sum(r.usage.output for r in results)
    # the template agent never ran: each call ran a fork of it
    assert [m.role for m in child.state.messages] == ["system"]
    assert not any(e.type == "tool_execution_update" for e in events)  # not forwarded


async def test_forwarded_child_events_reach_the_parent_as_tool_progress() -> None:
    child, _ = research_agent()
    parent, _ = delegating_parent(
        child.as_tool("research", "Research", forward_events=True), ["tides"]
    )
    updates: list[Any] = []
    parent.subscribe(lambda e: updates.append(e) if e.type == "tool_execution_update" else None)
    await parent.prompt("go")
    kinds = [u.partial_result.details.type for u in updates]
    assert kinds[0] == "agent_start"
    assert kinds[-1] == "agent_end"
    assert "message_update" in kinds
    assert all(u.tool_call_id == "d0" and u.tool_name == "research" for u in updates)
    final = updates[-1].partial_result.details
    assert final.messages[-1].content[0].text == "found: tides"


async def test_a_failed_child_is_an_error_result_naming_how_it_ended() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("", stop_reason="error", error_message="boom")])
    child = Agent(model=faux.get_model(), stream_fn=faux)
    parent, _ = delegating_parent(child.as_tool("helper", "Help"), ["x"])
    await parent.prompt("go")
    result = next(m for m in parent.state.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert result.content[0].text == "The sub-agent failed: boom"


async def test_children_run_under_the_parents_tool_concurrency_cap(autojump_clock: Any) -> None:
    running = [0]
    most = [0]

    def factory() -> Agent:
        faux = FauxProvider(tokens_per_second=10)
        faux.set_responses([faux_assistant_message("a slow answer of several words")])
        child = Agent(model=faux.get_model(), stream_fn=faux)

        def count(event: Any) -> None:
            if event.type == "agent_start":
                running[0] += 1
                most[0] = max(most[0], running[0])
            elif event.type == "agent_end":
                running[0] -= 1

        child.subscribe(count)
        return child

    tool = sub_agent_tool("worker", "Work", factory)
    parent, _ = delegating_parent(tool, ["a", "b", "c", "d", "e"], max_concurrent_tools=2)
    result = await parent.prompt("go")
    assert result.ok
    assert most[0] == 2
    results = [m for m in parent.state.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 5
    assert not any(r.is_error for r in results)


class Children:
    """Three children that keep running until interrupted: one streams slowly, two wait
    in a tool of their own. ``blocked`` is set once all three are under way."""

    def __init__(self) -> None:
        self.agents: list[Agent] = []
        self.events: list[list[Any]] = []
        self.under_way = 0
        self.blocked = anyio.Event()
        self.signals: list[Any] = []

    def _started(self) -> None:
        self.under_way += 1
        if self.under_way == 3:
            self.blocked.set()

    def factory(self) -> Agent:
        n = len(self.agents)
        faux = FauxProvider(tokens_per_second=2)
        if n == 0:
            faux.set_responses([faux_assistant_message("word " * 200)])
        else:
            faux.set_responses(
                [
                    faux_assistant_message(
                        [faux_tool_call("wait", {}, id=f"w{n}")], stop_reason="toolUse"
                    )
                ]
            )

        async def wait(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            self.signals.append(signal)
            self._started()
            await anyio.sleep_forever()

        child = Agent(
            model=faux.get_model(),
            stream_fn=faux,
            tools=[
                AgentTool(
                    name="wait", description="wait", parameters={"type": "object"}, execute=wait
                )
            ],
        )
        seen: list[Any] = []
        self.events.append(seen)

        def listen(event: Any) -> None:
            seen.append(event)
            if n == 0 and event.type == "message_update":
                updates = sum(1 for e in seen if e.type == "message_update")
                if updates == 4:  # some text has arrived
                    self._started()

        child.subscribe(listen)
        self.agents.append(child)
        return child

    def check_every_transcript(self, reason: str | None) -> None:
        assert len(self.agents) == 3
        for child, seen in zip(self.agents, self.events, strict=True):
            kinds = [e.type for e in seen]
            assert kinds[0] == "agent_start"
            assert kinds[-1] == "agent_end"
            assert kinds.count("agent_end") == 1
            assert not child.state.is_streaming
            assert child.state.pending_tool_calls == frozenset()
            check_transcript(child.state.messages)
        streamed = self.agents[0].state.messages[-1]
        assert streamed.stop_reason == "aborted"
        assert streamed.content[0].text.startswith("word word")  # what it had received
        if reason is not None:
            assert streamed.error_message == reason
        for child in self.agents[1:]:
            last = child.state.messages[-1]
            assert isinstance(last, ToolResultMessage)
            assert last.is_error
            assert last.content[0].text == "Operation aborted"


async def test_aborting_a_parent_with_three_running_children_ends_every_run_whole(
    autojump_clock: Any,
) -> None:
    children = Children()
    parent, faux = delegating_parent(
        sub_agent_tool("worker", "Work", children.factory, forward_events=True), ["a", "b", "c"]
    )
    seen: list[Any] = []
    parent.subscribe(seen.append)

    async def abort_when_under_way() -> None:
        await children.blocked.wait()
        parent.abort("stop, all of you")

    async with anyio.create_task_group() as group:
        group.start_soon(abort_when_under_way)
        result = await parent.prompt("go")
    assert result.stop_reason == "aborted"
    children.check_every_transcript("stop, all of you")
    assert all(signal.aborted for signal in children.signals)

    # the parent: each call one aborted result, keeping what its child spent
    check_transcript(parent.state.messages)
    results = [m for m in parent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["d0", "d1", "d2"]
    for tool_result, child in zip(results, children.agents, strict=True):
        assert tool_result.is_error
        assert tool_result.content[0].text == "Operation aborted"
        spent = [m.usage for m in child.state.messages if isinstance(m, AssistantMessage)]
        assert tool_result.usage is not None
        assert tool_result.usage.output == sum(u.output for u in spent)
        assert tool_result.usage.input == sum(u.input for u in spent) > 0
    kinds = [e.type for e in seen]
    assert kinds[-1] == "agent_end"
    assert kinds.count("tool_execution_end") == 3
    # every update of a call came before its end
    for call in ("d0", "d1", "d2"):
        mine = [e.type for e in seen if getattr(e, "tool_call_id", None) == call]
        assert mine[-1] == "tool_execution_end"
    assert not parent.state.is_streaming
    faux.set_responses([faux_assistant_message("again")])
    assert (await parent.prompt("again")).text == "again"


async def test_cancelling_a_parent_with_running_children_ends_every_run_whole(
    autojump_clock: Any,
) -> None:
    children = Children()
    parent, _ = delegating_parent(
        sub_agent_tool("worker", "Work", children.factory), ["a", "b", "c"]
    )
    seen: list[Any] = []
    parent.subscribe(seen.append)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:

            async def cancel_when_under_way() -> None:
                await children.blocked.wait()
                scope.cancel()

            group.start_soon(cancel_when_under_way)
            await parent.prompt("go")
    assert scope.cancelled_caught
    children.check_every_transcript(None)
    check_transcript(parent.state.messages)
    assert [e.type for e in seen][-1] == "agent_end"
    results = [m for m in parent.state.messages if isinstance(m, ToolResultMessage)]
    assert len(results) == 3
    assert all(r.usage is not None and r.usage.input > 0 for r in results)
    assert not parent.state.is_streaming


def test_aborting_a_parent_with_running_children_on_asyncio() -> None:
    async def main() -> None:
        children = Children()
        parent, _ = delegating_parent(
            sub_agent_tool("worker", "Work", children.factory), ["a", "b", "c"]
        )

        async def abort_when_under_way() -> None:
            await children.blocked.wait()
            parent.abort("stop")

        async with anyio.create_task_group() as group:
            group.start_soon(abort_when_under_way)
            result = await parent.prompt("go")
        assert result.stop_reason == "aborted"
        children.check_every_transcript("stop")
        check_transcript(parent.state.messages)

    anyio.run(main, backend="asyncio")


def test_a_sub_agent_tool_needs_a_factory() -> None:
    with pytest.raises(TypeError, match="takes a function making an Agent"):
        sub_agent_tool("x", "y", "not callable")  # type: ignore[arg-type]


async def test_the_parent_reads_the_sub_agents_answer_as_its_tool_result() -> None:
    child, _ = research_agent()
    parent, faux = delegating_parent(child.as_tool("research", "Research"), ["comets"])
    await parent.prompt("go")
    assert faux.call_count == 2
    answer = next(m for m in parent.state.messages if isinstance(m, ToolResultMessage))
    assert answer.content == [TextContent(text="found: comets")]
    assert AgentToolResult  # the type the child's events are wrapped in


async def test_a_child_that_compacts_rolls_its_summary_requests_into_the_usage() -> None:
    from pi_trio.agent import Compaction, RunPolicy
    from pi_trio.agent.compaction import SUMMARIZER_SYSTEM_PROMPT

    faux = FauxProvider(models=[{"id": "small", "context_window": 1000}])

    def answer(context: Any, *_: Any) -> Any:
        if context.messages[0].content == SUMMARIZER_SYSTEM_PROMPT:
            return faux_assistant_message("summary")
        return faux_assistant_message("a long answer " * 250)

    faux.set_responses([answer] * 20)
    child = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        messages=[],
        policy=RunPolicy(compaction=Compaction(reserve_tokens=300, keep_recent_tokens=100)),
    )
    # the child's transcript already holds a long exchange: its run compacts first
    await child.prompt("earlier question")
    ends: list[Any] = []
    child.subscribe(lambda e: ends.append(e) if e.type == "compaction_end" else None)
    parent, _ = delegating_parent(child.as_tool("helper", "Help"), ["next question"])
    await parent.prompt("go")
    assert ends == []  # the template did not run; its fork did
    result = next(m for m in parent.state.messages if isinstance(m, ToolResultMessage))
    run = result.details["messages"]
    answered = sum(m.usage.output for m in run if isinstance(m, AssistantMessage))
    assert result.usage.output > answered  # the fork's summary request is in it too


async def test_a_grandchilds_events_arrive_nested_in_its_parents_progress() -> None:
    grandchild, _ = research_agent()
    middle_model = FauxProvider()
    middle_model.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("research", {"task": "deep"}, id="g1")], stop_reason="toolUse"
            ),
            faux_assistant_message("summarized the deep research"),
        ]
    )
    middle = Agent(
        model=middle_model.get_model(),
        stream_fn=middle_model,
        tools=[grandchild.as_tool("research", "Research", forward_events=True)],
    )
    parent, _ = delegating_parent(middle.as_tool("manage", "Manage", forward_events=True), ["x"])
    updates: list[Any] = []
    parent.subscribe(lambda e: updates.append(e) if e.type == "tool_execution_update" else None)
    result = await parent.prompt("go")
    assert result.ok
    nested = [
        u.partial_result.details.partial_result.details
        for u in updates
        if u.partial_result.details.type == "tool_execution_update"
    ]
    assert nested[0].type == "agent_start"
    assert nested[-1].type == "agent_end"
    assert nested[-1].messages[-1].content[0].text == "found: deep"
    # the grandchild's spend is in the middle agent's result, and so in the parent's
    answer = next(m for m in parent.state.messages if isinstance(m, ToolResultMessage))
    middle_run = answer.details["messages"]
    inner = next(m for m in middle_run if isinstance(m, ToolResultMessage))
    assert inner.usage.output > 0
    assert answer.usage.output == inner.usage.output + sum(
        m.usage.output for m in middle_run if isinstance(m, AssistantMessage)
    )


def test_a_fork_has_every_setting_of_its_agent() -> None:
    """Every keyword of ``Agent(...)`` reaches the fork, each group with every field set
    (a new keyword or group that ``fork`` forgets fails here)."""
    import inspect

    from pi_trio.agent import (
        AgentHooks,
        Compaction,
        FallbackPolicy,
        OutputSettings,
        RunLimits,
        RunPolicy,
    )
    from pi_trio.ai import RetryPolicy, StreamOptions
    from pi_trio.ai.providers import ProviderRegistry

    def hook(*args: Any) -> None:
        return None

    faux = FauxProvider()
    groups: dict[str, Any] = {
        "hooks": AgentHooks(**{name: hook for name in AgentHooks.__struct_fields__}),
        "stream_options": StreamOptions(session_id="s", temperature=0.5),
        "policy": RunPolicy(
            tool_execution="sequential",
            max_concurrent_tools=3,
            close_timeout=1.5,
            retry=RetryPolicy(max_retries=1),
            compaction=Compaction(reserve_tokens=7),
            fallback=FallbackPolicy(models=[faux.get_model()]),
            limits=RunLimits(max_requests=9, per="agent"),
            steering_mode="all",
            follow_up_mode="all",
        ),
        "output": OutputSettings(type=int, mode="tool", max_retries=4),
    }
    for name in ("hooks", "policy", "output"):  # every field away from its default
        group = groups[name]
        default = type(group)()
        unset = [f for f in group.__struct_fields__ if getattr(group, f) == getattr(default, f)]
        assert unset == [], (name, unset)
    given: dict[str, Any] = {
        "model": faux.get_model(),
        "system_prompt": "sys",
        "tools": [AgentTool(name="t", description="t", parameters={}, execute=lambda *a: "x")],
        "messages": [],
        "thinking_level": "low",
        "stream_fn": faux,
        "registry": ProviderRegistry(),
        **groups,
    }
    keywords = [
        name
        for name, p in inspect.signature(Agent.__init__).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert sorted(keywords) == sorted(given)
    agent = Agent(**given)
    agent.state.messages.append(faux_assistant_message("kept"))
    fork = agent.fork()
    for name in ("model", "thinking_level", "tools", "messages"):
        assert getattr(fork.state, name) == getattr(agent.state, name), name
    assert fork.state.messages is not agent.state.messages
    assert (fork.stream_fn, fork.registry) == (agent.stream_fn, agent.registry)
    for name in groups:
        assert getattr(fork, name) == getattr(agent, name) == groups[name], name
    # the hooks and request options are the fork's own copies (frozen groups are shared)
    assert fork.hooks is not agent.hooks
    assert fork.stream_options is not agent.stream_options
    assert fork.limit_counters is not agent.limit_counters  # the fork counts from zero


def test_answers_usage_progress_and_nesting_work_the_same_on_asyncio() -> None:
    """The behaviours above that need no virtual clock, on asyncio (abort and
    cancellation there: the test above and ``tests/test_subagent_chaos.py``)."""

    async def main() -> None:
        await test_a_sub_agent_answers_and_its_usage_rolls_up_into_the_parent()
        await test_forwarded_child_events_reach_the_parent_as_tool_progress()
        await test_a_failed_child_is_an_error_result_naming_how_it_ended()
        await test_a_grandchilds_events_arrive_nested_in_its_parents_progress()
        await test_a_child_that_compacts_rolls_its_summary_requests_into_the_usage()

    anyio.run(main, backend="asyncio")
