"""OpenAI Responses stream events → assistant-message events (sans-IO; the original's
``processResponsesStream``, ``src/api/openai-responses-shared.ts``).

``ResponsesEventMapper.feed_data(data)`` takes the ``data:`` text of one SSE event, decodes
it into a ``_responses_wire`` Struct (a tagged union on the event's ``type``) and returns the
events to send; ``finish()`` returns the terminal event once the wire stream ended, or once
the response finished (``terminal``: nothing after it is read). Output
items are tracked by ``output_index``, so items that finish out of order are handled.
Unknown event and item types are skipped. Failures raise ``ProviderError`` with the text
the user sees.

``codex=True`` reads the ChatGPT Codex backend's dialect of the stream: ``response.done``
finishes a response too, an unknown
status counts as none, ``end_turn`` is kept on the message, errors read ``Codex error:
<message>``, and a ``default`` tier reported for a ``flex`` or ``priority`` request is
billed as requested.
"""

from __future__ import annotations

from typing import Any, Final, cast

import msgspec

from .._arguments._final import parse_tool_call_arguments
from .._arguments._partial import parse_streaming_json
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json._depth import decode_json
from .._stream._builder import MessageBuilder
from .._types import Model, ThinkingContent
from ._responses_parts import (
    apply_service_tier_pricing,
    failed_text,
    message_text,
    reasoning_text,
    resolve_codex_service_tier,
    response_stop,
    write_response_usage,
)
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
    ResponseDone,
    ResponseFailed,
    ResponseIncomplete,
    ResponsesEvent,
)
from ._wire import decode_event, decode_failed, note_response, wire_type

__all__ = [
    "ENDED_BEFORE_TERMINAL",
    "ResponsesEventMapper",
    "apply_service_tier_pricing",
    "resolve_codex_service_tier",
]

ENDED_BEFORE_TERMINAL: Final = "OpenAI Responses stream ended before a terminal response event"

_WHAT: Final = "OpenAI Responses SSE event"

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


class _Slot:
    __slots__ = ("arguments", "index", "kind", "label")

    def __init__(self, kind: str, index: int, label: str = "") -> None:
        self.kind = kind
        self.index = index
        self.label = label  # a tool call's "name (id)", for the unfinished-call error
        self.arguments: list[str] = []  # argument fragments streamed so far (tool calls)


class ResponsesEventMapper:
    """Folds one response's stream events into ``builder``'s message."""

    def __init__(
        self,
        builder: MessageBuilder,
        model: Model,
        *,
        service_tier: str | None = None,
        codex: bool = False,
    ) -> None:
        self.builder = builder
        self.model = model
        self.service_tier = service_tier
        self.codex = codex
        self._slots: dict[int, _Slot] = {}
        self._last_slot: int | None = None
        self._terminal = False
        self._failure: str | None = None
        # reasoning items ended without their encrypted content: id -> (index, item)
        self._unsealed: dict[str, tuple[int, dict[str, Any]]] = {}

    @property
    def terminal(self) -> bool:
        """True once the response finished: the stream is over, nothing after it is
        read."""
        return self._terminal

    # ------------------------------------------------------------------ feeding

    def feed_data(self, data: str) -> list[AssistantMessageEvent]:
        """Feed the ``data`` text of one SSE event (JSON; ``[DONE]`` is skipped)."""
        if self._terminal or not data.strip() or data == "[DONE]":
            return []
        event: ResponsesEvent | None
        try:
            event = EVENT_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            event = decode_failed(exc, EVENT_DECODER, data, _WHAT, _skipped)
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
            case ResponseDone(response=response):
                if self.codex:
                    return self._completed(response or Response())
            case ResponseFailed(response=response):
                failed = response or Response()
                if not self.codex:  # pi 1.6's Codex mapper leaves it unset
                    self.builder.message.raw_stop_reason = failed.status
                raise ProviderError(self._failed_text(failed))
            case ErrorEvent():
                raise ProviderError(self._error_event_text(event, data))
        return []

    def _failed_text(self, response: Response) -> str:
        if self.codex:
            error = response.error
            return (error.message if error else None) or "Codex response failed"
        return failed_text(response)

    def _error_event_text(self, event: ErrorEvent, data: str) -> str:
        if not self.codex:
            return f"Error Code {event.code}: {event.message}"
        nested = event.error
        message = event.message or (nested.message if nested else None)
        code = event.code if isinstance(event.code, str) else None
        if code is None and nested is not None and isinstance(nested.code, str):
            code = nested.code
        return f"Codex error: {message or code or data}"

    def finish(self) -> AssistantMessageEvent:
        """The terminal event after the wire stream ended (raises on failure)."""
        if not self._terminal:
            raise ProviderError(ENDED_BEFORE_TERMINAL)
        if self._failure is not None:
            raise ProviderError(self._failure)
        return self.builder.done()

    # ------------------------------------------------------------------ response

    def _response_info(self, response: Response) -> None:
        # the model that answered is not recorded: pi 1.6 does so only for Anthropic and
        # Chat Completions
        note_response(self.builder.message, self.model, response.id, None)

    def _completed(self, response: Response) -> list[AssistantMessageEvent]:
        self._terminal = True
        self._response_info(response)
        self._backfill_reasoning(response)
        events = self.builder.end_open_blocks()
        out = self.builder.message
        write_response_usage(out, self.model, response, self.service_tier, codex=self.codex)
        if self.codex and response.end_turn is not None:
            out.end_turn = response.end_turn
        out.raw_stop_reason, stop, failure = response_stop(response, codex=self.codex)
        if failure is not None:
            self._failure = failure
        if stop == "stop" and self.builder.tool_call_count:
            stop = "toolUse"
            unfinished = [s.label for s in self._slots.values() if s.kind == "toolCall"]
            if unfinished:
                self._failure = (
                    "OpenAI Responses stream completed with an unfinished tool call: "
                    f"{unfinished[0]}"
                )
        out.stop_reason = stop
        return events

    def _backfill_reasoning(self, response: Response) -> None:
        """Azure can leave ``encrypted_content`` out of a reasoning item's
        ``output_item.done`` and send it only in the finished response's ``output``: put
        it into the signature of the block already ended, so a later request can replay
        the reasoning without server-side storage."""
        if not self._unsealed or not response.output:
            return
        b = self.builder
        for entry in response.output:
            if entry.type != "reasoning" or not entry.encrypted_content or entry.id is None:
                continue
            known = self._unsealed.pop(entry.id, None)
            if known is None:
                continue
            index, item = known
            signature = msgspec.json.encode(
                {**item, "encrypted_content": entry.encrypted_content}
            ).decode()
            live = b.started_block(index)
            if isinstance(live, ThinkingContent):
                live.thinking_signature = signature  # read when the consumer seals it
            content = b.message.content
            sealed = content[index] if index < len(content) else None
            if isinstance(sealed, ThinkingContent):
                sealed.thinking_signature = signature  # already sealed

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
        return self._open_slot(index, event.item)

    def _open_slot(self, index: int, item: Any) -> list[AssistantMessageEvent]:
        b = self.builder
        events: list[AssistantMessageEvent] = []
        match item:
            case ReasoningItem():
                start = b.thinking_start()
                slot = _Slot("thinking", start.content_index)
                events.append(start)
            case MessageItem():
                start_t = b.text_start()
                slot = _Slot("text", start_t.content_index)
                events.append(start_t)
            case FunctionCallItem(
                id=item_id, call_id=call_id, name=name, arguments=initial, namespace=namespace
            ):
                tool_id = f"{call_id or ''}|{item_id or ''}"
                start_c = b.toolcall_start(tool_id, name or "", namespace=namespace)
                slot = _Slot("toolCall", start_c.content_index, f"{name or ''} ({tool_id})")
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
        raw = bytes(event.item)
        item = decode_event(ITEM_DECODER, raw.decode(), _WHAT, _item_skipped)
        if item is None:
            return []
        events: list[AssistantMessageEvent] = []
        if index is None:
            index = len(self._slots)
        slot = self._slots.get(index)
        if slot is None:
            # an item announced only when done: its block starts and ends here
            events = self._open_slot(index, item)
            slot = self._slots.get(index)
            if slot is None:
                return events
        del self._slots[index]
        b = self.builder
        match slot.kind, item:
            case "thinking", ReasoningItem(id=item_id, encrypted_content=encrypted):
                # the whole item, as the API sent it, is what a later request replays
                stored = decode_json(raw)
                signature = msgspec.json.encode(stored).decode()
                if item_id is not None and not encrypted:
                    self._unsealed[item_id] = (slot.index, stored)
                text = reasoning_text(item)
                events.append(
                    b.thinking_end(slot.index, thinking_signature=signature, thinking=text)
                )
                return events
            case "text", MessageItem(id=item_id, phase=phase):
                signature = encode_text_signature(item_id or "", phase)
                events.append(
                    b.text_end(slot.index, text_signature=signature, text=message_text(item))
                )
                return events
            case "toolCall", FunctionCallItem(arguments=final, namespace=namespace):
                text = final or "".join(slot.arguments)
                parsed = parse_tool_call_arguments(text)
                if namespace is not None:
                    b.tool_call(slot.index).namespace = namespace
                events.append(
                    b.toolcall_end(
                        slot.index,
                        arguments=parsed.arguments,
                        arguments_error=parsed.arguments_error,
                    )
                )
                return events
        # an item of another type than the one added at this index: end the block as is
        if slot.kind == "text":
            events.append(b.text_end(slot.index))
        elif slot.kind == "thinking":
            events.append(b.thinking_end(slot.index))
        else:
            events.append(b.toolcall_end(slot.index))
        return events
