"""pi's own telemetry vocabulary (pi-ai 1.6's ``AI_TELEMETRY_SCHEMA``) on OpenTelemetry.

One ``pi.ai.request`` span per model request (``pi.ai.poll`` per look at a deferred
response), with pi's unprefixed attribute names: at the start ``provider``, ``api``,
``model`` and ``reasoning`` (when the request asked for a level); at the end ``stop``,
``usage.input``, ``usage.output``, ``usage.cache_read``, ``usage.cache_write``,
``cost.total`` and ``response.id``. Events: ``pi.ai.first_chunk`` at the first stream
event, ``pi.ai.block`` for each finished block (``type``, ``index``, ``chars``; ``tool``
for a tool call), characters counted as JavaScript counts them (UTF-16 code units; a tool
call's are the lengths of its argument deltas). A response that ended in ``error`` sets
the span's status to ERROR, described by the first 500 characters of its
``error_message``, with ``error.type`` ``provider_error`` (pi's error name); an aborted
one stays OK with ``stop: "aborted"``. Metrics: ``pi.ai.request.duration`` and
``pi.ai.first_chunk.duration`` (milliseconds), ``pi.ai.tokens`` and ``pi.ai.cost``
(counters; a look that found the response not ready adds none). Prompts, answers and
arguments are never recorded.

``PiRequest`` is fed the assistant-message events of one request (``on_event``) and its
final message (``on_result``): by the agent listener of ``instrument(vocabulary="pi")``,
or by ``traced_provider``'s wrapped stream functions.
"""

from __future__ import annotations

import time
from typing import Any, Final

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from .. import __version__

__all__ = [
    "ERROR_TEXT_LIMIT",
    "PI_FIRST_CHUNK",
    "PI_POLL",
    "PI_REQUEST",
    "PiInstruments",
    "PiRequest",
    "utf16_length",
]

PI_REQUEST: Final = "pi.ai.request"
PI_POLL: Final = "pi.ai.poll"
PI_FIRST_CHUNK: Final = "pi.ai.first_chunk"
PI_BLOCK: Final = "pi.ai.block"
PROVIDER_ERROR: Final = "provider_error"
ERROR_TEXT_LIMIT: Final = 500  # characters of the error message in the span's status
_MS: Final = 1e6  # nanoseconds per millisecond
_BLOCK_ENDS: Final = {"text_end": "text", "thinking_end": "thinking"}
_DELTAS: Final = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})


def utf16_length(text: str) -> int:
    """JavaScript's ``text.length``: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _first_units(text: str, limit: int) -> str:
    """The first ``limit`` UTF-16 code units of ``text`` (a pair is never split)."""
    if len(text) <= limit // 2:
        return text
    return text.encode("utf-16-le", "surrogatepass")[: 2 * limit].decode("utf-16-le", "ignore")


class PiInstruments:
    """The tracer and the four instruments of pi's vocabulary."""

    __slots__ = ("cost", "first_chunk_duration", "request_duration", "tokens", "tracer")

    def __init__(self, tracer_provider: Any, meter_provider: Any, name: str) -> None:
        self.tracer = trace.get_tracer(name, __version__, tracer_provider)
        meter = metrics.get_meter(name, __version__, meter_provider)
        self.request_duration = meter.create_histogram(
            "pi.ai.request.duration", unit="ms", description="Logical request or poll duration."
        )
        self.first_chunk_duration = meter.create_histogram(
            "pi.ai.first_chunk.duration",
            unit="ms",
            description="Time to the first normalized stream event.",
        )
        self.tokens = meter.create_counter(
            "pi.ai.tokens",
            unit="token",
            description="Reported model token usage; pending and deferred polls are excluded.",
        )
        self.cost = meter.create_counter(
            "pi.ai.cost",
            unit="USD",
            description="Reported model cost; pending and deferred polls are excluded.",
        )


class PiRequest:
    """The span and measurements of one request (or one look at a deferred response)."""

    __slots__ = (
        "_attributes",
        "_chars",
        "_first",
        "_instruments",
        "_poll",
        "_started",
        "span",
    )

    def __init__(
        self,
        instruments: PiInstruments,
        model: Any,
        *,
        reasoning: Any = None,
        poll: bool = False,
        parent: Context | None = None,
    ) -> None:
        self._instruments = instruments
        self._poll = poll
        self._attributes = {"provider": model.provider, "model": model.id}
        start: dict[str, Any] = {**self._attributes, "api": model.api}
        if isinstance(reasoning, str):
            start["reasoning"] = reasoning
        self._started = time.perf_counter_ns()
        self.span = instruments.tracer.start_span(
            PI_POLL if poll else PI_REQUEST, context=parent, kind=SpanKind.CLIENT, attributes=start
        )
        self._first = True
        self._chars: dict[int, int] = {}  # UTF-16 units streamed per block

    def on_event(self, event: Any) -> None:
        """One event of the request's stream, in order."""
        if self._first:
            self._first = False
            self.span.add_event(PI_FIRST_CHUNK)
            self._instruments.first_chunk_duration.record(self._elapsed_ms(), self._attributes)
        kind = event.type
        if kind in _DELTAS:
            index = event.content_index
            self._chars[index] = self._chars.get(index, 0) + utf16_length(event.delta)
        elif kind in _BLOCK_ENDS:
            index = event.content_index
            # the whole text once the event was applied (an agent's listener sees it so);
            # straight from a provider's send, what its deltas brought
            streamed = self._chars.pop(index, 0)
            chars = utf16_length(event.content) if event.content else streamed
            self.span.add_event(
                PI_BLOCK, {"type": _BLOCK_ENDS[kind], "index": index, "chars": chars}
            )
        elif kind == "toolcall_end":
            index = event.content_index
            self.span.add_event(
                PI_BLOCK,
                {
                    "type": "tool_call",
                    "index": index,
                    "chars": self._chars.pop(index, 0),
                    "tool": event.tool_call.name,
                },
            )

    def on_result(self, message: Any) -> None:
        """The final message: end attributes, status, metrics; ends the span."""
        span = self.span
        usage = message.usage
        stop = message.stop_reason
        end: dict[str, Any] = {
            "stop": stop,
            "usage.input": usage.input,
            "usage.output": usage.output,
            "usage.cache_read": usage.cache_read,
            "usage.cache_write": usage.cache_write,
            "cost.total": usage.cost.total,
        }
        if message.response_id is not None:
            end["response.id"] = message.response_id
        span.set_attributes(end)
        if stop == "error":
            span.set_attribute("error.type", PROVIDER_ERROR)
            text = _first_units(message.error_message or "", ERROR_TEXT_LIMIT)
            span.set_status(Status(StatusCode.ERROR, text))
        instruments = self._instruments
        instruments.request_duration.record(self._elapsed_ms(), {**self._attributes, "stop": stop})
        if not self._poll or stop not in ("pending", "deferred"):
            attributes = self._attributes
            tokens = instruments.tokens
            tokens.add(usage.input, {**attributes, "kind": "input"})
            tokens.add(usage.output, {**attributes, "kind": "output"})
            tokens.add(usage.cache_read, {**attributes, "kind": "cache_read"})
            tokens.add(usage.cache_write, {**attributes, "kind": "cache_write"})
            instruments.cost.add(usage.cost.total, attributes)
        span.end()

    def _elapsed_ms(self) -> float:
        return (time.perf_counter_ns() - self._started) / _MS
