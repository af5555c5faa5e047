"""``open_mcp_tools`` and ``MCPTools``: an MCP server's tools as a live sequence of
``AgentTool``s, kept in step with the server's tool list.

How a tool-list change reaches an agent: the sequence changes in place (read it when
building a context), ``attach(agent)`` keeps ``agent.state.tools`` in step (a run in
progress keeps the tools it started with, as with any change of ``state.tools``; the next
run sees the change and the transcript declares it), and ``wait_changed()`` wakes when it
happened. A server tool never replaces or shadows a tool the agent has of its own:
``attach`` refuses a name the agent already uses (``MCPToolConflictError``), and a later
listing that brings one is not given to that agent (a warning on the ``pi_trio.mcp``
logger); when the server drops a tool, only the server's tool leaves the agent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, overload

import anyio
from mcp.client.stdio import StdioServerParameters
from mcp_types import Tool as MCPTool

from ..agent import Agent, AgentTool, AgentToolResult
from ..ai import PiError
from ._convert import OfferedTool, ToolFilter, offered_tools, tool_fingerprint
from ._session import ServerSpec, Session
from ._stdio import stdio_transport

__all__ = ["CONNECT_TIMEOUT", "MCPToolConflictError", "MCPTools", "open_mcp_tools"]

_logger = logging.getLogger("pi_trio.mcp")


class MCPToolConflictError(PiError, ValueError):
    """``attach`` found the agent using a name one of the server's tools has: two tools
    of one name would be declared to the model. The message names them and the fix."""


CONNECT_TIMEOUT: Final = 30.0
"""Seconds allowed for connecting and the first ``tools/list``; a server that has not
answered by then is reported with ``MCPConnectionError`` instead of hanging the caller."""


class MCPTools(Sequence[AgentTool]):
    """The tools of one MCP server, as a live sequence of ``AgentTool``s.

    The sequence changes in place when the server announces a tool-list change; read it
    (``list(tools)``) when building a context, or ``attach`` an ``Agent`` to have its
    ``state.tools`` kept in step. Made by ``open_mcp_tools``; calls work inside its block.
    """

    def __init__(
        self,
        label: str,
        *,
        named: bool,
        prefix: str,
        tool_filter: ToolFilter,
        timeout: float | None,
    ) -> None:
        self._prefix = prefix
        self._filter = tool_filter
        self._timeout = timeout
        self._tools: list[AgentTool] = []
        self._by_fingerprint: dict[bytes, AgentTool] = {}
        self._agents: dict[Agent, list[AgentTool]] = {}  # each one's tools from us
        self._changed = anyio.Event()  # set when the list changes or the session ends
        self._session = Session(
            label, named=named, on_listing=self._set_tools, on_end=self._announce_change
        )

    # ------------------------------------------------------------------ sequence

    @overload
    def __getitem__(self, index: int) -> AgentTool: ...

    @overload
    def __getitem__(self, index: slice) -> list[AgentTool]: ...

    def __getitem__(self, index: int | slice) -> AgentTool | list[AgentTool]:
        return self._tools[index]

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(list(self._tools))

    def __repr__(self) -> str:
        names = [t.name for t in self._tools]
        state = "connected" if self.connected else "disconnected"
        return f"<MCPTools server={self.server!r} {state} tools={names!r}>"

    # ------------------------------------------------------------------ public

    @property
    def server(self) -> str:
        """The server's name: the ``name`` given, else the name the server reports,
        else the URL or command line it was opened with."""
        return self._session.label

    @property
    def connected(self) -> bool:
        """False once the block ended or the server went away; calls then give an
        error result saying which."""
        return self._session.failure is None

    def attach(self, agent: Agent) -> Callable[[], None]:
        """Keep this server's tools in ``agent.state.tools``: added now (the agent's
        other tools are kept), replaced on each tool-list change, removed when the block
        ends. Returns the function that detaches (the tools then stay as they are).
        ``MCPToolConflictError`` when the agent has a tool of its own by the name of one
        of the server's (nothing is changed then)."""
        if agent not in self._agents:
            taken = _own_names(agent, [])
            clashes = [t.name for t in self._tools if t.name in taken]
            if clashes:
                raise MCPToolConflictError(
                    f"MCP server {self.server!r} has tools named like tools the agent "
                    f"has of its own: {', '.join(map(repr, clashes))}; the model would "
                    "see two tools of one name. Open the server with a prefix "
                    "(open_mcp_tools(..., prefix='name_')) or leave them out "
                    "(deny=[...])"
                )
            self._agents[agent] = _replace_tools(agent, [], self._tools, self.server)

        def detach() -> None:
            self._agents.pop(agent, None)

        return detach

    async def wait_changed(self) -> None:
        """Wait until the tool list changed (the new tools in place, attached agents
        updated) or the session ended."""
        await self._changed.wait()

    # ------------------------------------------------------------------ internals

    def _announce_change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _set_tools(self, listed: list[MCPTool]) -> None:
        old = self._tools
        known = self._by_fingerprint
        tools: list[AgentTool] = []
        by_fingerprint: dict[bytes, AgentTool] = {}
        for offered in offered_tools(self.server, listed, self._prefix, self._filter):
            key = offered.name.encode() + b"\0" + tool_fingerprint(offered.spec)
            tool = known.get(key) or self._agent_tool(offered)
            by_fingerprint[key] = tool
            tools.append(tool)
        self._tools = tools
        self._by_fingerprint = by_fingerprint
        for agent, given in self._agents.items():
            self._agents[agent] = _replace_tools(agent, given, tools, self.server)
        if [id(t) for t in tools] != [id(t) for t in old]:
            self._announce_change()

    def _agent_tool(self, offered: OfferedTool) -> AgentTool:
        spec = offered.spec
        name = spec.name  # the server's name for it
        call = self._session.call

        async def execute(
            tool_call_id: str, params: Any, signal: Any, on_update: Any
        ) -> AgentToolResult:
            return await call(name, params, on_update)

        return AgentTool(
            name=offered.name,
            label=spec.title or name,
            description=spec.description or spec.title or "",
            parameters=dict(spec.input_schema),
            execute=execute,
            timeout=self._timeout,
        )

    def _close(self) -> None:
        self._session.stop("was closed", "its open_mcp_tools block ended")
        for agent, given in self._agents.items():
            _replace_tools(agent, given, [], self.server)
        self._agents.clear()


def _is_ours(tool: Any, old: Sequence[AgentTool], ids: set[int]) -> bool:
    """Whether ``tool`` is one of ``old`` or a stand-in of one: ``pi_trio.otel`` puts a
    traced shallow copy in its place (the same name and the same ``parameters`` object;
    an agent's own tool of that name has parameters of its own)."""
    if id(tool) in ids:
        return True
    name, parameters = getattr(tool, "name", None), getattr(tool, "parameters", None)
    return any(t.name == name and t.parameters is parameters for t in old)


def _own_names(agent: Agent, old: Sequence[AgentTool]) -> set[str]:
    """The names of the agent's tools that are not ours."""
    ids = {id(t) for t in old}
    return {t.name for t in agent.state.tools if not _is_ours(t, old, ids)}


def _replace_tools(
    agent: Agent, old: Sequence[AgentTool], new: Sequence[AgentTool], server: str
) -> list[AgentTool]:
    """``new`` in place of ``old`` (and their stand-ins) in the agent's tools; a tool of
    ``new`` named like one of the agent's own is left out, with a warning. Returns the
    tools of ``new`` given to the agent."""
    ids = {id(t) for t in old} | {id(t) for t in new}
    kept = [t for t in agent.state.tools if not _is_ours(t, [*old, *new], ids)]
    own = {getattr(t, "name", None) for t in kept}
    given = [t for t in new if t.name not in own]
    for tool in new:
        if tool.name in own:
            _logger.warning(
                "MCP server %r now lists a tool named %r, like a tool the agent has of "
                "its own; it is not given to that agent (open the server with a prefix)",
                server,
                tool.name,
            )
    agent.state.tools = kept + given
    return given


def _default_label(server: ServerSpec) -> str:
    if isinstance(server, str):
        return server
    if isinstance(server, StdioServerParameters):
        return " ".join([server.command, *server.args])
    return type(server).__name__


@asynccontextmanager
async def open_mcp_tools(
    server: ServerSpec,
    *,
    name: str | None = None,
    prefix: str = "",
    allow: Collection[str] | None = None,
    deny: Collection[str] | None = None,
    call_timeout: float | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    mode: str = "auto",
) -> AsyncIterator[MCPTools]:
    """Connect to an MCP server and offer its tools as ``AgentTool``s for the block.

    ``server``: a streamable HTTP URL (``"http://127.0.0.1:8000/mcp"``), a
    ``StdioServerParameters`` (the server runs as a child process), or any MCP SDK
    ``Transport`` (e.g. ``streamable_http_client(url, http_client=...)`` for headers).
    ``name`` labels the server in error texts. ``prefix`` goes before every tool name the
    model sees; ``allow`` / ``deny`` pick tools by the server's names. ``call_timeout``
    (seconds) bounds each call like ``AgentTool.timeout``. ``mode`` is the SDK
    ``Client``'s protocol negotiation (``"auto"``, ``"legacy"`` or a version).

    Yields a live ``MCPTools`` sequence; raises ``MCPConnectionError`` when the server
    cannot be reached or listed within ``connect_timeout`` seconds. When the block ends,
    attached agents lose the tools and the session is closed (a stdio server stopped).
    Aborts, a server that goes away and tool-list changes: see ``pi_trio.mcp``.
    """
    tools = MCPTools(
        name or _default_label(server),
        named=name is not None,
        prefix=prefix,
        tool_filter=ToolFilter(allow, deny),
        timeout=call_timeout,
    )
    if isinstance(server, StdioServerParameters):
        # linear-time reading of large results, bounded messages (``_stdio``)
        server = stdio_transport(server, tools._session.note_fault)
    try:
        async with anyio.create_task_group() as group:
            await group.start(tools._session.run, server, mode, connect_timeout)
            try:
                yield tools
            finally:
                tools._close()
    except BaseExceptionGroup as exc:
        # The session task raises only before it started (out of ``start``): a group
        # here holds the block's own exception, which trio wraps even when alone.
        if len(exc.exceptions) == 1:
            raise exc.exceptions[0] from exc.exceptions[0].__cause__
        raise
