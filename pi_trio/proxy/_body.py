"""Request bodies within the server's memory budget: reading them, bounded, and the
charge each request holds against ``max_bytes_in_flight`` until it ends.

While a body arrives, its request is charged the bytes received (a declared
``Content-Length`` is charged in full before any byte is read). Once it has arrived, the
charge becomes ``memory_estimate(body)``: what the body may take in memory once decoded
and turned into the provider's request, bounded per byte and per JSON value (a body of
empty objects becomes about 27 times its size, 50 for Bedrock; text with one character
beyond the Basic Multilingual Plane about 9), held until the request ends. A body whose
estimate exceeds the whole budget is refused (413); a request that does not fit beside
the others is answered 503 with ``Retry-After``.
"""

from __future__ import annotations

from typing import Final

from ._asgi import Receive, Scope, content_length

__all__ = [
    "ASCII_BYTE_COST",
    "BYTE_COST",
    "Budget",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DRAIN_LIMIT",
    "VALUE_COST",
    "Charge",
    "Disconnected",
    "Overdrawn",
    "TooLarge",
    "drain",
    "memory_estimate",
    "receive_body",
]

# A request body holds a whole transcript, images included (base64); 32 MiB fits long
# sessions with screenshots while bounding what one request can make the server buffer.
DEFAULT_MAX_BODY_BYTES: Final = 32 * 1024 * 1024

# What all requests together may hold: bodies arriving, and what the bodies of running
# streams became (by ``memory_estimate``). 512 MiB holds one of the largest bodies at its
# worst (32 MiB of text in one string with a character beyond the Basic Multilingual
# Plane, held at four bytes a character) beside many ordinary ones: a session of a few
# hundred KiB is charged a few MiB.
DEFAULT_MAX_BYTES_IN_FLIGHT: Final = 512 * 1024 * 1024

# How much of a refused (too large) body is still read and dropped: the client then reads
# the 413 instead of a connection reset. Beyond this the connection is just closed.
DRAIN_LIMIT: Final = 1024 * 1024

# Bytes of memory one byte of body may become, at most: a string decoded at four bytes a
# character, the provider's request encoded from it, the body itself. Measured worst:
# 9.6 (tests/test_fault_proxy.py measures every API with tracemalloc, 128 KiB bodies,
# the server's own costs per request included).
BYTE_COST: Final = 12
# The same for a body of ASCII without ``\u`` escapes, whose strings are held at one byte
# a character. Measured worst: 4.9.
ASCII_BYTE_COST: Final = 6
# Bytes of memory one JSON value may become beyond its text: the Python object, its slot
# in a list or dict, the provider's request object built from it. Measured worst: about
# 70 (empty objects in tool-call arguments sent to Bedrock, or to Radius in a body with a
# lone surrogate escape).
VALUE_COST: Final = 128


def memory_estimate(body: bytes) -> int:
    """An upper bound of the memory ``body`` takes once decoded and sent on: every byte
    at ``BYTE_COST`` (``ASCII_BYTE_COST`` when the body is ASCII without ``\\u``
    escapes), every JSON value at ``VALUE_COST`` more. The values are counted from above,
    one per comma and opening bracket (commas inside strings count too)."""
    ascii_only = body.isascii() and b"\\u" not in body
    per_byte = ASCII_BYTE_COST if ascii_only else BYTE_COST
    values = body.count(b",") + body.count(b"{") + body.count(b"[")
    return len(body) * per_byte + values * VALUE_COST


class Budget:
    """The bytes all requests may hold (``limit``) and hold now (``used``)."""

    __slots__ = ("limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0


class Charge:
    """What one request holds of a ``Budget``; ``release()`` (idempotent) gives it back."""

    __slots__ = ("_budget", "held")

    def __init__(self, budget: Budget) -> None:
        self._budget = budget
        self.held = 0

    def hold(self, amount: int) -> bool:
        """Hold ``amount`` in all (more or less than now); ``False``, holding what it
        held, when the budget has no room for it."""
        budget = self._budget
        if amount > self.held and budget.used - self.held + amount > budget.limit:
            return False
        budget.used += amount - self.held
        self.held = amount
        return True

    def release(self) -> None:
        self._budget.used -= self.held
        self.held = 0


class TooLarge(Exception):
    """The body is over ``max_body_bytes`` (413)."""


class Overdrawn(Exception):
    """The body does not fit in ``max_bytes_in_flight`` beside the others (503)."""


class Disconnected(Exception):
    """The client went away before its body arrived."""


async def receive_body(scope: Scope, receive: Receive, limit: int, charge: Charge) -> bytes:
    """The request body, at most ``limit`` bytes, charged to ``charge`` as it arrives.
    Raises ``TooLarge`` (a too-large body is read on up to ``DRAIN_LIMIT`` past the
    limit, so that the client reads the answer), ``Overdrawn`` or ``Disconnected``."""
    declared = content_length(scope)
    if declared is not None:
        if declared > limit + DRAIN_LIMIT:
            raise TooLarge
        if declared <= limit and not charge.hold(declared):
            raise Overdrawn
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        more = message.get("more_body", False)
        if size > limit:
            if more and size <= limit + DRAIN_LIMIT:
                parts.clear()
                continue
            raise TooLarge
        if size > charge.held and not charge.hold(size):
            raise Overdrawn
        parts.append(chunk)
        if not more:
            return b"".join(parts)


async def drain(receive: Receive) -> None:
    """Receive and drop a request body, at most ``DRAIN_LIMIT`` bytes of it."""
    size = 0
    while size <= DRAIN_LIMIT:
        message = await receive()
        if message["type"] == "http.disconnect" or not message.get("more_body", False):
            return
        size += len(message.get("body", b""))
