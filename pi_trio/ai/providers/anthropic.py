"""The ``anthropic-messages`` provider: ``POST {base_url}/v1/messages`` streamed as SSE.

Request building lives in ``_anthropic_request`` and the wire-event mapping in
``_anthropic_events`` (both sans-IO); this module adds the HTTP shell, the headers and
the ``*_simple`` reasoning mapping (the original's ``stream`` and ``streamSimple``,
``src/api/anthropic-messages.ts``).

A 400 ``invalid_request_error`` saying that the request's strict tools exceed Claude's
limits, for a request that sent tools strict which only prefer it, is answered by sending
the request again with those tools non-strict; the message keeps an
``anthropic_strict_tools_fallback`` diagnostic and the session sends them non-strict from
then on (``_strict_limits``).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any, Final

import httpx2
import msgspec

from .._catalog._models import clamp_thinking_level
from .._errors import ProviderError
from .._events import DoneEvent
from .._json._depth import decode_json
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._system import get_current_tools, normalize_context
from .._types import Context, Model
from ._anthropic_events import AnthropicEventMapper
from ._anthropic_request import (
    build_anthropic_request,
    cache_retention,
    convert_anthropic_messages,
    is_oauth_token,
)
from ._anthropic_thread import (
    ThreadRequest,
    new_thread,
    prepare_thread_request,
    record_thread_reply,
    thread_fallback,
    thread_session,
    threads_off,
)
from ._anthropic_wire import EVENT_TYPES
from ._entry import provider_stream, relay
from ._http import ProviderRun
from ._http_errors import format_http_error, provider_error_message
from ._simple import (
    adjust_max_tokens_for_thinking,
    build_base_options,
    clamp_max_tokens_to_context,
    clamp_thinking_budget_to_answer_room,
)
from ._strict_limits import (
    has_exceeded_strict_tool_limits,
    is_strict_tool_limit_message,
    record_strict_tools_fallback,
)

__all__ = [
    "API_PROVIDER",
    "anthropic_simple_options",
    "anthropic_url",
    "stream_anthropic",
    "stream_simple_anthropic",
]

ANTHROPIC_VERSION: Final = "2023-06-01"
CLAUDE_CLI_USER_AGENT: Final = "claude-cli/2.1.2 (external, cli)"
DEFAULT_THINKING_DISPLAY: Final = "summarized"
# Adaptive-thinking effort per level when the model's thinking_level_map names none.
_DEFAULT_EFFORT: Final = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def anthropic_url(model: Model) -> str:
    return f"{model.base_url.rstrip('/')}/v1/messages"


def _headers(
    run: ProviderRun, api_key: str | None, oauth: bool, betas: list[str]
) -> dict[str, str]:
    model, options = run.model, run.options
    headers: dict[str, str | None] = {
        "accept": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
        "anthropic-dangerous-direct-browser-access": "true",
    }
    if api_key is not None:
        if oauth:
            headers["authorization"] = f"Bearer {api_key}"
        else:
            headers["x-api-key"] = api_key
    if oauth:
        headers["user-agent"] = CLAUDE_CLI_USER_AGENT
        headers["x-app"] = "cli"
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    compat = model.compat or {}
    if (
        options.session_id
        and cache_retention(options) != "none"
        and compat.get("sendSessionAffinityHeaders") is True
    ):
        name = (
            "x-session-id"
            if compat.get("sessionAffinityFormat") == "openrouter"
            else "x-session-affinity"
        )
        headers[name] = options.session_id
    return run.headers(headers)


def _js_truthy(value: Any) -> bool:
    if isinstance(value, dict | list):
        return True
    return value is not None and value is not False and value != 0 and value != ""


def anthropic_error_text(status: int, body: str, more: bool = False) -> str:
    """A failed status as the Anthropic SDK words it and pi 1.6 shows it: ``<status>``
    and the JSON body's top-level ``message``, else the whole body as compact JSON (an
    Anthropic error object: ``{"type":"error","error":{...}}``); a body that is no JSON
    as it is; ``<status> status code (no body)`` without one. Cut at
    ``ERROR_BODY_LIMIT`` characters."""
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        data = None
    if not _js_truthy(data):
        return format_http_error(status, body, None, more=more)
    message = data.get("message") if isinstance(data, dict) else None
    if _js_truthy(message):
        shown = message if isinstance(message, str) else msgspec.json.encode(message).decode()
    else:
        shown = msgspec.json.encode(data).decode()
    return format_http_error(status, shown)


class _Refusal:
    """Words a failed status (``anthropic_error_text``), noting whether it refused the
    strict tools, and keeps the status and body (a thread's refusal is read from them)."""

    __slots__ = ("body", "status", "strict_limits", "text")

    def __init__(self) -> None:
        self.strict_limits = False
        self.text = ""
        self.status = 0
        self.body = ""

    def describe(self, status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
        self.status = status
        self.body = body
        message = provider_error_message(body)
        self.text = anthropic_error_text(status, body, more)
        self.strict_limits = (
            status == 400
            and _error_type(body) == "invalid_request_error"
            and is_strict_tool_limit_message(message or "")
        )
        return self.text


def _error_type(body: str) -> Any:
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error.get("type") if isinstance(error, dict) else None


async def _stream(run: ProviderRun, context: Context) -> None:
    model, options = run.model, run.options
    api_key = run.api_key()
    oauth = is_oauth_token(api_key)
    context = normalize_context(context)
    tool_names = [tool.name for tool in get_current_tools(context.messages)] if oauth else []
    mapper = AnthropicEventMapper(run.builder, model, tool_names=tool_names)
    relax = has_exceeded_strict_tool_limits(options.session_id)
    # the session whose requests may use message threads (``_anthropic_thread``)
    threads = thread_session(model, options.session_id, cache_retention(options))
    async with AsyncExitStack() as stack:
        refusal = _Refusal()

        async def send(body: Any, headers: dict[str, str]) -> Any:
            nonlocal refusal
            refusal = _Refusal()
            opened = run.open_sse(
                anthropic_url(model),
                headers,
                body,
                observed=EVENT_TYPES,
                describe=refusal.describe,
            )
            return await stack.enter_async_context(opened)

        while True:
            request = build_anthropic_request(
                model,
                context,
                options,
                oauth=oauth,
                relax_preferred_strict=relax,
                message_threads=threads is not None,
            )
            payload: Any = await run.on_payload(request.body)
            if isinstance(payload, dict) and payload.get("stream") is not True:
                payload = {**payload, "stream": True}
            headers = _headers(run, api_key, oauth, request.betas)
            thread: ThreadRequest | None = None
            if (
                threads is not None
                and not options.disable_continuation
                and isinstance(payload, dict)
            ):
                thread = prepare_thread_request(model, threads, payload, request.betas)
            try:
                if thread is None:
                    sse = await send(payload, headers)
                else:
                    try:
                        sse = await send(thread.body, headers)
                    except ProviderError:
                        action = thread_fallback(
                            run.builder.message, refusal.status, refusal.body, refusal.text
                        )
                        if action is None:
                            raise
                        if action == "new":
                            thread = new_thread(thread.session_id, payload)
                            sse = await send(thread.body, headers)
                        else:
                            sse = await send(payload, headers)
                            threads_off(thread.session_id)
                            thread = None
            except ProviderError as exc:
                if relax or not request.preferred_strict or not refusal.strict_limits:
                    raise
                relax = True
                record_strict_tools_fallback(
                    run.builder.message, "anthropic", str(exc), options.session_id
                )
                continue
            break
        await relay(
            run,
            sse,
            lambda event: mapper.feed(event.event, event.data),
            until=lambda: mapper.stopped,
        )
    outcome = mapper.finish()
    if thread is not None and isinstance(outcome, DoneEvent) and isinstance(payload, dict):
        answer = outcome.message

        def reply() -> list[dict[str, Any]]:
            # as the next request will send it: only the assistant message
            _, wire = convert_anthropic_messages([answer], model, oauth=oauth)
            return [m for m in wire if m["role"] == "assistant"]

        record_thread_reply(model, thread, payload, request.betas, reply, answer)
    await run.emit(outcome)


@provider_stream
async def stream_anthropic(run: ProviderRun, context: Context) -> None:
    """Stream one Anthropic Messages request with provider-native options (``extra``:
    ``thinking_enabled``, ``thinking_budget_tokens``, ``effort``, ``thinking_display``,
    ``interleaved_thinking``, ``tool_choice``)."""
    await _stream(run, context)


# --------------------------------------------------------------------------- simple


def anthropic_simple_options(
    model: Model, context: Context, options: StreamOptions
) -> StreamOptions:
    """The native options for the unified ``reasoning`` / ``thinking_budgets``: adaptive
    thinking with an effort on models that force it, a thinking budget carved out of
    ``max_tokens`` elsewhere, an explicit "disabled" without a level."""
    base = build_base_options(model, context, options)
    extra: dict[str, Any] = dict(options.extra or {})
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else "off"
    if not model.reasoning or level == "off":
        extra["thinking_enabled"] = False
        return msgspec.structs.replace(base, extra=extra)
    extra["thinking_enabled"] = True
    extra.setdefault("thinking_display", DEFAULT_THINKING_DISPLAY)
    if (model.compat or {}).get("forceAdaptiveThinking") is True:
        mapped = (model.thinking_level_map or {}).get(level)
        extra["effort"] = mapped if isinstance(mapped, str) else _DEFAULT_EFFORT.get(level, "high")
        return msgspec.structs.replace(base, extra=extra)
    max_tokens, budget = adjust_max_tokens_for_thinking(
        base.max_tokens, model.max_tokens, level, options.thinking_budgets
    )
    max_tokens = clamp_max_tokens_to_context(model, context, max_tokens)
    extra["thinking_budget_tokens"] = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return msgspec.structs.replace(base, max_tokens=max_tokens, extra=extra)


@provider_stream
async def stream_simple_anthropic(run: ProviderRun, context: Context) -> None:
    """``stream_anthropic`` with the unified options mapped (``anthropic_simple_options``)."""
    run.options = anthropic_simple_options(run.model, context, run.options)
    await _stream(run, context)


API_PROVIDER: Final = ApiProvider(
    api="anthropic-messages", stream=stream_anthropic, stream_simple=stream_simple_anthropic
)
