"""Google ``GenerateContentResponse`` chunks → assistant-message events (sans-IO).

Reference behaviour: reference/ai.md §7.5. ``GoogleEventMapper.feed(chunk)`` takes one
decoded SSE chunk; ``finish()`` returns the closing events once the wire stream ended, the
terminal one last. Text and thinking parts extend the current block while their kind stays
the same; a function call arrives whole (start, one delta with the full JSON, end).
Failures inside the stream raise ``ProviderError`` with the text the user sees.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import msgspec

from .._builder import MessageBuilder
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._models import calculate_cost
from .._types import Model, now_ms

__all__ = ["GoogleEventMapper"]

_STOP_REASONS: Final = {"STOP": "stop", "MAX_TOKENS": "length"}

# Suffix of generated tool-call ids; process-wide so ids never repeat within a process.
_CALL_COUNTER: Final = itertools.count(1)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class GoogleEventMapper:
    """Folds one response's chunks into ``builder``'s message."""

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        self._kind: str | None = None  # "text" / "thinking" while a block is open
        self._index = -1
        self._signature: str | None = None
        self._call_ids: set[str] = set()
        self._failure: str | None = None

    def feed(self, chunk: Any) -> list[AssistantMessageEvent]:
        if not isinstance(chunk, dict):
            return []
        error = chunk.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message") or msgspec.json.encode(error).decode()
            raise ProviderError(f"{code} {message}" if code is not None else str(message))
        out = self.builder.message
        if out.response_id is None and isinstance(chunk.get("responseId"), str):
            out.response_id = chunk["responseId"]
        version = chunk.get("modelVersion")
        if (
            out.response_model is None
            and isinstance(version, str)
            and version
            and version != self.model.id
        ):
            out.response_model = version
        events: list[AssistantMessageEvent] = []
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, dict):
                    self._part(part, events)
            reason = candidate.get("finishReason")
            if isinstance(reason, str):
                self._finish_reason(reason, candidate.get("finishMessage"))
        else:
            feedback = chunk.get("promptFeedback")
            block_reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            if isinstance(block_reason, str):
                out.raw_stop_reason = block_reason
                out.stop_reason = "error"
                self._failure = f"Prompt blocked: {block_reason}"
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage(usage)
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        """The closing events after the wire stream ended, the terminal one last."""
        events = self._end_block()
        if self._failure is not None:
            events.append(self.builder.error(self._failure))
        else:
            events.append(self.builder.done())
        return events

    # ------------------------------------------------------------------ parts

    def _end_block(self) -> list[AssistantMessageEvent]:
        kind, self._kind = self._kind, None
        signature, self._signature = self._signature, None
        if kind == "text":
            return [self.builder.text_end(self._index, text_signature=signature)]
        if kind == "thinking":
            return [self.builder.thinking_end(self._index, thinking_signature=signature)]
        return []

    def _part(self, part: dict[str, Any], events: list[AssistantMessageEvent]) -> None:
        b = self.builder
        text = part.get("text")
        signature = part.get("thoughtSignature")
        if isinstance(text, str):
            kind = "thinking" if part.get("thought") is True else "text"
            if self._kind != kind:
                events.extend(self._end_block())
                start = b.thinking_start() if kind == "thinking" else b.text_start()
                events.append(start)
                self._kind = kind
                self._index = start.content_index
            if text:
                if kind == "thinking":
                    events.append(b.thinking_delta(self._index, text))
                else:
                    events.append(b.text_delta(self._index, text))
            if isinstance(signature, str) and signature:
                self._signature = signature
        call = part.get("functionCall")
        if isinstance(call, dict):
            events.extend(self._end_block())
            name = str(call.get("name") or "")
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id or call_id in self._call_ids:
                call_id = f"{name}_{now_ms()}_{next(_CALL_COUNTER)}"
            self._call_ids.add(call_id)
            args = call.get("args")
            arguments = args if isinstance(args, dict) else {}
            start_c = b.toolcall_start(
                call_id,
                name,
                thought_signature=signature if isinstance(signature, str) and signature else None,
            )
            events.append(start_c)
            events.append(
                b.toolcall_delta(start_c.content_index, msgspec.json.encode(arguments).decode())
            )
            events.append(b.toolcall_end(start_c.content_index, arguments=arguments))

    # ------------------------------------------------------------------ stop and usage

    def _finish_reason(self, reason: str, finish_message: Any) -> None:
        out = self.builder.message
        out.raw_stop_reason = reason
        mapped = _STOP_REASONS.get(reason, "error")
        self._failure = None
        if self.builder.tool_call_count:
            mapped = "toolUse"
        elif mapped == "error":
            detail = (
                f": {finish_message}" if isinstance(finish_message, str) and finish_message else ""
            )
            self._failure = f"Provider finish_reason: {reason}{detail}"
        out.stop_reason = mapped  # type: ignore[assignment]

    def _usage(self, usage: dict[str, Any]) -> None:
        u = self.builder.message.usage
        prompt = _count(usage.get("promptTokenCount"))
        cached = _count(usage.get("cachedContentTokenCount"))
        thoughts = usage.get("thoughtsTokenCount")
        u.input = max(0, prompt - cached)
        u.output = _count(usage.get("candidatesTokenCount")) + _count(thoughts)
        u.cache_read = cached
        u.cache_write = 0
        if isinstance(thoughts, int):
            u.reasoning = thoughts
        u.total_tokens = _count(usage.get("totalTokenCount"))
        calculate_cost(self.model, u)
