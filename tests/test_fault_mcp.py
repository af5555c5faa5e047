"""The fault suite, MCP: real MCP servers (child processes over stdio) that list tool
names no provider accepts, a tool named like the agent's own, a task-only tool, a flood
of tools, a result far too large and a ``text/plain`` blob; and a run that starts right
after a call changed the server's tools."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import TextContent
from pi_trio.mcp import MCPToolConflictError, StdioServerParameters, _stdio, open_mcp_tools
from pi_trio.mcp._convert import MAX_LISTED_TOOLS, MAX_RESULT_BLOCKS, MAX_RESULT_TEXT_CHARS
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

HERE = Path(__file__).resolve().parent
HOSTILE = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_hostile_server.py")])
FIXTURE = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_server.py")])
DEADLINE = 60
OFFERED = ["echo", "drop", "flood", "blob", "big", "dotted_name", "ok-tool"]


def run(scenario: Any) -> None:
    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await scenario()

    anyio.run(bounded, backend="trio")


def local(name: str) -> AgentTool:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text=f"local {name}")])

    return AgentTool(name=name, label=name, description="", parameters={}, execute=execute)


def names(agent: Agent) -> list[str]:
    return [t.name for t in agent.state.tools]


def test_only_tools_with_names_every_provider_takes_are_offered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        async with open_mcp_tools(HOSTILE, mode="legacy") as tools:
            assert [t.name for t in tools] == OFFERED
            echo = tools[0]
            dotted = tools[OFFERED.index("dotted_name")]
            result = await dotted.execute("c1", {}, None, None)  # called by the server's name
            assert result.content[0].text == "server dotted.name"
            assert echo.name == "echo"

    with caplog.at_level(logging.WARNING, logger="pi_trio.mcp"):
        run(scenario)
    skipped = [r.getMessage() for r in caplog.records if r.name == "pi_trio.mcp"]
    assert len(skipped) == 7, skipped
    assert all(m.startswith("MCP server 'hostile' lists the tool ") for m in skipped)
    for shown in ["'bad\\r\\nname'", "'esc\\x1b[31mred'", "'' ", "'9starts-with-a-digit'"]:
        assert any(shown.strip() in m and "no provider takes the name" in m for m in skipped)
    assert any("'xxxx" in m and len(m) < 400 for m in skipped)  # 64 KiB: not repeated whole
    assert any("another of its tools is offered as 'ok-tool'" in m for m in skipped)
    assert any("'tasks'" in m and "runs only as a task" in m for m in skipped)


def test_a_server_tool_named_like_the_agents_own_is_refused_clearly() -> None:
    async def scenario() -> None:
        faux = FauxProvider()
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[local("echo")])
        async with open_mcp_tools(HOSTILE, mode="legacy") as tools:
            with pytest.raises(MCPToolConflictError) as info:
                tools.attach(agent)
            assert names(agent) == ["echo"]  # nothing changed
            assert (
                "MCP server 'hostile' has tools named like tools the agent has of its own: 'echo'"
                in str(info.value)
            )
            assert "prefix" in str(info.value)
        async with open_mcp_tools(HOSTILE, mode="legacy", prefix="srv_") as tools:
            tools.attach(agent)
            # with the prefix, a name that starts with a digit is one providers take
            prefixed = [*OFFERED, "9starts-with-a-digit"]
            assert names(agent) == ["echo", *(f"srv_{n}" for n in prefixed)]

    run(scenario)


def test_a_server_dropping_its_tool_leaves_the_agents_own_of_that_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        faux = FauxProvider()
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        async with open_mcp_tools(HOSTILE, mode="legacy") as tools:
            tools.attach(agent)
            mine = local("echo")
            agent.state.tools = [*agent.state.tools, mine, local("many_3")]
            drop = tools[OFFERED.index("drop")]
            assert (await drop.execute("c1", {}, None, None)).content[0].text == "dropped echo"
            assert "echo" not in [t.name for t in tools]
            assert [t for t in agent.state.tools if t.name == "echo"] == [mine]
            # a later listing bringing a name the agent has of its own: not given to it
            flood = tools[[t.name for t in tools].index("flood")]
            await flood.execute("c2", {}, None, None)
            assert len(tools) == MAX_LISTED_TOOLS
            assert [t.name for t in agent.state.tools].count("many_3") == 1
            assert next(t for t in agent.state.tools if t.name == "many_3").label == "many_3"
        assert names(agent) == ["echo", "many_3"]  # the block ended: only the server's left

    with caplog.at_level(logging.WARNING, logger="pi_trio.mcp"):
        run(scenario)
    messages = [r.getMessage() for r in caplog.records]
    assert any("now lists a tool named 'many_3', like a tool the agent has" in m for m in messages)
    assert any(f"more than {MAX_LISTED_TOOLS} tools (MAX_LISTED_TOOLS)" in m for m in messages)


def test_results_are_bounded_and_a_text_blob_reaches_the_model_as_text() -> None:
    async def scenario() -> None:
        async with open_mcp_tools(HOSTILE, mode="legacy") as tools:
            by_name = {t.name: t for t in tools}
            blob = await by_name["blob"].execute("c1", {}, None, None)
            assert [b.text for b in blob.content] == ["plain text, ü included\n"]
            big = await by_name["big"].execute("c2", {}, None, None)
            texts = [b.text for b in big.content]
            cut = 3 * 1024 * 1024 - MAX_RESULT_TEXT_CHARS
            assert texts[0] == "y" * MAX_RESULT_TEXT_CHARS + (
                f"\n[{cut} more characters cut: MAX_RESULT_TEXT_CHARS]"
            )
            assert len(texts) == MAX_RESULT_BLOCKS + 1
            assert texts[-1] == (
                f"[{1501 - MAX_RESULT_BLOCKS} more content blocks left out: MAX_RESULT_BLOCKS]"
            )

    run(scenario)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_run_started_right_after_a_tool_list_change_gets_the_new_tools(mode: str) -> None:
    # ``grow`` adds ``double`` and removes ``echo``, announcing it before its result:
    # through a 2026-era subscriptions/listen stream (auto) or a notification (legacy).
    sent: list[list[str]] = []

    def remember(context: Any, options: Any, state: Any, model: Any) -> Any:
        return faux_assistant_message("ok")

    async def scenario() -> None:
        faux = FauxProvider()
        faux.set_responses(
            [
                faux_assistant_message([faux_tool_call("grow", {})], stop_reason="toolUse"),
                faux_assistant_message("grown"),
                remember,
            ]
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux)

        def on_start(event: Any) -> None:
            if event.type == "agent_start":
                sent.append(sorted(t.name for t in agent.state.tools))

        agent.subscribe(on_start)
        async with open_mcp_tools(FIXTURE, mode=mode) as tools:
            tools.attach(agent)  # at once: the block opens once the server's changes reach us
            await agent.prompt("grow")
            await agent.prompt("and now?")  # no waiting for the change in between

    run(scenario)
    assert "double" not in sent[0]
    assert "double" in sent[1], sent[1]
    assert "echo" not in sent[1]


# --------------------------------------------------------------------------- stdio


def test_a_long_line_is_joined_once_however_many_chunks_it_comes_in() -> None:
    splitter = _stdio.LineSplitter(limit=64 * 1024 * 1024)
    line = b"x" * (10 * 1024 * 1024)
    data = b'{"a":1}\n' + line + b"\n\n" + b'{"b":2}\n'
    lines = []
    for start in range(0, len(data), 65536):
        lines += splitter.feed(data[start : start + 65536])
    assert lines == [b'{"a":1}', line, b"", b'{"b":2}']
    # each byte copied once: the SDK's reader copied the buffered part with every chunk
    assert splitter.copied == len(data) - 4
    small = _stdio.LineSplitter(limit=100)
    small.feed(b"y" * 60)
    with pytest.raises(_stdio.MessageTooLarge, match=r"more than 100 bytes \(MAX_MESSAGE_BYTES\)"):
        small.feed(b"y" * 60)


def test_a_message_past_the_limit_ends_the_session_naming_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_stdio, "MAX_MESSAGE_BYTES", 1024 * 1024)

    async def scenario() -> None:
        async with open_mcp_tools(HOSTILE, mode="legacy") as tools:
            by_name = {t.name: t for t in tools}
            result = await by_name["big"].execute("c1", {}, None, None)
            assert result.is_error
            assert result.content[0].text == (
                "MCP server 'hostile' went away during the call to 'big' (it sent a message "
                "of more than 1048576 bytes (MAX_MESSAGE_BYTES))"
            )
            assert not tools.connected

    run(scenario)
