"""The ``openai-responses`` and ``azure-openai-responses`` providers (``POST …/responses``).

Input conversion lives in ``_responses_shared`` and the stream mapping in
``_responses_events``, Azure's URL and deployment, the session headers and the failure
texts in ``_responses_http`` (all sans-IO); this module builds the body, adds the HTTP
shell and headers and the ``*_simple`` reasoning mapping (the original's
``src/api/openai-responses.ts`` and ``src/api/azure-openai-responses.ts``).

Azure follows pi 1.6's ``azure-openai-responses``: the key goes in ``api-key``; the base
URL comes from ``extra["azure_base_url"]``, ``AZURE_OPENAI_BASE_URL``,
``AZURE_OPENAI_RESOURCE_NAME`` or the model (an Azure host gets the ``/openai/v1`` path it
needs); ``prompt_cache_key`` is the session id whatever the cache retention (unless
``compat.promptCacheKeyMode`` is ``disabled``), no retention or session headers are sent,
and tool-call ids from OpenAI, Codex, OpenCode and Azure turns are rewritten into the
``call|item`` form. HTTP failures read ``Azure OpenAI API error (<status>): ...``.

OpenAI follows pi 1.6's ``openai-responses``: the session id goes in the headers that
``compat.sessionAffinityFormat`` names (``session-id`` and ``x-client-request-id`` for
``openai``, ``x-session-id`` for ``openrouter``, ``x-client-request-id`` alone for
``openai-nosession``; detected from the provider and host when unset) and in
``prompt_cache_key``, unless the cache retention is ``none``. A long retention asks for
``prompt_cache_retention: "24h"``, or, for models with
``compat.supportsExplicitPromptCacheMode``, ``prompt_cache_options`` (``{"ttl": "30m"}``
for a long retention, ``{"mode": "explicit"}`` for none). A key sent straight to
api.openai.com that is not an ``sk-`` key is a Sign in with ChatGPT token: such requests
carry no retention, cache options, ``max_output_tokens``, ``temperature`` or
``configuration_update`` items, and a failure for the subscription's usage limit points
to where to check it. HTTP failures read ``OpenAI API error (<status>): ...`` (another
provider's name for other providers).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .._catalog._models import clamp_thinking_level
from .._errors import ProviderError
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._history import resolve_transcript
from .._transcript._system import normalize_context
from .._types import Context, Model
from ._entry import provider_stream, relay
from ._http import ProviderRun
from ._responses_events import ResponsesEventMapper
from ._responses_http import (
    azure_base_url,
    azure_deployment_name,
    azure_error_text,
    azure_responses_url,
    is_chatgpt_sign_in,
    openai_error_text,
    responses_session_headers,
    with_usage_hint,
)
from ._responses_shared import (
    NORMALIZED_PROVIDERS,
    cache_retention,
    convert_responses_input,
    convert_responses_tools,
    request_tools,
    responses_text_format,
    responses_tool_support,
)
from ._simple import (
    RESPONSES_OWNED_KEYS,
    add_sampling_params,
    build_base_options,
    resolve_sampling_params,
)

__all__ = [
    "API_PROVIDERS",
    "azure_base_url",
    "azure_deployment_name",
    "azure_error_text",
    "azure_responses_url",
    "build_responses_body",
    "clamp_prompt_cache_key",
    "configuration_update_effort",
    "is_chatgpt_sign_in",
    "openai_error_text",
    "responses_session_headers",
    "responses_simple_options",
    "stream_azure_openai_responses",
    "stream_openai_responses",
    "stream_simple_azure_openai_responses",
    "stream_simple_openai_responses",
    "with_usage_hint",
]

MAX_PROMPT_CACHE_KEY: Final = 64  # code points
MIN_OUTPUT_TOKENS: Final = 16
# reasoning.effort while configuration_update items carry the thinking level
CONFIGURATION_UPDATE_REQUEST_EFFORT: Final = "medium"
ENCRYPTED_REASONING: Final = "reasoning.encrypted_content"
AZURE_ID_PROVIDERS: Final = NORMALIZED_PROVIDERS | {"azure"}


def _extra(options: StreamOptions, key: str) -> Any:
    return (options.extra or {}).get(key)


def clamp_prompt_cache_key(key: str) -> str:
    """At most 64 code points."""
    return key[:MAX_PROMPT_CACHE_KEY]


def configuration_update_effort(
    model: Model, options: StreamOptions, sign_in: bool = False
) -> str | None:
    """The thinking level sent in ``configuration_update`` items (models with
    ``compat.supportsMidConvoEffort``, not with a ChatGPT token), else ``None``."""
    effort = _extra(options, "reasoning_effort")
    compat = model.compat or {}
    if compat.get("supportsMidConvoEffort") is not True or not effort or sign_in:
        return None
    mapped = (model.thinking_level_map or {}).get(effort)
    return mapped if isinstance(mapped, str) else str(effort)


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


def _prompt_cache_fields(compat: dict[str, Any], retention: str) -> dict[str, Any]:
    long_ok = compat.get("supportsLongCacheRetention", True) is not False
    if compat.get("supportsExplicitPromptCacheMode") is True:
        if retention == "none":
            return {"prompt_cache_options": {"mode": "explicit"}}
        if retention == "long" and long_ok:
            return {"prompt_cache_options": {"ttl": "30m"}}
        return {}
    return {"prompt_cache_retention": "24h"} if retention == "long" and long_ok else {}


def build_responses_body(
    model: Model, context: Context, options: StreamOptions, *, sign_in: bool = False
) -> dict[str, Any]:
    """The request body for ``context`` (already normalized: messages only).

    Provider-native options come from ``options.extra``: ``reasoning_effort`` (a level,
    mapped through ``model.thinking_level_map``), ``reasoning_summary``, ``service_tier``,
    ``tool_choice`` (the unified ``options.tool_choice`` when ``extra`` has none).
    ``options.output_format`` becomes ``text.format`` (strict unless
    ``compat.supportsStrictMode`` is false or the schema does not fit). Sampling
    parameters (the model's, its thinking level's, the request's) are added last; one
    naming a key of ``RESPONSES_OWNED_KEYS`` fails the request.
    ``sign_in``: the key is a ChatGPT token (``is_chatgpt_sign_in``), which leaves out
    the fields such requests are refused for."""
    azure = model.api == "azure-openai-responses"
    compat = model.compat or {}
    resolved = resolve_transcript(context, compat.get("supportsMidConvoSystemMessages") is True)
    messages = resolved.messages
    support = responses_tool_support(model)
    strict_mode = compat.get("supportsStrictMode", azure) is True
    update = None if azure else configuration_update_effort(model, options, sign_in)
    body: dict[str, Any] = {
        "model": model.id,
        "input": convert_responses_input(
            messages,
            model,
            tool_support=support,
            tool_options={"strict_mode": strict_mode},
            configuration_update_effort=update,
            id_providers=AZURE_ID_PROVIDERS if azure else NORMALIZED_PROVIDERS,
        ),
        "stream": True,
        "store": False,
    }
    retention = cache_retention(options)
    key_mode_on = compat.get("promptCacheKeyMode") != "disabled"
    if options.session_id and key_mode_on and (azure or retention != "none"):
        body["prompt_cache_key"] = clamp_prompt_cache_key(options.session_id)
    if not azure and not sign_in:
        body.update(_prompt_cache_fields(compat, retention))
    max_ok = azure or (compat.get("supportsMaxOutputTokens") is not False and not sign_in)
    if options.max_tokens and max_ok:
        body["max_output_tokens"] = max(MIN_OUTPUT_TOKENS, options.max_tokens)
    if options.temperature is not None and not sign_in:
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
    if reasoning is not None and update is not None:
        reasoning["effort"] = CONFIGURATION_UPDATE_REQUEST_EFFORT
    if reasoning is not None:
        body["reasoning"] = reasoning
    if encrypted or (model.reasoning and model.provider == "xai" and not azure):
        body["include"] = [ENCRYPTED_REASONING]
    effort = _extra(options, "reasoning_effort")
    summary = _extra(options, "reasoning_summary")
    level = effort or ("medium" if summary else "off")
    sampling = resolve_sampling_params(model, level, options.sampling_params)
    add_sampling_params(body, sampling, RESPONSES_OWNED_KEYS, model.api)
    return body


# --------------------------------------------------------------------------- streaming


async def _stream(run: ProviderRun, context: Context, azure: bool) -> None:
    model, options = run.model, run.options
    api_key = run.api_key()
    context = normalize_context(context)
    url = (
        azure_responses_url(model, options) if azure else f"{model.base_url.rstrip('/')}/responses"
    )
    sign_in = not azure and is_chatgpt_sign_in(model, api_key)
    body = build_responses_body(model, context, options, sign_in=sign_in)
    if azure:
        body["model"] = azure_deployment_name(model, options)
    else:
        update = configuration_update_effort(model, options, sign_in)
        if update is not None:
            run.builder.message.provider_thinking_level = update
    payload = await run.on_payload(body)
    headers: dict[str, str | None] = {}
    if api_key is not None:
        if azure:
            headers["api-key"] = api_key
        else:
            headers["authorization"] = f"Bearer {api_key}"
    if not azure and options.session_id and cache_retention(options) != "none":
        headers.update(responses_session_headers(model, options.session_id))
    mapper = ResponsesEventMapper(run.builder, model, service_tier=_extra(options, "service_tier"))
    describe = azure_error_text if azure else openai_error_text(model)
    try:
        async with run.open_sse(url, run.headers(headers), payload, describe=describe) as sse:
            await relay(
                run, sse, lambda event: mapper.feed_data(event.data), until=lambda: mapper.terminal
            )
        await run.emit(mapper.finish())
    except ProviderError as exc:
        hinted = str(exc) if azure else with_usage_hint(str(exc))
        if hinted == str(exc):
            raise
        raise ProviderError(hinted, status=exc.status, retryable=exc.retryable) from exc


@provider_stream
async def stream_openai_responses(run: ProviderRun, context: Context) -> None:
    """Stream one OpenAI Responses request with provider-native options (``extra``:
    ``reasoning_effort``, ``reasoning_summary``, ``service_tier``, ``tool_choice``)."""
    await _stream(run, context, False)


@provider_stream
async def stream_azure_openai_responses(run: ProviderRun, context: Context) -> None:
    """``stream_openai_responses`` against Azure OpenAI (``extra`` adds
    ``azure_base_url``, ``azure_resource_name``, ``azure_api_version``,
    ``azure_deployment_name``)."""
    await _stream(run, context, True)


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


@provider_stream
async def stream_simple_openai_responses(run: ProviderRun, context: Context) -> None:
    """``stream_openai_responses`` with the unified options mapped."""
    run.options = responses_simple_options(run.model, context, run.options)
    await _stream(run, context, False)


@provider_stream
async def stream_simple_azure_openai_responses(run: ProviderRun, context: Context) -> None:
    """``stream_azure_openai_responses`` with the unified options mapped."""
    run.options = responses_simple_options(run.model, context, run.options)
    await _stream(run, context, True)


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
