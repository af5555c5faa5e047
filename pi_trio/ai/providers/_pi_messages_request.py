"""The pi-messages request (sans-IO): its URL, its body, and the words of a failed one.

The body is ``{model, context, options}`` as the original serializes it: ``model`` is the
model's id, ``context`` the normalized transcript (``{"messages": [...]}``, the system
prompt and tools folded into its system messages) in the original's JSON, and
``options`` the six request options the protocol carries, each left out while unset:
``temperature``, ``maxTokens``, ``reasoning``, ``cacheRetention`` (unset means the
backend's default, or ``long`` when ``PI_CACHE_RETENTION=long``), ``sessionId`` and
``toolChoice``. ``extra={"debug": True}`` asks the backend for debug metadata with
``?debug=1``.

A text holding a lone surrogate (a file name read with ``surrogateescape``, say) is sent
as the escape JSON.stringify writes for it instead of failing: the body is then ASCII
with every other non-ASCII character escaped too, the same JSON.
"""

from __future__ import annotations

import json
from typing import Any, Final

import httpx2
import msgspec

from .._json._codec import to_json
from .._json._depth import decode_json
from .._stream._options import StreamOptions
from .._types import Context, Model, now_ms
from ._common import option_env
from ._http_errors import redact, shown_error_text

__all__ = [
    "DIAGNOSTIC_BODY_LIMIT",
    "RESPONSE_FAILURE_DIAGNOSTIC",
    "PiMessagesFailure",
    "PiMessagesRequestOptions",
    "encode_json",
    "encode_pi_messages_body",
    "pi_messages_error_code",
    "pi_messages_error_text",
    "pi_messages_url",
    "request_options",
]

RESPONSE_FAILURE_DIAGNOSTIC: Final = "pi_messages_response_failure"
# The longest raw error body a diagnostic keeps (the original's bound, in characters).
DIAGNOSTIC_BODY_LIMIT: Final = 8192


class PiMessagesRequestOptions(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """The ``options`` of a request, in the original's order; unset ones are left out."""

    temperature: float | None = None
    max_tokens: int | None = None
    reasoning: str | None = None
    cache_retention: str | None = None
    session_id: str | None = None
    tool_choice: Any = None


def pi_messages_url(model: Model, *, debug: bool = False) -> str:
    """``<base_url>/messages`` (trailing slashes of the base dropped), ``?debug=1`` asked."""
    url = f"{model.base_url.rstrip('/')}/messages"
    return f"{url}?debug=1" if debug else url


def _cache_retention(options: StreamOptions) -> str | None:
    if options.cache_retention is not None:
        return options.cache_retention
    return "long" if option_env(options, "PI_CACHE_RETENTION") == "long" else None


def request_options(options: StreamOptions) -> PiMessagesRequestOptions:
    """What of ``options`` the request carries."""
    return PiMessagesRequestOptions(
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        reasoning=options.reasoning,
        cache_retention=_cache_retention(options),
        session_id=options.session_id,
        tool_choice=options.tool_choice,
    )


def encode_json(value: Any) -> bytes:
    """``to_json(value)``; a lone surrogate in a string is written as an escape (the whole
    text then ASCII) instead of failing."""
    try:
        return to_json(value)
    except msgspec.EncodeError as exc:
        if not isinstance(exc.__cause__, UnicodeEncodeError):
            raise
    builtins = msgspec.to_builtins(value)
    return json.dumps(builtins, ensure_ascii=True, separators=(",", ":")).encode()


def encode_pi_messages_body(model: Model, transcript: Context, options: StreamOptions) -> bytes:
    """The JSON body of a request for ``transcript`` (a normalized context)."""
    return b"".join(
        (
            b'{"model":',
            encode_json(model.id),
            b',"context":{"messages":',
            encode_json(transcript.messages),
            b'},"options":',
            encode_json(request_options(options)),
            b"}",
        )
    )


# --------------------------------------------------------------------------- failures


def _error_object(body: str) -> dict[str, Any] | None:
    """The body's ``error`` when the body is a JSON object whose ``error`` is an object."""
    try:
        parsed = decode_json(body)
    except msgspec.DecodeError:
        return None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    return error if isinstance(error, dict) else None


def pi_messages_error_code(error: dict[str, Any] | None) -> str | None:
    """The backend's error code: a string ``error.code``."""
    code = None if error is None else error.get("code")
    return code if isinstance(code, str) else None


def pi_messages_error_text(status: int, body: str, *, more: bool = False) -> str:
    """``<status> <reason>: <error.message or body>`` plus `` (<error.code>)`` when the
    body is a JSON error object that names one; the body is trimmed and cut at 4 000
    characters."""
    error = _error_object(body)
    message = None if error is None else error.get("message")
    shown = shown_error_text(body, message if isinstance(message, str) else None, more)
    code = pi_messages_error_code(error)
    reason = httpx2.codes.get_reason_phrase(status)
    return f"{status} {reason}: {shown}{f' ({code})' if code else ''}"


def _redacted(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    return value


class PiMessagesFailure:
    """Words a failed status (the ``describe`` hook of the HTTP shell) and keeps what the
    ``pi_messages_response_failure`` diagnostic records of it: the status, the backend's
    error object or else the start of the raw body."""

    __slots__ = ("_body", "_details", "_url", "code", "model", "status")

    def __init__(self, model: Model, url: str) -> None:
        self.model = model
        self.status: int | None = None
        self.code: str | None = None
        self._url = url
        self._details: dict[str, Any] = {}

    def describe(self, status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
        error = _error_object(body)
        self.status = status
        self.code = pi_messages_error_code(error)
        details: dict[str, Any] = {
            "version": 1,
            "provider": self.model.provider,
            "model": self.model.id,
            "url": self._url,
            "status": status,
            "statusText": httpx2.codes.get_reason_phrase(status),
        }
        if error is not None:
            details["error"] = error
        else:
            cut = more or len(body) > DIAGNOSTIC_BODY_LIMIT
            details["body"] = f"{body[:DIAGNOSTIC_BODY_LIMIT]}…" if cut else body
        details["timestampMs"] = now_ms()
        self._details = details
        return pi_messages_error_text(status, body, more=more)

    def diagnostic(self, text: str, secrets: set[str]) -> dict[str, Any]:
        """The diagnostic of the failure whose error text is ``text``; strings from the
        response are cleaned of ``secrets``."""
        error: dict[str, Any] = {"name": "PiMessagesResponseError", "message": text}
        if self.code is not None:
            error["code"] = redact(self.code, secrets)
        return {
            "type": RESPONSE_FAILURE_DIAGNOSTIC,
            "timestamp": now_ms(),
            "error": error,
            "details": _redacted(self._details, secrets),
        }
