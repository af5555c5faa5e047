"""Running one stream function: ``open_stream``, ``complete`` and their ``*_simple`` forms.

The stream function runs as a child task of ``open_stream``'s task group and sends its
events over a bounded memory channel; ``open_stream`` yields the receiving side, which
applies each event as it is received (``StreamConsumer``). Inside an agent run the engine
awaits the stream function in its own task instead (``InlineStream``). Whatever
the stream function does — returns without a terminal event, raises, breaks the protocol —
the consumer sees exactly one terminal event, last, and ``result()`` is the final message.
The caller's cancellation propagates as cancellation; an abort through ``options.signal``
ends the stream with an ``error`` event whose reason is ``"aborted"``, keeping the
content received so far.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._events import AssistantMessageEvent
from .._types import AssistantMessage, Context, Model
from ._abort import AbortSignal
from ._consume import ABORTED_TEXT, StreamConsumer
from ._groups import raising_sole_exception
from ._options import StreamFn, StreamOptions
from ._registry import ProviderRegistry, default_registry

__all__ = [
    "ABORTED_TEXT",
    "AssistantMessageStream",
    "STREAM_BUFFER",
    "complete",
    "complete_simple",
    "open_stream",
    "open_stream_function",
    "open_stream_simple",
    "resolve_stream_fn",
    "stream_fn_name",
]

# Events in flight between a stream function and its consumer. Large enough that a
# provider decoding one network chunk into many events does not switch tasks per event;
# small enough that a consumer that stops reading stops the provider (backpressure).
STREAM_BUFFER = 64

# How long a stream function may keep running after it sent its terminal event (closing
# its HTTP response so the connection returns to the pool) before it is cancelled.
AFTER_TERMINAL_GRACE_S = 5.0


class AssistantMessageStream(StreamConsumer):
    """The events of one LLM call, in order; the last one is ``done`` or ``error``.

    Iterate it with ``async for``. ``message`` is what was received so far (``None``
    before ``start``); ``result()`` is the final message once the terminal event was
    received.
    """

    __slots__ = ("_finished", "_receive")

    def __init__(
        self,
        receive: MemoryObjectReceiveStream[AssistantMessageEvent],
        model: Model,
        name: str,
        signal: AbortSignal | None,
    ) -> None:
        super().__init__(model, name, signal)
        self._receive = receive
        self._finished = anyio.Event()

    def __aiter__(self) -> AssistantMessageStream:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        if self.done:
            raise StopAsyncIteration
        receive = self._receive
        try:
            try:
                event = receive.receive_nowait()
            except anyio.WouldBlock:
                event = await receive.receive()
        except anyio.EndOfStream:
            event = self.missing_terminal()
        return self._received(event)

    def _received(self, event: AssistantMessageEvent) -> AssistantMessageEvent:
        event = self.accept(event)
        if self.done:
            self._receive.close()
        return event

    def receive_nowait(self) -> AssistantMessageEvent:
        """The next event if one is ready, else raise ``anyio.WouldBlock``; raises
        ``StopAsyncIteration`` after the terminal event."""
        if self.done:
            raise StopAsyncIteration
        try:
            event = self._receive.receive_nowait()
        except anyio.EndOfStream:
            event = self.missing_terminal()
        return self._received(event)


def resolve_stream_fn(
    model: Model,
    stream_fn: StreamFn | None,
    registry: ProviderRegistry | None,
    *,
    simple: bool = True,
) -> tuple[StreamFn, str]:
    """The stream function to call for ``model`` (the registry's when ``stream_fn`` is
    ``None``; unknown api: ``PiError``) and its name for error messages."""
    if stream_fn is None:
        provider = (registry or default_registry).require(model.api)
        stream_fn = provider.stream_simple if simple else provider.stream
    return stream_fn, stream_fn_name(stream_fn)


@asynccontextmanager
async def open_stream_function(
    stream_fn: StreamFn, model: Model, context: Context, options: StreamOptions, name: str
) -> AsyncIterator[AssistantMessageStream]:
    """Run ``stream_fn`` as ``open_stream`` does (``name`` names it in errors)."""
    send, receive = anyio.create_memory_object_stream[AssistantMessageEvent](STREAM_BUFFER)
    stream = AssistantMessageStream(receive, model, name, options.signal)
    # The driver task never fails, so a group holds the body's own exception.
    with raising_sole_exception():
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(
                _drive,
                stream_fn,
                model,
                context,
                options,
                send,
                stream,
                name=f"stream function {name}",
            )
            try:
                yield stream
                if stream.done:
                    # Let the stream function finish cleanly (its HTTP response goes
                    # back to the pool); a stream function that lingers is cancelled.
                    with anyio.move_on_after(AFTER_TERMINAL_GRACE_S):
                        await stream._finished.wait()
            finally:
                task_group.cancel_scope.cancel()
                receive.close()


async def _drive(
    stream_fn: StreamFn,
    model: Model,
    context: Context,
    options: StreamOptions,
    send: MemoryObjectSendStream[AssistantMessageEvent],
    stream: AssistantMessageStream,
) -> None:
    try:
        with send:
            signal = options.signal
            if signal is None:
                await _call(stream_fn, model, context, options, send, stream)
            else:
                with anyio.CancelScope() as scope:
                    unregister = signal.on_abort(scope.cancel)
                    try:
                        await _call(stream_fn, model, context, options, send, stream)
                    finally:
                        unregister()
    finally:
        stream._finished.set()


async def _call(
    stream_fn: StreamFn,
    model: Model,
    context: Context,
    options: StreamOptions,
    send: MemoryObjectSendStream[AssistantMessageEvent],
    stream: AssistantMessageStream,
) -> None:
    try:
        await stream_fn(model, context, options, send)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        # The consumer stopped reading (it has its terminal event, or it went away).
        pass
    except Exception as exc:
        # The stream function broke its contract (failures are events, not exceptions);
        # the consumer gets an ``error`` outcome naming the cause.
        stream.record_failure(exc)


def stream_fn_name(stream_fn: Any) -> str:
    """The name that error texts give a stream function."""
    fn = getattr(stream_fn, "__wrapped__", stream_fn)
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def _prepare(
    model: Model,
    context: Context,
    options: StreamOptions | None,
    overrides: dict[str, Any],
    registry: ProviderRegistry | None,
    stream_fn: StreamFn | None,
    simple: bool,
) -> AbstractAsyncContextManager[AssistantMessageStream]:
    registry = registry or default_registry
    stream_fn, name = resolve_stream_fn(model, stream_fn, registry, simple=simple)
    if options is None:
        options = StreamOptions(**overrides)
    elif overrides:
        options = msgspec.structs.replace(options, **overrides)
    if options.registry is None:
        options = msgspec.structs.replace(options, registry=registry)
    return open_stream_function(stream_fn, model, context, options, name)


def open_stream(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    registry: ProviderRegistry | None = None,
    stream_fn: StreamFn | None = None,
    **overrides: Any,
) -> AbstractAsyncContextManager[AssistantMessageStream]:
    """``async with open_stream(model, context) as events:`` — stream one LLM call with
    provider-native options. Keyword arguments override fields of ``options``.

    The provider is looked up by ``model.api`` (unknown api: ``PiError``) unless
    ``stream_fn`` is given. Iterate ``events``; ``events.result()`` is the final message.
    Leaving the block early cancels the request.
    """
    return _prepare(model, context, options, overrides, registry, stream_fn, simple=False)


def open_stream_simple(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    registry: ProviderRegistry | None = None,
    stream_fn: StreamFn | None = None,
    **overrides: Any,
) -> AbstractAsyncContextManager[AssistantMessageStream]:
    """Like ``open_stream``, with the unified options: ``reasoning`` and
    ``thinking_budgets`` are mapped to each provider's thinking parameters."""
    return _prepare(model, context, options, overrides, registry, stream_fn, simple=True)


async def complete(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    registry: ProviderRegistry | None = None,
    stream_fn: StreamFn | None = None,
    **overrides: Any,
) -> AssistantMessage:
    """Run one LLM call to its end and return the final message (failures included, as
    a message with ``stop_reason`` ``"error"`` or ``"aborted"``)."""
    async with _prepare(model, context, options, overrides, registry, stream_fn, False) as events:
        async for _ in events:
            pass
    return events.result()


async def complete_simple(
    model: Model,
    context: Context,
    options: StreamOptions | None = None,
    *,
    registry: ProviderRegistry | None = None,
    stream_fn: StreamFn | None = None,
    **overrides: Any,
) -> AssistantMessage:
    """``complete`` with the unified options (see ``open_stream_simple``)."""
    async with _prepare(model, context, options, overrides, registry, stream_fn, True) as events:
        async for _ in events:
            pass
    return events.result()
