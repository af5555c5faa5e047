"""The POST with retries that every HTTP provider sends (the original's
``retryProviderRequest``, ``src/utils/provider-retry.ts``).

``open_response`` sends one JSON request, retries it as ``_http``'s docstring describes,
and yields the successful response; leaving the block closes it. A provider whose body is
not SSE (Bedrock's binary event stream) reads that response itself; ``_http.open_sse``
wraps it in an ``SSEStream``. Three hooks serve providers whose requests are not plain:
``prepare`` is called on the request before every attempt (a signature that covers the
time of sending, such as AWS SigV4, is made anew for each retry), and ``describe`` words
a failed status from the status, the headers and the start of the body, and
``retryable`` decides from the status and the start of the body which ones to retry.

With a ``StallTimer`` the wait for each attempt's response head counts towards its
``first_event_timeout`` (the reader of the body goes on with what is left of it); an
attempt that reaches the limit before its head arrived fails like a transport error, so
it is retried as one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import httpx2
import msgspec

from .._errors import ProviderError
from .._http_body import read_body_prefix
from .._keys._secrets import check_header_values, credential_secrets
from .._stream._options import StreamOptions
from .._stream._registry import default_registry
from .._stream._stall import StallTimer
from .._types import Model
from ._http_errors import (
    format_http_error,
    provider_error_message,
    redact,
    redirect_text,
    retry_wait_s,
    should_retry,
    transport_error,
)

__all__ = [
    "AUTH_HEADERS",
    "CLOSE_TIMEOUT_S",
    "DescribeError",
    "PrepareRequest",
    "RetryableStatus",
    "open_response",
]

# Headers that authenticate a request: their values are secrets, and a request that
# already carries one needs no API key.
AUTH_HEADERS: Final = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cf-aig-authorization"}
)
# Upper bound on closing a response after a failure or cancellation.
CLOSE_TIMEOUT_S: Final = 5.0

PrepareRequest = Callable[[httpx2.Request], None]
"""Called with the request before each attempt; may set headers (e.g. a signature)."""

DescribeError = Callable[[int, httpx2.Headers, str, bool], str]
"""``(status, headers, body_start, more) -> text`` of a failed status."""

RetryableStatus = Callable[[int, str], bool]
"""``(status, body_start) -> bool``: whether a failed status is retried (a provider's own
rule, replacing ``should_retry``)."""


def _client(options: StreamOptions) -> httpx2.AsyncClient:
    registry = options.registry or default_registry
    client: httpx2.AsyncClient = registry.http_client()
    return client


def _default_describe(
    error_message: Callable[[str], str | None],
) -> DescribeError:
    def describe(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
        return format_http_error(status, body, error_message(body), more=more)

    return describe


async def _send(
    client: httpx2.AsyncClient, request: httpx2.Request, timer: StallTimer | None
) -> httpx2.Response:
    # never follow a redirect, even with a client configured to: the request carries a
    # key, and httpx2 drops only the Authorization header on the way
    if timer is None:
        return await client.send(request, stream=True, follow_redirects=False)
    timer.restart()
    with timer.head():
        response = await client.send(request, stream=True, follow_redirects=False)
    return response


@asynccontextmanager
async def open_response(
    model: Model,
    options: StreamOptions,
    secrets: set[str],
    url: str,
    headers: Mapping[str, str],
    payload: Any,
    *,
    accept: str = "text/event-stream",
    prepare: PrepareRequest | None = None,
    describe: DescribeError | None = None,
    error_message: Callable[[str], str | None] = provider_error_message,
    retryable: RetryableStatus | None = None,
    on_failed_status: Callable[[httpx2.Response], Awaitable[None]] | None = None,
    timer: StallTimer | None = None,
) -> AsyncIterator[httpx2.Response]:
    """POST ``payload`` as JSON to ``url`` and yield the successful (< 300) response.

    Statuses >= 300 and transport errors raise ``ProviderError`` (texts redacted of
    ``secrets``, to which the credentials among ``headers`` are added) after the retries
    ``options`` allow; ``on_failed_status(response)`` is awaited first for each failed
    status, before its body is read. ``timer``: each attempt starts its first-event limit
    anew, and waits for its head within it. Leaving the block closes the response."""
    for name, value in headers.items():
        if name.lower() in AUTH_HEADERS:
            secrets |= credential_secrets(value)  # set in place: the run's secrets
    check_header_values(headers, model.provider)
    describe = describe or _default_describe(error_message)
    client = _client(options)
    timeout: Any = (
        httpx2.Timeout(options.timeout_ms / 1000)
        if options.timeout_ms
        else httpx2.USE_CLIENT_DEFAULT
    )
    request = client.build_request(
        "POST",
        url,
        content=msgspec.json.encode(payload),
        headers={"content-type": "application/json", "accept": accept, **headers},
        timeout=timeout,
    )
    attempts = 1 + max(0, options.max_retries)
    attempt = 0
    while True:
        response: httpx2.Response | None = None
        failure: ProviderError
        retry_headers: Mapping[str, str] | None = None
        if prepare is not None:
            prepare(request)
        try:
            response = await _send(client, request, timer)
        except httpx2.RequestError as exc:
            failure = transport_error(exc)
        except ProviderError as exc:  # the timer's: no head within first_event_timeout
            failure = exc
        else:
            status = response.status_code
            if status < 300:
                break
            retry_headers = response.headers
            try:
                if on_failed_status is not None:
                    await on_failed_status(response)
                if status < 400:
                    text = redirect_text(status, response.headers.get("location"))
                    raise ProviderError(redact(text, secrets), status=status)
                prefix = await read_body_prefix(response)
            finally:
                with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
                    await response.aclose()
            text = describe(status, response.headers, prefix.text, prefix.more)
            failure = ProviderError(
                redact(text, secrets),
                status=status,
                retryable=(
                    should_retry(status, retry_headers)
                    if retryable is None
                    else retryable(status, prefix.text)
                ),
            )
        if attempt + 1 >= attempts or not failure.retryable:
            raise failure
        await anyio.sleep(retry_wait_s(failure, retry_headers, attempt, options.max_retry_delay_ms))
        attempt += 1
    try:
        yield response
    finally:
        with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
            await response.aclose()
