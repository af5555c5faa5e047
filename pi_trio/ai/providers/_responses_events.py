"""OpenAI Responses stream events → assistant-message events (sans-IO, reference/ai.md §7.4).

``ResponsesEventMapper.feed_data(data)`` takes the ``data:`` text of one SSE event, decodes
it into a ``_responses_wire`` Struct (a tagged union on the event's ``type``) and returns the
events to send; ``finish()`` returns the terminal event once the wire stream ended. Output
items are tracked by ``output_index``, so items that finish out of order are handled.
Unknown event and item types are skipped. Failures raise ``ProviderError`` with the text
the user sees.
"""

from __future__ import annotations

from typing import Any, Final, cast

import msgspec

from .._builder import MessageBuilder
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json_parse import parse_streaming_json
from .._streaming_json import parse_tool_call_arguments
from .._types import Cost, Model
from ._http import UNKNOWN_ERROR_TEXT
from ._responses_shared import encode_text_signature
from ._responses_wire import (
    EVENT_DECODER,
    EVENT_TYPES,
    ITEM_DECODER,
    ITEM_TYPES,
    DeltaEvent,
    ErrorEvent,
    FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone,
    FunctionCallItem,
    MessageItem,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    ReasoningItem,
    ReasoningSummaryPartDone,
    ReasoningSummaryTextDelta,
    ReasoningTextDelta,
    RefusalDelta,
    Response,
    ResponseCompleted,
    ResponseCreated,
    ResponseFailed,
    ResponseIncomplete,
    TextPart,
)
from ._wire import decode_event, note_response, wire_type, write_prompt_usage

__all__ = [
    "ENDED_BEFORE_TERMINAL",
    "ResponsesEventMapper",
    "apply_service_tier_pricing",
]

ENDED_BEFORE_TERMINAL: Final = "OpenAI Responses stream ended before a terminal response event"

_WHAT: Final = "OpenAI Responses SSE event"

_STATUS: Final = {
    "completed": "stop",
    "incomplete": "length",
    "failed": "error",
    "cancelled": "error",
    "in_progress": "stop",
    "queued": "stop",
}


# The kind of slot each delta event extends. Deltas are most of a stream, so they are
# routed by their exact type (one lookup) before the ``match`` of the other events: there,
# each case that does not match costs ~0.15 us on a msgspec Struct (CPython 3.11).
_DELTA_SLOTS: Final[dict[type, str]] = {
    OutputTextDelta: "text",
    FunctionCallArgumentsDelta: "toolCall",
    ReasoningSummaryTextDelta: "thinking",
    ReasoningTextDelta: "thinking",
    RefusalDelta: "text",
}


def _skipped(payload: Any) -> bool:
    """For data that does not fit its Struct: whether it is something the mapper ignores
    (not an object; an event or output item type it does not know)."""
    kind = wire_type(payload)
    if kind == "response.output_item.added":
        return wire_type(payload.get("item")) not in ITEM_TYPES
    return kind not in EVENT_TYPES


def _item_skipped(payload: Any) -> bool:
    return wire_type(payload) not in ITEM_TYPES


def _tier_multiplier(model: Model, tier: str | None) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model.id == "gpt-5.5" else 2.0
    return 1.0


def apply_service_tier_pricing(model: Model, cost: Cost, tier: str | None) -> None:
    """Scale the four cost components for ``flex`` (x0.5) and ``priority`` (x2; x2.5 for
    ``gpt-5.5``) service tiers and recompute the total."""
    factor = _tier_multiplier(model, tier)
    if factor == 1.0:
        return
    cost.input *= factor
    cost.output *= factor
    cost.cache_read *= factor
    cost.cache_write *= factor
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write


class _Slot:
    __slots__ = ("arguments", "index", "kind")

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind
        self.index = index
        self.arguments: list[str] = []  # argument fragments streamed so far (tool calls)


class ResponsesEventMapper:
    """Folds one response's stream events into ``builder``'s message."""

    def __init__(
        self, builder: MessageBuilder, model: Model, *, service_tier: str | None = None
    ) -> None:
        self.builder = builder
        self.model = model
        self.service_tier = service_tier
        self._slots: dict[int, _Slot] = {}
        self._last_slot: int | None = None
        self._terminal = False
        self._failure: str | None = None

    # ------------------------------------------------------------------ feeding

    def feed_data(self, data: str) -> list[AssistantMessageEvent]:
        """Feed the ``data`` text of one SSE event (JSON; ``[DONE]`` is skipped)."""
        if not data.strip() or data == "[DONE]":
            return []
        event = decode_event(EVENT_DECODER, data, _WHAT, _skipped)
        kind = _DELTA_SLOTS.get(type(event))
        if kind is not None:
            delta = cast(DeltaEvent, event)
            return self._delta(delta.output_index, kind, delta.delta)
        match event:
            case ReasoningSummaryPartDone():
                return self._delta(event.output_index, "thinking", "\n\n")
            case OutputItemAdded():
                return self._item_added(event)
            case FunctionCallArgumentsDone():
                return self._arguments_done(event)
            case OutputItemDone():
                return self._item_done(event)
            case ResponseCreated(response=response):
                if response is not None:
                    self._response_info(response)
            case ResponseCompleted(response=response) | ResponseIncomplete(response=response):
                return self._completed(response or Response())
            case ResponseFailed(response=response):
                raise ProviderError(_failed_text(response or Response()))
            case ErrorEvent(code=code, message=message):
                raise ProviderError(f"Error Code {code}: {message}")
        return []

    def finish(self) -> AssistantMessageEvent:
        """The terminal event after the wire stream ended (raises on failure)."""
        if not self._terminal:
            raise ProviderError(ENDED_BEFORE_TERMINAL)
        if self._failure is not None:
            raise ProviderError(self._failure)
        return self.builder.done()

    # ------------------------------------------------------------------ response

    def _response_info(self, response: Response) -> None:
        note_response(self.builder.message, self.model, response.id, response.model)

    def _completed(self, response: Response) -> list[AssistantMessageEvent]:
        self._terminal = True
        self._response_info(response)
        events = self.builder.end_open_blocks()
        out = self.builder.message
        usage = response.usage
        if usage is not None:
            cached = usage.input_tokens_details
            details = usage.output_tokens_details
            write_prompt_usage(
                out.usage,
                self.model,
                prompt=usage.input_tokens or 0,
                output=usage.output_tokens or 0,
                cache_read=(cached.cached_tokens or 0) if cached else 0,
                cache_write=(cached.cache_write_tokens or 0) if cached else 0,
                reasoning=details.reasoning_tokens if details else None,
                total=usage.total_tokens or 0,
            )
            tier = response.service_tier or self.service_tier
            apply_service_tier_pricing(self.model, out.usage.cost, tier)
        status = response.status
        if status is not None:
            out.raw_stop_reason = status
        stop = "stop" if status is None else _STATUS.get(status, "stop")
        if stop == "stop" and self.builder.tool_call_count:
            stop = "toolUse"
        out.stop_reason = stop  # type: ignore[assignment]
        if stop == "error":
            self._failure = _error_text(response) or UNKNOWN_ERROR_TEXT
        return events

    # ------------------------------------------------------------------ items

    def _slot(self, index: int | None, kind: str) -> _Slot | None:
        slot = self._slots.get(self._last_slot if index is None else index)  # type: ignore[arg-type]
        return slot if slot is not None and slot.kind == kind else None

    def _delta(
        self, index: int | None, kind: str, delta: str | None
    ) -> list[AssistantMessageEvent]:
        slot = self._slot(index, kind)
        if slot is None:
            return []
        b = self.builder
        text = delta or ""
        if kind == "text":
            return [b.text_delta(slot.index, text)]
        if kind == "thinking":
            return [b.thinking_delta(slot.index, text)]
        slot.arguments.append(text)
        return [b.toolcall_delta(slot.index, text)]

    def _item_added(self, event: OutputItemAdded) -> list[AssistantMessageEvent]:
        index = event.output_index
        if index is None:
            index = len(self._slots) if self._last_slot is None else self._last_slot + 1
        b = self.builder
        events: list[AssistantMessageEvent] = []
        match event.item:
            case ReasoningItem():
                start = b.thinking_start()
                slot = _Slot("thinking", start.content_index)
                events.append(start)
            case MessageItem():
                start_t = b.text_start()
                slot = _Slot("text", start_t.content_index)
                events.append(start_t)
            case FunctionCallItem(id=item_id, call_id=call_id, name=name, arguments=initial):
                start_c = b.toolcall_start(f"{call_id or ''}|{item_id or ''}", name or "")
                slot = _Slot("toolCall", start_c.content_index)
                events.append(start_c)
                if initial:
                    slot.arguments.append(initial)
                    events.append(b.toolcall_delta(slot.index, initial))
            case _:
                return []
        self._slots[index] = slot
        self._last_slot = index
        return events

    def _arguments_done(self, event: FunctionCallArgumentsDone) -> list[AssistantMessageEvent]:
        slot = self._slot(event.output_index, "toolCall")
        final = event.arguments
        if slot is None or final is None:
            return []
        streamed = "".join(slot.arguments)
        slot.arguments[:] = [streamed]
        if final.startswith(streamed) and len(final) > len(streamed):
            suffix = final[len(streamed) :]
            slot.arguments.append(suffix)
            return [self.builder.toolcall_delta(slot.index, suffix)]
        if final != streamed:
            slot.arguments[:] = [final]
            self.builder.tool_call(slot.index).set_final(parse_streaming_json(final))
        return []

    def _item_done(self, event: OutputItemDone) -> list[AssistantMessageEvent]:
        index = self._last_slot if event.output_index is None else event.output_index
        slot = self._slots.get(index)  # type: ignore[arg-type]
        if slot is None:
            return []
        raw = bytes(event.item)
        item = decode_event(ITEM_DECODER, raw.decode(), _WHAT, _item_skipped)
        if item is None:
            return []
        del self._slots[index]  # type: ignore[arg-type]
        b = self.builder
        match slot.kind, item:
            case "thinking", ReasoningItem():
                # the whole item, as the API sent it, is what a later request replays
                signature = msgspec.json.encode(msgspec.json.decode(raw)).decode()
                text = _reasoning_text(item)
                return [b.thinking_end(slot.index, thinking_signature=signature, thinking=text)]
            case "text", MessageItem(id=item_id, phase=phase):
                signature = encode_text_signature(item_id or "", phase)
                return [b.text_end(slot.index, text_signature=signature, text=_message_text(item))]
            case "toolCall", FunctionCallItem(arguments=initial):
                parsed = parse_tool_call_arguments("".join(slot.arguments) or initial or "")
                return [
                    b.toolcall_end(
                        slot.index,
                        arguments=parsed.arguments,
                        arguments_error=parsed.arguments_error,
                    )
                ]
        # an item of another type than the one added at this index: end the block as is
        if slot.kind == "text":
            return [b.text_end(slot.index)]
        if slot.kind == "thinking":
            return [b.thinking_end(slot.index)]
        return [b.toolcall_end(slot.index)]


def _joined(parts: list[TextPart] | None) -> str | None:
    texts = [part.text for part in parts or () if part.text]
    return "\n\n".join(texts) if texts else None


def _reasoning_text(item: ReasoningItem) -> str | None:
    summary = _joined(item.summary)
    return summary if summary is not None else _joined(item.content)


def _message_text(item: MessageItem) -> str | None:
    if not item.content:
        return None
    texts: list[str] = []
    for part in item.content:
        if part.type == "output_text" and part.text is not None:
            texts.append(part.text)
        elif part.type == "refusal" and part.refusal is not None:
            texts.append(part.refusal)
    return "".join(texts)


def _error_text(response: Response) -> str | None:
    error = response.error
    if error is None or not (error.code or error.message):
        return None
    return f"{error.code or 'unknown'}: {error.message or 'no message'}"


def _failed_text(response: Response) -> str:
    text = _error_text(response)
    if text is not None:
        return text
    details = response.incomplete_details
    if details is not None and details.reason:
        return f"incomplete: {details.reason}"
    return "Unknown error (no error details in response)"
