"""The exception hierarchy, all of it: every exception pi_trio raises on purpose is a
``PiError``.

Request failures are data (an ``error`` event; an assistant message with
``stop_reason="error"``) and tool failures are error results, not exceptions. These are
for misuse (the message says the rule and the fix), input that does not parse, protocol
violations and the provider layer's plumbing. The tree, with the module each class is
imported from (the agent's and the extras' own are defined in their layers), and a second
base in parentheses (``except LookupError`` catches an unknown model too)::

    PiError                                                  pi_trio.ai
    ├── ProviderError                                        pi_trio.ai
    ├── ProviderNotFoundError (LookupError)                  pi_trio.ai
    ├── UnknownModelError (LookupError)                      pi_trio.ai
    ├── StreamProtocolError                                  pi_trio.ai
    ├── MessageDecodeError (msgspec.DecodeError)             pi_trio.ai
    │   └── MessageValidationError (msgspec.ValidationError) pi_trio.ai
    ├── ToolArgumentsError (ValueError)                      pi_trio.ai
    ├── AgentBusyError (RuntimeError)                        pi_trio.agent
    ├── ContinueError (ValueError)                           pi_trio.agent
    ├── RunError                                             pi_trio.agent
    │   ├── RunAbortedError                                  pi_trio.agent
    │   │   └── RunLimitExceeded                             pi_trio.agent
    │   ├── ApprovalPendingError                             pi_trio.agent
    │   └── OutputValidationError                            pi_trio.agent
    ├── ResumeError (ValueError)                             pi_trio.agent
    │   └── TranscriptChangedError                           pi_trio.agent
    ├── SessionError (ValueError)                            pi_trio.session
    ├── MCPConnectionError (ConnectionError)                 pi_trio.mcp
    ├── MCPToolConflictError (ValueError)                    pi_trio.mcp
    └── RunCancelledError                                    pi_trio.durable

``tests/test_exports.py`` holds this drawing (and the README's copy) to the classes.
"""

from __future__ import annotations

import msgspec

__all__ = [
    "MessageDecodeError",
    "MessageValidationError",
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


class MessageDecodeError(PiError, msgspec.DecodeError):
    """JSON that does not hold the messages asked for (``from_json``,
    ``messages_from_json``, ``messages_from_jsonl``, session files): here malformed JSON,
    in the subclass ``MessageValidationError`` valid JSON of the wrong shape.

    The message names where: the ``source`` (a file name, when known), the ``line`` (and
    ``column``) and the field (``path``, msgspec's ``$[2].content[0].type``), then
    msgspec's ``reason``. Each is also an attribute (``None`` when unknown). Being a
    ``msgspec.DecodeError`` too, it is caught where msgspec's own errors are."""

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
    ) -> None:
        self.reason = reason
        self.source = source
        self.line = line
        self.column = column
        self.path = path
        where = [
            part
            for part in (
                source,
                f"line {line}" if line is not None else None,
                f"column {column}" if column is not None else None,
            )
            if part is not None
        ]
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


class MessageValidationError(MessageDecodeError, msgspec.ValidationError):
    """Valid JSON that is not a message: a missing or unknown field, a wrong type, an
    unknown ``role`` or content ``type``; ``path`` names the field (``$`` for the
    message itself)."""
