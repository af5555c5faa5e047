"""The ``google-vertex`` provider: Gemini on Vertex AI,
``POST …/publishers/google/models/{id}:streamGenerateContent?alt=sse``.

The request body and the chunk mapping are Gemini's (``_google_request``,
``_google_events``); Vertex differs in the address and the authentication:

- An API key (``api_key``, else ``GOOGLE_CLOUD_API_KEY``; placeholders such as
  ``<authenticated>`` or ``gcp-vertex-credentials`` do not count) goes to the express
  endpoint ``https://aiplatform.googleapis.com/v1/publishers/google/models/…`` in
  ``x-goog-api-key``.
- Otherwise Application Default Credentials (``_vertex_auth``, the ``vertex`` extra:
  google-auth; ``GOOGLE_APPLICATION_CREDENTIALS`` in ``options.env`` names a key file)
  authenticate a request to ``projects/{project}/locations/{location}/…`` of the
  location's endpoint (``global``: ``aiplatform.googleapis.com``; ``us``/``eu``: the
  multi-region ``aiplatform.{location}.rep.googleapis.com``; else
  ``{location}-aiplatform.googleapis.com``). The project comes from ``extra["project"]``,
  ``GOOGLE_CLOUD_PROJECT`` or ``GCLOUD_PROJECT``, the location from
  ``extra["location"]`` or ``GOOGLE_CLOUD_LOCATION`` (``options.env`` first).
- A ``base_url`` without ``{location}`` (a proxy) replaces the endpoint: the model path
  follows it directly, after ``/v1`` unless the URL names an API version.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import quote

from .._errors import ProviderError
from .._stream._options import StreamOptions
from .._stream._registry import ApiProvider
from .._transcript._system import normalize_context
from .._types import Context, Model
from ._common import model_id_path, option_env
from ._entry import provider_stream, relay
from ._google_events import GoogleEventMapper
from ._google_request import build_google_body, google_simple_options
from ._http import ProviderRun, resolve_api_key

__all__ = [
    "API_PROVIDER",
    "API_VERSION",
    "MISSING_EXTRA_TEXT",
    "stream_simple_vertex",
    "stream_vertex",
    "vertex_api_key",
    "vertex_url",
]

API_VERSION: Final = "v1"
MISSING_EXTRA_TEXT: Final = (
    "Vertex AI with Application Default Credentials needs the vertex extra: "
    "pip install 'pi-trio[vertex]' (google-auth is not installed); "
    "or pass an API key (GOOGLE_CLOUD_API_KEY)"
)
_CREDENTIALS_MARKER: Final = "gcp-vertex-credentials"
_PLACEHOLDER: Final = re.compile(r"^<[^>]+>$")
_VERSION_SEGMENT: Final = re.compile(r"^v\d+(?:beta\d*)?$")
_MULTI_REGIONS: Final = frozenset({"us", "eu"})
_EXPRESS_BASE: Final = "https://aiplatform.googleapis.com"


def _model_path(model_id: str) -> str:
    path = model_id_path(model_id, "google-vertex")
    if path.startswith(("publishers/", "projects/", "models/")):
        return path
    if "/" in path:
        publisher, _, name = path.partition("/")
        return f"publishers/{publisher}/models/{name}"
    return f"publishers/google/models/{path}"


def _custom_base(model: Model) -> str | None:
    base = model.base_url.strip()
    return base.rstrip("/") if base and "{location}" not in base else None


def vertex_url(model: Model, *, project: str | None = None, location: str | None = None) -> str:
    """The ``streamGenerateContent`` address: the express endpoint without a project,
    the project's in ``location`` with one, a custom ``base_url`` either way."""
    path = f"{_model_path(model.id)}:streamGenerateContent?alt=sse"
    custom = _custom_base(model)
    if custom is not None:
        segments = custom.split("://", 1)[-1].split("/")[1:]
        version = "" if any(_VERSION_SEGMENT.match(s) for s in segments) else f"/{API_VERSION}"
        return f"{custom}{version}/{path}"
    if project is None or location is None:
        return f"{_EXPRESS_BASE}/{API_VERSION}/{path}"
    if location == "global":
        host = _EXPRESS_BASE
    elif location in _MULTI_REGIONS:
        host = f"https://aiplatform.{location}.rep.googleapis.com"
    else:
        host = f"https://{location}-aiplatform.googleapis.com"
    resource = f"projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"
    return f"{host}/{API_VERSION}/{resource}/{path}"


def vertex_api_key(model: Model, options: StreamOptions) -> str | None:
    """The API key of the request, or ``None`` when ADC authenticate it (no key, or a
    placeholder that stands for ambient credentials)."""
    key = resolve_api_key(model, options)
    key = key.strip() if key else None
    if not key or key == _CREDENTIALS_MARKER or _PLACEHOLDER.match(key):
        return None
    return key


def _project(options: StreamOptions) -> str:
    project = (options.extra or {}).get("project") or option_env(options, "GOOGLE_CLOUD_PROJECT")
    project = project or option_env(options, "GCLOUD_PROJECT")
    if not project:
        raise ProviderError(
            "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass "
            "extra={'project': ...}."
        )
    return str(project)


def _location(options: StreamOptions) -> str:
    location = (options.extra or {}).get("location") or option_env(options, "GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ProviderError(
            "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass "
            "extra={'location': ...}."
        )
    return str(location)


async def _stream(run: ProviderRun, context: Context) -> None:
    model, options = run.model, run.options
    key = vertex_api_key(model, options)
    context = normalize_context(context)
    auth: dict[str, str | None] = {}
    if key is not None:
        key = run.clean_key(key)
        url = vertex_url(model)
        auth["x-goog-api-key"] = key
    else:
        url = vertex_url(model, project=_project(options), location=_location(options))
    payload = await run.on_payload(build_google_body(model, context, options))
    if key is None:
        try:
            from ._vertex_auth import adc_headers
        except ImportError as exc:
            raise ProviderError(MISSING_EXTRA_TEXT) from exc
        auth.update(await adc_headers(option_env(options, "GOOGLE_APPLICATION_CREDENTIALS")))
    mapper = GoogleEventMapper(run.builder, model, vertex=True)
    async with run.open_sse(url, run.headers(auth), payload) as sse:
        await relay(run, sse, lambda event: mapper.feed_data(event.data))
    await run.emit_all(mapper.finish())


@provider_stream
async def stream_vertex(run: ProviderRun, context: Context) -> None:
    """Stream one Vertex request with provider-native options: Gemini's ``extra``
    (``thinking_enabled``, ``thinking_budget_tokens``, ``thinking_level``,
    ``tool_choice``) plus ``project`` and ``location``."""
    await _stream(run, context)


@provider_stream
async def stream_simple_vertex(run: ProviderRun, context: Context) -> None:
    """``stream_vertex`` with the unified options mapped as for Gemini."""
    run.options = google_simple_options(run.model, context, run.options)
    await _stream(run, context)


API_PROVIDER: Final = ApiProvider(
    api="google-vertex", stream=stream_vertex, stream_simple=stream_simple_vertex
)
