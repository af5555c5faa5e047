"""A misbehaving HTTP server on loopback for the fault suite, and a transport that counts
the bytes a client pulls.

Each connection reads one request (h11) and hands it to a script, which may answer with
anything: valid HTTP, broken HTTP, a body of any size, a stall, a reset::

    async def script(conn: FaultConn) -> None:
        await conn.send(head(500, {"content-length": str(SIZE)}))
        await conn.send_until_closed(SIZE)

    async with serve_faults(script) as server:
        ...
        await server.wait_until(lambda s: s.open_connections == 0)
"""

from __future__ import annotations

import functools
import http
import socket
import ssl
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import h11
import httpx2

from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import ServedRequest, registry_with_transport

__all__ = [
    "CountingTransport",
    "FaultConn",
    "FaultServer",
    "head",
    "loopback_registry",
    "serve_faults",
    "shared_tls_context",
]

_READ_SIZE = 65536
# Size of each write of a generated body.
_CHUNK = 64 * 1024


def head(status: int, headers: dict[str, str] | None = None) -> bytes:
    """A response head: status line, headers, blank line."""
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Whatever"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class FaultConn:
    """One accepted connection and the request it carried."""

    def __init__(
        self, server: FaultServer, stream: anyio.abc.SocketStream, request: ServedRequest
    ) -> None:
        self.server = server
        self.stream = stream
        self.request = request

    async def send(self, data: bytes) -> bool:
        """Write ``data``; False when the client has gone (counted once)."""
        try:
            await self.stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self.server._client_went()
            return False
        self.server.bytes_sent += len(data)
        return True

    async def send_until_closed(self, size: int, *, chunked: bool = False) -> int:
        """Send ``size`` bytes of ``x`` in 64 KiB writes, stopping when the client goes;
        returns how many were written."""
        sent = 0
        block = b"x" * _CHUNK
        while sent < size:
            part = block[: min(_CHUNK, size - sent)]
            if not await self.send(chunk(part) if chunked else part):
                return sent
            sent += len(part)
        return sent

    async def wait_closed(self) -> None:
        """Hold the connection until the client closes it (a stall)."""
        while True:
            try:
                data = await self.stream.receive(_READ_SIZE)
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                break
            if not data:
                break
        self.server._client_went()

    def reset(self) -> None:
        """Make the close an abortive one (TCP RST)."""
        raw: socket.socket = self.stream.extra(anyio.abc.SocketAttribute.raw_socket)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


Script = Callable[[FaultConn], Awaitable[None]]


class FaultServer:
    """``url``, the ``requests`` seen, ``bytes_sent`` (written to sockets),
    ``client_closed`` (connections the client left while the script still ran) and
    ``open_connections``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.url = ""
        self.requests: list[ServedRequest] = []
        self.bytes_sent = 0
        self.client_closed = 0
        self.open_connections = 0
        self._changed = anyio.Event()

    async def wait_until(self, predicate: Callable[[FaultServer], bool]) -> None:
        while not predicate(self):
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _client_went(self) -> None:
        self.client_closed += 1
        self._notify()

    async def _serve(self, stream: anyio.abc.SocketStream) -> None:
        self.open_connections += 1
        self._notify()
        try:
            async with stream:
                request = await _read_request(stream)
                if request is not None:
                    self.requests.append(request)
                    self._notify()
                    await self.script(FaultConn(self, stream, request))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._client_went()
        finally:
            self.open_connections -= 1
            self._notify()


async def _read_request(stream: anyio.abc.SocketStream) -> ServedRequest | None:
    conn = h11.Connection(h11.SERVER)
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
        else:
            return None


@asynccontextmanager
async def serve_faults(script: Script) -> AsyncIterator[FaultServer]:
    """Serve ``script`` on a free loopback port until the block ends."""
    server = FaultServer(script)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    server.url = f"http://127.0.0.1:{port}"
    async with listener, anyio.create_task_group() as task_group:
        task_group.start_soon(listener.serve, server._serve)
        try:
            yield server
        finally:
            task_group.cancel_scope.cancel()


class _CountingStream(httpx2.AsyncByteStream):
    """The body stream of a response, counting what passes (an iterator object, not an
    async generator, so leaving it early leaves nothing for the garbage collector)."""

    def __init__(self, inner: Any, owner: CountingTransport) -> None:
        self._inner = inner
        self._parts: Any = None
        self._owner = owner

    def __aiter__(self) -> _CountingStream:
        self._parts = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        part: bytes = await self._parts.__anext__()
        self._owner.bytes_pulled += len(part)
        return part

    async def aclose(self) -> None:
        await self._inner.aclose()


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """One TLS context for every test client. Loading the CA bundle takes about 80 ms per
    client, more than a whole loopback fault test (whose servers speak plain HTTP)."""
    return ssl.create_default_context()


def loopback_registry(transport: httpx2.AsyncBaseTransport | None = None) -> ProviderRegistry:
    """A registry with the built-in providers over a real HTTP transport (by default a
    ``CountingTransport``) that shares ``shared_tls_context``."""
    return registry_with_transport(transport or CountingTransport())


class CountingTransport(httpx2.AsyncBaseTransport):
    """A real HTTP transport that counts the response-body bytes pulled off the network
    (before any decoding)."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("verify", shared_tls_context())
        self._inner = httpx2.AsyncHTTPTransport(**options)
        self.bytes_pulled = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        response.stream = _CountingStream(response.stream, self)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
