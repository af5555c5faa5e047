"""Reading an SSE response body as batches of events (the I/O half of ``_sse``).

A body that holds no event at all is a failure, not an empty answer: a 204, an HTML page
from a captive portal or a wrong ``base_url``, a JSON error sent with a 200. Until the
first event arrives the start of the body is kept (at most ``ERROR_BODY_READ_LIMIT``
bytes) to show in the error; a body not labelled ``text/event-stream`` is given up on when
that much has arrived without an event, a labelled one is read to its end.

With an observer (``StreamOptions.on_provider_stream_event``) each event whose data is
JSON is decoded as plain values and given to it before the provider maps the event (only
the events named in ``observed`` when that is given: the ones a vendor SDK yields); the
stream then yields one event per batch, so the observer and the mapping alternate.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx2
import msgspec

from .._errors import ProviderError
from .._http_body import ERROR_BODY_READ_LIMIT
from .._json_depth import decode_checked
from ._http_errors import no_events_text, provider_error_message, transport_error
from ._sse import SSEEvent, SSEParser

__all__ = ["ObservedSSEStream", "Observer", "SSEStream", "close_chunks"]

Observer = Callable[[Any], Awaitable[None]]
"""Called with each provider event as plain JSON values before it is mapped."""


class SSEStream:
    """The events of an SSE response body: ``async for batch in stream`` gives one list of
    ``SSEEvent`` per network read that completed any (the final event without a trailing
    blank line included). Transport errors while reading raise ``ProviderError``, and so
    does a body that holds no event at all (see ``no_events_text``)."""

    __slots__ = (
        "_chunks",
        "_done",
        "_exhausted",
        "_head",
        "_head_size",
        "_parser",
        "_sse_typed",
        "response",
    )

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        # An identity-encoded body needs no decoder: read it raw (one layer less per chunk).
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        self._chunks: AsyncIterator[bytes] = (
            response.aiter_raw() if encoding in ("", "identity") else response.aiter_bytes()
        )
        self._parser = SSEParser()
        self._done = False
        self._exhausted = False  # the chunk iterator has ended (or raised)
        media = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        self._sse_typed = media == "text/event-stream"
        # The start of the body until its first event (None after it): the diagnostic of
        # a body without events, bounded by ERROR_BODY_READ_LIMIT.
        self._head: list[bytes] | None = []
        self._head_size = 0

    def _no_events(self) -> ProviderError:
        head = b"".join(self._head or [])
        more = len(head) > ERROR_BODY_READ_LIMIT
        body = head[:ERROR_BODY_READ_LIMIT].decode("utf-8", "replace")
        status = self.response.status_code
        content_type = self.response.headers.get("content-type")
        text = no_events_text(status, content_type, body, provider_error_message(body), more=more)
        return ProviderError(text, status=status)

    def _keep_head(self, chunk: bytes) -> None:
        head = self._head
        assert head is not None
        if self._head_size <= ERROR_BODY_READ_LIMIT:
            head.append(chunk)
            self._head_size += len(chunk)
        if not self._sse_typed and self._head_size > ERROR_BODY_READ_LIMIT:
            self._done = True
            raise self._no_events()

    def __aiter__(self) -> SSEStream:
        return self

    async def __anext__(self) -> list[SSEEvent]:
        parser = self._parser
        while not self._done:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._done = self._exhausted = True
                events = parser.close()
                if events:
                    self._head = None
                    return events
                if self._head is not None:
                    raise self._no_events() from None
                break
            except httpx2.RequestError as exc:
                self._done = self._exhausted = True
                raise transport_error(exc) from exc
            events = parser.feed(chunk)
            if events:
                self._head = None
                return events
            if self._head is not None:
                self._keep_head(chunk)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop reading (see ``close_chunks``)."""
        self._done = True
        await close_chunks(self._chunks, exhausted=self._exhausted)
        self._exhausted = True


class ObservedSSEStream(SSEStream):
    """An ``SSEStream`` that gives each event whose data is JSON (and whose name is in
    ``observed``, when given) to ``observer`` as plain values, one event per batch."""

    __slots__ = ("_observed", "_observer", "_pending")

    def __init__(
        self,
        response: httpx2.Response,
        observer: Observer,
        observed: frozenset[str] | None = None,
    ) -> None:
        super().__init__(response)
        self._observer = observer
        self._observed = observed
        self._pending: deque[SSEEvent] = deque()

    async def __anext__(self) -> list[SSEEvent]:
        pending = self._pending
        if not pending:
            pending.extend(await super().__anext__())
        event = pending.popleft()
        if self._observed is not None and event.event not in self._observed:
            return [event]
        try:
            value = decode_checked(msgspec.json.decode, event.data)
        except msgspec.DecodeError:
            return [event]  # not JSON (``[DONE]``): no provider event; the mapper decides
        await self._observer(value)
        return [event]


async def close_chunks(chunks: AsyncIterator[bytes], *, exhausted: bool) -> None:
    """Stop reading a response body's chunk iterator. httpx2 reads a body through a stack
    of async generators; left at a ``yield`` they would be finalized by the garbage
    collector (with a ``ResourceWarning``), so unless the iterator has ended
    (``exhausted``) the stack is resumed inside a cancelled scope: the cancellation at its
    next network read unwinds every generator of it."""
    if not exhausted:
        # chunks already buffered come without a checkpoint; the first real read ends it
        with anyio.CancelScope() as unwinding:
            unwinding.cancel()
            with contextlib.suppress(StopAsyncIteration, httpx2.HTTPError, httpx2.StreamError):
                while True:
                    await chunks.__anext__()
    closer = getattr(chunks, "aclose", None)
    if closer is not None:
        await closer()
