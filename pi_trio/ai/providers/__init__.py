"""Writing a provider, and the built-in ones.

This package is the extension point for provider authors: ``ApiProvider`` and the
registry (``ProviderRegistry``, ``default_registry``; ``register_api_provider`` is in
``pi_trio.ai``), the stream-function contract (``StreamFn``), ``MessageBuilder`` (the
events of one answer, each with its ``partial``) and ``MessageFold`` (events applied to a
message), ``replay_events`` (a finished message as its events), the keys providers read
from the environment, and the identity headers of requests.

The built-in providers are its modules, one per api, each defining ``API_PROVIDER``
(``pi_trio.ai.providers.anthropic``…); they are imported on first use of their api
(``pi_trio.ai._stream._registry``). Shared by all of them: ``_http`` (keys, headers,
hooks, the POST with retries, SSE reading and the run wrapper ``run_provider`` /
``ProviderRun``), ``_http_errors`` (HTTP failure texts and retry rules), ``_sse`` (the
sans-IO SSE parser) and ``_simple`` (the mapping of the unified ``*_simple`` options:
context-clamped max tokens and thinking budgets).
"""

from __future__ import annotations

from .._identity import PI_TRIO_ATTRIBUTION as PI_TRIO_ATTRIBUTION
from .._identity import ClientAttribution as ClientAttribution
from .._identity import ClientIdentity as ClientIdentity
from .._identity import CustomUserAgent as CustomUserAgent
from .._identity import merge_client_identity as merge_client_identity
from .._keys._env import env_api_key_names as env_api_key_names
from .._keys._env import find_env_keys as find_env_keys
from .._keys._env import get_env_api_key as get_env_api_key
from .._stream._builder import MessageBuilder as MessageBuilder
from .._stream._consume import MessageFold as MessageFold
from .._stream._options import ResponseInfo as ResponseInfo
from .._stream._options import StreamFn as StreamFn
from .._stream._registry import ApiProvider as ApiProvider
from .._stream._registry import ProviderRegistry as ProviderRegistry
from .._stream._registry import default_registry as default_registry
from .._stream._registry import get_api_providers as get_api_providers
from .._stream._registry import unregister_api_providers as unregister_api_providers
from .._stream._replay import replay_events as replay_events
from .._types import now_ms as now_ms
from ._sessions import cleanup_session_resources as cleanup_session_resources

__all__ = [
    "ApiProvider",
    "ClientAttribution",
    "ClientIdentity",
    "CustomUserAgent",
    "MessageBuilder",
    "MessageFold",
    "PI_TRIO_ATTRIBUTION",
    "ProviderRegistry",
    "ResponseInfo",
    "StreamFn",
    "cleanup_session_resources",
    "default_registry",
    "env_api_key_names",
    "find_env_keys",
    "get_api_providers",
    "get_env_api_key",
    "merge_client_identity",
    "now_ms",
    "replay_events",
    "unregister_api_providers",
]
