"""The loop's incremental tool declarations agree with ``declare_tool_changes``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pi_trio.agent import AgentContext
from pi_trio.agent._declarations import ToolDeclarations
from pi_trio.ai import SystemMessage, Tool, UserMessage
from pi_trio.ai.transcript import (
    ToolRef,
    create_initial_system_message,
    declare_tool_changes,
    get_current_tools,
)


@dataclass
class Executable:
    name: str
    description: str
    parameters: dict[str, Any]
    execute: Any = field(default=lambda *args: None)


def schema(*keys: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": "number"} for k in keys}}


def declared_context(tools: list[Any], executable: list[Any]) -> AgentContext:
    head = create_initial_system_message("prompt", tools)
    return AgentContext(messages=[head], tools=executable)


def prompt() -> list[Any]:
    return [UserMessage(content="hi", timestamp=2)]


def declarations(messages: list[Any]) -> list[Any]:
    """What each message declares (a new declaration message is stamped "now")."""
    return [
        (m.tools_added, m.tools_removed) if isinstance(m, SystemMessage) else m for m in messages
    ]


def test_a_transcript_that_declares_the_executable_tools_gets_no_new_declaration() -> None:
    tools = [Executable("a", "A", schema("x")), Executable("b", "B", schema("y"))]
    context = declared_context(tools, tools)
    pending = prompt()
    assert ToolDeclarations().declare(context, pending) is pending


def test_the_same_schema_with_keys_in_another_order_is_declared_again() -> None:
    declared = [Executable("a", "A", {"type": "object", "properties": {}})]
    reordered = [Executable("a", "A", {"properties": {}, "type": "object"})]
    context = declared_context(declared, reordered)
    pending = prompt()
    result = ToolDeclarations().declare(context, pending)
    expected = declare_tool_changes(context.messages, reordered, pending)
    assert declarations(result) == declarations(expected)
    assert isinstance(result[0], SystemMessage)
    assert [t.name for t in result[0].tools_added] == ["a"]


@pytest.mark.parametrize(
    "executable",
    [
        [Executable("a", "changed", schema("x"))],
        [Executable("a", "A", schema("x", "z"))],
        [Executable("a", "A", schema("x")), Executable("b", "B", schema())],
        [],
        [Executable("c", "A", schema("x"))],
    ],
    ids=["description", "schema", "added", "removed", "renamed"],
)
def test_any_difference_is_declared_as_declare_tool_changes_does(executable: list[Any]) -> None:
    context = declared_context([Executable("a", "A", schema("x"))], executable)
    pending = prompt()
    result = ToolDeclarations().declare(context, pending)
    expected = declare_tool_changes(context.messages, executable, pending)
    assert declarations(result) == declarations(expected)
    assert result is not pending
    assert get_current_tools([*context.messages, *result]) == [
        Tool(name=t.name, description=t.description, parameters=t.parameters) for t in executable
    ]


def test_a_malformed_tool_is_still_reported_with_its_teaching_error() -> None:
    context = declared_context([], [Executable("a", "A", {"x": object()})])
    with pytest.raises(TypeError, match="JSON"):
        ToolDeclarations().declare(context, prompt())


def declared_names(messages: list[Any]) -> list[str]:
    return [t.name for t in get_current_tools(messages)]


def test_one_instance_follows_a_growing_transcript_and_tools_changed_in_place() -> None:
    a = Executable("a", "A", schema("x"))
    b = Executable("b", "B", schema("y"))
    tools = [a]
    context = declared_context(tools, tools)
    declarations_ = ToolDeclarations()
    pending = prompt()
    assert declarations_.declare(context, pending) is pending
    context.messages.extend(pending)

    tools.append(b)  # the same list, one tool longer
    added = declarations_.declare(context, [])
    assert declarations(added) == declarations(declare_tool_changes(context.messages, tools, []))
    context.messages.extend(added)
    assert declared_names(context.messages) == ["a", "b"]
    assert declarations_.declare(context, []) == []  # in sync again

    # a system message appended to the transcript removes a tool: declared again
    removal = SystemMessage(content="", tools_removed=[ToolRef(name="b")], timestamp=3)
    context.messages.append(removal)
    again = declarations_.declare(context, [])
    context.messages.extend(again)
    assert declared_names(context.messages) == ["a", "b"]


def test_one_instance_notices_a_replaced_or_shortened_transcript() -> None:
    a = Executable("a", "A", schema("x"))
    b = Executable("b", "B", schema("y"))
    tools = [a, b]
    context = declared_context(tools, tools)
    declarations_ = ToolDeclarations()
    assert declarations_.declare(context, prompt()) == prompt()

    context.messages = [create_initial_system_message("prompt", [a])]  # replaced
    replaced = declarations_.declare(context, [])
    assert declared_names([*context.messages, *replaced]) == ["a", "b"]

    head = create_initial_system_message("prompt", [a, b])
    context.messages = [head, *prompt()]
    assert declarations_.declare(context, []) == []
    del context.messages[1:]  # the same list, shorter
    context.messages[0] = create_initial_system_message("prompt", [a])
    shortened = declarations_.declare(context, [])
    assert declared_names([*context.messages, *shortened]) == ["a", "b"]


async def test_tools_changed_by_prepare_next_turn_are_declared_in_the_next_request() -> None:
    from pi_trio.agent import AgentLoopConfig, run_agent_loop
    from pi_trio.agent.hooks import AgentLoopTurnUpdate

    from .helpers import MOCK_MODEL, Scripted, asst, call, echo_tool

    extra = Executable("extra", "added mid-run", schema("z"))

    def prepare(turn: Any) -> AgentLoopTurnUpdate:
        context = turn.context
        return AgentLoopTurnUpdate(
            context=AgentContext(messages=context.messages, tools=[*context.tools, extra])
        )

    stream = Scripted(asst([call("c1", "echo", {"value": "v"})], "toolUse"), asst("done"))
    await run_agent_loop(
        prompt(),
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(model=MOCK_MODEL, prepare_next_turn=prepare),
        lambda event: None,
        stream_fn=stream,
    )
    first, second = (c.messages for c in stream.contexts())
    assert declared_names(first) == ["echo"]
    assert declared_names(second) == ["echo", "extra"]


def _echo_tool() -> Any:
    from pi_trio.agent import AgentTool

    return AgentTool(
        name="echo",
        description="echo",
        parameters={"type": "object", "properties": {"i": {"type": "number"}}},
        execute=lambda *args: "ok",
    )


def _declared(agent: Any) -> Tool:
    (tool,) = agent.state.messages[0].tools_added
    return tool  # type: ignore[no-any-return]


def test_agents_built_from_one_tool_share_its_declaration() -> None:
    """A thousand agents from one tool list hold one copy of its schema, not a thousand;
    the copy is still not the tool's own (changing the tool never changes a transcript)."""
    from pi_trio.agent import Agent

    from .helpers import MOCK_MODEL

    tool = _echo_tool()
    first, second = (Agent(model=MOCK_MODEL, tools=[tool]) for _ in range(2))
    shared = _declared(first)
    assert _declared(second) is shared
    assert shared.parameters == tool.parameters
    assert shared.parameters is not tool.parameters
    assert shared.parameters["properties"] is not tool.parameters["properties"]

    tool.parameters["properties"]["j"] = {"type": "string"}  # the tool changed
    third = Agent(model=MOCK_MODEL, tools=[tool])
    assert _declared(third) is not shared
    assert "j" in _declared(third).parameters["properties"]
    assert "j" not in shared.parameters["properties"]  # the earlier agents' transcripts


def test_a_shared_declaration_changed_in_place_is_not_handed_out_again() -> None:
    from pi_trio.agent import Agent

    from .helpers import MOCK_MODEL

    tool = _echo_tool()
    shared = _declared(Agent(model=MOCK_MODEL, tools=[tool]))
    shared.parameters["required"] = ["i"]  # a transcript's declaration mutated
    fresh = _declared(Agent(model=MOCK_MODEL, tools=[tool]))
    assert fresh is not shared
    assert fresh.parameters == tool.parameters


def test_a_malformed_tool_still_fails_with_the_teaching_error() -> None:
    from pi_trio.agent import Agent

    from .helpers import MOCK_MODEL

    tool = _echo_tool()
    tool.parameters["bad"] = object()  # not JSON
    with pytest.raises(TypeError, match="the parameters of tool 'echo' must be JSON"):
        Agent(model=MOCK_MODEL, tools=[tool])
