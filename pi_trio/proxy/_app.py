"""The proxy server as an ASGI application: ``POST /api/stream``.

One request is one LLM call: the body (``{model, context, options}``) is checked, the call
runs with the server's own provider keys, and its events go out as Server-Sent Events
without ``partial`` — the wire format of the original runtime's proxy client. A stream
lives in the request's task group; when the client goes away the provider call is
cancelled with it.

What a client controls is bounded: a request with both ``Transfer-Encoding`` and
``Content-Length`` (a request-smuggling shape) is refused with 400 and its connection
closed; the body must arrive within ``body_timeout`` seconds (408 otherwise) and hold at
most ``max_body_bytes`` (413) of JSON nested at most ``MAX_JSON_DEPTH`` levels (400); a
stream slot (``max_streams``, 429 beyond) is taken only once the body has arrived; and of
the headers a request asks for (``options.headers``, ``model.headers``) only those named
in ``forward_headers`` reach the provider, next to the server's key.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable
from typing import Any

import anyio
import msgspec

from ..ai import PiError, ProviderRegistry, open_stream_simple
from ._access import TOKENS_ENV, ModelPolicy, catalog_models_only, load_tokens, token_digest
from ._asgi import (
    Receive,
    Scope,
    Send,
    cancel_on_disconnect,
    content_length,
    lifespan,
    reply,
)
from ._wire import ProxyRequest, decode_json, encode_event, proxy_options

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_FORWARD_HEADERS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_STREAMS",
    "DRAIN_LIMIT",
    "ProxyApp",
    "create_app",
]


# A request body holds a whole transcript, images included (base64); 32 MiB fits long
# sessions with screenshots while bounding what one request can make the server buffer.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024

# How much of a refused (too large) body is still read and dropped: the client then reads
# the 413 instead of a connection reset. Beyond this the connection is just closed.
DRAIN_LIMIT = 1024 * 1024

# Streams run at once; each holds a provider connection and up to one body in memory.
DEFAULT_MAX_STREAMS = 64

# Seconds a client has to send its whole request body: 32 MiB at about 1 MiB/s. A stalled
# upload is answered 408 and its connection closed instead of waiting forever.
DEFAULT_BODY_TIMEOUT_S = 30.0

# Headers a request may ask the provider call to send (lower case): beta switches,
# session affinity and OpenRouter's attribution. Everything else a client names (Host,
# Transfer-Encoding, Connection, Upgrade, authorization, ...) is dropped: the request goes
# out with the server's key, so the server decides what travels with it.
DEFAULT_FORWARD_HEADERS: frozenset[str] = frozenset(
    {
        "anthropic-beta",
        "openai-beta",
        "x-session-affinity",
        "x-session-id",
        "session_id",
        "x-client-request-id",
        "http-referer",
        "x-title",
    }
)

# Upper bound on the shielded last write of a stream (and the connection close the server
# may run inside it).
_LAST_SEND_TIMEOUT_S = 5.0

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class ProxyApp:
    """The ASGI application. Build it with ``create_app``."""

    def __init__(
        self,
        *,
        tokens: Iterable[str],
        registry: ProviderRegistry | None,
        max_body_bytes: int,
        max_streams: int,
        model_policy: ModelPolicy,
        body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
        forward_headers: Iterable[str] = DEFAULT_FORWARD_HEADERS,
    ) -> None:
        digests = [token_digest(t) for t in tokens if t]
        if not digests:
            raise PiError(
                f"the proxy server has no tokens to accept: set {TOKENS_ENV} "
                "(comma-separated) or pass a tokens file (one token per line)"
            )
        if max_body_bytes < 1 or max_streams < 1 or not body_timeout > 0:
            raise ValueError(
                "max_body_bytes, max_streams and body_timeout must be positive, got "
                f"{max_body_bytes!r}, {max_streams!r} and {body_timeout!r}"
            )
        self._digests = digests
        self.registry = registry
        self.max_body_bytes = max_body_bytes
        self.max_streams = max_streams
        self.model_policy = model_policy
        self.body_timeout = body_timeout
        self.forward_headers = frozenset(name.lower() for name in forward_headers)
        self.reading_bodies = 0  # requests whose body is still arriving
        self.active_streams = 0  # requests holding a stream slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        names = {name.lower() for name, _ in scope["headers"]}
        if b"transfer-encoding" in names and b"content-length" in names:
            # RFC 9112 6.3: such a message may be a smuggling attempt; answer and close,
            # so nothing queued behind it on the connection is read as a request. The body
            # is taken first (bounded): the server then has read the request to its end
            # before the answer marks the connection for closing.
            with anyio.move_on_after(self.body_timeout):
                await _drain(receive)
            await reply(
                send,
                400,
                "Bad request: Transfer-Encoding and Content-Length together; send one",
                [(b"connection", b"close")],
            )
            return
        if scope["path"] != "/api/stream":
            await reply(send, 404, "Not found: the proxy serves POST /api/stream")
            return
        if scope["method"] != "POST":
            await reply(
                send, 405, "Method not allowed: use POST /api/stream", [(b"allow", b"POST")]
            )
            return
        if not self._authorized(scope):
            await reply(send, 401, "Unauthorized", [(b"www-authenticate", b"Bearer")])
            return
        with anyio.move_on_after(self.body_timeout) as reading:
            body = await self._read_body(scope, receive, send)
        if reading.cancelled_caught:
            await reply(
                send,
                408,
                f"Request body not received within {self.body_timeout:g} s",
                [(b"connection", b"close")],
            )
            return
        if body is None:
            return
        if self.active_streams >= self.max_streams:
            await reply(
                send,
                429,
                f"Too many concurrent streams (limit {self.max_streams})",
                [(b"retry-after", b"1")],
            )
            return
        self.active_streams += 1
        try:
            await self._serve_stream(body, receive, send)
        finally:
            self.active_streams -= 1

    def _authorized(self, scope: Scope) -> bool:
        values = [v for k, v in scope["headers"] if k.lower() == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        presented = token_digest(token.strip())
        matched = False
        for digest in self._digests:  # every token compared: timing says nothing of which
            matched |= hmac.compare_digest(presented, digest)
        return matched

    async def _serve_stream(self, body: bytes, receive: Receive, send: Send) -> None:
        try:
            request: ProxyRequest = decode_json(body, ProxyRequest)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await reply(send, 400, f"Invalid request body: {exc}")
            return
        refusal = self.model_policy(request.model)
        if refusal is not None:
            await reply(send, 403, refusal)
            return
        # Keys come from the server's environment only: the request cannot carry one, and
        # the headers it asks for are cut down to the allowed ones.
        model = msgspec.structs.replace(request.model, headers=self._allowed(request.model.headers))
        wire = msgspec.structs.replace(
            request.options, headers=self._allowed(request.options.headers)
        )
        options = proxy_options(wire)
        try:
            opened = open_stream_simple(model, request.context, options, registry=self.registry)
        except PiError as exc:
            await reply(send, 400, str(exc))
            return
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(cancel_on_disconnect, receive, task_group.cancel_scope)
            async with opened as events:
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                async for event in events:
                    frames = [encode_event(event)]
                    while not events.done:  # batch what is ready into one write
                        try:
                            frames.append(encode_event(events.receive_nowait()))
                        except anyio.WouldBlock:
                            break
                    message = {
                        "type": "http.response.body",
                        "body": b"".join(frames),
                        "more_body": not events.done,
                    }
                    if events.done:
                        # The server may close the connection inside this call (the client
                        # asked for it), and the disconnect it reports would cancel the
                        # close half-way and leave the socket open: shield the last send.
                        with anyio.move_on_after(_LAST_SEND_TIMEOUT_S, shield=True):
                            await send(message)
                    else:
                        await send(message)
            task_group.cancel_scope.cancel()

    def _allowed(self, headers: dict[str, str | None] | dict[str, str] | None) -> Any:
        """The headers of ``headers`` named in ``forward_headers`` (a ``None`` value, which
        would remove a header the provider sets, is dropped too); ``None`` if none."""
        if not headers:
            return None
        kept = {
            name: value
            for name, value in headers.items()
            if isinstance(value, str) and name.lower() in self.forward_headers
        }
        return kept or None

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request body, or ``None`` after answering 413 (or when the client left)."""
        self.reading_bodies += 1
        try:
            return await self._receive_body(scope, receive, send)
        finally:
            self.reading_bodies -= 1

    async def _receive_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        limit = self.max_body_bytes
        declared = content_length(scope)
        if declared is not None and declared > limit + DRAIN_LIMIT:
            await _too_large(send, limit)
            return None
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            more = message.get("more_body", False)
            if size > limit:
                if more and size <= limit + DRAIN_LIMIT:
                    parts.clear()
                    continue
                await _too_large(send, limit)
                return None
            parts.append(chunk)
            if not more:
                return b"".join(parts)


async def _drain(receive: Receive) -> None:
    """Receive and drop a request body, at most ``DRAIN_LIMIT`` bytes of it."""
    size = 0
    while size <= DRAIN_LIMIT:
        message = await receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return
        size += len(message.get("body", b""))


def create_app(
    *,
    tokens: Iterable[str] | None = None,
    tokens_file: str | os.PathLike[str] | None = None,
    registry: ProviderRegistry | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_streams: int = DEFAULT_MAX_STREAMS,
    model_policy: ModelPolicy = catalog_models_only,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    forward_headers: Iterable[str] = DEFAULT_FORWARD_HEADERS,
) -> ProxyApp:
    """The proxy's ASGI application.

    ``tokens`` are the accepted bearer tokens (default: ``load_tokens(tokens_file=...)``);
    ``registry`` resolves ``model.api`` to a provider (default registry if ``None``);
    ``model_policy(model)`` returns why a model is refused, or ``None`` to serve it
    (default ``catalog_models_only``; ``lambda model: None`` serves any model);
    ``body_timeout`` is the time a client has to send its body, ``forward_headers`` the
    request headers (case-insensitive) a client may have sent to the provider.
    """
    if tokens is None:
        tokens = load_tokens(tokens_file=tokens_file)
    elif tokens_file is not None:
        tokens = {*tokens, *load_tokens(tokens_file=tokens_file, env={})}
    if tokens_file is not None and not any(tokens):
        raise PiError(
            f"the tokens file {os.fspath(tokens_file)!r} holds no token and {TOKENS_ENV} is "
            "not set: write one token per line (blank lines and # comments are skipped)"
        )
    return ProxyApp(
        tokens=tokens,
        registry=registry,
        max_body_bytes=max_body_bytes,
        max_streams=max_streams,
        model_policy=model_policy,
        body_timeout=body_timeout,
        forward_headers=forward_headers,
    )


async def _too_large(send: Send, limit: int) -> None:
    await reply(
        send,
        413,
        f"Request body too large: the limit is {limit} bytes",
        [(b"connection", b"close")],
    )
