"""The proxy server as an ASGI application: ``POST /api/stream``.

One request is one LLM call: the body (``{model, context, options}``) is checked, the call
runs with the server's own provider keys, and its events go out as Server-Sent Events
without ``partial`` — the wire format of the original runtime's proxy client. A stream
lives in the request's task group; when the client goes away the provider call is
cancelled with it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from pathlib import Path
from typing import Any, TypeAlias

import anyio
import msgspec

from ..ai import Model, PiError, ProviderRegistry, get_model, open_stream_simple
from ._wire import ProxyRequest, decode_json, encode_event, proxy_options

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_STREAMS",
    "DRAIN_LIMIT",
    "TOKENS_ENV",
    "ModelPolicy",
    "ProxyApp",
    "catalog_models_only",
    "create_app",
    "load_tokens",
]

Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send: TypeAlias = Callable[[MutableMapping[str, Any]], Awaitable[None]]

TOKENS_ENV = "PI_TRIO_PROXY_TOKENS"

# A request body holds a whole transcript, images included (base64); 32 MiB fits long
# sessions with screenshots while bounding what one request can make the server buffer.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024

# How much of a refused (too large) body is still read and dropped: the client then reads
# the 413 instead of a connection reset. Beyond this the connection is just closed.
DRAIN_LIMIT = 1024 * 1024

# Streams run at once; each holds a provider connection and up to one body in memory.
DEFAULT_MAX_STREAMS = 64

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def load_tokens(
    *, tokens_file: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None
) -> frozenset[str]:
    """The accepted bearer tokens: the comma-separated ``PI_TRIO_PROXY_TOKENS`` variable
    plus, if given, ``tokens_file`` (one token per line; blank lines and ``#`` comments
    are skipped)."""
    environ = os.environ if env is None else env
    tokens = {t.strip() for t in environ.get(TOKENS_ENV, "").split(",")}
    if tokens_file is not None:
        for line in Path(tokens_file).read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                tokens.add(line)
    tokens.discard("")
    return frozenset(tokens)


def catalog_models_only(model: Model) -> str | None:
    """The default model policy: the model must be in the catalog and be called at its
    catalog ``base_url`` — the server sends its own API key to that URL, so a client must
    not be able to point it elsewhere. Returns the reason for a refusal, or ``None``."""
    known = get_model(model.provider, model.id)
    if known is None:
        return (
            f"Model {model.provider}/{model.id} is not in this proxy's catalog; "
            "only catalog models are served"
        )
    if model.base_url != known.base_url:
        return (
            f"Model {model.provider}/{model.id} must use its catalog baseUrl "
            f"{known.base_url!r}, got {model.base_url!r}"
        )
    return None


ModelPolicy: TypeAlias = Callable[[Model], "str | None"]


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
    ) -> None:
        digests = [_digest(t) for t in tokens if t]
        if not digests:
            raise PiError(
                f"the proxy server has no tokens to accept: set {TOKENS_ENV} "
                "(comma-separated) or pass a tokens file (one token per line)"
            )
        if max_body_bytes < 1 or max_streams < 1:
            raise ValueError(
                f"max_body_bytes and max_streams must be positive, got {max_body_bytes!r} "
                f"and {max_streams!r}"
            )
        self._digests = digests
        self.registry = registry
        self.max_body_bytes = max_body_bytes
        self.max_streams = max_streams
        self.model_policy = model_policy
        self.active_streams = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] != "/api/stream":
            await _reply(send, 404, "Not found: the proxy serves POST /api/stream")
            return
        if scope["method"] != "POST":
            await _reply(
                send, 405, "Method not allowed: use POST /api/stream", [(b"allow", b"POST")]
            )
            return
        if not self._authorized(scope):
            await _reply(send, 401, "Unauthorized", [(b"www-authenticate", b"Bearer")])
            return
        if self.active_streams >= self.max_streams:
            await _reply(
                send,
                429,
                f"Too many concurrent streams (limit {self.max_streams})",
                [(b"retry-after", b"1")],
            )
            return
        self.active_streams += 1
        try:
            await self._serve_stream(scope, receive, send)
        finally:
            self.active_streams -= 1

    def _authorized(self, scope: Scope) -> bool:
        values = [v for k, v in scope["headers"] if k.lower() == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        presented = _digest(token.strip())
        matched = False
        for digest in self._digests:  # every token compared: timing says nothing of which
            matched |= hmac.compare_digest(presented, digest)
        return matched

    async def _serve_stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        try:
            request: ProxyRequest = decode_json(body, ProxyRequest)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await _reply(send, 400, f"Invalid request body: {exc}")
            return
        refusal = self.model_policy(request.model)
        if refusal is not None:
            await _reply(send, 403, refusal)
            return
        # Keys come from the server's environment only: the request cannot carry one.
        options = proxy_options(request.options)
        try:
            opened = open_stream_simple(
                request.model, request.context, options, registry=self.registry
            )
        except PiError as exc:
            await _reply(send, 400, str(exc))
            return
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(_cancel_on_disconnect, receive, task_group.cancel_scope)
            async with opened as events:
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                async for event in events:
                    frames = [encode_event(event)]
                    while not events.done:  # batch what is ready into one write
                        try:
                            frames.append(encode_event(events.receive_nowait()))
                        except anyio.WouldBlock:
                            break
                    await send(
                        {
                            "type": "http.response.body",
                            "body": b"".join(frames),
                            "more_body": not events.done,
                        }
                    )
            task_group.cancel_scope.cancel()

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request body, or ``None`` after answering 413 (or when the client left)."""
        limit = self.max_body_bytes
        declared = _content_length(scope)
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


def create_app(
    *,
    tokens: Iterable[str] | None = None,
    tokens_file: str | os.PathLike[str] | None = None,
    registry: ProviderRegistry | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_streams: int = DEFAULT_MAX_STREAMS,
    model_policy: ModelPolicy = catalog_models_only,
) -> ProxyApp:
    """The proxy's ASGI application.

    ``tokens`` are the accepted bearer tokens (default: ``load_tokens(tokens_file=...)``);
    ``registry`` resolves ``model.api`` to a provider (default registry if ``None``);
    ``model_policy(model)`` returns why a model is refused, or ``None`` to serve it
    (default ``catalog_models_only``; ``lambda model: None`` serves any model).
    """
    if tokens is None:
        tokens = load_tokens(tokens_file=tokens_file)
    elif tokens_file is not None:
        tokens = {*tokens, *load_tokens(tokens_file=tokens_file, env={})}
    return ProxyApp(
        tokens=tokens,
        registry=registry,
        max_body_bytes=max_body_bytes,
        max_streams=max_streams,
        model_policy=model_policy,
    )


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _content_length(scope: Scope) -> int | None:
    for key, value in scope["headers"]:
        if key.lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            scope.cancel()
            return


async def _reply(
    send: Send, status: int, error: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = msgspec.json.encode({"error": error})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _too_large(send: Send, limit: int) -> None:
    await _reply(
        send,
        413,
        f"Request body too large: the limit is {limit} bytes",
        [(b"connection", b"close")],
    )


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
