"""Deferred (background) responses: fetching, polling and cancelling them by handle.

A request sent with ``StreamOptions(deferred=True)`` to an API with a background mode
ends at once with ``stop_reason == "deferred"`` and a ``DeferredHandle`` in
``message.deferred`` (pi 1.6's ``deferred`` option). The handle is plain JSON
(``provider``, ``modelId``, ``api``, ``id``, optional ``expiresAt``, ``pollAfterMs``,
``data``): it survives a restart, and a handle written by pi 1.6 is fetched here and the
other way round. ``fetch_deferred`` is one look (pi 1.6's ``fetchDeferred``): the answer
when it is ready, else another ``deferred`` message with the handle to poll next;
``poll_deferred`` looks until the answer is there, waiting ``pollAfterMs`` between looks;
``cancel_deferred`` asks the provider to stop. The API's ``ApiProvider.fetch_deferred`` and
``cancel_deferred`` do the work; an API without them cannot take a handle.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final

import anyio
import msgspec

from ._catalog._models import get_model
from ._errors import PiError
from ._stream._abort import AbortSignal
from ._stream._consume import ABORTED_TEXT
from ._stream._open import AssistantMessageStream, open_stream_function, stream_fn_name
from ._stream._options import DeferredFetchOptions, EventSender, StreamOptions
from ._stream._registry import ApiProvider, ProviderRegistry, default_registry
from ._types import AssistantMessage, Context, DeferredHandle, Model, Usage, now_ms

__all__ = [
    "DEFAULT_POLL_INTERVAL_MS",
    "cancel_deferred",
    "fetch_deferred",
    "open_deferred_stream",
    "poll_deferred",
]

# The wait between two looks when the handle names none (``pollAfterMs`` unset).
DEFAULT_POLL_INTERVAL_MS: Final = 1_000


def _model_for(handle: DeferredHandle, model: Model | None) -> Model:
    if not isinstance(handle, DeferredHandle):
        raise TypeError(
            f"expected a DeferredHandle (message.deferred, or from_json(text, "
            f"DeferredHandle)), got {handle!r}"
        )
    if model is None:
        model = get_model(handle.provider, handle.model_id)
        if model is None:
            raise PiError(
                f"the deferred handle names model {handle.model_id!r} of provider "
                f"{handle.provider!r}, which the catalog does not have; pass model=... "
                "(the model the request was sent to)"
            )
    if model.api != handle.api:
        raise PiError(
            f"the deferred handle {handle.id!r} belongs to api {handle.api!r}, but the "
            f"model {model.id!r} uses api {model.api!r}; pass the model the request was "
            "sent to"
        )
    return model


def _provider(model: Model, registry: ProviderRegistry | None, what: str) -> ApiProvider:
    provider = (registry or default_registry).require(model.api)
    if getattr(provider, what) is None:
        raise PiError(
            f"api {model.api!r} has no background mode ({what} is not implemented); a "
            "handle can only be used with the api that returned it"
        )
    return provider


def _fetch_options(
    options: StreamOptions | None, overrides: dict[str, Any]
) -> DeferredFetchOptions:
    if options is None:
        return DeferredFetchOptions(**overrides)
    if not isinstance(options, DeferredFetchOptions):
        fields = {name: getattr(options, name) for name in StreamOptions.__struct_fields__}
        options = DeferredFetchOptions(**fields)
    return msgspec.structs.replace(options, **overrides) if overrides else options


def open_deferred_stream(
    handle: DeferredHandle,
    options: StreamOptions | None = None,
    *,
    model: Model | None = None,
    registry: ProviderRegistry | None = None,
    **overrides: Any,
) -> AbstractAsyncContextManager[AssistantMessageStream]:
    """``async with open_deferred_stream(handle) as events:`` — one look at a deferred
    response, as a stream (pi 1.6's ``streamDeferred``). A ready answer streams like any
    response; one that is not ready ends with ``done`` of reason ``"deferred"``.

    ``model`` is the model the request was sent to (by default the catalog's
    ``handle.provider`` / ``handle.model_id``); ``options`` and keyword overrides are
    request options (``DeferredFetchOptions``: ``wait_ms`` lets the provider hold the
    look open). Misuse (no such model, an api without a background mode) raises
    ``PiError``; request failures are ``error`` events."""
    model = _model_for(handle, model)
    registry = registry or default_registry
    fetch = _provider(model, registry, "fetch_deferred").fetch_deferred
    assert fetch is not None
    fetch_options = _fetch_options(options, overrides)
    if fetch_options.registry is None:
        fetch_options = msgspec.structs.replace(fetch_options, registry=registry)

    async def look(
        model: Model, context: Context, options: StreamOptions, send: EventSender, /
    ) -> None:
        assert isinstance(options, DeferredFetchOptions)
        await fetch(model, handle, options, send)

    return open_stream_function(
        look, model, Context(messages=[]), fetch_options, stream_fn_name(fetch)
    )


async def fetch_deferred(
    handle: DeferredHandle,
    options: StreamOptions | None = None,
    *,
    model: Model | None = None,
    registry: ProviderRegistry | None = None,
    **overrides: Any,
) -> AssistantMessage:
    """One look at a deferred response (pi 1.6's ``fetchDeferred``): the answer when it is
    ready, else a message with ``stop_reason == "deferred"`` whose ``deferred`` is the
    handle to look with next. Arguments as for ``open_deferred_stream``."""
    async with open_deferred_stream(
        handle, options, model=model, registry=registry, **overrides
    ) as events:
        async for _ in events:
            pass
    return events.result()


@asynccontextmanager
async def _abortable(signal: AbortSignal | None) -> AsyncIterator[None]:
    if signal is None:
        yield
        return
    with anyio.CancelScope() as scope:
        unregister = signal.on_abort(scope.cancel)
        try:
            yield
        finally:
            unregister()


def _aborted(model: Model, handle: DeferredHandle) -> AssistantMessage:
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="aborted",
        deferred=handle,
        error_message=ABORTED_TEXT,
        timestamp=now_ms(),
    )


async def poll_deferred(
    handle: DeferredHandle,
    options: StreamOptions | None = None,
    *,
    model: Model | None = None,
    registry: ProviderRegistry | None = None,
    interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
    **overrides: Any,
) -> AssistantMessage:
    """Look at a deferred response until it is ready and return the answer (or the
    request's failure, as a message with ``stop_reason == "error"``).

    Before each look it waits the handle's ``poll_after_ms`` (the newest handle a look
    returned), ``interval_ms`` when the handle names no wait. An abort through
    ``options.signal`` ends the wait or the look at once with ``stop_reason ==
    "aborted"``, the newest handle kept in ``message.deferred``: the response goes on at
    the provider (``cancel_deferred`` stops it) and can be polled again later. The
    caller's cancellation propagates; bound the whole wait with ``anyio.fail_after``."""
    model = _model_for(handle, model)
    fetch_options = _fetch_options(options, overrides)
    signal = fetch_options.signal
    current = handle
    while True:
        wait_ms = interval_ms if current.poll_after_ms is None else current.poll_after_ms
        if wait_ms > 0:
            async with _abortable(signal):
                await anyio.sleep(wait_ms / 1000)
        if signal is not None and signal.aborted:
            return _aborted(model, current)
        message = await fetch_deferred(current, fetch_options, model=model, registry=registry)
        if message.stop_reason == "aborted" and message.deferred is None:
            return msgspec.structs.replace(message, deferred=current)
        if message.stop_reason != "deferred":
            return message
        if message.deferred is not None:
            current = message.deferred


async def cancel_deferred(
    handle: DeferredHandle,
    options: StreamOptions | None = None,
    *,
    model: Model | None = None,
    registry: ProviderRegistry | None = None,
    **overrides: Any,
) -> None:
    """Ask the provider to stop working on a deferred response (pi 1.6's
    ``cancelDeferred``; best effort: an answer that is already there may still be
    fetched). A refusal raises the provider's exception. Arguments as for
    ``open_deferred_stream``."""
    model = _model_for(handle, model)
    registry = registry or default_registry
    cancel = _provider(model, registry, "cancel_deferred").cancel_deferred
    assert cancel is not None
    cancel_options = _fetch_options(options, overrides)
    if cancel_options.registry is None:
        cancel_options = msgspec.structs.replace(cancel_options, registry=registry)
    await cancel(model, handle, cancel_options)
