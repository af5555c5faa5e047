"""The ``openai-responses`` and ``azure-openai-responses`` providers (``POST …/responses``).

Input conversion lives in ``_responses_shared`` and the stream mapping in
``_responses_events`` (both sans-IO); this module builds the body, adds the HTTP shell and
headers, Azure's URL, deployment and key handling, and the ``*_simple`` reasoning mapping
(reference/ai.md §6.4, §7.4, §7.6).
"""

from __future__ import annotations

import os
from typing import Any, Final

import anyio.abc
import msgspec

from .._events import AssistantMessageEvent
from .._models import clamp_thinking_level
from .._options import StreamOptions
from .._registry import ApiProvider
from .._transcript import get_current_tools, normalize_context
from .._types import Context, Model
from ._http import ProviderRun, run_provider
from ._output import fit_output_schema, openai_strict_unsupported
from ._responses_events import ResponsesEventMapper
from ._responses_shared import (
    cache_retention,
    convert_responses_input,
    convert_responses_tools,
)
from ._simple import build_base_options

__all__ = [
    "API_PROVIDERS",
    "azure_deployment_name",
    "azure_responses_url",
    "build_responses_body",
    "clamp_prompt_cache_key",
    "responses_simple_options",
    "stream_azure_openai_responses",
    "stream_openai_responses",
    "stream_simple_azure_openai_responses",
    "stream_simple_openai_responses",
]

MAX_PROMPT_CACHE_KEY: Final = 64  # code points
MIN_OUTPUT_TOKENS: Final = 16
AZURE_API_VERSION: Final = "v1"
MISSING_OPENAI_KEY: Final = (
    "OpenAI API key is required. Set OPENAI_API_KEY environment variable or pass it as an argument."
)
MISSING_AZURE_KEY: Final = (
    "Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or "
    "pass it as an argument."
)
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"


def _extra(options: StreamOptions, key: str) -> Any:
    return (options.extra or {}).get(key)


def _env(options: StreamOptions, name: str) -> str | None:
    return (options.env or {}).get(name) or os.environ.get(name) or None


def clamp_prompt_cache_key(key: str) -> str:
    """At most 64 code points."""
    return key[:MAX_PROMPT_CACHE_KEY]


# --------------------------------------------------------------------------- the body


def _reasoning(model: Model, options: StreamOptions) -> tuple[dict[str, Any] | None, bool]:
    """``(reasoning, include_encrypted)`` for the request."""
    if not model.reasoning:
        return None, False
    effort = _extra(options, "reasoning_effort")
    summary = _extra(options, "reasoning_summary")
    if effort or summary:
        return {"effort": effort or "medium", "summary": summary or "auto"}, True
    if model.provider == "github-copilot":
        return None, False
    level_map = model.thinking_level_map or {}
    if "off" in level_map and level_map["off"] is None:
        return None, False
    return {"effort": level_map.get("off") or "none"}, False


def build_responses_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body for ``context`` (already normalized: messages only).

    Provider-native options come from ``options.extra``: ``reasoning_effort``,
    ``reasoning_summary``, ``service_tier``, ``tool_choice`` (the unified
    ``options.tool_choice`` when ``extra`` has none). ``options.output_format`` becomes
    ``text.format`` (strict unless ``compat.supportsStrictMode`` is false or the schema
    does not fit)."""
    messages = context.messages
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_responses_input(messages, model),
        "stream": True,
        "store": False,
    }
    retention = cache_retention(options)
    if options.session_id and retention != "none":
        body["prompt_cache_key"] = clamp_prompt_cache_key(options.session_id)
    long_default = model.api != "azure-openai-responses"
    if (
        retention == "long"
        and (model.compat or {}).get("supportsLongCacheRetention", long_default) is not False
    ):
        body["prompt_cache_retention"] = "24h"
    if options.max_tokens:
        body["max_output_tokens"] = max(MIN_OUTPUT_TOKENS, options.max_tokens)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    tier = _extra(options, "service_tier")
    if tier is not None:
        body["service_tier"] = tier
    tools = get_current_tools(messages)
    if tools:
        body["tools"] = convert_responses_tools(tools)
    choice = _extra(options, "tool_choice")
    if choice is None:
        choice = options.tool_choice
    if choice is not None:
        body["tool_choice"] = choice
    output = options.output_format
    if output is not None:
        strict_mode = (model.compat or {}).get("supportsStrictMode") is not False
        schema, strict = fit_output_schema(
            output, strict_mode=strict_mode, unsupported=openai_strict_unsupported
        )
        text_format: dict[str, Any] = {
            "type": "json_schema",
            "name": output.name,
            "schema": schema,
            "strict": strict,
        }
        if output.description:
            text_format["description"] = output.description
        body["text"] = {"format": text_format}
    reasoning, encrypted = _reasoning(model, options)
    if reasoning is not None:
        body["reasoning"] = reasoning
    if encrypted:
        body["include"] = [ENCRYPTED_REASONING]
    return body


# --------------------------------------------------------------------------- Azure


def azure_responses_url(model: Model, options: StreamOptions) -> str:
    """``…/responses?api-version=…`` from ``extra["azure_base_url"]``,
    ``AZURE_OPENAI_BASE_URL``, ``AZURE_OPENAI_RESOURCE_NAME`` or ``model.base_url``."""
    base = _extra(options, "azure_base_url") or _env(options, "AZURE_OPENAI_BASE_URL")
    if not base:
        resource = _extra(options, "azure_resource_name") or _env(
            options, "AZURE_OPENAI_RESOURCE_NAME"
        )
        base = f"https://{resource}.openai.azure.com/openai/v1" if resource else model.base_url
    version = (
        _extra(options, "azure_api_version")
        or _env(options, "AZURE_OPENAI_API_VERSION")
        or AZURE_API_VERSION
    )
    return f"{str(base).rstrip('/')}/responses?api-version={version}"


def azure_deployment_name(model: Model, options: StreamOptions) -> str:
    """``extra["azure_deployment_name"]``, else the entry for ``model.id`` in
    ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,…``), else ``model.id``."""
    explicit = _extra(options, "azure_deployment_name")
    if explicit:
        return str(explicit)
    for entry in (_env(options, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        name, sep, deployment = entry.partition("=")
        if sep and name.strip() == model.id and deployment.strip():
            return deployment.strip()
    return model.id


# --------------------------------------------------------------------------- streaming


async def _stream(run: ProviderRun, context: Context, azure: bool) -> None:
    model, options = run.model, run.options
    api_key = run.api_key(MISSING_AZURE_KEY if azure else MISSING_OPENAI_KEY)
    context = normalize_context(context)
    body = build_responses_body(model, context, options)
    if azure:
        body["model"] = azure_deployment_name(model, options)
    payload = await run.on_payload(body)
    headers: dict[str, str | None] = {}
    if api_key is not None:
        if azure:
            headers["api-key"] = api_key
        else:
            headers["authorization"] = f"Bearer {api_key}"
    if options.session_id and cache_retention(options) != "none":
        if (model.compat or {}).get("sendSessionIdHeader") is not False:
            headers["session_id"] = options.session_id
        headers["x-client-request-id"] = options.session_id
    url = (
        azure_responses_url(model, options) if azure else f"{model.base_url.rstrip('/')}/responses"
    )
    mapper = ResponsesEventMapper(run.builder, model, service_tier=_extra(options, "service_tier"))
    async with run.open_sse(url, run.headers(headers), payload) as sse:
        await run.emit(run.builder.start())
        async for batch in sse:
            for event in batch:
                await run.emit_all(mapper.feed_data(event.data))
    await run.emit(mapper.finish())


async def stream_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """Stream one OpenAI Responses request with provider-native options (``extra``:
    ``reasoning_effort``, ``reasoning_summary``, ``service_tier``, ``tool_choice``)."""
    await run_provider(model, options, send, _stream, context, False)


async def stream_azure_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """``stream_openai_responses`` against Azure OpenAI (``extra`` adds
    ``azure_base_url``, ``azure_resource_name``, ``azure_api_version``,
    ``azure_deployment_name``)."""
    await run_provider(model, options, send, _stream, context, True)


# --------------------------------------------------------------------------- simple


def responses_simple_options(
    model: Model, context: Context, options: StreamOptions
) -> StreamOptions:
    """The native options for the unified ``reasoning``: the clamped level, mapped through
    ``model.thinking_level_map``, as ``reasoning_effort``; none means thinking off."""
    base = build_base_options(model, context, options)
    extra: dict[str, Any] = dict(options.extra or {})
    if model.reasoning and options.reasoning:
        level = clamp_thinking_level(model, options.reasoning)
        if level != "off":
            mapped = (model.thinking_level_map or {}).get(level)
            extra["reasoning_effort"] = mapped if isinstance(mapped, str) else level
    return msgspec.structs.replace(base, extra=extra)


async def _stream_simple(run: ProviderRun, context: Context, azure: bool) -> None:
    run.options = responses_simple_options(run.model, context, run.options)
    await _stream(run, context, azure)


async def stream_simple_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    await run_provider(model, options, send, _stream_simple, context, False)


async def stream_simple_azure_openai_responses(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    await run_provider(model, options, send, _stream_simple, context, True)


API_PROVIDERS: Final = [
    ApiProvider(
        api="openai-responses",
        stream=stream_openai_responses,
        stream_simple=stream_simple_openai_responses,
    ),
    ApiProvider(
        api="azure-openai-responses",
        stream=stream_azure_openai_responses,
        stream_simple=stream_simple_azure_openai_responses,
    ),
]
