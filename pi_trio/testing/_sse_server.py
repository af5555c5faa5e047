"""A real HTTP/1.1 server on loopback that answers with scripted SSE bodies (for end-to-end
tests and benchmarks): anyio sockets and h11, no other dependency.

    async with serve_sse([SSEReply(body)]) as server:
        model = msgspec.structs.replace(model, base_url=server.url)
        ...
        await server.wait_until(lambda s: s.open_connections == 0)

Each request gets the next scripted reply (or ``reply(request)`` when a function is given).
A reply can fail with a status, reset the connection after some chunks, or hold the stream
open until the client closes it. The server counts open connections and streams the client
closed before their end, and ``wait_until`` waits for such counts without sleeping.
"""

from __future__ import annotations

import json
import socket
import struct
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import h11
import msgspec

__all__ = ["SSEReply", "SSEServer", "ServedRequest", "serve_sse"]

# Bytes read from a connection at a time.
_READ_SIZE = 65536


class SSEReply:
    """One scripted answer. ``body`` is sent as one write, or chunk by chunk when it is a
    list (each chunk its own HTTP chunk and its own write; ``write_size=n`` gathers
    consecutive chunks into writes of about ``n`` bytes, as a fast server's socket buffer
    would). ``reset_after=n`` resets the connection (TCP RST) after ``n`` chunks;
    ``hold_open=True`` keeps the response open after the last chunk until the client
    closes it (counted in ``SSEServer.client_closed``)."""

    __slots__ = ("chunks", "headers", "hold_open", "reset_after", "status", "write_size")

    def __init__(
        self,
        body: bytes | Sequence[bytes] = b"",
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        reset_after: int | None = None,
        hold_open: bool = False,
        write_size: int | None = None,
    ) -> None:
        self.chunks = [body] if isinstance(body, bytes) else list(body)
        self.status = status
        self.headers = dict(headers or {})
        if not any(name.lower() == "content-type" for name in self.headers):
            kind = "text/event-stream" if status < 400 else "application/json"
            self.headers["content-type"] = kind
        self.reset_after = reset_after
        self.hold_open = hold_open
        self.write_size = write_size


class ServedRequest(msgspec.Struct, frozen=True):
    """A request the loopback server received: its method, path, headers (lower-case
    names) and body; ``json()`` decodes the body."""

    method: str
    path: str
    headers: dict[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


class SSEServer:
    """The running server: ``url`` (``http://127.0.0.1:<port>``), what it saw, and counts:
    ``open_connections``, ``connections`` (accepted in total), ``client_closed`` (responses
    the client closed before their end), ``resets`` (connections reset on purpose)."""

    def __init__(self, replies: Callable[[ServedRequest], SSEReply] | Sequence[SSEReply]) -> None:
        self._reply_fn = replies if callable(replies) else None
        self._replies: deque[SSEReply] = deque([] if callable(replies) else replies)
        self.url = ""
        self.requests: list[ServedRequest] = []
        self.open_connections = 0
        self.connections = 0
        self.client_closed = 0
        self.resets = 0
        self._changed = anyio.Event()

    def add(self, *replies: SSEReply) -> None:
        self._replies.extend(replies)

    async def wait_until(self, predicate: Callable[[SSEServer], bool]) -> None:
        """Return once ``predicate(server)`` holds (checked after every change)."""
        while not predicate(self):
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _next_reply(self, request: ServedRequest) -> SSEReply:
        if self._reply_fn is not None:
            return self._reply_fn(request)
        if not self._replies:
            body = json.dumps({"error": {"message": "serve_sse has no scripted reply left"}})
            return SSEReply(body.encode(), status=599)
        return self._replies.popleft()

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        self.open_connections += 1
        self.connections += 1
        self._notify()
        try:
            async with stream:
                await self._serve_requests(stream)
        except (
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.EndOfStream,
            h11.ProtocolError,
            OSError,
        ):
            pass
        finally:
            self.open_connections -= 1
            self._notify()

    async def _serve_requests(self, stream: anyio.abc.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        while True:
            request = await _read_request(conn, stream)
            if request is None:
                return
            self.requests.append(request)
            self._notify()
            reply = self._next_reply(request)
            if not await self._respond(conn, stream, reply):
                return
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()

    async def _respond(
        self, conn: h11.Connection, stream: anyio.abc.SocketStream, reply: SSEReply
    ) -> bool:
        """Send ``reply``; False when the connection is finished."""
        headers = [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await stream.send(conn.send(h11.Response(status_code=reply.status, headers=headers)))
        try:
            pending: list[bytes] = []
            pending_size = 0
            write_size = reply.write_size or 0
            for sent, chunk in enumerate(reply.chunks):
                if reply.reset_after is not None and sent >= reply.reset_after:
                    break
                if chunk:
                    framed = conn.send(h11.Data(data=chunk))
                    assert framed is not None
                    pending.append(framed)
                    pending_size += len(framed)
                    if pending_size >= write_size:
                        await stream.send(b"".join(pending))
                        pending.clear()
                        pending_size = 0
            if pending:
                await stream.send(b"".join(pending))
            if reply.reset_after is not None:
                _reset(stream)
                self.resets += 1
                self._notify()
                return False
            if reply.hold_open:
                await _wait_closed(stream)
                self.client_closed += 1
                self._notify()
                return False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.client_closed += 1
            self._notify()
            return False
        await stream.send(conn.send(h11.EndOfMessage()))
        return True


async def _read_request(
    conn: h11.Connection, stream: anyio.abc.SocketStream
) -> ServedRequest | None:
    request: h11.Request | None = None
    body: list[bytes] = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(_READ_SIZE)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                data = b""
            conn.receive_data(data)
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            assert request is not None
            return ServedRequest(
                method=request.method.decode(),
                path=request.target.decode(),
                headers={k.decode().lower(): v.decode() for k, v in request.headers},
                content=b"".join(body),
            )
        else:  # ConnectionClosed, or the client went away mid-request
            return None


async def _wait_closed(stream: anyio.abc.SocketStream) -> None:
    while True:
        try:
            data = await stream.receive(_READ_SIZE)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return
        if not data:
            return


def _reset(stream: anyio.abc.SocketStream) -> None:
    """Make the close an abortive one (RST), like a proxy or server crash mid-stream."""
    raw: socket.socket = stream.extra(anyio.abc.SocketAttribute.raw_socket)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


@asynccontextmanager
async def serve_sse(
    replies: Callable[[ServedRequest], SSEReply] | Sequence[SSEReply] = (),
    *,
    host: str = "127.0.0.1",
    port: int = 0,
) -> AsyncIterator[SSEServer]:
    """Serve on ``host:port`` (a free port by default) until the block ends; connection
    tasks live in a task group inside the caller's task, cancelled on exit."""
    server = SSEServer(replies)
    listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
    bound = listener.extra(anyio.abc.SocketAttribute.local_port)
    server.url = f"http://{host}:{bound}"
    async with listener, anyio.create_task_group() as task_group:
        task_group.start_soon(listener.serve, server._serve_connection)
        try:
            yield server
        finally:
            task_group.cancel_scope.cancel()
