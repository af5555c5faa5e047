"""The API-provider registry: which stream function serves which ``model.api``.

``ProviderRegistry`` is an ordinary object (tests and applications make their own); the
module-level functions use ``default_registry``. Built-in providers are imported on first
use of their api, so importing pi_trio never pays for providers you do not call.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING

import anyio.lowlevel
import msgspec

from .._errors import PiError, ProviderNotFoundError
from .._events import AssistantMessageEvent
from .._types import Context, DeferredHandle, Model
from ._options import (
    DeferredCancelFn,
    DeferredFetchFn,
    DeferredFetchOptions,
    StreamFn,
    StreamOptions,
)

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import ObjectSendStream

__all__ = [
    "ApiProvider",
    "BUILTIN_PROVIDER_MODULES",
    "ProviderRegistry",
    "default_registry",
    "get_api_provider",
    "get_api_providers",
    "register_api_provider",
    "unregister_api_provider",
    "unregister_api_providers",
]

# api name -> module defining ``API_PROVIDER`` (imported on first use)
BUILTIN_PROVIDER_MODULES: dict[str, str] = {
    "anthropic-messages": "pi_trio.ai.providers.anthropic",
    "openai-completions": "pi_trio.ai.providers.openai_completions",
    "openai-responses": "pi_trio.ai.providers.openai_responses",
    "azure-openai-responses": "pi_trio.ai.providers.openai_responses",
    "google-generative-ai": "pi_trio.ai.providers.google",
    "mistral-conversations": "pi_trio.ai.providers.mistral",
    "openai-codex-responses": "pi_trio.ai.providers.openai_codex",
    "google-vertex": "pi_trio.ai.providers.vertex",
    "bedrock-converse-stream": "pi_trio.ai.providers.bedrock",
    "pi-messages": "pi_trio.ai.providers.pi_messages",
}

# Connection-pool and timeout defaults of the shared HTTP client. Streams can be long, so
# the read timeout bounds the gap between two chunks, not the whole response.
HTTP_CONNECT_TIMEOUT_S = 15.0
HTTP_READ_TIMEOUT_S = 300.0
HTTP_MAX_CONNECTIONS = 200
HTTP_MAX_KEEPALIVE = 50


class ApiProvider(msgspec.Struct, frozen=True):
    """``stream`` takes provider-native options; ``stream_simple`` maps the unified
    ``reasoning`` / ``thinking_budgets`` options and then streams. An API with a
    background mode also has ``fetch_deferred`` and ``cancel_deferred`` (pi 1.6's
    ``ProviderStreams.fetchDeferred`` / ``cancelDeferred``): ``ai.fetch_deferred``
    and ``ai.cancel_deferred`` call them."""

    api: str
    stream: StreamFn
    stream_simple: StreamFn
    fetch_deferred: DeferredFetchFn | None = None
    cancel_deferred: DeferredCancelFn | None = None


class ProviderRegistry:
    """Providers keyed by api; registering an api again replaces it (last wins).

    Also owns the shared ``httpx2.AsyncClient`` its providers use (HTTP/1.1 keep-alive,
    bounded pool). A client belongs to one event loop; ``http_client()`` makes a new one
    when called from another loop. ``await aclose()`` closes it.
    """

    def __init__(self, *, builtins: bool = True) -> None:
        self._providers: dict[str, tuple[ApiProvider, str | None]] = {}
        self._builtins = dict(BUILTIN_PROVIDER_MODULES) if builtins else {}
        self._client: httpx2.AsyncClient | None = None
        self._client_token: object = None

    def register(self, provider: ApiProvider, source_id: str | None = None) -> None:
        self._providers[provider.api] = (_checked(provider), source_id)

    def unregister(self, api: str) -> None:
        """Remove the provider of ``api`` (a built-in is not loaded again)."""
        self._providers.pop(api, None)
        self._builtins.pop(api, None)

    def unregister_source(self, source_id: str) -> None:
        """Remove every provider registered with ``source_id``."""
        for api in [a for a, (_, s) in self._providers.items() if s == source_id]:
            del self._providers[api]

    def get(self, api: str) -> ApiProvider | None:
        entry = self._providers.get(api)
        if entry is not None:
            return entry[0]
        module_name = self._builtins.get(api)
        if module_name is None:
            return None
        module = importlib.import_module(module_name)
        providers: list[ApiProvider] = getattr(module, "API_PROVIDERS", None) or [
            module.API_PROVIDER
        ]
        for provider in providers:
            if provider.api not in self._providers:
                self.register(provider)
        entry = self._providers.get(api)
        return entry[0] if entry is not None else None

    def require(self, api: str) -> ApiProvider:
        provider = self.get(api)
        if provider is None:
            raise ProviderNotFoundError(f"No API provider registered for api: {api}")
        return provider

    def apis(self) -> list[str]:
        """Registered apis plus the built-ins not loaded yet."""
        return list(dict.fromkeys([*self._providers, *self._builtins]))

    def providers(self) -> list[ApiProvider]:
        return [self.require(api) for api in self.apis()]

    def http_client(self) -> httpx2.AsyncClient:
        """The shared HTTP client for the running event loop."""
        token = anyio.lowlevel.current_token()
        # anyio hands out a new (equal) token object per call: compare by value
        if self._client is None or self._client_token != token or self._client.is_closed:
            import httpx2

            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(HTTP_READ_TIMEOUT_S, connect=HTTP_CONNECT_TIMEOUT_S),
                limits=httpx2.Limits(
                    max_connections=HTTP_MAX_CONNECTIONS,
                    max_keepalive_connections=HTTP_MAX_KEEPALIVE,
                ),
                follow_redirects=False,
            )
            self._client_token = token
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def _mismatch(model: Model, api: str) -> PiError:
    return PiError(f"Mismatched api: {model.api} expected {api}")


def _checked(provider: ApiProvider) -> ApiProvider:
    """Wrap the stream functions so a model of another api is refused."""
    api = provider.api

    def guard(fn: StreamFn) -> StreamFn:
        def guarded(
            model: Model,
            context: Context,
            options: StreamOptions,
            send: ObjectSendStream[AssistantMessageEvent],
            /,
        ) -> Awaitable[None]:
            if model.api != api:
                raise _mismatch(model, api)
            return fn(model, context, options, send)

        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        guarded._pi_guarded_api = api  # type: ignore[attr-defined]
        return guarded

    def guard_fetch(fn: DeferredFetchFn | None) -> DeferredFetchFn | None:
        if fn is None:
            return None

        def guarded(
            model: Model,
            handle: DeferredHandle,
            options: DeferredFetchOptions,
            send: ObjectSendStream[AssistantMessageEvent],
            /,
        ) -> Awaitable[None]:
            if model.api != api:
                raise _mismatch(model, api)
            return fn(model, handle, options, send)

        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        return guarded

    if (
        getattr(provider.stream, "_pi_guarded_api", None) == api
        and getattr(provider.stream_simple, "_pi_guarded_api", None) == api
    ):
        return provider  # already checked (registered again)
    return ApiProvider(
        api=api,
        stream=guard(provider.stream),
        stream_simple=guard(provider.stream_simple),
        fetch_deferred=guard_fetch(provider.fetch_deferred),
        cancel_deferred=provider.cancel_deferred,
    )


default_registry = ProviderRegistry()


def register_api_provider(provider: ApiProvider, source_id: str | None = None) -> None:
    """Register ``provider`` for its api in the default registry (``source_id`` groups
    registrations for ``unregister_api_providers``)."""
    default_registry.register(provider, source_id)


def get_api_provider(api: str) -> ApiProvider | None:
    """The default registry's provider for ``api``, or ``None``."""
    return default_registry.get(api)


def get_api_providers() -> list[ApiProvider]:
    """Every provider registered in the default registry."""
    return default_registry.providers()


def unregister_api_provider(api: str) -> None:
    """Remove the default registry's provider for ``api``."""
    default_registry.unregister(api)


def unregister_api_providers(source_id: str) -> None:
    """Remove every provider registered in the default registry under ``source_id``."""
    default_registry.unregister_source(source_id)
