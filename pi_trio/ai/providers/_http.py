"""Shared plumbing of the HTTP providers: keys, headers, hooks, the POST with retries, HTTP
error texts, SSE reading, and the run wrapper that turns every failure into one ``error``.

A provider module is a stream function that hands a wire-mapping coroutine to
``run_provider``; the coroutine gets a ``ProviderRun``::

    async def stream_example(model, context, options, send):
        await run_provider(model, options, send, _stream, context)

    async def _stream(run: ProviderRun, context: Context) -> None:
        api_key = run.api_key()                      # ProviderError when there is none
        payload = await run.on_payload(build_body(run.model, context, run.options))
        headers = run.headers({"Authorization": f"Bearer {api_key}"})
        async with run.open_sse(f"{run.model.base_url}/chat/completions", headers,
                                payload) as sse:
            await run.emit(run.builder.start())
            async for batch in sse:                  # list[SSEEvent] per network read
                for event in batch:
                    await run.emit_all(mapper.feed(event))
        # Returning without a terminal event: ``run_provider`` ends the open blocks in
        # content order and sends ``done`` -- or ``error`` when the message's
        # ``stop_reason`` was set to ``"error"``/``"aborted"`` (with its ``error_message``).

Rules the helpers implement (reference/ai.md §7.0):

- Failures are data. Any ``Exception`` raised by the coroutine becomes one ``error`` event
  holding the content received so far: ``ProviderError`` (HTTP statuses, transport errors,
  retry-delay refusals) with its own text, anything else as ``"<Type>: <text>"``.
  Cancellation is never caught: it propagates and the owner of the cancel scope writes the
  aborted outcome.
- HTTP statuses >= 400 read at most ``ERROR_BODY_READ_LIMIT`` bytes of the body, close
  the response (and with it the connection, when the body went on) and fail with
  ``"<status> <provider message or body>"`` (trimmed, at most 4000 characters plus
  ``... [truncated N chars]``) or ``"<status> status code (no body)"``.
- Redirects are never followed (a request carries a key): a 3xx fails with one line naming
  the status and the ``Location``. A successful status whose body holds no event at all (a
  204, an HTML page, a JSON body) fails naming the status, the content type and the start
  of the body; the body of a response that is not ``text/event-stream`` is given up on
  when its first ``ERROR_BODY_READ_LIMIT`` bytes hold no event.
- Retries (``options.max_retries``, default 0) happen before the response body is used
  only: statuses 408, 409, 429, >= 500 and transport errors, vetoed or forced by
  ``x-should-retry``; the delay is ``retry-after-ms``, else ``retry-after`` (seconds or an
  HTTP date), else ``min(0.5 * 2**attempt, 8) s * (1 - 0.25 * random())``. A server delay
  above ``options.max_retry_delay_ms`` (0: no cap) fails at once with
  ``Server requested <n>s retry delay (max: <m>s). <message>``. Sleeps use ``anyio.sleep``.
- API keys pass ``clean_api_key`` (surrounding whitespace stripped; other whitespace,
  control and non-ASCII characters refused with an error naming the provider), every
  header value passes ``check_header_values``, and keys and authorization header values
  never appear in an error text: ``redact`` replaces them in all their forms (raw,
  escaped, URL-encoded, cut off) by ``[redacted]``.
- Leaving ``open_sse`` for any reason (end, error, cancellation) closes the response, so its
  connection goes back to the pool (body fully read) or is closed.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Concatenate, Final, ParamSpec

import anyio
import anyio.abc
import httpx2
import msgspec
from anyio.streams.memory import MemoryObjectSendStream

from .._builder import MessageBuilder
from .._env import get_env_api_key
from .._errors import PiError, ProviderError, StreamProtocolError
from .._events import AssistantMessageEvent, DoneEvent, ErrorEvent
from .._http_body import ERROR_BODY_READ_LIMIT, read_body_prefix
from .._identity import get_identity_headers
from .._options import ResponseInfo, StreamOptions
from .._registry import default_registry
from .._secrets import check_header_values, clean_api_key
from .._types import Model
from ._http_errors import (
    ERROR_BODY_LIMIT,
    backoff_delay_s,
    format_http_error,
    provider_error_message,
    redact,
    redirect_text,
    requested_delay_s,
    retry_wait_s,
    should_retry,
    transport_error,
)
from ._sse import SSEEvent, SSEParser
from ._sse_stream import SSEStream

__all__ = [
    "AUTH_HEADERS",
    "ERROR_BODY_LIMIT",
    "ErrorText",
    "ERROR_BODY_READ_LIMIT",
    "ProviderRun",
    "SSEEvent",
    "SSEParser",
    "SSEStream",
    "apply_on_payload",
    "backoff_delay_s",
    "format_http_error",
    "merge_headers",
    "notify_response",
    "provider_error_message",
    "redact",
    "requested_delay_s",
    "resolve_api_key",
    "run_provider",
    "should_retry",
    "transport_error",
]

P = ParamSpec("P")

ErrorText = Callable[[int, str, str, bool], str]
"""``(status, reason_phrase, body, more) -> text`` of a failed HTTP status; ``more``: the
body went on past what was read."""

# Headers that authenticate a request: their values are secrets, and a request that
# already carries one needs no API key.
AUTH_HEADERS: Final = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cf-aig-authorization"}
)
# Upper bound on closing a response after a failure or cancellation.
_CLOSE_TIMEOUT_S: Final = 5.0

UNKNOWN_ERROR_TEXT: Final = "An unknown error occurred"


# --------------------------------------------------------------------------- keys, headers


def resolve_api_key(model: Model, options: StreamOptions) -> str | None:
    """``options.api_key``, else the provider's environment variable (``options.env``
    first, then the process environment), else ``None``."""
    return options.api_key or get_env_api_key(model.provider, options.env)


def merge_headers(*layers: Mapping[str, str | None] | None) -> dict[str, str]:
    """Merge header layers, later ones winning; names compare case-insensitively (the
    last spelling is sent) and a ``None`` value removes the header."""
    merged: dict[str, tuple[str, str]] = {}
    for layer in layers:
        if not layer:
            continue
        for name, value in layer.items():
            if value is None:
                merged.pop(name.lower(), None)
            else:
                merged[name.lower()] = (name, value)
    return dict(merged.values())


async def apply_on_payload(payload: Any, model: Model, options: StreamOptions) -> Any:
    """``options.on_payload(payload, model)`` (sync or async); ``None`` keeps ``payload``."""
    hook = options.on_payload
    if hook is None:
        return payload
    replaced = hook(payload, model)
    if inspect.isawaitable(replaced):
        replaced = await replaced
    return payload if replaced is None else replaced


async def notify_response(response: httpx2.Response, model: Model, options: StreamOptions) -> None:
    """``options.on_response(ResponseInfo(status, headers), model)``, sync or async; header
    names are lower case."""
    hook = options.on_response
    if hook is None:
        return
    info = ResponseInfo(status=response.status_code, headers=dict(response.headers.items()))
    result = hook(info, model)
    if inspect.isawaitable(result):
        await result


# --------------------------------------------------------------------------- the run


class ProviderRun:
    """One provider request in progress: the message builder, the model and options, and
    the helpers that send events and talk HTTP. Created by ``run_provider``."""

    __slots__ = ("_nowait", "_send", "_terminal", "builder", "model", "options", "secrets")

    def __init__(
        self,
        model: Model,
        options: StreamOptions,
        send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
    ) -> None:
        self.model = model
        self.options = options
        self.builder = MessageBuilder(model)
        self.secrets: set[str] = set()
        self._send = send
        self._nowait = isinstance(send, MemoryObjectSendStream)
        self._terminal = False

    # events ---------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once the terminal event was sent."""
        return self._terminal

    async def emit(self, event: AssistantMessageEvent) -> None:
        """Send one event (without a task switch when the channel has room)."""
        if self._terminal:
            raise StreamProtocolError(
                f"{event.type!r} after the terminal event; a stream sends exactly one "
                "terminal 'done' or 'error', last"
            )
        if isinstance(event, (DoneEvent, ErrorEvent)):
            self._terminal = True
        send = self._send
        if self._nowait:
            try:
                send.send_nowait(event)  # type: ignore[attr-defined]
            except anyio.WouldBlock:
                pass
            else:
                return
        await send.send(event)

    async def emit_all(self, events: list[AssistantMessageEvent]) -> None:
        for event in events:
            await self.emit(event)

    async def fail(self, text: str) -> None:
        """Send the ``error`` terminal with ``text`` (secrets redacted); unfinished blocks
        stay in the message without ``*_end`` events."""
        await self.emit(self.builder.error(redact(text, self.secrets) or UNKNOWN_ERROR_TEXT))

    async def finish(self) -> None:
        """The normal end of a wire stream: ``error`` if the message's stop reason is
        ``error``/``aborted`` (its ``error_message``), else end every open block in content
        order and send ``done``."""
        message = self.builder.message
        if message.stop_reason in ("error", "aborted"):
            await self.fail(message.error_message or UNKNOWN_ERROR_TEXT)
            return
        await self.emit_all(self.builder.end_open_blocks())
        await self.emit(self.builder.done())

    # request --------------------------------------------------------------

    def api_key(self, missing_text: str | None = None) -> str | None:
        """The API key (options, then environment) after ``clean_api_key``; remembered as a
        secret. ``None`` when the model or option headers already authenticate the request;
        otherwise a missing key raises ``ProviderError(missing_text or "No API key for
        provider: <p>")``."""
        key = resolve_api_key(self.model, self.options)
        if key:
            self.secrets.add(key)
            key = clean_api_key(key, self.model.provider)
            self.secrets.add(key)
            return key
        given = merge_headers(self.model.headers, self.options.headers)
        if any(name.lower() in AUTH_HEADERS for name in given):
            return None
        raise ProviderError(missing_text or f"No API key for provider: {self.model.provider}")

    def headers(self, defaults: Mapping[str, str | None]) -> dict[str, str]:
        """The identity's headers (``User-Agent``, attribution) → ``defaults`` →
        ``model.headers`` → ``options.headers`` (``None`` removes)."""
        model = self.model
        identity = get_identity_headers(model.provider, model.base_url, self.options.identity)
        return merge_headers(identity, defaults, model.headers, self.options.headers)

    async def on_payload(self, payload: Any) -> Any:
        """The request body after ``options.on_payload``."""
        return await apply_on_payload(payload, self.model, self.options)

    def open_sse(
        self,
        url: str,
        headers: Mapping[str, str],
        payload: Any,
        *,
        error_message: Callable[[str], str | None] = provider_error_message,
        error_text: ErrorText | None = None,
        retry_status: Callable[[int, str], bool] | None = None,
    ) -> AbstractAsyncContextManager[SSEStream]:
        """``async with run.open_sse(url, headers, payload) as sse:`` — POST ``payload`` as
        JSON (retrying as described in the module docstring), call ``on_response``, and
        yield an ``SSEStream`` over the body. Statuses >= 400 raise ``ProviderError`` with
        ``format_http_error(status, body, error_message(body))``, or ``error_text(status,
        reason_phrase, body, more)`` for a provider that words them its own way;
        ``retry_status(status, body)`` replaces the rule for which of them are retried.
        Leaving the block closes the response."""
        return _open_sse(self, url, headers, payload, error_message, error_text, retry_status)


async def run_provider(
    model: Model,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
    body: Callable[Concatenate[ProviderRun, P], Awaitable[None]],
    *args: P.args,
    **kwargs: P.kwargs,
) -> None:
    """Run ``body(run, *args)`` under the stream-function contract: any ``Exception``
    becomes the ``error`` terminal (content so far kept); a body that returns without a
    terminal gets ``run.finish()``; cancellation propagates untouched."""
    run = ProviderRun(model, options, send)
    try:
        await body(run, *args, **kwargs)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        raise  # the consumer went away; nobody is left to tell
    except Exception as exc:
        if run.finished:
            raise
        await run.fail(str(exc) if isinstance(exc, PiError) else f"{type(exc).__name__}: {exc}")
        return
    if not run.finished:
        await run.finish()


def _client(options: StreamOptions) -> httpx2.AsyncClient:
    registry = options.registry or default_registry
    client: httpx2.AsyncClient = registry.http_client()
    return client


@asynccontextmanager
async def _open_sse(
    run: ProviderRun,
    url: str,
    headers: Mapping[str, str],
    payload: Any,
    error_message: Callable[[str], str | None],
    error_text: ErrorText | None,
    retry_status: Callable[[int, str], bool] | None,
) -> AsyncIterator[SSEStream]:
    options = run.options
    for name, value in headers.items():
        if name.lower() in AUTH_HEADERS:
            # the credential, without a scheme such as "Bearer " (whose own 8-character
            # prefix would redact ordinary words)
            run.secrets.add(value.partition(" ")[2].strip() or value)
    check_header_values(headers, run.model.provider)
    client = _client(options)
    content = msgspec.json.encode(payload)
    timeout: Any = (
        httpx2.Timeout(options.timeout_ms / 1000)
        if options.timeout_ms
        else httpx2.USE_CLIENT_DEFAULT
    )
    request = client.build_request(
        "POST",
        url,
        content=content,
        headers={
            "content-type": "application/json",
            "accept": "text/event-stream",
            **headers,
        },
        timeout=timeout,
    )
    attempts = 1 + max(0, options.max_retries)
    attempt = 0
    while True:
        response: httpx2.Response | None = None
        failure: ProviderError
        retry_headers: Mapping[str, str] | None = None
        try:
            # never follow a redirect, even with a client configured to: the request
            # carries a key, and httpx2 drops only the Authorization header on the way
            response = await client.send(request, stream=True, follow_redirects=False)
        except httpx2.RequestError as exc:
            failure = transport_error(exc)
        else:
            status = response.status_code
            if status < 300:
                break
            retry_headers = response.headers
            try:
                if status < 400:
                    text = redirect_text(status, response.headers.get("location"))
                    raise ProviderError(redact(text, run.secrets), status=status)
                prefix = await read_body_prefix(response)
            finally:
                with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                    await response.aclose()
            body = prefix.text
            if error_text is None:
                text = format_http_error(status, body, error_message(body), more=prefix.more)
            else:
                text = error_text(status, response.reason_phrase, body, prefix.more)
            failure = ProviderError(
                redact(text, run.secrets),
                status=status,
                retryable=(
                    should_retry(status, retry_headers)
                    if retry_status is None
                    else retry_status(status, body)
                ),
            )
        if attempt + 1 >= attempts or not failure.retryable:
            raise failure
        await anyio.sleep(retry_wait_s(failure, retry_headers, attempt, options.max_retry_delay_ms))
        attempt += 1
    stream = SSEStream(response)
    try:
        await notify_response(response, run.model, options)
        yield stream
    finally:
        with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
            await stream.aclose()
            await response.aclose()
