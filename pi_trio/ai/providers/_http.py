"""Shared plumbing of the HTTP providers: keys, headers, hooks, the POST with retries, HTTP
error texts, SSE reading, and the run wrapper that turns every failure into one ``error``.

A provider's stream function is a coroutine of a ``ProviderRun``, which
``_entry.provider_stream`` runs under ``run_provider``::

    @provider_stream
    async def stream_example(run: ProviderRun, context: Context) -> None:
        api_key = run.api_key()                      # ProviderError when there is none
        payload = await run.on_payload(build_body(run.model, context, run.options))
        headers = run.headers({"Authorization": f"Bearer {api_key}"})
        async with run.open_sse(f"{run.model.base_url}/chat/completions", headers,
                                payload) as sse:
            await relay(run, sse, mapper.feed)       # start, then each SSE event's events
        # Returning without a terminal event: ``run_provider`` ends the open blocks in
        # content order and sends ``done`` -- or ``error`` when the message's
        # ``stop_reason`` was set to ``"error"``/``"aborted"`` (with its ``error_message``).

Rules the helpers implement, as every adapter of the original does over its vendor SDK
(``src/api/*.ts``; retries: ``retryProviderRequest`` in ``src/utils/provider-retry.ts``):

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
- ``options.first_event_timeout`` and ``options.idle_timeout`` bound the waits for the
  provider's events (``run.stall_timer()``, see ``ai/_stream/_stall``): ``open_sse``
  reads within them; a provider reading a body of its own passes the timer to
  ``open_response`` and to its reader, and reads inside ``watching(timer)``. A limit
  reached ends the request with its ``ProviderError``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Concatenate, Final, ParamSpec

import anyio
import anyio.abc
import httpx2
from anyio.streams.memory import MemoryObjectSendStream

from .._errors import PiError, ProviderError, StreamProtocolError
from .._events import AssistantMessageEvent, DoneEvent, ErrorEvent
from .._http_body import ERROR_BODY_READ_LIMIT
from .._identity import get_identity_headers
from .._keys._env import get_env_api_key, missing_key_hint
from .._keys._secrets import clean_api_key
from .._stream._builder import MessageBuilder
from .._stream._consume import InlineStream
from .._stream._options import ResponseInfo, StreamOptions
from .._stream._stall import StallTimer, stall_timer, watching
from .._types import Model
from ._http_errors import (
    ERROR_BODY_LIMIT,
    backoff_delay_s,
    format_http_error,
    provider_error_message,
    redact,
    requested_delay_s,
    should_retry,
    transport_error,
)
from ._http_send import (
    AUTH_HEADERS,
    CLOSE_TIMEOUT_S,
    DescribeError,
    PrepareRequest,
    RetryableStatus,
    open_response,
)
from ._sse import ObservedSSEStream, Observer, SSEEvent, SSEParser, SSEStream

__all__ = [
    "AUTH_HEADERS",
    "ERROR_BODY_LIMIT",
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
    "provider_event_observer",
    "provider_error_message",
    "redact",
    "requested_delay_s",
    "resolve_api_key",
    "run_provider",
    "should_retry",
    "transport_error",
]

P = ParamSpec("P")

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


def provider_event_observer(model: Model, options: StreamOptions) -> Observer | None:
    """``options.on_provider_stream_event`` bound to ``model`` (sync or async), or
    ``None`` when it is not set."""
    hook = options.on_provider_stream_event
    if hook is None:
        return None

    async def observe(event: Any) -> None:
        result = hook(event, model)
        if inspect.isawaitable(result):
            await result

    return observe


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
        # a memory channel (``open_stream``) or the engine's ``InlineStream`` (an agent
        # run) takes an event without a coroutine when it can; anything else is awaited
        self._nowait = isinstance(send, (MemoryObjectSendStream, InlineStream))
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
        provider: <p>")``, followed by the variable to set (``missing_key_hint``)."""
        key = resolve_api_key(self.model, self.options)
        if key:
            return self.clean_key(key)
        given = merge_headers(self.model.headers, self.options.headers)
        if any(name.lower() in AUTH_HEADERS for name in given):
            return None
        provider = self.model.provider
        missing = missing_text or f"No API key for provider: {provider}"
        raise ProviderError(missing + missing_key_hint(provider))

    def clean_key(self, key: str, sources: list[str] | None = None) -> str:
        """``key`` after ``clean_api_key`` (``sources``: where such keys come from, named
        in its error), both spellings remembered as secrets."""
        self.secrets.add(key)
        key = clean_api_key(key, self.model.provider, sources=sources)
        self.secrets.add(key)
        return key

    def headers(self, defaults: Mapping[str, str | None]) -> dict[str, str]:
        """The identity's headers (``User-Agent``, attribution) → ``defaults`` →
        ``model.headers`` → ``options.headers`` (``None`` removes)."""
        model = self.model
        identity = get_identity_headers(model.provider, model.base_url, self.options.identity)
        return merge_headers(identity, defaults, model.headers, self.options.headers)

    def stall_timer(self) -> StallTimer | None:
        """A timer of the options' event limits for one request (``None``: no limits)."""
        options = self.options
        return stall_timer(options.first_event_timeout, options.idle_timeout)

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
        describe: DescribeError | None = None,
        retryable: RetryableStatus | None = None,
        observed: frozenset[str] | None = None,
        notify_failures: bool = False,
    ) -> AbstractAsyncContextManager[SSEStream]:
        """``async with run.open_sse(url, headers, payload) as sse:`` — POST ``payload`` as
        JSON (retrying as described in the module docstring), call ``on_response``, and
        yield an ``SSEStream`` over the body. Statuses >= 400 raise ``ProviderError`` with
        ``format_http_error(status, body, error_message(body))``, or ``describe(status,
        headers, body_start, more)`` for a provider that words them its own way;
        ``retryable(status, body_start)`` replaces the rule for which of them are retried.
        ``options.on_provider_stream_event`` sees every event whose data is JSON, or only
        those whose ``event:`` name is in ``observed``. ``notify_failures``: ``on_response``
        also sees each failed status (as the providers whose vendor code calls it before
        checking the status). Leaving the block closes the response."""
        on_failed_status = self._notify if notify_failures else None
        return _open_sse(
            self,
            url,
            headers,
            payload,
            observed,
            error_message=error_message,
            describe=describe,
            retryable=retryable,
            on_failed_status=on_failed_status,
        )

    async def _notify(self, response: httpx2.Response) -> None:
        await notify_response(response, self.model, self.options)

    def open_response(
        self,
        url: str,
        headers: Mapping[str, str],
        payload: Any,
        *,
        accept: str,
        prepare: PrepareRequest | None = None,
        describe: DescribeError | None = None,
        timer: StallTimer | None = None,
    ) -> AbstractAsyncContextManager[httpx2.Response]:
        """``open_sse`` for a body that is not SSE: yields the successful response (after
        ``on_response``) for the provider to read. ``prepare(request)`` runs before every
        attempt (e.g. to sign it); ``describe(status, headers, body_start, more)`` words a
        failed status (default: ``format_http_error``); ``timer`` (``stall_timer()``)
        bounds the wait for the head, and the provider's reader goes on with it."""
        return _open_plain(self, url, headers, payload, accept, prepare, describe, timer)


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


@asynccontextmanager
async def _open_sse(
    run: ProviderRun,
    url: str,
    headers: Mapping[str, str],
    payload: Any,
    observed: frozenset[str] | None,
    **rules: Any,
) -> AsyncIterator[SSEStream]:
    timer = run.stall_timer()
    async with open_response(
        run.model, run.options, run.secrets, url, headers, payload, timer=timer, **rules
    ) as response:
        observer = provider_event_observer(run.model, run.options)
        stream = (
            SSEStream(response, timer)
            if observer is None
            else ObservedSSEStream(response, observer, observed, timer)
        )
        try:
            await notify_response(response, run.model, run.options)
            async with watching(timer):
                yield stream
        finally:
            with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
                await stream.aclose()


@asynccontextmanager
async def _open_plain(
    run: ProviderRun,
    url: str,
    headers: Mapping[str, str],
    payload: Any,
    accept: str,
    prepare: PrepareRequest | None,
    describe: DescribeError | None,
    timer: StallTimer | None,
) -> AsyncIterator[httpx2.Response]:
    async with open_response(
        run.model,
        run.options,
        run.secrets,
        url,
        headers,
        payload,
        accept=accept,
        prepare=prepare,
        describe=describe,
        timer=timer,
    ) as response:
        await notify_response(response, run.model, run.options)
        yield response
