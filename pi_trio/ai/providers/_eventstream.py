"""Reading an AWS event-stream body (``application/vnd.amazon.eventstream``) as batches of
frames: the I/O half of the Bedrock provider's wire reading.

botocore's ``EventStreamBuffer`` does the binary framing (prelude, headers, payload) and
checks both CRC32 checksums; this module feeds it the body as it arrives and turns what
can go wrong into one ``ProviderError`` each: a frame that fails its checks, a body that
ends inside a frame, a message larger than ``MAX_PENDING_BYTES``, a body that is not an
event stream at all (another content type, or not one frame: a 204), a transport error.
With a ``StallTimer`` the reader tells the timer's watchdog when it waits on the network
and when a batch held an event; a batch of keep-alive frames only (``_keepalive.is_keepalive_frame``: an event frame with an empty payload, or
named ``ping``) does not count as an event. Needs the ``bedrock`` extra (botocore).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import httpx2
import msgspec
from botocore.eventstream import EventStreamBuffer, ParserError

from .._errors import ProviderError
from .._http_body import read_body_prefix
from .._stream._stall import StallTimer
from ._http_errors import no_events_text, provider_error_message, transport_error
from ._keepalive import is_keepalive_frame
from ._sse import close_chunks, drain_chunks

__all__ = [
    "EVENTSTREAM_CONTENT_TYPE",
    "MAX_PENDING_BYTES",
    "EventFrame",
    "EventStreamReader",
]

EVENTSTREAM_CONTENT_TYPE: Final = "application/vnd.amazon.eventstream"
# Bytes of one message kept while it arrives; a message is one delta of a few hundred
# bytes, so a longer one is a broken stream, not an answer.
MAX_PENDING_BYTES: Final = 8 * 1024 * 1024
# The header that names a message, by its ``:message-type`` (``:event-type`` otherwise).
_NAME_HEADERS: Final = {"exception": ":exception-type", "error": ":error-code"}


class EventFrame(msgspec.Struct, frozen=True, gc=False):
    """One event-stream message: ``message_type`` is ``event``, ``exception`` or
    ``error``; ``name`` is its ``:event-type``, ``:exception-type`` or ``:error-code``;
    ``payload`` the raw bytes (JSON for events and exceptions); ``error_message`` the
    ``:error-message`` of an ``error`` message."""

    message_type: str
    name: str
    payload: bytes
    error_message: str | None = None


def _header(headers: dict[str, object], name: str) -> str:
    value = headers.get(name)
    return value if isinstance(value, str) else ""


class EventStreamReader:
    """``async for frames in reader`` gives the frames completed by each network read."""

    __slots__ = (
        "_broken",
        "_buffer",
        "_checked",
        "_chunks",
        "_done",
        "_exhausted",
        "_pending",
        "_seen",
        "_timer",
        "_what",
        "response",
    )

    def __init__(
        self, response: httpx2.Response, what: str, timer: StallTimer | None = None
    ) -> None:
        self.response = response
        self._timer = timer
        self._what = what
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        self._chunks: AsyncIterator[bytes] = (
            response.aiter_raw() if encoding in ("", "identity") else response.aiter_bytes()
        )
        self._buffer = EventStreamBuffer()
        self._pending = 0  # bytes fed to the buffer that no complete frame has used yet
        self._done = False
        self._exhausted = False
        self._checked = False
        self._seen = False  # a frame arrived
        self._broken: ProviderError | None = None

    def __aiter__(self) -> EventStreamReader:
        return self

    async def _check_content_type(self) -> None:
        content_type = self.response.headers.get("content-type")
        media = (content_type or "").partition(";")[0].strip().lower()
        if content_type is None or media == EVENTSTREAM_CONTENT_TYPE:
            return
        self._done = True
        prefix = await read_body_prefix(self.response)
        message = provider_error_message(prefix.text)
        text = no_events_text(
            self.response.status_code, content_type, prefix.text, message, more=prefix.more
        )
        raise ProviderError(text, status=self.response.status_code)

    def _frames(self, chunk: bytes) -> list[EventFrame]:
        self._pending += len(chunk)
        if self._pending > MAX_PENDING_BYTES:
            raise ProviderError(
                f"{self._what} event stream message is larger than {MAX_PENDING_BYTES} bytes; "
                "the stream is broken"
            )
        self._buffer.add_data(chunk)
        frames: list[EventFrame] = []
        try:
            for message in self._buffer:
                self._pending -= message.prelude.total_length
                headers = message.headers
                kind = _header(headers, ":message-type")
                frames.append(
                    EventFrame(
                        message_type=kind,
                        name=_header(headers, _NAME_HEADERS.get(kind, ":event-type")),
                        payload=bytes(message.payload),
                        error_message=_header(headers, ":error-message") or None,
                    )
                )
        except ParserError as exc:
            # the frames before the broken one count: they are delivered first
            self._broken = ProviderError(f"{self._what} event stream is corrupt: {exc}")
            self._broken.__cause__ = exc
            if not frames:
                raise self._broken from exc
        return frames

    async def __anext__(self) -> list[EventFrame]:
        timer = self._timer
        if timer is None:
            return await self._next()
        timer.waiting = True
        try:
            frames = await self._next()
        finally:
            timer.waiting = False
        if not all(is_keepalive_frame(f.message_type, f.name, f.payload) for f in frames):
            timer.events += 1
        return frames

    async def _next(self) -> list[EventFrame]:
        if self._broken is not None:
            self._done = True
            raise self._broken
        if not self._checked:
            self._checked = True
            await self._check_content_type()
        while not self._done:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._done = self._exhausted = True
                if self._pending:
                    raise ProviderError(
                        f"Network error: the {self._what} event stream ended inside a message "
                        f"({self._pending} bytes of an unfinished frame)"
                    ) from None
                if not self._seen:
                    response = self.response
                    content_type = response.headers.get("content-type")
                    text = no_events_text(response.status_code, content_type, "", None, more=False)
                    raise ProviderError(text, status=response.status_code) from None
                break
            except httpx2.RequestError as exc:
                self._done = self._exhausted = True
                raise transport_error(exc) from exc
            try:
                frames = self._frames(chunk)
            except ProviderError:
                self._done = True
                raise
            if frames:
                self._seen = True
                return frames
        raise StopAsyncIteration

    async def drain(self) -> None:
        """After the frame that ends the answer: stop parsing, read the rest of the body
        (see ``drain_chunks``) so that its connection can be reused; the answer is
        complete, so a connection lost meanwhile is no failure."""
        if not self._done:
            self._done = True
            self._exhausted = await drain_chunks(self._chunks)

    async def aclose(self) -> None:
        """Stop reading; the response's body iterators are closed (see ``close_chunks``)."""
        self._done = True
        await close_chunks(self._chunks, exhausted=self._exhausted)
        self._exhausted = True
