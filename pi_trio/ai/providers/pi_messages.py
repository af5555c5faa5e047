"""The ``pi-messages`` provider: pi's own message protocol, spoken by the Radius gateway
(``radius/...`` models, ``RADIUS_API_KEY``) and by any backend that implements it.

One ``POST <base_url>/messages`` of ``{model, context, options}`` (``_pi_messages_request``)
with ``authorization: Bearer <key>``, answered by Server-Sent Events that each hold one
assistant-message event without ``partial``, ended by ``done`` or ``error``; the mapper
(``_pi_messages_events``) rebuilds the message from them. The backend does the provider
work (reasoning levels, tool formats, cost), so ``stream`` and ``stream_simple`` send the
same options: ``reasoning`` and ``tool_choice`` as given, nothing clamped.

Failures: a status >= 400 reads ``<status> <reason>: <error.message or body>`` with
`` (<error.code>)`` when the body names one, and the message gets a
``pi_messages_response_failure`` diagnostic (the status, the backend's error object or the
raw body, the URL); a stream that ends without a terminal event fails with ``<provider>
stream ended without a terminal event``; data that is no event fails naming it. A missing
key reads ``No API key provided for provider "<provider>"``. Retries, timeouts and
``on_response`` are the HTTP shell's; ``on_provider_stream_event`` sees every event as the
backend sent it (JSON), before it is mapped.
"""

from __future__ import annotations

import json
from typing import Final

import msgspec

from .._errors import ProviderError
from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context, Model
from ._entry import provider_stream
from ._http import ProviderRun, redact
from ._pi_messages_events import PiMessagesMapper
from ._pi_messages_request import (
    PiMessagesFailure,
    encode_json,
    encode_pi_messages_body,
    pi_messages_url,
)

__all__ = ["API_PROVIDER", "no_terminal_text", "stream_pi_messages", "stream_simple_pi_messages"]

API: Final = "pi-messages"


def no_terminal_text(model: Model) -> str:
    return f"{model.provider} stream ended without a terminal event"


async def _stream(run: ProviderRun, context: Context) -> None:
    model, options = run.model, run.options
    api_key = run.api_key(f'No API key provided for provider "{model.provider}"')
    url = pi_messages_url(model, debug=bool((options.extra or {}).get("debug")))
    body = encode_pi_messages_body(model, normalize_context(context), options)
    if options.on_payload is not None:
        # the hook sees the body as plain JSON, as it is sent
        body = encode_json(await run.on_payload(json.loads(body)))
    headers = run.headers({} if api_key is None else {"authorization": f"Bearer {api_key}"})
    failure = PiMessagesFailure(model, url)
    mapper = PiMessagesMapper(run.builder, clean=lambda text: redact(text, run.secrets))
    try:
        async with run.open_sse(
            url, headers, msgspec.Raw(body), describe=failure.describe, notify_failures=True
        ) as sse:
            async for batch in sse:
                for event in batch:
                    events = mapper.feed(event.data)
                    if events:
                        await run.emit_all(events)
                    if mapper.terminal:
                        await sse.drain()  # the rest of the body, for the connection's reuse
                        return
    except ProviderError as exc:
        if failure.status is not None and exc.status == failure.status:
            message = run.builder.message
            diagnostic = failure.diagnostic(str(exc), run.secrets)
            message.diagnostics = [*(message.diagnostics or []), diagnostic]
        raise
    raise ProviderError(no_terminal_text(model))


@provider_stream
async def stream_pi_messages(run: ProviderRun, context: Context) -> None:
    """Stream one pi-messages request. Options sent: ``temperature``, ``max_tokens``,
    ``reasoning``, ``cache_retention``, ``session_id`` and ``tool_choice``;
    ``extra={"debug": True}`` asks the backend for debug metadata."""
    await _stream(run, context)


@provider_stream
async def stream_simple_pi_messages(run: ProviderRun, context: Context) -> None:
    """``stream_pi_messages``: the backend maps the unified options itself, so the
    ``reasoning`` level and ``tool_choice`` go as given and ``max_tokens`` is not
    defaulted."""
    await _stream(run, context)


API_PROVIDER: Final = ApiProvider(
    api=API, stream=stream_pi_messages, stream_simple=stream_simple_pi_messages
)
