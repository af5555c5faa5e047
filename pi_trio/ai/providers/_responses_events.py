"""OpenAI Responses stream events → assistant-message events (sans-IO, reference/ai.md §7.4).

``ResponsesEventMapper.feed(event)`` takes one decoded event (the JSON object of an SSE
``data:`` line, discriminated by its ``type``); ``finish()`` returns the terminal event once
the wire stream ended. Output items are tracked by ``output_index``, so items that finish
out of order are handled. Unknown event types are skipped. Failures raise
``ProviderError`` with the text the user sees.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .._builder import MessageBuilder
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json_parse import parse_streaming_json
from .._models import calculate_cost
from .._streaming_json import parse_tool_call_arguments
from .._types import Model
from ._common import unparseable_event
from ._http import UNKNOWN_ERROR_TEXT
from ._responses_shared import encode_text_signature

__all__ = [
    "ENDED_BEFORE_TERMINAL",
    "ResponsesEventMapper",
    "apply_service_tier_pricing",
]

ENDED_BEFORE_TERMINAL: Final = "OpenAI Responses stream ended before a terminal response event"

_STATUS: Final = {
    "completed": "stop",
    "incomplete": "length",
    "failed": "error",
    "cancelled": "error",
    "in_progress": "stop",
    "queued": "stop",
}


def _tier_multiplier(model: Model, tier: Any) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model.id == "gpt-5.5" else 2.0
    return 1.0


def apply_service_tier_pricing(model: Model, cost: Any, tier: Any) -> None:
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


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
        try:
            event = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            raise unparseable_event("OpenAI Responses SSE event", data, exc) from exc
        return self.feed(event)

    def feed(self, event: Any) -> list[AssistantMessageEvent]:
        if not isinstance(event, dict):
            return []
        kind = event.get("type")
        if kind == "response.output_item.added":
            return self._item_added(event)
        if kind in (
            "response.reasoning_summary_text.delta",
            "response.reasoning_text.delta",
        ):
            return self._delta(event, "thinking", str(event.get("delta") or ""))
        if kind == "response.reasoning_summary_part.done":
            return self._delta(event, "thinking", "\n\n")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return self._delta(event, "text", str(event.get("delta") or ""))
        if kind == "response.function_call_arguments.delta":
            return self._delta(event, "toolCall", str(event.get("delta") or ""))
        if kind == "response.function_call_arguments.done":
            return self._arguments_done(event)
        if kind == "response.output_item.done":
            return self._item_done(event)
        if kind == "response.created":
            self._response_info(event.get("response"))
            return []
        if kind in ("response.completed", "response.incomplete"):
            return self._completed(event.get("response"))
        if kind == "response.failed":
            raise ProviderError(_failed_text(event.get("response")))
        if kind == "error":
            raise ProviderError(f"Error Code {event.get('code')}: {event.get('message')}")
        return []

    def finish(self) -> AssistantMessageEvent:
        """The terminal event after the wire stream ended (raises on failure)."""
        if not self._terminal:
            raise ProviderError(ENDED_BEFORE_TERMINAL)
        if self._failure is not None:
            raise ProviderError(self._failure)
        return self.builder.done()

    # ------------------------------------------------------------------ response

    def _response_info(self, response: Any) -> None:
        if not isinstance(response, dict):
            return
        out = self.builder.message
        if isinstance(response.get("id"), str) and out.response_id is None:
            out.response_id = response["id"]
        reported = response.get("model")
        if isinstance(reported, str) and reported and reported != self.model.id:
            out.response_model = reported

    def _completed(self, response: Any) -> list[AssistantMessageEvent]:
        self._terminal = True
        if not isinstance(response, dict):
            response = {}
        self._response_info(response)
        events = self.builder.end_open_blocks()
        out = self.builder.message
        usage = response.get("usage")
        if isinstance(usage, dict):
            details = usage.get("input_tokens_details") or {}
            cache_read = _count(details.get("cached_tokens"))
            cache_write = _count(details.get("cache_write_tokens"))
            u = out.usage
            u.input = max(0, _count(usage.get("input_tokens")) - cache_read - cache_write)
            u.output = _count(usage.get("output_tokens"))
            u.cache_read = cache_read
            u.cache_write = cache_write
            reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
            if isinstance(reasoning, int):
                u.reasoning = reasoning
            u.total_tokens = _count(usage.get("total_tokens"))
            calculate_cost(self.model, u)
            tier = response.get("service_tier") or self.service_tier
            apply_service_tier_pricing(self.model, u.cost, tier)
        status = response.get("status")
        if isinstance(status, str):
            out.raw_stop_reason = status
        stop = _STATUS.get(status, "stop") if isinstance(status, str) else "stop"
        if stop == "stop" and self.builder.tool_call_count:
            stop = "toolUse"
        out.stop_reason = stop  # type: ignore[assignment]
        if stop == "error":
            self._failure = (
                _failed_text(response) if response.get("error") else (UNKNOWN_ERROR_TEXT)
            )
        return events

    # ------------------------------------------------------------------ items

    def _slot(self, event: dict[str, Any], kind: str) -> _Slot | None:
        index = event.get("output_index")
        slot = self._slots.get(index if isinstance(index, int) else self._last_slot)  # type: ignore[arg-type]
        return slot if slot is not None and slot.kind == kind else None

    def _item_added(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = event.get("item")
        if not isinstance(item, dict):
            return []
        index = event.get("output_index")
        if not isinstance(index, int):
            index = len(self._slots) if self._last_slot is None else self._last_slot + 1
        b = self.builder
        item_type = item.get("type")
        events: list[AssistantMessageEvent] = []
        if item_type == "reasoning":
            start = b.thinking_start()
            slot = _Slot("thinking", start.content_index)
            events.append(start)
        elif item_type == "message":
            start_t = b.text_start()
            slot = _Slot("text", start_t.content_index)
            events.append(start_t)
        elif item_type == "function_call":
            call_id = str(item.get("call_id") or "")
            item_id = str(item.get("id") or "")
            start_c = b.toolcall_start(f"{call_id}|{item_id}", str(item.get("name") or ""))
            slot = _Slot("toolCall", start_c.content_index)
            events.append(start_c)
            initial = item.get("arguments")
            if isinstance(initial, str) and initial:
                slot.arguments.append(initial)
                events.append(b.toolcall_delta(slot.index, initial))
        else:
            return []  # built-in tool calls and other item types are not message content
        self._slots[index] = slot
        self._last_slot = index
        return events

    def _delta(self, event: dict[str, Any], kind: str, delta: str) -> list[AssistantMessageEvent]:
        slot = self._slot(event, kind)
        if slot is None:
            return []
        b = self.builder
        if kind == "thinking":
            return [b.thinking_delta(slot.index, delta)]
        if kind == "text":
            return [b.text_delta(slot.index, delta)]
        slot.arguments.append(delta)
        return [b.toolcall_delta(slot.index, delta)]

    def _arguments_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        slot = self._slot(event, "toolCall")
        final = event.get("arguments")
        if slot is None or not isinstance(final, str):
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

    def _item_done(self, event: dict[str, Any]) -> list[AssistantMessageEvent]:
        item = event.get("item")
        index = event.get("output_index")
        if not isinstance(item, dict):
            return []
        if not isinstance(index, int):
            index = self._last_slot
        slot = self._slots.pop(index, None)  # type: ignore[arg-type]
        if slot is None:
            return []
        b = self.builder
        if slot.kind == "thinking":
            signature = msgspec.json.encode(item).decode()
            return [
                b.thinking_end(
                    slot.index, thinking_signature=signature, thinking=_reasoning_text(item)
                )
            ]
        if slot.kind == "text":
            signature = encode_text_signature(str(item.get("id") or ""), item.get("phase"))
            return [b.text_end(slot.index, text_signature=signature, text=_message_text(item))]
        initial = item.get("arguments")
        text = "".join(slot.arguments) or (initial if isinstance(initial, str) else "")
        parsed = parse_tool_call_arguments(text)
        return [
            b.toolcall_end(
                slot.index, arguments=parsed.arguments, arguments_error=parsed.arguments_error
            )
        ]


def _reasoning_text(item: dict[str, Any]) -> str | None:
    summary = [part.get("text") for part in item.get("summary") or () if isinstance(part, dict)]
    texts = [t for t in summary if isinstance(t, str) and t]
    if texts:
        return "\n\n".join(texts)
    content = [part.get("text") for part in item.get("content") or () if isinstance(part, dict)]
    texts = [t for t in content if isinstance(t, str) and t]
    if texts:
        return "\n\n".join(texts)
    return None


def _message_text(item: dict[str, Any]) -> str | None:
    parts = item.get("content")
    if not isinstance(parts, list) or not parts:
        return None
    texts: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "output_text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
    return "".join(texts)


def _failed_text(response: Any) -> str:
    if not isinstance(response, dict):
        response = {}
    error = response.get("error")
    if isinstance(error, dict) and error:
        code = error.get("code") or "unknown"
        message = error.get("message") or "no message"
        return f"{code}: {message}"
    details = response.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return f"incomplete: {details['reason']}"
    return "Unknown error (no error details in response)"
