"""The ``openai-codex-responses`` provider: the ChatGPT Codex backend
(``POST {base_url}/codex/responses``, by default ``https://chatgpt.com/backend-api``),
over httpx2 with Server-Sent Events.

The request is built by ``_codex_request`` and the stream read by the Responses mapper
in its Codex dialect (``ResponsesEventMapper(codex=True)``), both sans-IO; this module
adds the HTTP shell and the ``*_simple`` reasoning mapping: the clamped level is the
effort, and no level means ``none`` for a reasoning model. On models with
``compat.supportsMidConvoEffort`` the level travels in ``configuration_update`` items
(the request then asks for ``medium``) and is kept as the answer's
``provider_thinking_level``.

The key is a ChatGPT OAuth access token, passed like any key (``api_key``, or the
agent's ``get_api_key``); getting one (the interactive login) is not part of pi_trio.
Only the SSE transport is used: the original's WebSocket transport and its zstd request
compression are optional there and not implemented here.
"""

from __future__ import annotations

import msgspec

from .._catalog._models import clamp_thinking_level
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context
from ._codex_request import (
    CodexRequest,
    build_codex_body,
    codex_account_id,
    codex_error_text,
    codex_headers,
    codex_should_retry,
    codex_url,
    configuration_update_effort,
    session_key,
)
from ._entry import provider_stream, relay
from ._http import ProviderRun
from ._responses_events import ResponsesEventMapper
from ._responses_shared import responses_text_format
from ._simple import build_base_options

__all__ = [
    "API_PROVIDER",
    "codex_native_request",
    "stream_openai_codex",
    "stream_simple_openai_codex",
]

ORIGINATOR = "pi"


def codex_native_request(options: StreamOptions) -> CodexRequest:
    """The native options of the raw entry point, from ``options.extra``
    (``reasoning_effort``, ``reasoning_summary``, ``service_tier``, ``text_verbosity``,
    ``tool_choice``; the unified ``options.tool_choice`` when ``extra`` has none)."""
    extra = options.extra or {}
    choice = extra.get("tool_choice")
    return CodexRequest(
        reasoning_effort=extra.get("reasoning_effort"),
        reasoning_summary=extra.get("reasoning_summary"),
        service_tier=extra.get("service_tier"),
        text_verbosity=extra.get("text_verbosity"),
        tool_choice=options.tool_choice if choice is None else choice,
    )


async def _stream(run: ProviderRun, context: Context, request: CodexRequest) -> None:
    model, options = run.model, run.options
    token = run.api_key()
    account = codex_account_id(token) if token is not None else None
    update = configuration_update_effort(model, request)
    if update is not None:
        run.builder.message.provider_thinking_level = update
    output = options.output_format
    text_format = responses_text_format(model, output) if output is not None else None
    body = build_codex_body(
        model, normalize_context(context), options, request, text_format=text_format
    )
    payload = await run.on_payload(body)
    headers = codex_headers(
        run.headers({"originator": ORIGINATOR}), token, account, session_key(options)
    )
    mapper = ResponsesEventMapper(run.builder, model, service_tier=request.service_tier, codex=True)
    async with run.open_sse(
        codex_url(model.base_url),
        headers,
        payload,
        describe=codex_error_text,
        retryable=codex_should_retry,
        notify_failures=True,
    ) as sse:
        # the backend's stream is over once the response finished
        await relay(
            run, sse, lambda event: mapper.feed_data(event.data), until=lambda: mapper.terminal
        )
    await run.emit(mapper.finish())


@provider_stream
async def stream_openai_codex(run: ProviderRun, context: Context) -> None:
    """Stream one Codex request with native options (``codex_native_request``)."""
    await _stream(run, context, codex_native_request(run.options))


@provider_stream
async def stream_simple_openai_codex(run: ProviderRun, context: Context) -> None:
    """Stream with the unified options: the clamped ``reasoning`` level is the effort
    (``none`` without one, for reasoning models); ``max_tokens`` defaults to the model's
    and fits the context window."""
    run.api_key()  # a missing token fails before anything else is computed
    model, options = run.model, run.options
    run.options = build_base_options(model, context, options)
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning else "off"
    effort = level if level != "off" else ("none" if model.reasoning else None)
    request = msgspec.structs.replace(codex_native_request(options), reasoning_effort=effort)
    await _stream(run, context, request)


API_PROVIDER = ApiProvider(
    api="openai-codex-responses",
    stream=stream_openai_codex,
    stream_simple=stream_simple_openai_codex,
)
