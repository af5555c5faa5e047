"""The I/O shell of the proxy client: one ``POST <proxy_url>/api/stream`` over httpx2.

The protocol itself is sans-IO: the body in ``_wire``, the lines and the rebuilt
message in ``_rebuild``.
Failures become one terminal ``error`` event; cancellation propagates and closes the
request (the consumer that owns the cancel scope writes the aborted outcome). The
options' ``first_event_timeout`` and ``idle_timeout`` bound the waits for the proxy's
events as they bound a provider's (a line that carries no event, such as a blank
keep-alive line, does not count).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from ..ai import (
    AssistantMessageEvent,
    Context,
    Model,
    ProviderError,
    StreamOptions,
    StreamProtocolError,
)
from ..ai._seam import (
    AFTER_TERMINAL_GRACE_S,
    ERROR_BODY_READ_LIMIT,
    StallTimer,
    clean_api_key,
    decode_json,
    read_body_prefix,
    redact,
    stall_timer,
    watching,
)
from ..ai.providers import default_registry
from ._rebuild import EOF_DIAGNOSTICS, EOF_TEXT, LineSplitter, ProxyRebuilder
from ._wire import encode_request

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import ObjectSendStream

__all__ = ["ERROR_BODY_LIMIT", "stream_via_proxy"]

# How much of a failed response's body is read to find its ``error`` field. Error bodies
# are short JSON; a misbehaving server must not make the client buffer megabytes.
ERROR_BODY_LIMIT = ERROR_BODY_READ_LIMIT
# Upper bound on closing a response after a failure or cancellation.
_CLOSE_TIMEOUT_S = 5.0


async def stream_via_proxy(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: ObjectSendStream[AssistantMessageEvent],
    *,
    proxy_url: str,
    auth_token: str,
    http_client: httpx2.AsyncClient | None = None,
) -> None:
    """Stream one LLM call through a proxy server (a stream function once the proxy
    arguments are bound). Uses ``http_client``, else the registry's shared client."""
    import httpx2

    rebuilder = ProxyRebuilder(model)
    if http_client is None:
        http_client = (options.registry or default_registry).http_client()
    url = f"{proxy_url.rstrip('/')}/api/stream"
    secrets = {auth_token}
    try:
        token = clean_api_key(
            auth_token,
            model.provider,
            what="auth token",
            owner=f"the proxy {url!r}",
            sources=["the auth_token of stream_proxy"],
        )
    except ProviderError as exc:
        await send.send(rebuilder.error(str(exc)))
        return
    secrets.add(token)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    body = encode_request(model, context, options)
    timer = stall_timer(options.first_event_timeout, options.idle_timeout)
    request = http_client.build_request("POST", url, headers=headers, content=body)
    try:
        response = await _send(http_client, request, timer)
        try:
            if not 200 <= response.status_code < 300:
                text = redact(await _error_text(response), secrets)
                await send.send(rebuilder.error(text))
                return
            async with watching(timer):
                await _relay(response, rebuilder, send, timer)
        finally:
            with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                await response.aclose()
    except (httpx2.HTTPError, httpx2.StreamError) as exc:
        if rebuilder.terminal:
            return
        text = redact(f"Proxy request to {url} failed: {_describe(exc)}", secrets)
        await send.send(rebuilder.error(text))
        return
    except ProviderError as exc:  # the timer's: no event within a limit
        await send.send(rebuilder.error(str(exc)))
        return
    if not rebuilder.terminal:
        await send.send(rebuilder.error(EOF_TEXT, diagnostics=list(EOF_DIAGNOSTICS)))


async def _send(
    client: httpx2.AsyncClient, request: httpx2.Request, timer: StallTimer | None
) -> httpx2.Response:
    """The response head; with ``timer``, within its first-event limit."""
    # never follow a redirect: the request carries the token
    if timer is None:
        return await client.send(request, stream=True, follow_redirects=False)
    with timer.head():
        response = await client.send(request, stream=True, follow_redirects=False)
    return response


async def _timed(chunks: AsyncIterator[bytes], timer: StallTimer) -> bytes | None:
    """The next chunk, the timer's watchdog told that the reader waits; ``None`` at the
    end."""
    timer.waiting = True
    try:
        return await anext(chunks, None)
    finally:
        timer.waiting = False


# Reading stops early through a cancel scope, not ``break``: the cancellation unwinds
# httpx2's stack of async generators at its checkpoint, where a ``break`` would leave the
# inner ones to the garbage collector.


async def _relay(
    response: httpx2.Response,
    rebuilder: ProxyRebuilder,
    send: ObjectSendStream[AssistantMessageEvent],
    timer: StallTimer | None,
) -> None:
    """Send the events of the response body. A protocol violation sends the error outcome
    and stops reading; after the terminal event the rest of the body is read and ignored
    (as in the original) so the connection can be reused, but for no longer than
    ``AFTER_TERMINAL_GRACE_S``: a server that keeps the stream open must not hold up the
    run. Until then ``timer``'s watchdog is told of each read; a chunk counts when one
    of its lines made an event."""
    splitter = LineSplitter()
    with anyio.CancelScope() as reading:
        chunks = response.aiter_bytes()
        async with aclosing(chunks):
            while True:
                if timer is None or rebuilder.terminal:
                    chunk = await anext(chunks, None)
                else:
                    chunk = await _timed(chunks, timer)
                if chunk is None:
                    break
                if rebuilder.terminal:
                    continue
                try:
                    lines = splitter.feed(chunk)
                except StreamProtocolError as exc:
                    await send.send(rebuilder.error(str(exc)))
                    reading.cancel()
                    continue
                counted = False
                for line in lines:
                    sent, broken = await _relay_line(line, rebuilder, send)
                    counted = counted or sent
                    if broken:
                        reading.cancel()
                        break
                if timer is not None and counted:
                    timer.events += 1
                if rebuilder.terminal:
                    reading.deadline = anyio.current_time() + AFTER_TERMINAL_GRACE_S
    if not rebuilder.terminal:
        for line in splitter.flush():
            await _relay_line(line, rebuilder, send)


async def _relay_line(
    line: str, rebuilder: ProxyRebuilder, send: ObjectSendStream[AssistantMessageEvent]
) -> tuple[bool, bool]:
    """Send the event of one line, if any: ``(sent, broken)``, ``broken`` when the line
    broke the protocol."""
    try:
        event = rebuilder.feed_line(line)
    except StreamProtocolError as exc:
        await send.send(rebuilder.error(str(exc)))
        return True, True
    if event is not None:
        await send.send(event)
        return True, False
    return False, False


async def _error_text(response: httpx2.Response) -> str:
    """``Proxy error: <status> <statusText>``, or ``Proxy error: <error>`` when the body is
    JSON with an ``error`` field (the original's texts); a redirect names its
    ``Location`` (it is not followed). At most ``ERROR_BODY_LIMIT`` bytes are read."""
    text = f"Proxy error: {response.status_code} {response.reason_phrase}"
    if 300 <= response.status_code < 400:
        location = response.headers.get("location")
        target = "without a Location" if location is None else f"to {location[:500]!r}"
        return f"{text} (redirect {target} not followed)"
    prefix = await read_body_prefix(response, ERROR_BODY_LIMIT)
    if prefix.more:
        return text
    try:
        data: Any = decode_json(prefix.text)
    except msgspec.DecodeError:
        return text
    error = data.get("error") if isinstance(data, dict) else None
    if not error:
        return text
    if not isinstance(error, str):
        error = msgspec.json.encode(error).decode()
    return f"Proxy error: {error}"


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
