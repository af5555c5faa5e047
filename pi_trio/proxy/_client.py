"""The I/O shell of the proxy client: one ``POST <proxy_url>/api/stream`` over httpx2.

The protocol itself is sans-IO: the body in ``_wire``, the lines and the rebuilt
message in ``_rebuild``.
Failures become one terminal ``error`` event; cancellation propagates and closes the
request (the consumer that owns the cancel scope writes the aborted outcome).
"""

from __future__ import annotations

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
    default_registry,
)
from ..ai._seam import (
    AFTER_TERMINAL_GRACE_S,
    ERROR_BODY_READ_LIMIT,
    clean_api_key,
    decode_json,
    read_body_prefix,
    redact,
)
from ._rebuild import EOF_DIAGNOSTICS, EOF_TEXT, LineSplitter, ProxyRebuilder
from ._wire import encode_request

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import ObjectSendStream

__all__ = ["ERROR_BODY_LIMIT", "stream_via_proxy"]

# How much of a failed response's body is read to find its ``error`` field. Error bodies
# are short JSON; a misbehaving server must not make the client buffer megabytes.
ERROR_BODY_LIMIT = ERROR_BODY_READ_LIMIT


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
    try:
        # never follow a redirect: the request carries the token
        async with http_client.stream(
            "POST", url, headers=headers, content=body, follow_redirects=False
        ) as response:
            if not 200 <= response.status_code < 300:
                text = redact(await _error_text(response), secrets)
                await send.send(rebuilder.error(text))
                return
            await _relay(response, rebuilder, send)
    except (httpx2.HTTPError, httpx2.StreamError) as exc:
        if rebuilder.terminal:
            return
        text = redact(f"Proxy request to {url} failed: {_describe(exc)}", secrets)
        await send.send(rebuilder.error(text))
        return
    if not rebuilder.terminal:
        await send.send(rebuilder.error(EOF_TEXT, diagnostics=list(EOF_DIAGNOSTICS)))


# Reading stops early through a cancel scope, not ``break``: the cancellation unwinds
# httpx2's stack of async generators at its checkpoint, where a ``break`` would leave the
# inner ones to the garbage collector.


async def _relay(
    response: httpx2.Response,
    rebuilder: ProxyRebuilder,
    send: ObjectSendStream[AssistantMessageEvent],
) -> None:
    """Send the events of the response body. A protocol violation sends the error outcome
    and stops reading; after the terminal event the rest of the body is read and ignored
    (as in the original) so the connection can be reused, but for no longer than
    ``AFTER_TERMINAL_GRACE_S``: a server that keeps the stream open must not hold up the
    run."""
    splitter = LineSplitter()
    with anyio.CancelScope() as reading:
        chunks = response.aiter_bytes()
        async with aclosing(chunks):
            async for chunk in chunks:
                if rebuilder.terminal:
                    continue
                try:
                    lines = splitter.feed(chunk)
                except StreamProtocolError as exc:
                    await send.send(rebuilder.error(str(exc)))
                    reading.cancel()
                    continue
                for line in lines:
                    if await _relay_line(line, rebuilder, send):
                        reading.cancel()
                        break
                if rebuilder.terminal:
                    reading.deadline = anyio.current_time() + AFTER_TERMINAL_GRACE_S
    if not rebuilder.terminal:
        for line in splitter.flush():
            await _relay_line(line, rebuilder, send)


async def _relay_line(
    line: str, rebuilder: ProxyRebuilder, send: ObjectSendStream[AssistantMessageEvent]
) -> bool:
    """Send the event of one line, if any; true when the line broke the protocol."""
    try:
        event = rebuilder.feed_line(line)
    except StreamProtocolError as exc:
        await send.send(rebuilder.error(str(exc)))
        return True
    if event is not None:
        await send.send(event)
    return False


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
