"""The proxy server as an ASGI application: ``POST /api/stream``.

One request is one LLM call: the body (``{model, context, options}``) is checked, the call
runs with the server's own provider keys, and its events go out as Server-Sent Events
without ``partial`` — the wire format of the original runtime's proxy client. A stream
lives in the request's task group; when the client goes away the provider call is
cancelled with it.

What a token holder chooses is the transcript, the name of a model and the options that
``_options`` allows; the model the call runs on is the model policy's answer (by default
the server's catalog entry), so its address, headers, quirks and limits are the
server's. What a client costs is bounded: a request with both ``Transfer-Encoding`` and
``Content-Length`` (a request-smuggling shape) is refused with 400 and its connection
closed; the body must arrive within ``body_timeout`` seconds (408 otherwise) and hold at
most ``max_body_bytes`` (413) of JSON nested at most ``MAX_JSON_DEPTH`` levels (400);
all requests together hold at most ``max_bytes_in_flight`` of bodies and what they
decode into (``_body``; 503 beyond); a stream slot (``max_streams``, 429 beyond) is
taken only once the body has arrived.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable
from contextlib import AbstractAsyncContextManager
from typing import TypeAlias

import anyio
import msgspec

from ..ai import AssistantMessageStream, PiError, open_stream_simple
from ..ai.providers import ProviderRegistry
from ._access import (
    TOKENS_ENV,
    ModelPolicy,
    catalog_models_only,
    load_tokens,
    serve_model,
    token_digest,
)
from ._asgi import Receive, Scope, Send, cancel_on_disconnect, lifespan, reply
from ._body import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_BYTES_IN_FLIGHT,
    DRAIN_LIMIT,
    Budget,
    Charge,
    Disconnected,
    Overdrawn,
    TooLarge,
    drain,
    memory_estimate,
    receive_body,
)
from ._options import (
    DEFAULT_FORWARD_HEADERS,
    DEFAULT_SAMPLING_PARAMS,
    check_forward_headers,
    served_headers,
    server_options,
)
from ._wire import decode_request, encode_event

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_FORWARD_HEADERS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_SAMPLING_PARAMS",
    "DRAIN_LIMIT",
    "ProxyApp",
    "create_app",
]


# Streams run at once; each holds a provider connection and what its body decoded into.
DEFAULT_MAX_STREAMS = 64

# Seconds a client has to send its whole request body: 32 MiB at about 1 MiB/s. A stalled
# upload is answered 408 and its connection closed instead of waiting forever.
DEFAULT_BODY_TIMEOUT_S = 30.0

# Upper bound on the shielded last write of a stream (and the connection close the server
# may run inside it).
_LAST_SEND_TIMEOUT_S = 5.0

_Call: TypeAlias = "AbstractAsyncContextManager[AssistantMessageStream]"

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
        max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT,
        sampling_params: Iterable[str] = DEFAULT_SAMPLING_PARAMS,
    ) -> None:
        digests = [token_digest(t) for t in tokens if t]
        if not digests:
            raise PiError(
                f"the proxy server has no tokens to accept: set {TOKENS_ENV} "
                "(comma-separated) or pass a tokens file (one token per line)"
            )
        limits = (max_body_bytes, max_streams, max_bytes_in_flight)
        if min(limits) < 1 or not body_timeout > 0:
            raise ValueError(
                "max_body_bytes, max_streams, max_bytes_in_flight and body_timeout must be "
                f"positive, got {max_body_bytes!r}, {max_streams!r}, "
                f"{max_bytes_in_flight!r} and {body_timeout!r}"
            )
        if isinstance(sampling_params, str):
            raise TypeError(
                f"sampling_params must be a collection of names, got the str {sampling_params!r}"
            )
        self._digests = digests
        self.registry = registry
        self.max_body_bytes = max_body_bytes
        self.max_streams = max_streams
        self.model_policy = model_policy
        self.body_timeout = body_timeout
        self.forward_headers = check_forward_headers(forward_headers)
        self.sampling_params = frozenset(sampling_params)
        self._budget = Budget(max_bytes_in_flight)
        self.reading_bodies = 0  # requests whose body is still arriving
        self.active_streams = 0  # requests holding a stream slot

    @property
    def max_bytes_in_flight(self) -> int:
        return self._budget.limit

    @property
    def bytes_in_flight(self) -> int:
        """What requests hold of ``max_bytes_in_flight`` now."""
        return self._budget.used

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
        elif scope["type"] == "http":
            charge = Charge(self._budget)
            try:
                await self._http(scope, receive, send, charge)
            finally:
                charge.release()

    async def _http(self, scope: Scope, receive: Receive, send: Send, charge: Charge) -> None:
        names = {name.lower() for name, _ in scope["headers"]}
        if b"transfer-encoding" in names and b"content-length" in names:
            # RFC 9112 6.3: such a message may be a smuggling attempt; answer and close,
            # so nothing queued behind it on the connection is read as a request. The body
            # is taken first (bounded): the server then has read the request to its end
            # before the answer marks the connection for closing.
            with anyio.move_on_after(self.body_timeout):
                await drain(receive)
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
        body = await self._read_body(scope, receive, send, charge)
        if body is None:
            return
        estimate = memory_estimate(body)
        if estimate > self._budget.limit:
            await reply(
                send,
                413,
                f"Request body too large: its {len(body)} bytes would take about {estimate} "
                f"bytes in memory once decoded, more than the {self._budget.limit} bytes "
                "this proxy holds for all requests (max_bytes_in_flight)",
                [(b"connection", b"close")],
            )
            return
        if not charge.hold(estimate):
            await self._overdrawn(send)
            return
        call = await self._prepare(body, send)
        del body  # the request holds what it became
        if call is None:
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
            await self._serve_stream(call, receive, send)
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

    async def _read_body(
        self, scope: Scope, receive: Receive, send: Send, charge: Charge
    ) -> bytes | None:
        """The request body, or ``None`` after answering (or when the client left)."""
        self.reading_bodies += 1
        try:
            with anyio.move_on_after(self.body_timeout):
                return await receive_body(scope, receive, self.max_body_bytes, charge)
        except TooLarge:
            await reply(
                send,
                413,
                f"Request body too large: the limit is {self.max_body_bytes} bytes",
                [(b"connection", b"close")],
            )
            return None
        except Overdrawn:
            await self._overdrawn(send)
            return None
        except Disconnected:
            return None
        finally:
            self.reading_bodies -= 1
        await reply(
            send,
            408,
            f"Request body not received within {self.body_timeout:g} s",
            [(b"connection", b"close")],
        )
        return None

    async def _overdrawn(self, send: Send) -> None:
        await reply(
            send,
            503,
            f"The proxy is holding as many request bodies as it may "
            f"({self._budget.limit} bytes, max_bytes_in_flight); try again shortly",
            [(b"retry-after", b"1"), (b"connection", b"close")],
        )

    async def _prepare(self, body: bytes, send: Send) -> _Call | None:
        """The call ``body`` asks for, or ``None`` after answering why it is refused."""
        try:
            request = decode_request(body)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await reply(send, 400, f"Invalid request body: {exc}")
            return None
        served = serve_model(self.model_policy, request.model)
        if isinstance(served, str):
            await reply(send, 403, served)
            return None
        # Keys come from the server's environment only: the request cannot carry one.
        model = served_headers(served)
        options = server_options(
            request.options,
            model,
            sampling_params=self.sampling_params,
            forward_headers=self.forward_headers,
        )
        if isinstance(options, str):
            await reply(send, 400, options)
            return None
        try:
            opened = open_stream_simple(model, request.context, options, registry=self.registry)
        except PiError as exc:
            await reply(send, 400, str(exc))
            return None
        return opened

    async def _serve_stream(self, opened: _Call, receive: Receive, send: Send) -> None:
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
    max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT,
    sampling_params: Iterable[str] = DEFAULT_SAMPLING_PARAMS,
) -> ProxyApp:
    """The proxy's ASGI application.

    ``tokens`` are the accepted bearer tokens (default: ``load_tokens(tokens_file=...)``);
    ``registry`` resolves ``model.api`` to a provider (default registry if ``None``);
    ``model_policy(model)`` returns the model to serve for the one a client named, or
    why it is refused (default ``catalog_models_only``: the catalog's own entry;
    ``lambda model: model`` serves whatever a client sends, every field of it);
    ``body_timeout`` is the time a client has to send its body; ``forward_headers`` the
    request headers (case-insensitive) a client may have sent to the provider, and
    ``sampling_params`` the names of ``options.samplingParams`` it may set (``_options``
    has every rule); ``max_body_bytes`` bounds one body, ``max_bytes_in_flight`` all
    bodies and what they decode into (``_body``), ``max_streams`` the calls at once.
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
        max_bytes_in_flight=max_bytes_in_flight,
        sampling_params=sampling_params,
    )
