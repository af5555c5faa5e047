"""The ``mistral-conversations`` provider: Mistral's chat completions,
``POST {base_url}/v1/chat/completions`` streamed as SSE, over httpx2 without the vendor SDK.

The body is built by ``_mistral_request`` and the stream mapped by ``_mistral_events``
(both sans-IO); this module adds the HTTP shell, the headers and the ``*_simple``
reasoning mapping: models with a ``thinking_level_map`` get ``reasoning_effort`` (the
level's entry, ``high`` when it has none; the ``off`` entry when no level is asked for),
other reasoning models get ``prompt_mode: "reasoning"`` when a level is asked for.
HTTP failures read ``Mistral API error (<status>): <body>``.
"""

from __future__ import annotations

from typing import Final

import httpx2

from .._catalog._models import clamp_thinking_level
from .._errors import ProviderError
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context, Model
from ._entry import provider_stream, relay
from ._http import ProviderRun
from ._http_errors import shown_error_text
from ._mistral_events import MistralStreamMapper
from ._mistral_request import build_mistral_body, prompt_caching
from ._simple import build_base_options

__all__ = [
    "API_PROVIDER",
    "mistral_error_text",
    "mistral_simple_params",
    "mistral_url",
    "stream_mistral",
    "stream_simple_mistral",
]

AFFINITY_HEADER: Final = "x-affinity"


def mistral_url(model: Model) -> str:
    return f"{model.base_url.rstrip('/')}/v1/chat/completions"


def mistral_error_text(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
    """``Mistral API error (<status>): <body>`` (trimmed, cut at 4 000 characters), or the
    status's reason phrase when the body is empty."""
    text = shown_error_text(body, None, more)
    if not text:
        text = httpx2.codes.get_reason_phrase(status) or f"Request failed with status {status}"
    return f"Mistral API error ({status}): {text}"


def mistral_simple_params(model: Model, reasoning: str | None) -> tuple[str | None, str | None]:
    """``(prompt_mode, reasoning_effort)`` for the unified ``reasoning`` level."""
    level = clamp_thinking_level(model, reasoning) if reasoning else None
    if level == "off":
        level = None
    levels = model.thinking_level_map if model.reasoning else None
    if levels is not None:
        effort = (levels.get(level) or "high") if level else levels.get("off")
        return None, effort if isinstance(effort, str) else None
    return ("reasoning" if model.reasoning and level else None), None


def _explicit(options: StreamOptions, model: Model, name: str) -> bool:
    layers = (model.headers or {}, options.headers or {})
    return any(key.lower() == name for layer in layers for key in layer)


async def _stream(
    run: ProviderRun, context: Context, prompt_mode: str | None, effort: str | None
) -> None:
    model, options = run.model, run.options
    api_key = run.api_key()
    body = build_mistral_body(
        model,
        normalize_context(context),
        options,
        prompt_mode=prompt_mode,
        reasoning_effort=effort,
    )
    payload = await run.on_payload(body)
    defaults: dict[str, str | None] = {}
    if api_key is not None:
        defaults["authorization"] = f"Bearer {api_key}"
    headers = run.headers(defaults)
    if prompt_caching(options) and not _explicit(options, model, AFFINITY_HEADER):
        headers[AFFINITY_HEADER] = options.session_id  # type: ignore[assignment]
    mapper = MistralStreamMapper(run.builder, model)
    async with run.open_sse(
        mistral_url(model), headers, payload, describe=mistral_error_text, notify_failures=True
    ) as sse:
        await relay(run, sse, lambda event: mapper.feed(event.data), until=lambda: mapper.ended)
    await run.emit_all(mapper.finish())
    if mapper.failure is not None:
        raise ProviderError(mapper.failure)


@provider_stream
async def stream_mistral(run: ProviderRun, context: Context) -> None:
    """Stream one Mistral request. Native options (``options.extra``): ``prompt_mode``
    (``"reasoning"``) and ``reasoning_effort``; ``options.tool_choice`` is sent as is
    (``auto``, ``none``, ``any``, ``required`` or ``{"function": {"name": ...}}``)."""
    extra = run.options.extra or {}
    await _stream(run, context, extra.get("prompt_mode"), extra.get("reasoning_effort"))


@provider_stream
async def stream_simple_mistral(run: ProviderRun, context: Context) -> None:
    """Stream with the unified options: ``reasoning`` becomes ``reasoning_effort`` or
    ``prompt_mode`` (module docstring); ``max_tokens`` defaults to the model's and fits
    the context window."""
    run.api_key()  # a missing key fails before anything else is computed
    model, options = run.model, run.options
    run.options = build_base_options(model, context, options)
    prompt_mode, effort = mistral_simple_params(model, options.reasoning)
    await _stream(run, context, prompt_mode, effort)


API_PROVIDER = ApiProvider(
    api="mistral-conversations",
    stream=stream_mistral,
    stream_simple=stream_simple_mistral,
)
