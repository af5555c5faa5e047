"""Where pi's vocabulary (``_pi``) gets its events: an agent's listener, or a provider's
stream functions wrapped by ``traced_provider`` (no agent needed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.context import Context

from ..ai import AssistantMessage, DoneEvent, ErrorEvent, Model, StreamOptions, Usage
from ..ai.deferred import DeferredHandle
from ..ai.providers import ApiProvider, now_ms
from ._pi import PiInstruments, PiRequest
from ._telemetry import INSTRUMENTATION_NAME

__all__ = ["PiAgentTelemetry", "traced_provider"]


def _reasoning(agent: Any) -> str | None:
    level = getattr(agent.state, "thinking_level", None)
    return level if isinstance(level, str) and level != "off" else None


class PiAgentTelemetry:
    """An agent's listener writing one ``pi.ai.request`` span per model request, under
    ``parent()`` (the GenAI ``chat`` span when both vocabularies are on, else the context
    the run was started in)."""

    def __init__(
        self, agent: Any, instruments: PiInstruments, parent: Callable[[], Context | None]
    ) -> None:
        self._agent = agent
        self._instruments = instruments
        self._parent = parent
        self._request: PiRequest | None = None

    def __call__(self, event: Any, signal: Any) -> None:
        kind = event.type
        if kind == "message_update":
            request = self._request
            if request is not None:
                request.on_event(event.assistant_message_event)
            return
        if kind not in ("message_start", "message_end"):
            return
        message = event.message
        if getattr(message, "role", None) != "assistant":
            return
        if kind == "message_start":
            self.close()
            request = PiRequest(
                self._instruments,
                self._agent.state.model,
                reasoning=_reasoning(self._agent),
                parent=self._parent(),
            )
            request.on_event(event)  # the stream's first event: its start (or its error)
            self._request = request
        else:
            request = self._request or PiRequest(
                self._instruments, self._agent.state.model, parent=self._parent()
            )
            self._request = None
            request.on_result(message)

    def close(self) -> None:
        """End a request whose closing event never came."""
        request, self._request = self._request, None
        if request is not None:
            request.on_result(_aborted(self._agent.state.model))


def _aborted(model: Model, partial: Any = None) -> AssistantMessage:
    """What an aborted request counts: the usage its last partial reported."""
    usage = getattr(partial, "usage", None)
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=usage if isinstance(usage, Usage) else Usage(),
        stop_reason="aborted",
        timestamp=now_ms(),
    )


class _Observed:
    """The ``send`` a wrapped stream function is given: each event goes to the request's
    observer first, then on."""

    __slots__ = ("_request", "_send", "finished", "partial")

    def __init__(self, send: Any, request: PiRequest) -> None:
        self._send = send
        self._request = request
        self.finished = False
        self.partial: Any = None

    async def send(self, event: Any) -> None:
        request = self._request
        if isinstance(event, DoneEvent):
            self.finished = True
            request.on_result(event.message)
        elif isinstance(event, ErrorEvent):
            self.finished = True
            request.on_result(event.error)
        else:
            self.partial = getattr(event, "partial", None)
            request.on_event(event)
        await self._send.send(event)


def traced_provider(
    provider: ApiProvider,
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
) -> ApiProvider:
    """``provider`` with pi's vocabulary: a ``pi.ai.request`` span per call of its stream
    functions (``open_stream``, ``complete``... without an agent) and a ``pi.ai.poll``
    span per look at a deferred response, under the caller's current span. Register the
    result in place of the original (``register_api_provider(traced_provider(p))``)."""
    instruments = PiInstruments(tracer_provider, meter_provider, INSTRUMENTATION_NAME)

    async def observe(
        model: Model, options: StreamOptions, send: Any, poll: bool, call: Callable[[Any], Any]
    ) -> None:
        reasoning = options.reasoning if options is not None else None
        request = PiRequest(
            instruments, model, reasoning=reasoning, poll=poll, parent=otel_context.get_current()
        )
        observed = _Observed(send, request)
        try:
            await call(observed)
        finally:
            if not observed.finished:  # cancelled, aborted, or no terminal event
                request.on_result(_aborted(model, observed.partial))

    def traced(fn: Any) -> Any:
        async def stream(model: Model, context: Any, options: Any, send: Any, /) -> None:
            await observe(model, options, send, False, lambda s: fn(model, context, options, s))

        stream.__wrapped__ = fn  # type: ignore[attr-defined]
        return stream

    fetch = provider.fetch_deferred
    traced_fetch = None
    if fetch is not None:

        async def traced_fetch(
            model: Model, handle: DeferredHandle, options: Any, send: Any, /
        ) -> None:
            assert fetch is not None
            await observe(model, options, send, True, lambda s: fetch(model, handle, options, s))

        traced_fetch.__wrapped__ = fetch  # type: ignore[attr-defined]
    return ApiProvider(
        api=provider.api,
        stream=traced(provider.stream),
        stream_simple=traced(provider.stream_simple),
        fetch_deferred=traced_fetch,
        cancel_deferred=provider.cancel_deferred,
    )
