"""The stdio transport of ``open_mcp_tools``: the server as a child process, one JSON-RPC
message per line of its standard output, read in time linear in its size and bounded.

The SDK's own stdio client joins what it has buffered with every chunk it reads, so a
result of tens of megabytes costs time quadratic in its size, and a line has no limit. Here
``LineSplitter`` (sans-IO) keeps the chunks of an unfinished line and joins them once, when
its newline arrives; a line past `MAX_MESSAGE_BYTES` ends the connection (the session's
calls get an error naming the limit) and the server is stopped. Stopping closes the
server's standard input, gives it `STOP_TIMEOUT` seconds to exit, then terminates it and,
if need be, kills it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.abc
import mcp_types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

__all__ = [
    "MAX_MESSAGE_BYTES",
    "STOP_TIMEOUT",
    "LineSplitter",
    "MessageTooLarge",
    "StdioTransport",
    "stdio_transport",
]

MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""The longest line (one JSON-RPC message) read from a server: far more than a tool result
a model can use (results are cut at ``MAX_RESULT_TEXT_CHARS`` anyway), far less than
memory."""

STOP_TIMEOUT: Final = 2.0
"""Seconds a server has to exit once its standard input is closed, and again once it was
asked to terminate, before it is killed."""


class MessageTooLarge(Exception):
    """A line of the server's output ran past ``MAX_MESSAGE_BYTES``."""


class LineSplitter:
    """Bytes in, complete lines out (without their ``\\n``), each byte copied once."""

    __slots__ = ("_parts", "_size", "copied", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_MESSAGE_BYTES if limit is None else limit
        self._parts: list[bytes] = []
        self._size = 0
        self.copied = 0  # bytes joined into lines so far: linear in what was fed

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._size += len(piece)
            if self._size > self.limit:
                raise MessageTooLarge(
                    f"it sent a message of more than {self.limit} bytes (MAX_MESSAGE_BYTES)"
                )
            if end < 0:
                if piece:
                    self._parts.append(piece)
                return lines
            self._parts.append(piece)
            line = b"".join(self._parts)
            self.copied += len(line)
            self._parts.clear()
            self._size = 0
            lines.append(line)
            start = end + 1


class StdioTransport:
    """An MCP ``Transport`` over a server's standard input and output. ``on_fault(text)``
    hears why the connection ended when the server broke the rules."""

    def __init__(
        self, server: StdioServerParameters, on_fault: Callable[[str], None] | None = None
    ) -> None:
        self._server = server
        self._on_fault = on_fault
        self._process: anyio.abc.Process | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._streams: list[Any] = []

    async def __aenter__(self) -> tuple[Any, Any]:
        server = self._server
        self._process = process = await anyio.open_process(
            [server.command, *server.args],
            env=get_default_environment() | (server.env or {}),
            cwd=server.cwd,
            stderr=None,  # the server's log goes where ours goes
        )
        read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
        self._streams = [read_send, read_receive, write_send, write_receive]
        self._group = group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(self._read, process, read_send)
        group.start_soon(self._write, process, write_receive, read_send)
        return read_receive, write_send

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None
        with anyio.CancelScope(shield=True):
            await self._stop()
        self._group.cancel_scope.cancel()
        return await self._group.__aexit__(kind, value, traceback)

    async def _read(self, process: anyio.abc.Process, send: Any) -> None:
        assert process.stdout is not None
        splitter = LineSplitter()
        encoding = self._server.encoding
        errors = self._server.encoding_error_handler
        async with send:
            try:
                async for chunk in process.stdout:
                    for line in splitter.feed(chunk):
                        if line.strip():
                            await send.send(_parse(line.decode(encoding, errors)))
            except MessageTooLarge as exc:
                if self._on_fault is not None:
                    self._on_fault(str(exc))
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # the session or the pipe is gone: the read stream closes

    async def _write(self, process: anyio.abc.Process, receive: Any, read_send: Any) -> None:
        assert process.stdin is not None
        try:
            async with receive:
                async for message in receive:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    data = (text + "\n").encode(
                        self._server.encoding, self._server.encoding_error_handler
                    )
                    await process.stdin.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await read_send.aclose()  # the server cannot hear us: end the connection

    async def _stop(self) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        for ask in (None, process.terminate, process.kill):
            if ask is not None:
                with contextlib.suppress(ProcessLookupError):
                    ask()
            with anyio.move_on_after(STOP_TIMEOUT):
                await process.wait()
                break
        for stream in self._streams:
            await stream.aclose()
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.aclose()


def _parse(line: str) -> SessionMessage | Exception:
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as exc:
        return exc
    return SessionMessage(message)


def stdio_transport(
    server: StdioServerParameters, on_fault: Callable[[str], None]
) -> StdioTransport | StdioServerParameters:
    """This transport on POSIX; the SDK's own on Windows (process trees and pipes differ)."""
    if sys.platform == "win32":
        return server
    return StdioTransport(server, on_fault)
