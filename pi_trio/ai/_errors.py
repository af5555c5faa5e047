"""The exception hierarchy. Request failures are data (``error`` events); these are for
misuse, protocol violations and the provider layer's internal plumbing."""

from __future__ import annotations

__all__ = [
    "PiError",
    "ProviderError",
    "ProviderNotFoundError",
    "StreamProtocolError",
    "UnknownModelError",
]


class PiError(Exception):
    """Root of every exception pi_trio raises on purpose."""


class ProviderNotFoundError(PiError, LookupError):
    """No provider is registered for a model's ``api``."""


class UnknownModelError(PiError, LookupError):
    """The catalog has no model by that name; the message names the closest ones."""


class ProviderError(PiError):
    """A failed provider request. Providers turn it into an ``error`` event; its message
    is the text the user sees (``"<status> <body>"`` for HTTP failures) and never holds an
    API key."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class StreamProtocolError(PiError):
    """A stream function sent events that break the protocol (e.g. a delta for a block
    that was never started). The runtime turns it into an ``error`` outcome."""
