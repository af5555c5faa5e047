"""Google ``GenerateContentResponse`` chunks → assistant-message events (sans-IO).

The original's ``stream`` in ``src/api/google-generative-ai.ts``, with ``mapStopReason`` and
the thought signatures of ``src/api/google-shared.ts``. ``GoogleEventMapper.feed_data(data)``
takes the ``data:`` text of one SSE event and decodes it into a ``_google_wire`` Struct (``feed``
takes one already decoded); ``finish()`` returns the closing events once the wire stream
ended, the terminal one last. Chunks that are not JSON objects are skipped. Text and thinking parts extend the current block while their kind stays
the same; a function call arrives whole (start, one delta with the full JSON, end).
Failures inside the stream raise ``ProviderError`` with the text the user sees.
"""

from __future__ import annotations

import itertools
from typing import Any, Final

import msgspec

from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._stream._builder import MessageBuilder
from .._types import Model, now_ms
from ._google_wire import RESPONSE_DECODER, GenerateContentResponse, Part, UsageMetadata
from ._wire import decode_failed, note_response, write_prompt_usage

__all__ = ["GoogleEventMapper"]

ENDED_WITHOUT_FINISH_REASON: Final = "Google stream ended without a finish reason"
ENDED_WITHOUT_FINISH_REASON_VERTEX: Final = "Google Vertex stream ended without a finish reason"
_STOP_REASONS: Final = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    # A per-request limit reached before the answer is done; the turn is not resumed.
    "CONTINUATION": "length",
}

# Suffix of generated tool-call ids; process-wide so ids never repeat within a process.
_CALL_COUNTER: Final = itertools.count(1)


def _not_object(payload: Any) -> bool:
    return not isinstance(payload, dict)


class GoogleEventMapper:
    """Folds one response's chunks into ``builder``'s message."""

    def __init__(self, builder: MessageBuilder, model: Model, *, vertex: bool = False) -> None:
        self.builder = builder
        self.model = model
        self._ended_text = (
            ENDED_WITHOUT_FINISH_REASON_VERTEX if vertex else ENDED_WITHOUT_FINISH_REASON
        )
        self._kind: str | None = None  # "text" / "thinking" while a block is open
        self._index = -1
        self._signature: str | None = None
        self._call_ids: set[str] = set()
        self._failure: str | None = None
        self._finished = False  # a candidate gave its finish reason

    def feed_data(self, data: str) -> list[AssistantMessageEvent]:
        """Feed the ``data`` text of one SSE event (a JSON chunk; ``[DONE]`` is skipped)."""
        if not data.strip() or data == "[DONE]":
            return []
        chunk: GenerateContentResponse | None
        try:
            chunk = RESPONSE_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            chunk = decode_failed(exc, RESPONSE_DECODER, data, "Google SSE chunk", _not_object)
        return [] if chunk is None else self.feed(chunk)

    def feed(self, chunk: GenerateContentResponse) -> list[AssistantMessageEvent]:
        error = chunk.error
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message") or msgspec.json.encode(error).decode()
            raise ProviderError(f"{code} {message}" if code is not None else str(message))
        out = self.builder.message
        note_response(out, self.model, chunk.response_id, chunk.model_version)
        events: list[AssistantMessageEvent] = []
        candidates = chunk.candidates
        if candidates:
            candidate = candidates[0]
            content = candidate.content
            for part in (content.parts if content is not None else None) or ():
                self._part(part, events)
            if candidate.finish_reason is not None:
                self._finish_reason(candidate.finish_reason)
        else:
            feedback = chunk.prompt_feedback
            if feedback is not None and feedback.block_reason is not None:
                out.raw_stop_reason = feedback.block_reason
                out.stop_reason = "error"
                self._failure = f"Prompt blocked: {feedback.block_reason}"
        if chunk.usage_metadata is not None:
            self._usage(chunk.usage_metadata)
        return events

    def finish(self) -> list[AssistantMessageEvent]:
        """The closing events after the wire stream ended, the terminal one last."""
        events = self._end_block()
        if self._failure is not None:
            events.append(self.builder.error(self._failure))
        elif not self._finished:
            # cut off: a complete answer always ends with a finish reason
            events.append(self.builder.error(self._ended_text))
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

    def _part(self, part: Part, events: list[AssistantMessageEvent]) -> None:
        b = self.builder
        text = part.text
        signature = part.thought_signature
        if text is not None:
            kind = "thinking" if part.thought is True else "text"
            if self._kind != kind:
                events.extend(self._end_block())
                start = b.thinking_start() if kind == "thinking" else b.text_start()
                events.append(start)
                self._kind = kind
                self._index = start.content_index
            # an empty text part is forwarded as an empty delta, as pi 1.6 forwards it
            if kind == "thinking":
                events.append(b.thinking_delta(self._index, text))
            else:
                events.append(b.text_delta(self._index, text))
            if signature:
                self._signature = signature
        call = part.function_call
        if call is not None:
            events.extend(self._end_block())
            name = call.name or ""
            call_id = call.id
            if not call_id or call_id in self._call_ids:
                call_id = f"{name}_{now_ms()}_{next(_CALL_COUNTER)}"
            self._call_ids.add(call_id)
            arguments = {} if call.args is None else call.args
            start_c = b.toolcall_start(call_id, name, thought_signature=signature or None)
            events.append(start_c)
            events.append(
                b.toolcall_delta(start_c.content_index, msgspec.json.encode(arguments).decode())
            )
            events.append(b.toolcall_end(start_c.content_index, arguments=arguments))

    # ------------------------------------------------------------------ stop and usage

    def _finish_reason(self, reason: str) -> None:
        self._finished = True
        out = self.builder.message
        out.raw_stop_reason = reason
        # every reason but these is a failure, worded as pi 1.6 words it; reasons 1.6 does not
        # know (it throws "Unhandled stop reason" and loses the billed usage) are kept alike
        mapped = _STOP_REASONS.get(reason, "error")
        self._failure = None
        if mapped == "stop" and self.builder.tool_call_count:
            mapped = "toolUse"
        elif mapped == "error":
            self._failure = f"Provider stopped with: {reason}"
        out.stop_reason = mapped  # type: ignore[assignment]

    def _usage(self, usage: UsageMetadata) -> None:
        thoughts = usage.thoughts_token_count
        write_prompt_usage(
            self.builder.message.usage,
            self.model,
            prompt=usage.prompt_token_count or 0,
            output=(usage.candidates_token_count or 0) + (thoughts or 0),
            cache_read=usage.cached_content_token_count or 0,
            reasoning=thoughts or 0,  # 0 without thought tokens, as pi 1.6 writes it
            total=usage.total_token_count or 0,
        )
