"""The ``openai-completions`` provider: OpenAI Chat Completions and every server that speaks
it (the original's ``src/api/openai-completions.ts``), over httpx2 without a vendor SDK.

The request body is built by ``_completions_request`` and the stream mapped by
``_completions_events`` (both sans-IO); this module adds the HTTP shell.
"""

from __future__ import annotations

from typing import Any

import httpx2
import msgspec

from .._catalog._models import clamp_thinking_level
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context
from ._completions_events import CompletionsStreamMapper as CompletionsStreamMapper
from ._completions_events import map_finish_reason as map_finish_reason
from ._completions_request import build_body
from ._entry import provider_stream, relay
from ._http import ProviderRun
from ._http_errors import openai_sdk_error_text
from ._openai_compat import resolve_compat
from ._openai_usage import apply_openrouter_cost as apply_openrouter_cost
from ._openai_usage import parse_usage as parse_usage
from ._simple import build_base_options

__all__ = [
    "API_PROVIDER",
    "CompletionsStreamMapper",
    "apply_openrouter_cost",
    "map_finish_reason",
    "parse_usage",
    "stream_openai_completions",
    "stream_simple_openai_completions",
]


class _Native(msgspec.Struct, kw_only=True):
    """The provider-native options of one request."""

    reasoning_effort: str | None = None
    tool_choice: Any = None


def _native(options: StreamOptions) -> _Native:
    extra = options.extra or {}
    effort = extra.get("reasoning_effort", extra.get("reasoningEffort"))
    # the provider-native option wins over the unified one, as in the other providers
    choice = extra.get("tool_choice", extra.get("toolChoice"))
    if choice is None:
        choice = options.tool_choice
    return _Native(reasoning_effort=effort, tool_choice=choice)


async def _stream(run: ProviderRun, context: Context, native: _Native) -> None:
    model = run.model
    options = run.options
    compat = resolve_compat(model)
    api_key = run.api_key()
    messages = normalize_context(context).messages
    body = build_body(
        model,
        messages,
        options,
        compat,
        reasoning_effort=native.reasoning_effort,
        thinking_budgets=options.thinking_budgets,
        tool_choice=native.tool_choice,
    )
    payload = await run.on_payload(body)
    defaults: dict[str, str | None] = {}
    if api_key is not None:
        defaults["Authorization"] = f"Bearer {api_key}"
    session_id = options.session_id
    if session_id and compat.send_session_affinity_headers and (options.cache_retention != "none"):
        if compat.session_affinity_format == "openrouter":
            defaults["x-session-id"] = session_id
        else:
            if compat.session_affinity_format == "openai":
                defaults["session_id"] = session_id
            defaults["x-client-request-id"] = session_id
            defaults["x-session-affinity"] = session_id
    url = f"{model.base_url.rstrip('/')}/chat/completions"
    mapper = CompletionsStreamMapper(run.builder, model, compat)
    async with run.open_sse(
        url, run.headers(defaults), payload, describe=_completions_error_text
    ) as sse:
        await relay(run, sse, mapper.feed, until=lambda: mapper.done_marker)
    await run.emit_all(mapper.finish())


def _completions_error_text(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
    """A failed status as pi 1.6 shows it (``openai_sdk_error_text``, no prefix)."""
    return openai_sdk_error_text(status, body, more)


@provider_stream
async def stream_openai_completions(run: ProviderRun, context: Context) -> None:
    """Stream one Chat Completions request. Native options: ``options.extra``
    ``reasoning_effort`` (a level), ``tool_choice`` (or ``options.tool_choice``)."""
    await _stream(run, context, _native(run.options))


@provider_stream
async def stream_simple_openai_completions(run: ProviderRun, context: Context) -> None:
    """Stream with the unified options: ``reasoning`` is clamped to the model's levels
    (``off`` sends none), ``max_tokens`` defaults to the model's and fits the context."""
    run.api_key()  # a missing key fails before anything else is computed
    model, options = run.model, run.options
    run.options = build_base_options(model, context, options)
    effort = clamp_thinking_level(model, options.reasoning) if options.reasoning else None
    native = _Native(
        reasoning_effort=None if effort == "off" else effort, tool_choice=options.tool_choice
    )
    await _stream(run, context, native)


API_PROVIDER = ApiProvider(
    api="openai-completions",
    stream=stream_openai_completions,
    stream_simple=stream_simple_openai_completions,
)
