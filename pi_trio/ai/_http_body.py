"""Reading the start of an HTTP response body, never more (error texts, diagnostics).

The body of a failed response is only shown to a user, so at most ``ERROR_BODY_READ_LIMIT``
bytes of it are kept: reading stops once that many have arrived (one network read may
bring up to 64 KiB), and a compressed body is inflated to no more than the limit either
(a small gzip body can inflate a thousandfold). The caller then closes the response; a
body that was not read to its end closes its connection instead of returning it to the
pool.
"""

from __future__ import annotations

import zlib
from contextlib import aclosing
from typing import TYPE_CHECKING, Final, Protocol

import anyio

if TYPE_CHECKING:
    import httpx2

__all__ = ["ERROR_BODY_READ_LIMIT", "BodyPrefix", "read_body_prefix"]

# What a user needs to see of an error body (provider error JSON is a few hundred bytes);
# the text shown is cut again to ``ERROR_BODY_LIMIT`` characters.
ERROR_BODY_READ_LIMIT: Final = 8 * 1024


class BodyPrefix:
    """The start of a body: ``text`` (UTF-8, invalid bytes replaced) and ``more``, true
    when the body went on past the limit or could not be shown."""

    __slots__ = ("more", "text")

    def __init__(self, text: str, more: bool) -> None:
        self.text = text
        self.more = more


class _Inflater(Protocol):
    """What ``zlib.decompressobj()`` returns, as far as this module uses it."""

    @property
    def unconsumed_tail(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...


def _inflater(encoding: str) -> _Inflater | None:
    """A decompressor for ``gzip`` / ``deflate`` (zlib or gzip framing detected)."""
    if encoding in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)
    return None


async def read_body_prefix(
    response: httpx2.Response, limit: int = ERROR_BODY_READ_LIMIT
) -> BodyPrefix:
    """Up to ``limit`` bytes of ``response``'s decoded body. Transport errors while reading
    end the body early (what arrived is kept). Does not close the response."""
    import httpx2

    if response.is_stream_consumed:  # a response built in memory (mock transports)
        try:
            content = response.content
        except httpx2.ResponseNotRead:
            content = b""
        return BodyPrefix(content[:limit].decode("utf-8", "replace"), len(content) > limit)
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    identity = encoding in ("", "identity")
    inflater = None if identity else _inflater(encoding)
    if not identity and inflater is None:
        return BodyPrefix(f"[a body in the {encoding!r} encoding, not shown]", True)
    kept = bytearray()
    more = False
    # Reading stops through a cancel scope, not ``break``: the cancellation unwinds
    # httpx2's async generators at their checkpoint instead of leaving them to the GC.
    with anyio.CancelScope() as reading:
        try:
            chunks = response.aiter_raw()
            async with aclosing(chunks):
                async for chunk in chunks:
                    if more:
                        continue
                    room = limit - len(kept)
                    if inflater is None:
                        kept += chunk[:room]
                        more = len(chunk) > room
                    else:
                        kept += inflater.decompress(chunk, room)
                        more = bool(inflater.unconsumed_tail) or len(kept) >= limit
                    if more:
                        reading.cancel()
        except (httpx2.HTTPError, httpx2.StreamError, zlib.error):
            more = True
    return BodyPrefix(bytes(kept).decode("utf-8", "replace"), more)
