"""API keys from environment variables.

Each provider reads its key from fixed variables. ``env`` (for instance the ``env`` of
request options) is consulted before the process environment; an empty value counts as
absent. Providers that authenticate from ambient credentials (Vertex with application
default credentials, Bedrock with the AWS credential chain) yield the marker
``"<authenticated>"`` instead of a key. Values never leave ``get_env_api_key``: the other
functions deal in variable names only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, TypeAlias

__all__ = [
    "AUTHENTICATED",
    "env_api_key_names",
    "find_env_keys",
    "get_env_api_key",
    "missing_key_hint",
]

AUTHENTICATED: Final = "<authenticated>"

# Variables holding a key, in the order they are tried.
_KEY_VARS: Final[dict[str, tuple[str, ...]]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "github-copilot": ("COPILOT_GITHUB_TOKEN",),
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "amazon-bedrock": (),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "zai-coding-cn": ("ZAI_CODING_CN_API_KEY",),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
    # Qwen Token Plan: the plan's own variable first, then the one the plans used to share.
    "qwen-token-plan": ("QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-cn": ("QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "qwen-token-plan-individual": (
        "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
        "QWEN_TOKEN_PLAN_API_KEY",
    ),
    "qwen-token-plan-individual-cn": (
        "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
        "QWEN_TOKEN_PLAN_CN_API_KEY",
    ),
    "ant-ling": ("ANT_LING_API_KEY",),
    "radius": ("RADIUS_API_KEY",),
    "typesafe": ("TYPESAFE_API_KEY",),
    "meta": ("META_API_KEY",),
    "coralbricks": ("CORALBRICKS_API_KEY",),
}

# Variables that count as configuring the provider but whose value is not a key for this
# layer (ANTHROPIC_AUTH_TOKEN is sent as a bearer token by another path). Listed first.
_DISCOVERY_ONLY: Final[dict[str, tuple[str, ...]]] = {
    "anthropic": ("ANTHROPIC_AUTH_TOKEN",),
}

# The variable to suggest to a user first, where it is not the first one tried.
_SUGGESTED: Final[dict[str, str]] = {"anthropic": "ANTHROPIC_API_KEY"}

_AWS_SINGLE_VARS: Final = (
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)

_Reader: TypeAlias = Callable[[str], str | None]


def _reader(env: Mapping[str, str] | None) -> _Reader:
    def read(name: str) -> str | None:
        if env is not None and (value := env.get(name)):
            return value
        return os.environ.get(name) or None

    return read


def _has_vertex_adc(read: _Reader) -> bool:
    explicit = read("GOOGLE_APPLICATION_CREDENTIALS")
    if explicit is not None:
        path = Path(explicit)
    else:
        home = read("HOME") or os.path.expanduser("~")
        path = Path(home, ".config", "gcloud", "application_default_credentials.json")
    return path.is_file()


def _ambient(provider: str, read: _Reader) -> bool:
    if provider == "google-vertex":
        return (
            (read("GOOGLE_CLOUD_PROJECT") or read("GCLOUD_PROJECT")) is not None
            and read("GOOGLE_CLOUD_LOCATION") is not None
            and _has_vertex_adc(read)
        )
    if provider == "amazon-bedrock":
        return any(read(name) for name in _AWS_SINGLE_VARS) or bool(
            read("AWS_ACCESS_KEY_ID") and read("AWS_SECRET_ACCESS_KEY")
        )
    return False


def get_env_api_key(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The API key of ``provider`` from ``env`` or the process environment.

    ``"<authenticated>"`` when the provider authenticates from ambient credentials; ``None``
    when nothing is set or the provider is unknown.
    """
    read = _reader(env)
    for name in _KEY_VARS.get(provider, ()):
        if (value := read(name)) is not None:
            return value
    return AUTHENTICATED if _ambient(provider, read) else None


def find_env_keys(provider: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The names of the key variables of ``provider`` that are set (never their values).

    Ambient credentials (Vertex application default credentials, the AWS chain) are not
    listed.
    """
    read = _reader(env)
    names = (*_DISCOVERY_ONLY.get(provider, ()), *_KEY_VARS.get(provider, ()))
    return [name for name in names if read(name) is not None]


def env_api_key_names(provider: str) -> list[str]:
    """The variables a user can set to give ``provider`` a key, the one to suggest first;
    ``[]`` for unknown providers and those that use ambient credentials only."""
    names = list(_KEY_VARS.get(provider, ()))
    suggested = _SUGGESTED.get(provider)
    if suggested is not None:
        names.remove(suggested)
        names.insert(0, suggested)
    return names


def missing_key_hint(provider: str) -> str:
    """What to add to the missing-key error of ``provider`` (after the original's text,
    ``No API key for provider: <p>``): the variable to set and the other ways to give a
    key; ``""`` for a provider without a key variable."""
    names = env_api_key_names(provider)
    if not names:
        return ""
    alternatives = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
    return f"; set {names[0]}{alternatives}, or pass api_key / get_api_key"
