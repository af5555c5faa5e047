"""Azure's URL and deployment, the session headers and the HTTP failure texts of the
Responses providers (sans-IO; see ``openai_responses``)."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx2

from .._errors import ProviderError
from .._stream._options import StreamOptions
from .._types import Model
from ._common import option_env
from ._http_errors import openai_sdk_error_text
from ._http_send import DescribeError

__all__ = [
    "azure_base_url",
    "azure_deployment_name",
    "azure_error_text",
    "azure_responses_url",
    "is_chatgpt_sign_in",
    "openai_error_text",
    "responses_session_headers",
    "with_usage_hint",
]

AZURE_API_VERSION: Final = "v1"
OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
CHATGPT_USAGE_HINT: Final = "Check your ChatGPT usage: https://chatgpt.com/settings/usage"
CHATGPT_WORKSPACE_HINT: Final = (
    "You've reached your ChatGPT workspace's usage limit. Ask your workspace admin to "
    "increase it at admin.openai.com → Workspace → Usage limits."
)
MISSING_AZURE_BASE_URL: Final = (
    "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or "
    "AZURE_OPENAI_RESOURCE_NAME, or pass azure_base_url, azure_resource_name (options.extra), "
    "or model.base_url."
)
_AZURE_HOSTS: Final = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def _extra(options: StreamOptions, key: str) -> Any:
    return (options.extra or {}).get(key)


# --------------------------------------------------------------------------- OpenAI


def is_chatgpt_sign_in(model: Model, api_key: str | None) -> bool:
    """Whether ``api_key`` is a Sign in with ChatGPT token: sent straight to OpenAI's API
    and not an ``sk-`` key."""
    return (
        model.provider == "openai"
        and model.base_url == OPENAI_BASE_URL
        and api_key is not None
        and not api_key.startswith("sk-")
    )


def responses_session_headers(model: Model, session_id: str) -> dict[str, str]:
    """The session-affinity headers of ``compat.sessionAffinityFormat``: ``session-id``
    and ``x-client-request-id`` for ``openai``, ``x-session-id`` for ``openrouter``,
    ``x-client-request-id`` alone for ``openai-nosession``; OpenRouter's form for the
    openrouter provider or host when unset, else OpenAI's."""
    compat = model.compat or {}
    form = compat.get("sessionAffinityFormat")
    if form is None:
        openrouter = model.provider == "openrouter" or "openrouter.ai" in model.base_url
        form = "openrouter" if openrouter else "openai"
    if form == "openrouter":
        return {"x-session-id": session_id}
    headers = {"session-id": session_id} if form == "openai" else {}
    headers["x-client-request-id"] = session_id
    return headers


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
        or (option_env(options, "AZURE_OPENAI_BASE_URL") or "").strip()
    )
    if not base:
        resource = _extra(options, "azure_resource_name") or option_env(
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
        or option_env(options, "AZURE_OPENAI_API_VERSION")
        or AZURE_API_VERSION
    )
    return f"{azure_base_url(model, options)}/responses?api-version={version}"


def azure_error_text(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
    """What the OpenAI SDK and pi 1.6 make of a failed Azure status: the JSON of the body's
    ``error`` object when it has one, else ``<status> <body>``, or ``<status> status code
    (no body)`` for an empty body or JSON without an ``error``; prefixed
    ``Azure OpenAI API error (<status>): ``."""
    return openai_sdk_error_text(status, body, more, "Azure OpenAI")


def openai_error_text(model: Model) -> DescribeError:
    """Words a failed status as ``azure_error_text`` does, prefixed ``OpenAI API error
    (<status>): `` (``<provider> API error`` for other providers)."""
    name = "OpenAI" if model.provider == "openai" else model.provider

    def describe(status: int, headers: httpx2.Headers, body: str, more: bool) -> str:
        return openai_sdk_error_text(status, body, more, name)

    return describe


def with_usage_hint(text: str) -> str:
    """``text`` and, when it names a ChatGPT usage limit, where to look at it."""
    if "subscription_sharing_usage_limit_exceeded" in text:
        return f"{text}\n{CHATGPT_USAGE_HINT}"
    if "subscription_sharing_workplace_individual_usage_limit_exceeded" in text:
        return f"{text}\n{CHATGPT_WORKSPACE_HINT}"
    return text


def azure_deployment_name(model: Model, options: StreamOptions) -> str:
    """``extra["azure_deployment_name"]``, else the entry for ``model.id`` in
    ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,…``), else ``model.id``."""
    explicit = _extra(options, "azure_deployment_name")
    if explicit:
        return str(explicit)
    for entry in (option_env(options, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        name, sep, deployment = entry.partition("=")
        if sep and name.strip() == model.id and deployment.strip():
            return deployment.strip()
    return model.id
