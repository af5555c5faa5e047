"""Open spans and the attributes of requests and tool calls, taken from agent events."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode

from ..agent.extend import ABORTED_TOOL_TEXT
from . import _content as content
from ._semconv import (
    ERROR_ABORTED,
    ERROR_TIMEOUT,
    ERROR_TOOL,
    ERROR_TYPE,
    INPUT_MESSAGES,
    OPERATION_EXECUTE_TOOL,
    OPERATION_NAME,
    OUTPUT_MESSAGES,
    PI_COST,
    PI_STOP_REASON,
    PROVIDER_NAME,
    REQUEST_MAX_TOKENS,
    REQUEST_MODEL,
    REQUEST_STREAM,
    REQUEST_TEMPERATURE,
    RESPONSE_FINISH_REASONS,
    RESPONSE_ID,
    RESPONSE_MODEL,
    SYSTEM_INSTRUCTIONS,
    TIME_TO_FIRST_CHUNK,
    TOOL_CALL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_DEFINITIONS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_TYPE,
    USAGE_CACHE_CREATION_INPUT_TOKENS,
    USAGE_CACHE_READ_INPUT_TOKENS,
    USAGE_INPUT_TOKENS,
    USAGE_OUTPUT_TOKENS,
    USAGE_REASONING_OUTPUT_TOKENS,
    finish_reason,
    operation_of_api,
    provider_name,
    server_attributes,
)

__all__ = [
    "NS",
    "ChatRecord",
    "OpenSpan",
    "ToolCallRecord",
    "fail",
    "input_tokens",
    "request_attributes",
    "response_attributes",
    "tool_attributes",
    "tool_error_type",
]

NS = 1e9  # nanoseconds per second


class OpenSpan:
    """An open span, its context (the parent of its children), its start, and the
    attributes its duration is recorded with."""

    __slots__ = ("_context", "metric_attributes", "span", "start_ns")

    def __init__(self, span: Span, start_ns: int, metric_attributes: dict[str, Any]) -> None:
        self.span = span
        self.start_ns = start_ns
        self.metric_attributes = metric_attributes
        self._context: Context | None = None

    @property
    def context(self) -> Context:
        """The context with this span current (made when first needed)."""
        context = self._context
        if context is None:
            context = self._context = trace.set_span_in_context(self.span)
        return context


class ChatRecord(OpenSpan):
    __slots__ = ("first_chunk_ns",)

    def __init__(self, span: Span, start_ns: int, metric_attributes: dict[str, Any]) -> None:
        super().__init__(span, start_ns, metric_attributes)
        self.first_chunk_ns = 0


class ToolCallRecord(OpenSpan):
    """A tool call's span, and what the traced ``execute`` saw: the exception it raised
    (its class name) or a cancellation."""

    __slots__ = ("cancelled", "raised")

    def __init__(self, span: Span, start_ns: int, metric_attributes: dict[str, Any]) -> None:
        super().__init__(span, start_ns, metric_attributes)
        self.raised: str | None = None
        self.cancelled = False


def fail(span: Span, error_type: str, description: str | None) -> None:
    span.set_attribute(ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))


# --------------------------------------------------------------------------- requests


def request_attributes(
    agent: Any, message: Any, capture: bool
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The operation, the span attributes at the start of a request (``message`` is the
    assistant message it starts), and the attributes its metrics are recorded with."""
    operation = operation_of_api(message.api)
    metric_attributes: dict[str, Any] = {
        OPERATION_NAME: operation,
        PROVIDER_NAME: provider_name(message.provider),
        REQUEST_MODEL: message.model,
    }
    state = agent.state
    model = state.model
    if model.id == message.model and model.provider == message.provider:
        metric_attributes.update(server_attributes(model.base_url))
    attributes = dict(metric_attributes)
    attributes[REQUEST_STREAM] = True
    options = getattr(agent, "stream_options", None)
    if options is not None:
        if options.max_tokens is not None:
            attributes[REQUEST_MAX_TOKENS] = options.max_tokens
        if options.temperature is not None:
            attributes[REQUEST_TEMPERATURE] = options.temperature
    if capture:
        attributes[INPUT_MESSAGES] = content.input_messages(state.messages)
        instructions = content.system_instructions(state.system_prompt)
        if instructions is not None:
            attributes[SYSTEM_INSTRUCTIONS] = instructions
        definitions = content.tool_definitions(state.tools)
        if definitions is not None:
            attributes[TOOL_DEFINITIONS] = definitions
    return operation, attributes, metric_attributes


def input_tokens(usage: Any) -> int:
    """Every input token, cached ones included (pi counts them apart)."""
    return int(usage.input + usage.cache_read + usage.cache_write)


def response_attributes(message: Any, chat: ChatRecord, capture: bool) -> dict[str, Any]:
    usage = message.usage
    attributes: dict[str, Any] = {
        RESPONSE_MODEL: message.response_model or message.model,
        RESPONSE_FINISH_REASONS: [finish_reason(message.stop_reason)],
        PI_STOP_REASON: message.stop_reason,
        USAGE_INPUT_TOKENS: input_tokens(usage),
        USAGE_OUTPUT_TOKENS: usage.output,
        USAGE_CACHE_READ_INPUT_TOKENS: usage.cache_read,
        USAGE_CACHE_CREATION_INPUT_TOKENS: usage.cache_write,
        PI_COST: float(usage.cost.total),
    }
    if isinstance(usage.reasoning, int):
        attributes[USAGE_REASONING_OUTPUT_TOKENS] = usage.reasoning
    if message.response_id:
        attributes[RESPONSE_ID] = message.response_id
    if chat.first_chunk_ns:
        attributes[TIME_TO_FIRST_CHUNK] = max(0, chat.first_chunk_ns - chat.start_ns) / NS
    if capture:
        attributes[OUTPUT_MESSAGES] = content.output_messages(message)
    return attributes


# --------------------------------------------------------------------------- tools


def tool_attributes(agent: Any, event: Any, capture: bool) -> dict[str, Any]:
    name = event.tool_name
    attributes: dict[str, Any] = {
        OPERATION_NAME: OPERATION_EXECUTE_TOOL,
        TOOL_NAME: name,
        TOOL_CALL_ID: event.tool_call_id,
        TOOL_TYPE: "function",
    }
    for tool in agent.state.tools:
        if getattr(tool, "name", None) == name:
            description = getattr(tool, "description", None)
            if isinstance(description, str) and description:
                attributes[TOOL_DESCRIPTION] = description
            break
    if capture and hasattr(event, "args"):
        attributes[TOOL_CALL_ARGUMENTS] = content.to_json(event.args)
    return attributes


def tool_error_type(result: Any, record: ToolCallRecord) -> tuple[str, str]:
    """``error.type`` and the text of a failed tool call's result."""
    text = "".join(getattr(b, "text", "") for b in (result.content or []))
    if text == ABORTED_TOOL_TEXT:
        return ERROR_ABORTED, text
    if record.raised is not None:
        return record.raised, text
    if record.cancelled:
        return ERROR_TIMEOUT, text  # cancelled without an abort: the tool's timeout
    return ERROR_TOOL, text
