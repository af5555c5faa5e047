"""The OpenAI Responses stream as msgspec Structs (the events the original's
``processResponsesStream`` reads, ``src/api/openai-responses-shared.ts``).

An event's data is a tagged union on its ``type`` (``ResponsesEvent``); the item of
``response.output_item.added`` is one on the item's ``type`` (``OutputItem``). The item of
``response.output_item.done`` is kept as raw JSON: a reasoning item travels back to the
API verbatim as its thinking block's signature, and the mapper decodes it with
``ITEM_DECODER`` once it knows the slot it ends. Only the fields the mapper reads are
declared, each optional where the API may leave it out or send ``null``.
"""

from __future__ import annotations

from typing import Final

import msgspec

from .._json._depth import BoundedDecoder
from ._wire import Tagged, Wire, tags

__all__ = [
    "EVENT_DECODER",
    "EVENT_TYPES",
    "DeltaEvent",
    "ITEM_DECODER",
    "ITEM_TYPES",
    "ErrorEvent",
    "FunctionCallArgumentsDelta",
    "FunctionCallArgumentsDone",
    "FunctionCallItem",
    "MessageItem",
    "MessagePart",
    "OutputEntry",
    "OutputItem",
    "OutputItemAdded",
    "OutputItemDone",
    "OutputTextDelta",
    "ReasoningItem",
    "ReasoningSummaryPartDone",
    "ReasoningSummaryTextDelta",
    "ReasoningTextDelta",
    "RefusalDelta",
    "Response",
    "ResponseCompleted",
    "ResponseCreated",
    "ResponseDone",
    "ResponseFailed",
    "ResponseIncomplete",
    "ResponsesEvent",
    "ResponsesUsage",
]


# --------------------------------------------------------------------------- items


class TextPart(Wire):
    text: str | None = None


class ReasoningItem(Tagged, tag="reasoning"):
    id: str | None = None
    summary: list[TextPart] | None = None
    content: list[TextPart] | None = None
    encrypted_content: str | None = None


class MessagePart(Wire):
    """A part of a message item: ``output_text`` (``text``) or ``refusal`` (``refusal``);
    parts of other types are not read."""

    type: str | None = None
    text: str | None = None
    refusal: str | None = None


class MessageItem(Tagged, tag="message"):
    id: str | None = None
    phase: str | None = None
    content: list[MessagePart] | None = None


class FunctionCallItem(Tagged, tag="function_call"):
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    namespace: str | None = None


OutputItem = ReasoningItem | MessageItem | FunctionCallItem

ITEM_DECODER: Final = BoundedDecoder(OutputItem)


# --------------------------------------------------------------------------- response


class InputTokensDetails(Wire):
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


class OutputTokensDetails(Wire):
    reasoning_tokens: int | None = None


class ResponsesUsage(Wire):
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    input_tokens_details: InputTokensDetails | None = None
    output_tokens_details: OutputTokensDetails | None = None


class ResponseError(Wire):
    code: str | int | None = None
    message: str | None = None


class IncompleteDetails(Wire):
    reason: str | None = None


class OutputEntry(Wire):
    """An item of a finished response's ``output``: read for the encrypted reasoning some
    servers (Azure) send only there."""

    type: str | None = None
    id: str | None = None
    encrypted_content: str | None = None


class Response(Wire):
    id: str | None = None
    model: str | None = None
    status: str | None = None
    service_tier: str | None = None
    usage: ResponsesUsage | None = None
    error: ResponseError | None = None
    incomplete_details: IncompleteDetails | None = None
    output: list[OutputEntry] | None = None
    end_turn: bool | None = None  # the Codex backend: whether the model ended its turn


# --------------------------------------------------------------------------- events


class _Indexed(Tagged):
    output_index: int | None = None


class DeltaEvent(_Indexed):
    """The events that stream a piece of an output item's text or arguments."""

    delta: str | None = None


class OutputTextDelta(DeltaEvent, tag="response.output_text.delta"):
    pass


class RefusalDelta(DeltaEvent, tag="response.refusal.delta"):
    pass


class FunctionCallArgumentsDelta(DeltaEvent, tag="response.function_call_arguments.delta"):
    pass


class ReasoningSummaryTextDelta(DeltaEvent, tag="response.reasoning_summary_text.delta"):
    pass


class ReasoningTextDelta(DeltaEvent, tag="response.reasoning_text.delta"):
    pass


class ReasoningSummaryPartDone(_Indexed, tag="response.reasoning_summary_part.done"):
    pass


class FunctionCallArgumentsDone(_Indexed, tag="response.function_call_arguments.done"):
    arguments: str | None = None


class OutputItemAdded(_Indexed, tag="response.output_item.added"):
    item: OutputItem | None = None


class OutputItemDone(_Indexed, tag="response.output_item.done"):
    item: msgspec.Raw = msgspec.Raw(b"null")


class _ResponseEvent(Tagged):
    response: Response | None = None


class ResponseCreated(_ResponseEvent, tag="response.created"):
    pass


class ResponseCompleted(_ResponseEvent, tag="response.completed"):
    pass


class ResponseIncomplete(_ResponseEvent, tag="response.incomplete"):
    pass


class ResponseFailed(_ResponseEvent, tag="response.failed"):
    pass


class ResponseDone(_ResponseEvent, tag="response.done"):
    """The Codex backend's name for a finished response (``response.completed`` elsewhere)."""


class ErrorEvent(Tagged, tag="error"):
    code: str | int | None = None
    message: str | None = None
    error: ResponseError | None = None  # the Codex backend nests code and message here


ResponsesEvent = (
    OutputTextDelta
    | RefusalDelta
    | FunctionCallArgumentsDelta
    | ReasoningSummaryTextDelta
    | ReasoningTextDelta
    | ReasoningSummaryPartDone
    | FunctionCallArgumentsDone
    | OutputItemAdded
    | OutputItemDone
    | ResponseCreated
    | ResponseCompleted
    | ResponseIncomplete
    | ResponseFailed
    | ResponseDone
    | ErrorEvent
)

EVENT_DECODER: Final = BoundedDecoder(ResponsesEvent)

EVENT_TYPES: Final = tags(ResponsesEvent)
ITEM_TYPES: Final = tags(OutputItem)
