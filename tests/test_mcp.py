"""MCP tools against a real MCP server written with the SDK (``tests/mcp_server.py``),
started as a child process over stdio and over streamable HTTP on loopback, on trio and
on asyncio. Every scenario runs under a deadline; the model is the faux provider."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pi_trio.agent import Agent
from pi_trio.ai import SystemMessage, ToolResultMessage
from pi_trio.mcp import MCPConnectionError, MCPTools, StdioServerParameters, open_mcp_tools
from pi_trio.otel import instrument
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .helpers import MOCK_MODEL

SERVER = Path(__file__).resolve().parent / "mcp_server.py"
BACKENDS = ["trio", "asyncio"]
DEADLINE = 30  # seconds for a whole scenario: a hang fails the test instead of the suite


def stdio_server(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVER), *args])


@contextmanager
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The fixture server on streamable HTTP, in a child process; yields it and its URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield process, url
    finally:
        process.kill()
        process.wait()
        process.stdout.close()


def run(backend: str, scenario: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await scenario()

    anyio.run(bounded, backend=backend)


def calls(*batches: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Faux responses: each batch of tool calls, then a closing text."""
    return [
        faux_assistant_message(
            [faux_tool_call(name, args, id=f"c{i}.{j}") for j, (name, args) in enumerate(b)],
            stop_reason="toolUse",
        )
        for i, b in enumerate(batches)
    ] + [faux_assistant_message("done")]


def results(agent: Agent) -> dict[str, ToolResultMessage]:
    return {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}


def text(message: ToolResultMessage) -> str:
    return "".join(getattr(block, "text", "") for block in message.content)


async def wait_for_tool(tools: MCPTools, name: str) -> None:
    """The server's change reaches us on its own stream, maybe after the call that made
    it returned: wait for it."""
    while name not in [t.name for t in tools]:
        await tools.wait_changed()


def aborting_on_progress(agent: Agent) -> None:
    def listener(event: Any) -> None:
        if event.type == "tool_execution_update":  # the server is inside the call
            agent.abort()

    agent.subscribe(listener)


# --------------------------------------------------------------------------- stdio


@pytest.mark.parametrize("backend", BACKENDS)
def test_stdio_tools_in_an_agent_with_an_abort_a_list_change_and_a_server_that_dies(
    backend: str,
) -> None:
    async def scenario() -> None:
        faux = FauxProvider()
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        ends: dict[str, Any] = {}
        agent.subscribe(
            lambda e: (
                ends.update({e.tool_call_id: e.result}) if e.type == "tool_execution_end" else None
            )
        )
        async with open_mcp_tools(stdio_server(), prefix="fx_", deny=["secret"]) as tools:
            assert tools.server == "fixture"
            assert [t.name for t in tools] == [
                "fx_add",
                "fx_echo",
                "fx_refuse",
                "fx_pixel",
                "fx_kinds",
                "fx_only_structured",
                "fx_block",
                "fx_was_block_cancelled",
                "fx_die",
                "fx_grow",
            ]
            add = tools[0]
            assert add.parameters["properties"].keys() == {"a", "b"}
            assert add.description == "Add two integers."
            assert tools[1].label == "Echo"
            tools.attach(agent)
            assert agent.state.tools == list(tools)

            faux.set_responses(
                calls(
                    [
                        ("fx_add", {"a": 2, "b": 3}),
                        ("fx_pixel", {}),
                        ("fx_refuse", {"reason": "no"}),
                        ("fx_kinds", {}),
                        ("fx_only_structured", {}),
                    ],
                    [("fx_block", {})],
                )
            )
            aborting_on_progress(agent)  # aborts once the server reports progress in block
            await agent.prompt("go")
            got = results(agent)
            assert text(got["c0.0"]) == '{\n  "total": 5\n}'
            assert ends["c0.0"].structured_content == {"total": 5}
            assert got["c0.0"].is_error is False
            assert got["c0.1"].content[0].type == "image"
            assert got["c0.1"].content[0].mime_type == "image/png"
            assert got["c0.2"].is_error is True
            assert text(got["c0.2"]) == "Error executing tool refuse: refused: no"
            assert [block.text for block in got["c0.3"].content] == [
                "[audio: audio/wav, 3 bytes]",
                "[resource link notes <file:///notes.txt>: the notes]",
                "inline",
                "[resource <file:///b.bin>: application/zip, 4 bytes]",
            ]
            assert text(got["c0.4"]) == '{"n":1}'
            assert ends["c0.4"].structured_content == {"n": 1}
            assert got["c1.0"].is_error is True
            assert text(got["c1.0"]) == "Operation aborted"

            # the session stays usable, the server saw the call cancelled, and the tool
            # list the server changes reaches the agent
            faux.set_responses(
                calls(
                    [("fx_was_block_cancelled", {}), ("fx_echo", {"text": "hi"})], [("fx_grow", {})]
                )
            )
            await agent.prompt("again")
            got = results(agent)
            assert [text(got[i]) for i in ("c0.0", "c0.1", "c1.0")] == ["cancelled", "hi", "grown"]
            kept = tools[0]
            await wait_for_tool(tools, "fx_double")
            assert "fx_echo" not in [t.name for t in tools]
            assert tools[0] is kept  # an unchanged tool keeps its AgentTool
            assert agent.state.tools == list(tools)

            faux.set_responses(calls([("fx_double", {"x": 21})]))
            await agent.prompt("double 21")
            assert text(results(agent)["c0.0"]) == "42"
            declared = [m for m in agent.state.messages if isinstance(m, SystemMessage)][-1]
            assert [t.name for t in declared.tools_added or []] == ["fx_double"]
            assert [t.name for t in declared.tools_removed or []] == ["fx_echo"]
            assert tools.connected

            # a server that dies mid-call: error results, not a hung run
            faux.set_responses(calls([("fx_die", {})], [("fx_add", {"a": 1, "b": 1})]))
            await agent.prompt("die")
            got = results(agent)
            assert got["c0.0"].is_error is True
            assert text(got["c0.0"]) == (
                "MCP server 'fixture' went away during the call to 'die' (it closed the connection)"
            )
            assert got["c1.0"].is_error is True
            assert text(got["c1.0"]) == (
                "MCP server 'fixture' went away (it closed the connection); "
                "its tool 'add' cannot run"
            )
            assert agent.state.messages[-1].stop_reason == "stop"
            assert not tools.connected

        assert agent.state.tools == []  # the block's end takes the tools away

    run(backend, scenario)


def test_a_2025_era_session_takes_list_changes_from_notifications() -> None:
    """2026-era servers announce a change on a subscriptions/listen stream (above);
    2025-era sessions get an unprompted notifications/tools/list_changed."""

    grown: list[Any] = []

    async def body() -> None:
        async with open_mcp_tools(
            stdio_server(), mode="legacy", allow=["echo", "grow", "double"]
        ) as tools:
            assert [t.name for t in tools] == ["echo", "grow"]
            grow = tools[1]
            grown.append(grow)
            detach = tools.attach(agent := Agent(model=MOCK_MODEL, tools=[]))
            detach()
            assert (await grow.execute("id", {}, None, None)).content[0].text == "grown"
            await wait_for_tool(tools, "double")
            assert [t.name for t in tools] == ["grow", "double"]
            assert [t.name for t in agent.state.tools] == ["echo", "grow"]  # detached
            raise KeyError("the block's own exception propagates as itself")

    async def scenario() -> None:
        with pytest.raises(KeyError, match="the block's own"):
            await body()
        late = await grown[0].execute("id", {}, None, None)
        assert late.is_error
        assert late.content[0].text == (
            "MCP server 'fixture' was closed (its open_mcp_tools block ended); "
            "its tool 'grow' cannot run"
        )

    run("trio", scenario)


def test_call_timeout_bounds_each_call_and_cancels_it_on_the_server() -> None:
    async def scenario() -> None:
        faux = FauxProvider()
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        async with open_mcp_tools(
            stdio_server(), allow=["block", "was_block_cancelled"], call_timeout=0.5
        ) as tools:
            assert [t.timeout for t in tools] == [0.5, 0.5]
            tools.attach(agent)
            faux.set_responses(calls([("block", {})], [("was_block_cancelled", {})]))
            await agent.prompt("go")
            got = results(agent)
            assert got["c0.0"].is_error is True
            assert text(got["c0.0"]) == 'Tool "block" timed out after 0.5s'
            assert text(got["c1.0"]) == "cancelled"  # the server saw the call cancelled
            assert tools.connected

    run("trio", scenario)


def test_an_instrumented_agent_keeps_one_tool_per_name_through_a_list_change() -> None:
    """pi_trio.otel puts traced copies of an agent's tools in their place when a run
    ends; a tool-list change replaces those copies too, instead of adding a second tool
    of the same name, and the block's end takes them away."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))

    async def scenario() -> None:
        faux = FauxProvider()
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        instrument(agent, tracer_provider=provider, meter_provider=MeterProvider())
        async with open_mcp_tools(stdio_server(), allow=["echo", "grow", "double"]) as tools:
            tools.attach(agent)
            faux.set_responses(calls([("echo", {"text": "hi"})]))
            await agent.prompt("echo")
            assert [t.name for t in agent.state.tools] == ["echo", "grow"]
            assert agent.state.tools[1] is not tools[1]  # the traced copy stands in

            faux.set_responses(calls([("grow", {})]))
            await agent.prompt("grow")
            await wait_for_tool(tools, "double")
            assert [t.name for t in agent.state.tools] == ["grow", "double"]

            faux.set_responses(calls([("double", {"x": 2})]))
            await agent.prompt("double")
            assert text(results(agent)["c0.0"]) == "4"
        assert agent.state.tools == []

    run("trio", scenario)
    called = [s.name for s in spans.get_finished_spans() if s.name.startswith("execute_tool")]
    assert called == ["execute_tool echo", "execute_tool grow", "execute_tool double"]


# --------------------------------------------------------------------------- HTTP


@pytest.mark.parametrize("backend", BACKENDS)
def test_http_tools_abort_a_list_change_and_a_server_that_goes_away(backend: str) -> None:
    async def scenario() -> None:
        with http_server() as (process, url):
            async with open_mcp_tools(url, name="web") as tools:
                assert tools.server == "web"
                faux = FauxProvider()
                faux.set_responses(calls([("add", {"a": 20, "b": 22})], [("block", {})]))
                agent = Agent(model=faux.get_model(), stream_fn=faux)
                tools.attach(agent)
                aborting_on_progress(agent)
                await agent.prompt("go")
                got = results(agent)
                assert text(got["c0.0"]) == '{\n  "total": 42\n}'
                assert text(got["c1.0"]) == "Operation aborted"

                faux.set_responses(calls([("was_block_cancelled", {}), ("grow", {})]))
                await agent.prompt("again")
                assert text(results(agent)["c0.0"]) == "cancelled"
                await wait_for_tool(tools, "double")
                assert "double" in [t.name for t in agent.state.tools]
                assert "echo" not in [t.name for t in agent.state.tools]

                faux.set_responses(calls([("die", {})], [("add", {"a": 1, "b": 1})]))
                await agent.prompt("die")
                got = results(agent)
                # the HTTP transport fails (2026 era) or the session sees its stream end
                # (2025 era); either way the text names the server, the call and the cause
                cause = text(got["c0.0"]).removeprefix(
                    "MCP server 'web' went away during the call to 'die' ("
                )
                assert cause in {
                    "it closed the connection)",
                    "RemoteProtocolError: Server disconnected without sending a response)",
                }
                assert got["c1.0"].is_error
                assert text(got["c1.0"]) == (
                    f"MCP server 'web' went away ({cause}; its tool 'add' cannot run"
                )
                assert not tools.connected
            assert process.wait() == 3

    run(backend, scenario)


# --------------------------------------------------------------------------- connecting


def test_a_server_that_cannot_be_reached_is_an_mcp_connection_error() -> None:
    async def scenario() -> None:
        gone = StdioServerParameters(command=sys.executable, args=["-c", "pass"])
        with pytest.raises(
            MCPConnectionError, match=r"^could not connect to MCP server '.*-c pass'"
        ):
            async with open_mcp_tools(gone):
                pass

        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        await listener.aclose()  # nothing listens on this port any more
        url = f"http://127.0.0.1:{port}/mcp"
        with pytest.raises(MCPConnectionError, match=r"could not connect to MCP server 'http"):
            async with open_mcp_tools(url):
                pass

        silent = StdioServerParameters(
            command=sys.executable, args=["-c", "import sys; sys.stdin.read()"]
        )
        with pytest.raises(
            MCPConnectionError,
            match=r"^MCP server 'silent' did not answer within 0.2 s \(connect_timeout\)",
        ):
            async with open_mcp_tools(silent, name="silent", connect_timeout=0.2):
                pass

    run("trio", scenario)


def test_filters_name_tools_in_a_collection_not_a_string() -> None:
    async def scenario() -> None:
        with pytest.raises(TypeError, match=r"write allow=\['echo'\]"):
            async with open_mcp_tools(stdio_server(), allow="echo"):
                pass

    run("trio", scenario)


def test_importing_pi_trio_does_not_import_mcp() -> None:
    code = (
        "import sys, pi_trio, pi_trio.ai, pi_trio.agent, pi_trio.testing, pi_trio.session\n"
        "assert 'mcp' not in sys.modules, sorted(m for m in sys.modules if 'mcp' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
