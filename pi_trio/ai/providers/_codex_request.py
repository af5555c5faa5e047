"""The request of the ``openai-codex-responses`` api (sans-IO): URL, account id, headers,
body, and the texts and retry rule of failed statuses.

The ChatGPT Codex backend speaks the Responses api with its own rules: the token is a
ChatGPT OAuth access token (a JWT whose ``https://api.openai.com/auth`` claim names the
``chatgpt_account_id`` sent as ``chatgpt-account-id``), every request carries
``originator: pi`` and ``OpenAI-Beta: responses=experimental``, and the body always asks
for encrypted reasoning, ``tool_choice`` (``auto`` by default), parallel tool calls and a
``text.verbosity`` (``low`` by default). The session id is the prompt-cache key and the
``session-id`` / ``x-client-request-id`` headers, unless cache retention is ``none``.
"""

from __future__ import annotations

import base64
import math
import re
import time
from collections.abc import Mapping
from typing import Any, Final

import httpx2
import msgspec

from .._errors import ProviderError
from .._json._depth import decode_json
from .._stream._options import StreamOptions
from .._transcript._history import resolve_transcript
from .._types import Context, Model
from ._http import merge_headers
from ._http_errors import shown_error_text
from ._responses_shared import (
    convert_responses_input,
    convert_responses_tools,
    request_tools,
    responses_tool_support,
)

__all__ = [
    "CONFIGURATION_UPDATE_REQUEST_EFFORT",
    "DEFAULT_CODEX_BASE_URL",
    "CodexRequest",
    "build_codex_body",
    "codex_account_id",
    "codex_error_text",
    "codex_headers",
    "codex_reasoning_effort",
    "codex_should_retry",
    "codex_url",
]

DEFAULT_CODEX_BASE_URL: Final = "https://chatgpt.com/backend-api"
JWT_CLAIM: Final = "https://api.openai.com/auth"
MIN_OUTPUT_TOKENS: Final = 16
MAX_PROMPT_CACHE_KEY: Final = 64  # code points
# The request's reasoning.effort while configuration_update items carry the level.
CONFIGURATION_UPDATE_REQUEST_EFFORT: Final = "medium"
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"
BAD_TOKEN: Final = "Failed to extract accountId from token"
_TERMINAL_RATE_LIMIT: Final = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|"
    r"insufficient_quota|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
_RETRYABLE_TEXT: Final = re.compile(
    r"rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused",
    re.IGNORECASE,
)
_USAGE_LIMIT_CODE: Final = re.compile(
    r"usage_limit_reached|usage_not_included|rate_limit_exceeded", re.IGNORECASE
)


class CodexRequest(msgspec.Struct, frozen=True, kw_only=True):
    """The native options of one Codex request (``options.extra`` of the raw entry point,
    or derived from the unified level by the simple one)."""

    reasoning_effort: str | None = None  # a level, or "none"
    reasoning_summary: str | None = None
    service_tier: str | None = None
    text_verbosity: str | None = None
    tool_choice: Any = None


def codex_url(base_url: str) -> str:
    """``…/codex/responses`` under the model's base URL (the ChatGPT backend by default)."""
    base = (base_url if base_url.strip() else DEFAULT_CODEX_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return f"{base}/responses"
    return f"{base}/codex/responses"


def codex_account_id(token: str) -> str:
    """The ChatGPT account id in the token's claims (``ProviderError`` when the token is
    not such a JWT)."""
    parts = token.split(".")
    try:
        if len(parts) != 3:
            raise ValueError("not a JWT")
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = decode_json(base64.urlsafe_b64decode(payload))
        account = claims[JWT_CLAIM]["chatgpt_account_id"]
    except (ValueError, TypeError, KeyError, msgspec.DecodeError):
        raise ProviderError(BAD_TOKEN) from None
    if not isinstance(account, str) or not account:
        raise ProviderError(BAD_TOKEN)
    return account


def codex_headers(
    identity_and_given: Mapping[str, str],
    token: str | None,
    account_id: str | None,
    session_key: str | None,
) -> dict[str, str]:
    """The headers of an SSE request: ``identity_and_given`` (the identity, ``originator:
    pi``, then the model's and the request's headers), then the ones the backend needs,
    which win."""
    forced: dict[str, str | None] = {"OpenAI-Beta": "responses=experimental"}
    if token is not None:
        forced["Authorization"] = f"Bearer {token}"
    if account_id is not None:
        forced["chatgpt-account-id"] = account_id
    forced["accept"] = "text/event-stream"
    forced["content-type"] = "application/json"
    if session_key:
        forced["session-id"] = session_key
        forced["x-client-request-id"] = session_key
    return merge_headers(identity_and_given, forced)


def codex_reasoning_effort(model: Model, effort: str) -> str | None:
    """The backend's effort for a requested level (``none``: the model's ``off`` entry),
    ``None`` when the model takes no reasoning field for it."""
    levels = model.thinking_level_map or {}
    if effort == "none":
        return levels.get("off", "none")  # an explicit None: no reasoning field
    mapped = levels.get(effort)
    return mapped if mapped is not None else effort


def configuration_update_effort(model: Model, request: CodexRequest) -> str | None:
    """The effort sent in ``configuration_update`` items (models with
    ``compat.supportsMidConvoEffort``), else ``None``: it is sent as ``reasoning.effort``."""
    if (model.compat or {}).get("supportsMidConvoEffort") is not True:
        return None
    if request.reasoning_effort is None:
        return None
    return codex_reasoning_effort(model, request.reasoning_effort)


def session_key(options: StreamOptions) -> str | None:
    """The session id as the prompt-cache key (at most 64 code points), unless the cache
    retention is ``none``."""
    if options.cache_retention == "none" or not options.session_id:
        return None
    return options.session_id[:MAX_PROMPT_CACHE_KEY]


def build_codex_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    request: CodexRequest,
    text_format: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request body for ``context`` (already normalized: messages only).
    ``text_format`` is the ``text.format`` of a JSON-schema answer."""
    compat = model.compat or {}
    resolved = resolve_transcript(context, compat.get("supportsMidConvoSystemMessages") is True)
    messages = resolved.messages
    support = responses_tool_support(model)
    strict_mode = compat.get("supportsStrictMode", True) is True
    tool_options = {"strict": None, "strict_mode": strict_mode}
    update = configuration_update_effort(model, request)
    text: dict[str, Any] = {"verbosity": request.text_verbosity or "low"}
    if text_format is not None:
        text["format"] = text_format
    body: dict[str, Any] = {
        "model": model.id,
        "store": False,
        "stream": True,
        "input": convert_responses_input(
            messages,
            model,
            tool_support=support,
            tool_options=tool_options,
            configuration_update_effort=update,
        ),
        "text": text,
        "include": [ENCRYPTED_REASONING],
    }
    key = session_key(options)
    if key is not None:
        body["prompt_cache_key"] = key
    body["tool_choice"] = "auto" if request.tool_choice is None else request.tool_choice
    body["parallel_tool_calls"] = True
    if options.max_tokens and compat.get("supportsMaxOutputTokens") is not False:
        body["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if request.service_tier is not None:
        body["service_tier"] = request.service_tier
    tools = request_tools(messages, support)
    if tools:
        body["tools"] = convert_responses_tools(tools, **tool_options)  # type: ignore[arg-type]
    levels = model.thinking_level_map or {}
    if request.reasoning_effort is not None:
        effort = (
            codex_reasoning_effort(model, request.reasoning_effort)
            if update is None
            else CONFIGURATION_UPDATE_REQUEST_EFFORT
        )
        if effort is not None:
            body["reasoning"] = {"effort": effort, "summary": request.reasoning_summary or "auto"}
    elif model.reasoning and not ("off" in levels and levels["off"] is None):
        body["reasoning"] = {"effort": levels.get("off") or "none"}
    return body


# --------------------------------------------------------------------------- failures


def _minutes_until(resets_at: Any, now: float) -> int | None:
    if isinstance(resets_at, bool) or not isinstance(resets_at, int | float) or not resets_at:
        return None
    return max(0, math.floor((resets_at - now) / 60 + 0.5))


def codex_error_text(
    status: int, headers: httpx2.Headers | None, body: str, more: bool, *, now: float | None = None
) -> str:
    """A failed status as the Codex client words it: a usage limit (a 429, or an error
    code saying so) becomes ``You have hit your ChatGPT usage limit (<plan> plan). Try again
    in ~<n> min.``; otherwise the error's ``message``, else the body, else the reason
    phrase."""
    text = shown_error_text(body, None, more) or httpx2.codes.get_reason_phrase(status)
    text = text or "Request failed"
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        return text
    error = data.get("error") if isinstance(data, dict) else None
    if not error:
        return text
    details = error if isinstance(error, dict) else {}
    code = str(details.get("code") or details.get("type") or "")
    friendly = None
    if _USAGE_LIMIT_CODE.search(code) or status == 429:
        plan_type = details.get("plan_type")
        plan = f" ({str(plan_type).lower()} plan)" if plan_type else ""
        minutes = _minutes_until(details.get("resets_at"), time.time() if now is None else now)
        when = f" Try again in ~{minutes} min." if minutes is not None else ""
        friendly = f"You have hit your ChatGPT usage limit{plan}.{when}".strip()
    message = details.get("message")
    return friendly or (message if isinstance(message, str) and message else text)


def codex_should_retry(status: int, body: str) -> bool:
    """Whether a failed status is worth another attempt: 429 (unless the account is out of
    quota), 500, 502, 503, 504, or a body saying the service is overloaded or limited."""
    if status == 429 and _TERMINAL_RATE_LIMIT.search(body):
        return False
    if status in (429, 500, 502, 503, 504):
        return True
    return _RETRYABLE_TEXT.search(body) is not None
