"""The ``google-generative-ai`` provider:
``POST {base_url}/models/{id}:streamGenerateContent?alt=sse``.

Request building lives in ``_google_request`` and the chunk mapping in ``_google_events``
(both sans-IO); this module adds the HTTP shell and the ``*_simple`` reasoning mapping
(reference/ai.md §6.5, §7.5).
"""

from __future__ import annotations

from typing import Any, Final

import anyio.abc
import msgspec

from .._events import AssistantMessageEvent
from .._models import clamp_thinking_level
from .._options import StreamOptions
from .._registry import ApiProvider
from .._transcript import normalize_context
from .._types import Context, Model
from ._common import model_id_path
from ._google_events import GoogleEventMapper
from ._google_request import build_google_body, google_thinking_config
from ._http import ProviderRun, run_provider
from ._simple import build_base_options

__all__ = [
    "API_PROVIDER",
    "google_simple_options",
    "google_url",
    "stream_google",
    "stream_simple_google",
]


def google_url(model: Model) -> str:
    model_path = model_id_path(model.id, model.api)
    return f"{model.base_url.rstrip('/')}/models/{model_path}:streamGenerateContent?alt=sse"


async def _stream(run: ProviderRun, context: Context) -> None:
    model = run.model
    api_key = run.api_key()
    context = normalize_context(context)
    payload = await run.on_payload(build_google_body(model, context, run.options))
    headers: dict[str, str | None] = {}
    if api_key is not None:
        headers["x-goog-api-key"] = api_key
    mapper = GoogleEventMapper(run.builder, model)
    async with run.open_sse(google_url(model), run.headers(headers), payload) as sse:
        await run.emit(run.builder.start())
        async for batch in sse:
            for event in batch:
                await run.emit_all(mapper.feed_data(event.data))
    await run.emit_all(mapper.finish())


async def stream_google(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """Stream one Gemini request with provider-native options (``extra``:
    ``thinking_enabled``, ``thinking_budget_tokens``, ``thinking_level``, ``tool_choice``)."""
    await run_provider(model, options, send, _stream, context)


# --------------------------------------------------------------------------- simple


def google_simple_options(model: Model, context: Context, options: StreamOptions) -> StreamOptions:
    """The native options for the unified ``reasoning``: a thinking level on Gemini 3 and
    Gemma 4, a token budget elsewhere; without a level, thinking is switched off
    explicitly on reasoning models."""
    base = build_base_options(model, context, options)
    extra: dict[str, Any] = dict(options.extra or {})
    for key in ("thinking_level", "thinking_budget_tokens"):
        extra.pop(key, None)
    if not options.reasoning:
        extra["thinking_enabled"] = False
        return msgspec.structs.replace(base, extra=extra)
    level = clamp_thinking_level(model, options.reasoning)
    config = google_thinking_config(model, level, options.thinking_budgets)
    extra["thinking_enabled"] = True
    if "thinkingLevel" in config:
        extra["thinking_level"] = config["thinkingLevel"]
    else:
        extra["thinking_budget_tokens"] = config["thinkingBudget"]
    return msgspec.structs.replace(base, extra=extra)


async def _stream_simple(run: ProviderRun, context: Context) -> None:
    run.options = google_simple_options(run.model, context, run.options)
    await _stream(run, context)


async def stream_simple_google(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """``stream_google`` with the unified options mapped (reference/ai.md §6.5)."""
    await run_provider(model, options, send, _stream_simple, context)


API_PROVIDER: Final = ApiProvider(
    api="google-generative-ai", stream=stream_google, stream_simple=stream_simple_google
)
