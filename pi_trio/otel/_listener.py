"""The listener that turns one agent's events into spans and metrics.

Each run is an ``invoke_agent`` span; each turn a ``turn`` span under it; each model
response a ``chat`` span (``generate_content`` for Gemini) and each tool call an
``execute_tool`` span under its turn. Spans are opened and closed on the agent's
events, whose order the agent guarantees (every ``*_start`` has its ``*_end``, also
after an abort or a failure), so every span ends. A run whose closing events never came
(the caller's cancellation outlasted ``close_timeout``) is closed at the agent's next
run or at ``uninstrument()``.

A request's start is the assistant message's ``timestamp`` (taken when the provider
starts the request, in milliseconds), kept within its turn.

The listener is synchronous and cheap: it never makes the agent start a dispatcher
task, and a ``message_update`` costs one attribute check. An error in recording is
logged, never raised into the run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import SpanKind

from ..agent.extend import run_limit_details
from . import _content as content
from ._records import (
    NS,
    ChatRecord,
    OpenSpan,
    ToolCallRecord,
    fail,
    input_tokens,
    request_attributes,
    response_attributes,
    tool_attributes,
    tool_error_type,
)
from ._semconv import (
    AGENT_NAME,
    CONVERSATION_ID,
    ERROR_ABORTED,
    ERROR_OTHER,
    ERROR_TIMEOUT,
    ERROR_TYPE,
    OPERATION_EXECUTE_TOOL,
    OPERATION_INVOKE_AGENT,
    OPERATION_NAME,
    PI_COST,
    PI_FALLBACK_EVENT,
    PI_FALLBACK_FROM,
    PI_FALLBACK_KIND,
    PI_FALLBACK_TO,
    PI_FALLBACKS,
    PI_RUN_LIMIT,
    PI_RUN_LIMIT_EVENT,
    PI_RUN_LIMIT_MAXIMUM,
    PI_RUN_LIMIT_SPENT,
    PI_TURN_INDEX,
    PI_TURNS,
    PROVIDER_NAME,
    REQUEST_MODEL,
    RESPONSE_FINISH_REASONS,
    RESPONSE_MODEL,
    TOKEN_TYPE,
    TOOL_CALL_RESULT,
    TOOL_NAME,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
    error_type_of_message,
    finish_reason,
    provider_name,
)
from ._telemetry import Telemetry

__all__ = ["AgentTelemetry"]

_log = logging.getLogger("pi_trio.otel")

_UNCLOSED = "the run ended without this span's closing event"


class AgentTelemetry:
    """The listener for one agent: ``listener(event, signal)``."""

    def __init__(self, agent: Any, telemetry: Telemetry, on_run_end: Callable[[], None]) -> None:
        self._agent = agent
        self._telemetry = telemetry
        self._on_run_end = on_run_end
        self._handlers: dict[str, Callable[[Any, Any], None]] = {
            "agent_start": self._agent_start,
            "turn_start": self._turn_start,
            "message_start": self._message_start,
            "message_end": self._message_end,
            "tool_execution_start": self._tool_start,
            "tool_execution_end": self._tool_end,
            "turn_end": self._turn_end,
            "agent_end": self._agent_end,
            "model_fallback": self._fallback,
        }
        self._run: OpenSpan | None = None
        self._signal: Any = None
        self._turn: OpenSpan | None = None
        self._chat: ChatRecord | None = None
        self._tools: dict[str, ToolCallRecord] = {}
        # pi's vocabulary beside this one (``vocabulary="both"``): told of each request
        # inside its chat span, so its span starts after the chat span and ends before it
        self.companion: Callable[[Any, Any], None] | None = None
        self._reset_totals()

    @property
    def capture_content(self) -> bool:
        """Whether spans may carry content: messages, arguments, results, and the texts
        of tool failures (which often quote the arguments)."""
        return self._telemetry.capture_content

    def _reset_totals(self) -> None:
        self._turns = 0
        self._fallbacks = 0
        self._input_tokens = 0
        self._output_tokens = 0
        self._cost = 0.0
        self._last_finish: str | None = None
        self._turn_error: str | None = None
        self._run_error: tuple[str, str | None] | None = None

    # ------------------------------------------------------------------ listener

    def __call__(self, event: Any, signal: Any) -> None:
        kind = event.type
        if kind == "message_update":
            chat = self._chat
            if chat is not None and not chat.first_chunk_ns:
                chat.first_chunk_ns = time.time_ns()
            if self.companion is not None:
                self.companion(event, signal)
            return
        handler = self._handlers.get(kind)
        if handler is None:
            return
        try:
            handler(event, signal)
        except Exception:
            _log.exception("pi_trio.otel could not record %r; the run goes on", kind)

    def chat_context(self) -> Context | None:
        """The context of the open request span (its children's parent), else of the
        turn or the run."""
        chat = self._chat
        if chat is not None:
            return chat.context
        return self._parent()

    def tool_call(self, tool_call_id: str, signal: Any) -> ToolCallRecord | None:
        """The open span of a tool call of this agent's current run (``signal`` tells
        the run), for the wrapped ``execute``."""
        if signal is None or signal is not self._signal:
            return None
        return self._tools.get(tool_call_id)

    def close(self, reason: str = _UNCLOSED) -> None:
        """End every span still open (the run lost its closing events, or the agent is
        being uninstrumented mid-run)."""
        self._end_calls(reason)
        now = time.time_ns()
        for opened in (self._turn, self._run):
            if opened is not None:
                fail(opened.span, ERROR_OTHER, reason)
                opened.span.end(end_time=now)
        self._turn = self._run = None
        self._signal = None

    def _end_calls(self, reason: str) -> None:
        """End the open request and tool call spans as failed."""
        now = time.time_ns()
        for record in self._tools.values():
            fail(record.span, ERROR_OTHER, reason)
            record.span.end(end_time=now)
        self._tools.clear()
        if self._chat is not None:
            fail(self._chat.span, ERROR_OTHER, reason)
            self._chat.span.end(end_time=now)
            self._chat = None

    # ------------------------------------------------------------------ run and turns

    def _agent_start(self, event: Any, signal: Any) -> None:
        if self._run is not None:
            self.close()
        self._reset_totals()
        agent = self._agent
        model = agent.state.model
        name = self._telemetry.agent_name
        metric_attributes: dict[str, Any] = {
            OPERATION_NAME: OPERATION_INVOKE_AGENT,
            PROVIDER_NAME: provider_name(model.provider),
            REQUEST_MODEL: model.id,
        }
        if name:
            metric_attributes[AGENT_NAME] = name
        attributes = dict(metric_attributes)
        session_id = agent.stream_options.session_id
        if session_id:
            attributes[CONVERSATION_ID] = session_id
        now = time.time_ns()
        span = self._telemetry.tracer.start_span(
            f"{OPERATION_INVOKE_AGENT} {name}" if name else OPERATION_INVOKE_AGENT,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=now,
        )
        self._run = OpenSpan(span, now, metric_attributes)
        self._signal = signal

    def _turn_start(self, event: Any, signal: Any) -> None:
        run = self._run
        if run is None:
            return
        if self._turn is not None:
            self._end_turn(None)
        self._turns += 1
        now = time.time_ns()
        span = self._telemetry.tracer.start_span(
            "turn",
            context=run.context,
            kind=SpanKind.INTERNAL,
            attributes={PI_TURN_INDEX: self._turns},
            start_time=now,
        )
        self._turn = OpenSpan(span, now, {})
        self._turn_error = None

    def _turn_end(self, event: Any, signal: Any) -> None:
        message = event.message
        self._end_turn(message if getattr(message, "role", None) == "assistant" else None)

    def _end_turn(self, message: Any) -> None:
        # a well-formed turn has none left: it ends after its response and tool calls
        self._end_calls(_UNCLOSED)
        turn = self._turn
        if turn is None:
            return
        self._turn = None
        error = error_type_of_message(message) if message is not None else None
        if error is not None:
            fail(turn.span, error, message.error_message)
            self._run_error = (error, message.error_message)
        elif self._turn_error is not None:
            fail(turn.span, self._turn_error, None)
            self._run_error = (self._turn_error, None)
        turn.span.end(end_time=time.time_ns())

    def _agent_end(self, event: Any, signal: Any) -> None:
        run = self._run
        if run is not None:
            self._end_turn(None)
            self._run = None
            span = run.span
            span.set_attributes(
                {
                    PI_TURNS: self._turns,
                    USAGE_INPUT_TOKENS: self._input_tokens,
                    USAGE_OUTPUT_TOKENS: self._output_tokens,
                    PI_COST: self._cost,
                }
            )
            if self._last_finish is not None:
                span.set_attribute(RESPONSE_FINISH_REASONS, [self._last_finish])
            if self._fallbacks:
                span.set_attribute(PI_FALLBACKS, self._fallbacks)
            metric_attributes = run.metric_attributes
            error = self._run_error
            if error is None and signal is not None and signal.aborted:
                error = (ERROR_ABORTED, None)  # aborted between turns
            if error is not None:
                fail(span, *error)
                metric_attributes = {**metric_attributes, ERROR_TYPE: error[0]}
            end = time.time_ns()
            span.end(end_time=end)
            self._telemetry.run_duration.record((end - run.start_ns) / NS, metric_attributes)
            self._signal = None
        self._on_run_end()

    # ------------------------------------------------------------------ requests

    def _parent(self) -> Context | None:
        opened = self._turn or self._run
        return opened.context if opened is not None else None

    def _message_start(self, event: Any, signal: Any) -> None:
        message = event.message
        if self._run is None or getattr(message, "role", None) != "assistant":
            return
        if run_limit_details(message) is not None:
            return  # a limit's answer: no request was made
        if self._chat is not None:
            self._end_calls(_UNCLOSED)
        self._chat = self._open_chat(message)
        if self.companion is not None:
            self.companion(event, signal)

    def _open_chat(self, message: Any) -> ChatRecord:
        now = time.time_ns()
        opened = self._turn or self._run
        floor = opened.start_ns if opened is not None else now
        start = max(min(message.timestamp * 1_000_000, now), floor)
        operation, attributes, metric_attributes = request_attributes(
            self._agent, message, self._telemetry.capture_content
        )
        span = self._telemetry.tracer.start_span(
            f"{operation} {message.model}",
            context=self._parent(),
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=start,
        )
        return ChatRecord(span, start, metric_attributes)

    def _message_end(self, event: Any, signal: Any) -> None:
        message = event.message
        if self._run is None or getattr(message, "role", None) != "assistant":
            return
        limit = run_limit_details(message)
        if limit is not None:
            self._limit_hit(self._run, limit)
            self._last_finish = finish_reason(message.stop_reason)
            return
        chat = self._chat or self._open_chat(message)
        if self.companion is not None:
            self.companion(event, signal)
        self._chat = None
        span = chat.span
        span.set_attributes(response_attributes(message, chat, self._telemetry.capture_content))
        response_model = message.response_model or message.model
        metric_attributes = {**chat.metric_attributes, RESPONSE_MODEL: response_model}
        error = error_type_of_message(message)
        if error is not None:
            fail(span, error, message.error_message)
        end = time.time_ns()
        span.end(end_time=end)

        telemetry = self._telemetry
        usage = message.usage
        tokens_in = input_tokens(usage)
        if tokens_in or usage.output:
            telemetry.token_usage.record(tokens_in, {**metric_attributes, TOKEN_TYPE: "input"})
            telemetry.token_usage.record(usage.output, {**metric_attributes, TOKEN_TYPE: "output"})
        if error is not None:
            metric_attributes[ERROR_TYPE] = error
        telemetry.duration.record((end - chat.start_ns) / NS, metric_attributes)
        self._input_tokens += tokens_in
        self._output_tokens += usage.output
        self._cost += float(usage.cost.total)
        self._last_finish = finish_reason(message.stop_reason)

    @staticmethod
    def _limit_hit(run: OpenSpan, limit: dict[str, Any]) -> None:
        """The answer that ends a run a limit stopped: no request, an event on the run."""
        limit_name = str(limit.get("limit", ""))
        attributes = {
            PI_RUN_LIMIT: limit_name,
            PI_RUN_LIMIT_MAXIMUM: limit.get("maximum", 0),
            PI_RUN_LIMIT_SPENT: limit.get("spent", 0),
        }
        run.span.add_event(PI_RUN_LIMIT_EVENT, attributes)
        run.span.set_attribute(PI_RUN_LIMIT, limit_name)

    def _fallback(self, event: Any, signal: Any) -> None:
        opened = self._turn or self._run
        if opened is None:
            return
        self._fallbacks += 1
        opened.span.add_event(
            PI_FALLBACK_EVENT,
            {
                PI_FALLBACK_FROM: event.from_model,
                PI_FALLBACK_TO: event.to_model,
                PI_FALLBACK_KIND: event.kind,
            },
        )

    # ------------------------------------------------------------------ tools

    def _tool_start(self, event: Any, signal: Any) -> None:
        run = self._run
        if run is None:
            return
        previous = self._tools.pop(event.tool_call_id, None)
        if previous is not None:
            fail(previous.span, ERROR_OTHER, _UNCLOSED)
            previous.span.end()
        self._tools[event.tool_call_id] = self._open_tool(event, run)

    def _open_tool(self, event: Any, run: OpenSpan) -> ToolCallRecord:
        name = event.tool_name
        now = time.time_ns()
        span = self._telemetry.tracer.start_span(
            f"{OPERATION_EXECUTE_TOOL} {name}",
            context=self._parent(),
            kind=SpanKind.INTERNAL,
            attributes=tool_attributes(self._agent, event, self._telemetry.capture_content),
            start_time=now,
        )
        metric_attributes = {
            OPERATION_NAME: OPERATION_EXECUTE_TOOL,
            PROVIDER_NAME: run.metric_attributes[PROVIDER_NAME],
            TOOL_NAME: name,
        }
        return ToolCallRecord(span, now, metric_attributes)

    def _tool_end(self, event: Any, signal: Any) -> None:
        run = self._run
        if run is None:
            return
        record = self._tools.pop(event.tool_call_id, None) or self._open_tool(event, run)
        span = record.span
        metric_attributes = record.metric_attributes
        result = event.result
        if event.is_error:
            error, text = tool_error_type(result, record)
            if error == ERROR_ABORTED:
                self._turn_error = ERROR_ABORTED
            # a failure's own text is content (an exception's message, a validation
            # error quoting the arguments); the runtime's fixed texts are not
            own_text = error in (ERROR_ABORTED, ERROR_TIMEOUT)
            fail(span, error, text if text and (own_text or self.capture_content) else None)
            metric_attributes = {**metric_attributes, ERROR_TYPE: error}
        elif self._telemetry.capture_content:
            span.set_attribute(TOOL_CALL_RESULT, content.tool_result(result))
        end = time.time_ns()
        span.end(end_time=end)
        # as long as the span, as the conventions ask (argument checks and the
        # before/after hooks included; the tool's own time is ``duration_ms``)
        self._telemetry.tool_duration.record((end - record.start_ns) / NS, metric_attributes)
