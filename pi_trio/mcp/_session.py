"""The MCP client session in the task that owns it, and the calls forwarded to it.

An MCP client session opens task groups and cancel scopes when it is entered, and those
belong to the task that entered them (trio enforces it; so does anyio on asyncio). So one
task enters, serves and closes the session (``Session.run``, started in the
``open_mcp_tools`` block's task group); tool calls from agent runs, which happen in the
runs' own tasks, are forwarded to it (``Session.call``): each runs as a child task of the
session while the calling tool waits for its result.

- An abort (or a tool timeout) cancels the waiting tool at once; the forwarded call is
  cancelled too, which sends the server ``notifications/cancelled``. The session stays
  usable.
- A server that goes away (its process exits, its HTTP endpoint fails) gives every
  waiting and later call an error result naming the server and the cause; nothing hangs,
  and nothing is raised into agent runs or the ``open_mcp_tools`` block.
- A tool-list change (``notifications/tools/list_changed``, sent unprompted on 2025-era
  connections and through a ``subscriptions/listen`` stream on 2026-era ones) makes the
  session list the tools again and hand the listing to ``on_listing``. A change announced
  while a call ran is listed before that call's result is handed back, so the run that
  starts once the call returns gets the new tools.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
from mcp import Client, MCPError
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import CONNECTION_CLOSED, Implementation, ToolListChangedNotification
from mcp_types import Tool as MCPTool

from .. import __version__
from ..agent import AgentToolResult
from ..ai import PiError, TextContent
from ._convert import error_result, to_agent_result

__all__ = ["CLOSE_TIMEOUT", "MCPConnectionError", "ServerSpec", "Session"]

CLOSE_TIMEOUT: Final = 5.0
"""Seconds allowed for closing the session when the block ends (the stdio transport's own
shutdown gives the server 2 s to exit before it is killed)."""

LIST_PAGE_LIMIT: Final = 100
"""``tools/list`` pages followed at most: a server whose pagination never ends cannot
keep the session listing forever."""

CHANGE_SETTLE_CHECKPOINTS: Final = 3
"""Checkpoints a finished call gives the session's other tasks (the ``subscriptions/listen``
stream's reader) to take in a change the server announced before the call's result."""

LISTEN_RETRY_LIMIT: Final = 3
"""Times a dropped ``subscriptions/listen`` stream is opened again in a row before the
session stops watching for tool-list changes."""

ServerSpec = str | StdioServerParameters | Transport
"""A streamable HTTP URL, the command line of a stdio server, or any MCP ``Transport``."""


class MCPConnectionError(PiError, ConnectionError):
    """``open_mcp_tools`` could not connect to the MCP server or list its tools; the
    message names the server and the cause (chained as ``__cause__``)."""


class _Call:
    """One forwarded ``tools/call``: resolved by the session, awaited by the agent's tool."""

    __slots__ = ("arguments", "done", "name", "on_update", "result", "scope")

    def __init__(self, name: str, arguments: dict[str, Any], on_update: Any) -> None:
        self.name = name
        self.arguments = arguments
        self.on_update = on_update
        self.result: AgentToolResult | None = None
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()

    def resolve(self, result: AgentToolResult) -> None:
        if self.result is None:
            self.result = result
            self.done.set()


class Session:
    """One connection to an MCP server. ``on_listing(tools)`` receives each complete
    ``tools/list`` (the first before ``run`` reports started); ``on_end()`` is called
    once the session can no longer run calls."""

    def __init__(
        self,
        label: str,
        *,
        named: bool,
        on_listing: Callable[[list[MCPTool]], None],
        on_end: Callable[[], None],
    ) -> None:
        self.label = label
        self._named = named  # the caller named the server: keep that label
        self._on_listing = on_listing
        self._on_end = on_end
        self._client: Client | None = None
        self._calls: anyio.abc.TaskGroup | None = None  # the session's, while it serves
        self._serve_scope = anyio.CancelScope()
        self._pending: set[_Call] = set()
        # why calls cannot run any more: what happened to the server, and the cause
        self.failure: tuple[str, str] | None = None
        self._list_changed = anyio.Event()  # the server announced a change
        self._listing = anyio.Lock()  # one tools/list at a time
        self._listening = anyio.Event()  # the listen stream is up, or there is none
        self._fault: str | None = None  # how the server broke the transport's rules

    # ------------------------------------------------------------------ the owning task

    async def run(
        self,
        server: ServerSpec,
        mode: str,
        connect_timeout: float,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Connect, list the tools, report started, then serve calls until ``stop``."""
        client = Client(
            server,
            mode=mode,
            message_handler=self._on_message,
            client_info=Implementation(name="pi-trio", version=__version__),
            cache=None,  # the listing is kept by the caller, refreshed on every change
        )
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + connect_timeout) as limit:
                async with client:
                    info = client.server_info
                    if info is not None and info.name and not self._named:
                        self.label = info.name
                    self._on_listing(await self._list_tools(client))
                    self._client = client

                    def ready() -> None:
                        nonlocal started
                        limit.deadline = math.inf
                        started = True
                        task_status.started()

                    await self._serve(client, ready)
                    limit.deadline = anyio.current_time() + CLOSE_TIMEOUT
        except Exception as exc:
            if not started:
                raise MCPConnectionError(
                    f"could not connect to MCP server {self.label!r}: {describe(exc)}"
                ) from exc
            self._end("went away", describe(exc))
        finally:
            self._end("went away", "the session ended")
        if not started:
            raise MCPConnectionError(
                f"MCP server {self.label!r} did not answer within {connect_timeout:g} s "
                "(connect_timeout); check that it speaks MCP on this transport"
            )

    def note_fault(self, cause: str) -> None:
        """The transport ends the connection because of ``cause`` (a message too large):
        the calls it fails name it."""
        self._fault = cause

    def stop(self, what: str, cause: str) -> None:
        """No new calls from now on (they get "MCP server 'x' <what> (<cause>)"); the
        session task unwinds."""
        if self.failure is None:
            self.failure = (what, cause)
        self._serve_scope.cancel()

    async def _serve(self, client: Client, ready: Callable[[], None]) -> None:
        """Serve calls; ``ready()`` once a ``subscriptions/listen`` stream is acknowledged
        (or the server has none): a change made from then on is seen, so the block does
        not open on a session that would miss one."""
        with self._serve_scope:
            try:
                async with anyio.create_task_group() as calls:
                    self._calls = calls
                    calls.start_soon(self._watch_tool_list, client)
                    calls.start_soon(self._listen, client)
                    await self._listening.wait()
                    ready()
                    await anyio.sleep_forever()
            finally:
                self._calls = None

    def _end(self, what: str, cause: str) -> None:
        """The session is over: every call still waiting gets an error result."""
        first = self.failure is None
        self.stop(what, cause)
        self._client = None
        for call in list(self._pending):
            self._fail(call)
        if first:
            self._on_end()

    def _fail(self, call: _Call) -> None:
        what, cause = self.failure or ("went away", "the session ended")
        call.resolve(
            error_result(
                f"MCP server {self.label!r} {what} during the call to {call.name!r} ({cause})"
            )
        )

    # ------------------------------------------------------------------ tool list

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._list_changed.set()
        await anyio.lowlevel.checkpoint()

    async def _list_tools(self, client: Client) -> list[MCPTool]:
        listed: list[MCPTool] = []
        cursor: str | None = None
        for _ in range(LIST_PAGE_LIMIT):
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    async def _watch_tool_list(self, client: Client) -> None:
        while True:
            await self._list_changed.wait()
            if not await self._refresh(client):
                return

    async def _refresh(self, client: Client) -> bool:
        """List the tools again if a change is pending; False once the connection is
        closed."""
        async with self._listing:
            if not self._list_changed.is_set():
                return True  # listed meanwhile (by a finished call, or the watcher)
            self._list_changed = anyio.Event()  # changes announced from here on: list again
            try:
                listed = await self._list_tools(client)
            except MCPError as exc:
                # refused, or the connection closed; keep the tools we have
                return exc.code != CONNECTION_CLOSED
            except Exception:
                return True  # a listing that is not valid MCP; keep the tools we have
            self._on_listing(listed)
            return True

    async def _listen(self, client: Client) -> None:
        """Keep a ``subscriptions/listen`` stream open on 2026-era connections (older
        servers send ``notifications/tools/list_changed`` unprompted)."""
        try:
            for _ in range(LISTEN_RETRY_LIMIT):
                try:
                    async with client.listen(tools_list_changed=True) as events:
                        self._listening.set()  # acknowledged: changes reach us from now
                        async for event in events:
                            if isinstance(event, ToolsListChanged):
                                self._list_changed.set()
                    return  # the server closed the stream gracefully
                except ListenNotSupportedError:
                    return
                except SubscriptionLost:
                    self._list_changed.set()  # changes may have been missed: list again
                except MCPError:
                    return  # no subscriptions on this server, or the connection is gone
        finally:
            self._listening.set()

    # ------------------------------------------------------------------ calls

    async def call(self, name: str, arguments: Any, on_update: Any) -> AgentToolResult:
        """Run ``tools/call`` in the session's task and wait for its result (called in
        the agent's tool task; cancelling it cancels the call)."""
        if self.failure is not None:
            await anyio.lowlevel.checkpoint()
            what, cause = self.failure
            return error_result(
                f"MCP server {self.label!r} {what} ({cause}); its tool {name!r} cannot run"
            )
        call = _Call(name, dict(arguments or {}), on_update)
        self._pending.add(call)
        try:
            if self._calls is not None:
                self._calls.start_soon(self._run_call, call, name=f"MCP tools/call {name}")
            # else the session is ending, and _end resolves the call
            await call.done.wait()
        finally:
            self._pending.discard(call)
            if call.result is None:
                call.scope.cancel()  # the caller was cancelled: so is the server's call
        assert call.result is not None
        return call.result

    async def _run_call(self, call: _Call) -> None:
        client = self._client
        if client is None:
            return  # the session is ending, and _end resolves the call
        with call.scope:
            try:
                result = await client.call_tool(
                    call.name, call.arguments, progress_callback=_progress(call)
                )
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    self.stop("went away", self._fault or "it closed the connection")
                    self._fail(call)
                else:
                    call.resolve(error_result(f"MCP tool {call.name!r} failed: {exc.message}"))
                return
            except Exception as exc:
                call.resolve(error_result(f"MCP tool {call.name!r} failed: {describe(exc)}"))
                return
            # a change the call made (announced before its result) is in place before the
            # caller goes on: its next run gets the new tools, as the README promises
            for _ in range(CHANGE_SETTLE_CHECKPOINTS):
                await anyio.lowlevel.checkpoint()
            if self._list_changed.is_set() or self._listing.locked():
                await self._refresh(client)  # or wait for the listing under way
            call.resolve(to_agent_result(result))


def _progress(call: _Call) -> Any:
    """``notifications/progress`` for the call, as the tool's ``on_update``."""

    async def progress(value: float, total: float | None, message: str | None) -> None:
        if call.on_update is not None and call.result is None:
            text = message or (f"{value:g}/{total:g}" if total else f"{value:g}")
            call.on_update(
                AgentToolResult(
                    content=[TextContent(text=text)],
                    details={"progress": value, "total": total, "message": message},
                )
            )
        await anyio.lowlevel.checkpoint()

    return progress


def describe(exc: BaseException) -> str:
    """The first leaf of an exception group, as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.message
    text = str(exc).rstrip(".")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
