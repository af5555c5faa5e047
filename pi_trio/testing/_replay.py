"""Replaying recorded HTTP responses through httpx2, with no network.

``ReplayTransport`` is an ``httpx2.AsyncBaseTransport`` that answers each request with the
next scripted ``ReplayResponse`` (recorded SSE bytes, optionally split into chunks, with a
status, headers, and optionally a transport error after the last chunk) and records the
requests it saw. ``registry_with_transport`` gives a ``ProviderRegistry`` whose shared HTTP
client uses it, so a provider runs unchanged::

    transport = ReplayTransport(ReplayResponse(sse_body([chunk1, chunk2], done=True)))
    registry = registry_with_transport(transport)
    message = await complete(model, context, api_key="k", registry=registry)
    assert transport.requests[0].json()["stream"] is True
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anyio.lowlevel
import httpx2
import msgspec

from pi_trio.ai.providers import ProviderRegistry

__all__ = [
    "RecordedRequest",
    "ReplayResponse",
    "ReplayTransport",
    "registry_with_transport",
    "split_bytes",
    "sse_body",
    "sse_event",
]


def sse_event(data: Any, *, event: str | None = None, newline: str = "\n") -> str:
    """One SSE event: an optional ``event:`` line, one ``data:`` line per line of the data
    (objects are compact JSON), and the blank line that ends it."""
    text = data if isinstance(data, str) else msgspec.json.encode(data).decode()
    lines = [f"event: {event}"] if event is not None else []
    lines.extend(f"data: {line}" for line in text.split("\n"))
    return newline.join(lines) + newline + newline


def sse_body(
    events: Iterable[Any],
    *,
    done: bool = False,
    newline: str = "\n",
    trailing_blank_line: bool = True,
) -> bytes:
    """An SSE body. Each item is data (a JSON-able object or a string), or an
    ``(event_name, data)`` tuple. ``done`` appends ``data: [DONE]``; ``newline`` picks the
    line ending (``"\\r\\n"``, ``"\\r"``); ``trailing_blank_line=False`` leaves the last event
    unterminated."""
    parts = []
    for item in events:
        if isinstance(item, tuple):
            name, data = item
            parts.append(sse_event(data, event=name, newline=newline))
        else:
            parts.append(sse_event(item, newline=newline))
    if done:
        parts.append(sse_event("[DONE]", newline=newline))
    text = "".join(parts)
    if not trailing_blank_line and text.endswith(newline + newline):
        text = text[: -2 * len(newline)]
    return text.encode()


def split_bytes(body: bytes, size: int) -> list[bytes]:
    """``body`` cut into pieces of ``size`` bytes (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"split_bytes needs a size of at least 1, got {size!r}")
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


class ReplayResponse:
    """One scripted answer. ``body`` is the whole body or a list of chunks delivered one
    network read each; ``error`` (an exception such as ``httpx2.ReadError``) is raised after
    the last chunk, like a connection reset mid-stream. SSE bodies get a
    ``text/event-stream`` content type unless ``headers`` name one."""

    __slots__ = ("chunks", "error", "headers", "status")

    def __init__(
        self,
        body: bytes | Sequence[bytes] = b"",
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        error: Exception | None = None,
    ) -> None:
        self.chunks = [body] if isinstance(body, bytes) else list(body)
        self.status = status
        self.headers = dict(headers or {})
        if not any(name.lower() == "content-type" for name in self.headers):
            kind = "text/event-stream" if status < 400 else "application/json"
            self.headers["content-type"] = kind
        self.error = error


class RecordedRequest(msgspec.Struct, frozen=True):
    """A request the transport answered."""

    method: str
    url: str
    headers: dict[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


class _Body(httpx2.AsyncByteStream):
    """The scripted chunks, one per read (an iterator object, not an async generator, so
    a body left early needs no finalizing)."""

    def __init__(self, transport: ReplayTransport, reply: ReplayResponse) -> None:
        self._transport = transport
        self._chunks = iter([chunk for chunk in reply.chunks if chunk])
        self._error = reply.error
        self._closed = False

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        await anyio.lowlevel.checkpoint()  # one network read per chunk
        chunk = next(self._chunks, None)
        if chunk is not None:
            return chunk
        error, self._error = self._error, None
        if error is not None:
            raise error
        raise StopAsyncIteration

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._transport.closed_responses += 1


Reply = ReplayResponse | Exception | Callable[[RecordedRequest], "ReplayResponse | Exception"]


class ReplayTransport(httpx2.AsyncBaseTransport):
    """Answers requests with scripted replies, first in first out.

    A reply is a ``ReplayResponse``, an exception to raise instead of answering (e.g.
    ``httpx2.ConnectError``), or a function of the ``RecordedRequest`` returning either.
    ``requests`` lists what was asked; ``closed_responses`` counts response bodies closed
    by the client (every answered request should be closed once the caller is done)."""

    def __init__(self, *replies: Reply) -> None:
        self._replies: deque[Reply] = deque(replies)
        self.requests: list[RecordedRequest] = []
        self.closed_responses = 0

    def add(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Replies not used yet."""
        return len(self._replies)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        content = await request.aread()
        recorded = RecordedRequest(
            method=request.method,
            url=str(request.url),
            headers={k.decode().lower(): v.decode() for k, v in request.headers.raw},
            content=content,
        )
        self.requests.append(recorded)
        await anyio.lowlevel.checkpoint()
        if not self._replies:
            raise AssertionError(
                f"ReplayTransport has no reply left for request #{len(self.requests)} "
                f"({request.method} {request.url}); script one more with add()"
            )
        reply = self._replies.popleft()
        if callable(reply) and not isinstance(reply, Exception):
            reply = reply(recorded)
        if isinstance(reply, Exception):
            raise reply
        return httpx2.Response(
            reply.status, headers=reply.headers, stream=_Body(self, reply), request=request
        )


class _TransportRegistry(ProviderRegistry):
    def __init__(self, transport: httpx2.AsyncBaseTransport, timeout: Any) -> None:
        super().__init__()
        self._transport = transport
        self._timeout = timeout
        self._replay_client: httpx2.AsyncClient | None = None

    def http_client(self) -> httpx2.AsyncClient:
        client = self._replay_client
        if client is None or client.is_closed:
            options = {} if self._timeout is None else {"timeout": self._timeout}
            client = self._replay_client = httpx2.AsyncClient(transport=self._transport, **options)
        return client

    async def aclose(self) -> None:
        client, self._replay_client = self._replay_client, None
        if client is not None:
            await client.aclose()
        await super().aclose()


def registry_with_transport(
    transport: httpx2.AsyncBaseTransport, *, timeout: Any = None
) -> ProviderRegistry:
    """A registry with the built-in providers whose shared HTTP client sends every request
    through ``transport`` (a ``ReplayTransport``, ``httpx2.MockTransport``, ...), with
    ``timeout`` (an ``httpx2.Timeout``; httpx2's default when ``None``)."""
    return _TransportRegistry(transport, timeout)
