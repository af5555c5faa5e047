"""The ``openai-responses`` and ``azure-openai-responses`` providers (``POST …/responses``).

Input conversion lives in ``_responses_shared`` and the stream mapping in
``_responses_events`` (both sans-IO); this module builds the body, adds the HTTP shell and
headers, Azure's URL, deployment and key handling, and the ``*_simple`` reasoning mapping
(reference/ai.md §6.4, §7.4, §7.6).

Azure follows pi 1.6's ``azure-openai-responses``: the key goes in ``api-key``; the base
URL comes from ``extra["azure_base_url"]``, ``AZURE_OPENAI_BASE_URL``,
``AZURE_OPENAI_RESOURCE_NAME`` or the model (an Azure host gets the ``/openai/v1`` path it
needs); ``prompt_cache_key`` is the session id whatever the cache retention (unless
``compat.promptCacheKeyMode`` is ``disabled``), no retention or session headers are sent,
and tool-call ids from OpenAI, Codex, OpenCode and Azure turns are rewritten into the
``call|item`` form. HTTP failures read ``Azure OpenAI API error (<status>): ...``.
"""

from __future__ import annotations

import os
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import anyio.abc
import httpx2
import msgspec

from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json_depth import decode_checked
from .._models import clamp_thinking_level
from .._options import StreamOptions
from .._registry import ApiProvider
from .._transcript import normalize_context
from .._transcript_history import resolve_transcript
from .._types import Context, Model
from ._http import ProviderRun, run_provider
from ._http_errors import shown_error_text
from ._responses_events import ResponsesEventMapper
from ._responses_shared import (
    NORMALIZED_PROVIDERS,
    cache_retention,
    convert_responses_input,
    convert_responses_tools,
    request_tools,
    responses_text_format,
    responses_tool_support,
)
from ._simple import build_base_options, resolve_sampling_params

__all__ = [
    "API_PROVIDERS",
    "azure_base_url",
    "azure_deployment_name",
    "azure_error_text",
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
MISSING_AZURE_BASE_URL: Final = (
    "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or "
    "AZURE_OPENAI_RESOURCE_NAME, or pass azure_base_url, azure_resource_name (options.extra), "
    "or model.base_url."
)
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"
AZURE_ID_PROVIDERS: Final = NORMALIZED_PROVIDERS | {"azure"}
_AZURE_HOSTS: Final = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


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
        if effort:
            mapped = (model.thinking_level_map or {}).get(effort)
            effort = mapped if isinstance(mapped, str) else effort
        return {"effort": effort or "medium", "summary": summary or "auto"}, True
    if model.provider == "github-copilot" and model.api != "azure-openai-responses":
        return None, False
    level_map = model.thinking_level_map or {}
    if "off" in level_map and level_map["off"] is None:
        return None, False
    return {"effort": level_map.get("off") or "none"}, False


def build_responses_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body for ``context`` (already normalized: messages only).

    Provider-native options come from ``options.extra``: ``reasoning_effort`` (a level,
    mapped through ``model.thinking_level_map``), ``reasoning_summary``, ``service_tier``,
    ``tool_choice`` (the unified ``options.tool_choice`` when ``extra`` has none).
    ``options.output_format`` becomes ``text.format`` (strict unless
    ``compat.supportsStrictMode`` is false or the schema does not fit). Sampling
    parameters (the model's, its thinking level's, the request's) are added last."""
    azure = model.api == "azure-openai-responses"
    compat = model.compat or {}
    resolved = resolve_transcript(context, compat.get("supportsMidConvoSystemMessages") is True)
    messages = resolved.messages
    support = responses_tool_support(model)
    strict_mode = compat.get("supportsStrictMode", azure) is True
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_responses_input(
            messages,
            model,
            tool_support=support,
            tool_options={"strict_mode": strict_mode},
            id_providers=AZURE_ID_PROVIDERS if azure else NORMALIZED_PROVIDERS,
        ),
        "stream": True,
        "store": False,
    }
    retention = cache_retention(options)
    key_mode_on = compat.get("promptCacheKeyMode") != "disabled"
    if options.session_id and key_mode_on and (azure or retention != "none"):
        body["prompt_cache_key"] = clamp_prompt_cache_key(options.session_id)
    if (
        not azure
        and retention == "long"
        and compat.get("supportsLongCacheRetention", True) is not False
    ):
        body["prompt_cache_retention"] = "24h"
    if options.max_tokens:
        body["max_output_tokens"] = max(MIN_OUTPUT_TOKENS, options.max_tokens)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    tier = _extra(options, "service_tier")
    if tier is not None:
        body["service_tier"] = tier
    tools = request_tools(messages, support)
    if tools:
        body["tools"] = convert_responses_tools(tools, strict_mode=strict_mode)
    choice = _extra(options, "tool_choice")
    if choice is None:
        choice = options.tool_choice
    if choice is not None:
        body["tool_choice"] = choice
    output = options.output_format
    if output is not None:
        body["text"] = {"format": responses_text_format(model, output)}
    reasoning, encrypted = _reasoning(model, options)
    if reasoning is not None:
        body["reasoning"] = reasoning
    if encrypted:
        body["include"] = [ENCRYPTED_REASONING]
    effort = _extra(options, "reasoning_effort")
    summary = _extra(options, "reasoning_summary")
    level = effort or ("medium" if summary else "off")
    sampling = resolve_sampling_params(model, level, options.sampling_params)
    if sampling:
        body.update(sampling)
    return body


# --------------------------------------------------------------------------- Azure


def _normalize_azure_base(base: str) -> str:
    url = base.strip().rstrip("/")
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ProviderError(f"Invalid Azure OpenAI base URL: {base}")
    path = parts.path.rstrip("/")
    host = (parts.hostname or "").lower()
    query = parts.query
    if host.endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        path, query = "/openai/v1", ""
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment)).rstrip("/")


def azure_base_url(model: Model, options: StreamOptions) -> str:
    """The base URL: ``extra["azure_base_url"]``, ``AZURE_OPENAI_BASE_URL``,
    ``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1`` or
    ``model.base_url``; an Azure host without its ``/openai/v1`` path gets it."""
    base = (
        str(_extra(options, "azure_base_url") or "").strip()
        or (_env(options, "AZURE_OPENAI_BASE_URL") or "").strip()
    )
    if not base:
        resource = _extra(options, "azure_resource_name") or _env(
            options, "AZURE_OPENAI_RESOURCE_NAME"
        )
        base = f"https://{resource}.openai.azure.com/openai/v1" if resource else model.base_url
    if not base:
        raise ProviderError(MISSING_AZURE_BASE_URL)
    return _normalize_azure_base(base)


def azure_responses_url(model: Model, options: StreamOptions) -> str:
    """``<base>/responses?api-version=…`` (``azure_base_url``; the version from
    ``extra["azure_api_version"]``, ``AZURE_OPENAI_API_VERSION``, else ``v1``)."""
    version = (
        _extra(options, "azure_api_version")
        or _env(options, "AZURE_OPENAI_API_VERSION")
        or AZURE_API_VERSION
    )
    return f"{azure_base_url(model, options)}/responses?api-version={version}"


def azure_error_text(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
    """What the OpenAI SDK and pi 1.6 make of a failed Azure status: the JSON of the body's
    ``error`` object when it has one, else ``<status> <body>``, or ``<status> status code
    (no body)`` for an empty body or JSON without an ``error``; prefixed
    ``Azure OpenAI API error (<status>): ``."""
    try:
        data = decode_checked(msgspec.json.decode, body)
    except msgspec.DecodeError:
        text = f"{status} {shown_error_text(body, None, more)}" if body.strip() else ""
    else:
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and error:
            text = shown_error_text(msgspec.json.encode(error).decode(), None, False)
        elif error is not None and error not in ("", 0):  # JavaScript's truthiness
            message = error.get("message") if isinstance(error, dict) else None
            text = f"{status} {message or msgspec.json.encode(error).decode()}"
        else:
            text = ""
    return f"Azure OpenAI API error ({status}): {text or f'{status} status code (no body)'}"


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
    api_key = run.api_key(None if azure else MISSING_OPENAI_KEY)
    context = normalize_context(context)
    url = (
        azure_responses_url(model, options) if azure else f"{model.base_url.rstrip('/')}/responses"
    )
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
    if not azure and options.session_id and cache_retention(options) != "none":
        if (model.compat or {}).get("sendSessionIdHeader") is not False:
            headers["session_id"] = options.session_id
        headers["x-client-request-id"] = options.session_id
    mapper = ResponsesEventMapper(run.builder, model, service_tier=_extra(options, "service_tier"))
    describe = azure_error_text if azure else None
    async with run.open_sse(url, run.headers(headers), payload, describe=describe) as sse:
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
