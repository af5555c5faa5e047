"""HTTP failure texts and retry rules of the HTTP providers (sans-IO; the original's
``src/utils/error-body.ts`` and ``src/utils/provider-retry.ts``).

Texts are worded as the original runtime's SDKs word them, because downstream classifiers
(context overflow, retryable errors) match on them: ``"<status> <message or body>"``,
``"<status> status code (no body)"``, and transport failures that say ``Connection error``,
``Network error`` or ``timed out``. ``openai_sdk_error_text`` words a failed status as the
OpenAI SDK does and pi 1.6 shows it (Chat Completions, Responses and Azure).
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Mapping
from typing import Final

import httpx2
import msgspec

from .._errors import ProviderError
from .._json._depth import decode_json
from .._keys._secrets import redact

__all__ = [
    "BACKOFF_BASE_S",
    "BACKOFF_MAX_S",
    "ERROR_BODY_LIMIT",
    "backoff_delay_s",
    "format_http_error",
    "no_events_text",
    "openai_sdk_error_text",
    "provider_error_message",
    "redact",
    "redirect_text",
    "requested_delay_s",
    "retry_wait_s",
    "should_retry",
    "shown_error_text",
    "transport_error",
]

# Longest provider error text kept in an error message (the rest is counted, not shown).
ERROR_BODY_LIMIT: Final = 4000
# Exponential backoff between retries: 0.5 s, 1 s, 2 s, ... capped at 8 s, minus up to 25%.
BACKOFF_BASE_S: Final = 0.5
BACKOFF_MAX_S: Final = 8.0
# Longest ``Location`` shown in a refused redirect.
_LOCATION_LIMIT: Final = 500


# --------------------------------------------------------------------------- error texts


def provider_error_message(body: str) -> str | None:
    """The human part of a JSON error body: ``error.message`` (OpenAI, Anthropic, Google,
    OpenRouter -- plus OpenRouter's ``error.metadata.raw`` on a new line), a string
    ``error``, or a top-level ``message``; ``None`` when the body is not such JSON."""
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            metadata = error.get("metadata")
            raw = metadata.get("raw") if isinstance(metadata, dict) else None
            if isinstance(raw, str) and raw and raw not in message:
                message = f"{message}\n{raw}"
            return message
    if isinstance(error, str) and error:
        return error
    message = data.get("message")
    return message if isinstance(message, str) and message else None


def shown_error_text(body: str, message: str | None, more: bool) -> str:
    """What an error text shows of a failed response: ``message`` (else the body),
    trimmed, at most ``ERROR_BODY_LIMIT`` characters plus a note of what was cut."""
    text = (message or body).strip()
    if len(text) > ERROR_BODY_LIMIT:
        cut = len(text) - ERROR_BODY_LIMIT
        return f"{text[:ERROR_BODY_LIMIT]}... [truncated {cut}{'+' if more else ''} chars]"
    if more and message is None and text:
        return f"{text}... [truncated]"
    return text


def format_http_error(
    status: int, body: str, message: str | None = None, *, more: bool = False
) -> str:
    """``"<status> <message or body>"`` trimmed and truncated, or
    ``"<status> status code (no body)"``. ``more``: the body went on past what was read."""
    text = shown_error_text(body, message, more)
    if not text:
        return f"{status} status code (no body)"
    return f"{status} {text}"


def openai_sdk_error_text(status: int, body: str, more: bool, name: str | None = None) -> str:
    """A failed status as the OpenAI SDK words it and pi 1.6 shows it. A JSON body with a
    non-empty ``error`` object shows that object as compact JSON: ``<status>: <JSON>``,
    or ``<name> API error (<status>): <JSON>`` with a ``name``; any other body is the SDK's
    message, ``<status> <error or body>`` or ``<status> status code (no body)`` (for an
    empty body, or JSON without an ``error``), after ``<name> API error (<status>): ``
    with a ``name``."""
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        message = format_http_error(status, body, None, more=more)
    else:
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and error:
            shown = shown_error_text(msgspec.json.encode(error).decode(), None, False)
            return f"{name} API error ({status}): {shown}" if name else f"{status}: {shown}"
        if error is not None and error is not False and error != 0 and error != "":
            inner = error.get("message") if isinstance(error, dict) else None
            message = f"{status} {inner or msgspec.json.encode(error).decode()}"
        else:
            message = f"{status} status code (no body)"
    return f"{name} API error ({status}): {message}" if name else message


def redirect_text(status: int, location: str | None) -> str:
    """One line for a refused redirect: a request carries an API key, so it is never
    sent on to another address."""
    if location is None:
        target = "without a Location"
    else:
        if len(location) > _LOCATION_LIMIT:
            location = f"{location[:_LOCATION_LIMIT]}..."
        target = f"to {location!r}"
    return (
        f"{status} redirect {target} not followed: requests carry an API key and are never "
        "redirected; set the model's base_url to the final address"
    )


def no_events_text(
    status: int, content_type: str | None, body: str, message: str | None, *, more: bool
) -> str:
    """A successful status whose body held no event at all (a 204, an HTML page, JSON)."""
    kind = f"content-type {content_type!r}" if content_type else "no content-type"
    text = shown_error_text(body, message, more)
    if not text:
        return f"{status} status code (no body): expected an event stream ({kind})"
    return f"{status} status code: expected an event stream, got {kind}: {text}"


def transport_error(exc: httpx2.RequestError) -> ProviderError:
    """The one mapping of httpx2 transport failures to error texts (worded so that the
    retry and overflow classifiers recognise them)."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.TimeoutException):
        kind = {
            httpx2.ConnectTimeout: "connecting",
            httpx2.ReadTimeout: "waiting for data",
            httpx2.WriteTimeout: "sending the request",
            httpx2.PoolTimeout: "waiting for a free connection",
        }.get(type(exc), "waiting")
        text = f"Request timed out while {kind} ({detail})"
    elif isinstance(exc, httpx2.ConnectError):
        text = f"Connection error: {detail}"
    elif isinstance(exc, httpx2.RemoteProtocolError):
        text = f"Network error: the server closed the connection mid-response ({detail})"
    elif isinstance(exc, httpx2.TransportError):
        text = f"Network error: {detail}"
    else:
        text = f"Request failed: {detail}"
    return ProviderError(text, retryable=True)


# --------------------------------------------------------------------------- retries


def should_retry(status: int | None, headers: Mapping[str, str] | None) -> bool:
    """Whether a failed attempt may be retried: ``x-should-retry`` decides when present,
    else transport errors (``status is None``), 408, 409, 429 and >= 500 do."""
    verdict = headers.get("x-should-retry") if headers is not None else None
    if verdict == "true":
        return True
    if verdict == "false":
        return False
    return status is None or status in (408, 409, 429) or status >= 500


def requested_delay_s(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The delay the server asked for, in seconds: ``retry-after-ms``, else ``retry-after``
    as seconds or an HTTP date; ``None`` when absent or unreadable. May be non-finite."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay_s(attempt: int, rand: float) -> float:
    """The delay before retry number ``attempt + 1`` (``attempt`` counts from 0) when the
    server names none; ``rand`` in [0, 1) takes up to a quarter off."""
    base: float = min(BACKOFF_BASE_S * 2.0**attempt, BACKOFF_MAX_S)
    return base * (1 - 0.25 * rand)


def retry_wait_s(
    error: ProviderError, headers: Mapping[str, str] | None, attempt: int, max_delay_ms: int
) -> float:
    """Seconds to wait before retrying ``error``; raises when the server asks for too long."""
    requested = requested_delay_s(headers)
    if requested is None:
        return backoff_delay_s(attempt, random.random())
    if not math.isfinite(requested):
        raise ProviderError(
            f"Server requested an invalid retry delay. {error}", status=error.status
        )
    if max_delay_ms > 0 and requested * 1000 > max_delay_ms:
        raise ProviderError(
            f"Server requested {math.ceil(requested)}s retry delay "
            f"(max: {math.ceil(max_delay_ms / 1000)}s). {error}",
            status=error.status,
        )
    return requested
