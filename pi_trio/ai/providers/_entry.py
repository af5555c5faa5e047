"""The shell every provider module shares: its stream functions, and the loop from an SSE
stream to its mapper.

A provider module writes what its stream functions do as coroutines of a ``ProviderRun``
(``_http``); ``provider_stream`` makes each a stream function (``StreamFn``) of the same
name and docstring, run under ``run_provider`` (any failure becomes the ``error``
terminal, a return without one gets ``run.finish()``). The two stream functions of a
provider differ only in what they do before the request: the native one takes the options
as given, the ``*_simple`` one maps the unified options first::

    @provider_stream
    async def stream_example(run: ProviderRun, context: Context) -> None:
        \"\"\"Stream one Example request with provider-native options.\"\"\"
        await _request(run, context)

    @provider_stream
    async def stream_simple_example(run: ProviderRun, context: Context) -> None:
        \"\"\"``stream_example`` with the unified options mapped.\"\"\"
        run.options = example_simple_options(run.model, context, run.options)
        await _request(run, context)

``relay`` is the loop of a request that reads SSE: ``start``, then the events the mapper
makes of each SSE event, sent as each network read brings them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio.abc

from .._events import AssistantMessageEvent
from .._stream._options import StreamFn, StreamOptions
from .._types import Context, Model
from ._http import ProviderRun, run_provider
from ._sse import SSEEvent, SSEStream

__all__ = ["provider_stream", "relay"]

Request = Callable[[ProviderRun, Context], Awaitable[None]]


def provider_stream(request: Request) -> StreamFn:
    """The stream function that runs ``request(run, context)`` under ``run_provider``,
    named and documented as ``request`` is (error texts and task names name it)."""

    async def stream(
        model: Model,
        context: Context,
        options: StreamOptions,
        send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
    ) -> None:
        await run_provider(model, options, send, request, context)

    stream.__module__ = request.__module__
    stream.__name__ = request.__name__
    stream.__qualname__ = request.__qualname__
    stream.__doc__ = request.__doc__
    return stream


async def relay(
    run: ProviderRun,
    sse: SSEStream,
    feed: Callable[[SSEEvent], list[AssistantMessageEvent]],
    *,
    until: Callable[[], bool] | None = None,
) -> None:
    """Send ``start``, then the events ``feed`` makes of each SSE event, in order. With
    ``until`` (the mapper has seen the event that ends the answer: ``[DONE]``,
    ``message_stop``, a finished response), stop after the network read that made it true:
    the answer is complete, so what follows is not read as events, and a connection lost or
    held open after it costs nothing (``SSEStream.drain`` reads the rest of the body for
    the connection's reuse)."""
    await run.emit(run.builder.start())
    async for batch in sse:
        for event in batch:
            events = feed(event)
            if events:
                await run.emit_all(events)
        if until is not None and until():
            await sse.drain()
            break
