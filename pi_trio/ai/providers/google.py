"""The ``google-generative-ai`` provider:
``POST {base_url}/models/{id}:streamGenerateContent?alt=sse``.

Request building lives in ``_google_request`` (with the ``*_simple`` reasoning mapping,
which Vertex shares) and the chunk mapping in ``_google_events`` (both sans-IO); this module
adds the HTTP shell (the original's ``stream`` and ``streamSimple``,
``src/api/google-generative-ai.ts``).
"""

from __future__ import annotations

from typing import Final

from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context, Model
from ._common import model_id_path
from ._entry import provider_stream, relay
from ._google_events import GoogleEventMapper
from ._google_request import build_google_body, google_simple_options
from ._http import ProviderRun

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
        await relay(run, sse, lambda event: mapper.feed_data(event.data))
    await run.emit_all(mapper.finish())


@provider_stream
async def stream_google(run: ProviderRun, context: Context) -> None:
    """Stream one Gemini request with provider-native options (``extra``:
    ``thinking_enabled``, ``thinking_budget_tokens``, ``thinking_level``, ``tool_choice``)."""
    await _stream(run, context)


# --------------------------------------------------------------------------- simple


@provider_stream
async def stream_simple_google(run: ProviderRun, context: Context) -> None:
    """``stream_google`` with the unified options mapped (``google_simple_options``)."""
    run.options = google_simple_options(run.model, context, run.options)
    await _stream(run, context)


API_PROVIDER: Final = ApiProvider(
    api="google-generative-ai", stream=stream_google, stream_simple=stream_simple_google
)
