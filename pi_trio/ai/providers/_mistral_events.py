"""Mistral stream chunks → assistant-message events (sans-IO).

``MistralStreamMapper.feed(data)`` takes the ``data:`` text of one SSE event, decodes it
into a ``MistralChunk`` and returns the events it produced; ``[DONE]`` ends the stream
(``ended``). ``finish()`` returns the closing events: the open text or thinking block
first, then every tool call in the order they started, as the original runtime sends
them. Text and thinking alternate in one open block at a time (a change of kind ends the
block); empty deltas never open a block (GLM models on Mistral send them around thinking,
and a split thinking block is refused on replay). Tool calls are keyed by their
``index`` (else their id) and stay open until the end.

Stop reasons: ``stop`` → stop, ``length`` / ``model_length`` → length, ``tool_calls`` →
toolUse, ``error`` → an error ("Provider stopped with: error (server error)", which the
retry classifier treats as retryable), anything else → an error naming it. A stream that
ends without a finish reason fails (``failure``); data that is not a chunk with
``choices`` fails naming the data, or with the server's own message when it sent an error
object.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .._catalog._models import calculate_cost
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._sanitize import sanitize_surrogates
from .._stream._builder import MessageBuilder
from .._types import Model
from ._http_errors import provider_error_message
from ._mistral_request import derive_mistral_tool_call_id
from ._mistral_wire import CHUNK_DECODER, MistralChunk, MistralDelta, MistralUsage
from ._wire import decode_failed, note_response

__all__ = [
    "NO_FINISH_REASON_TEXT",
    "MistralStreamMapper",
    "map_mistral_stop_reason",
]

NO_FINISH_REASON_TEXT: Final = "Mistral stream ended without a finish reason"
_WHAT: Final = "Mistral SSE event"


def map_mistral_stop_reason(reason: str) -> tuple[str, str | None]:
    """``(stop_reason, error_message)`` for a ``finish_reason``."""
    if reason == "stop":
        return "stop", None
    if reason in ("length", "model_length"):
        return "length", None
    if reason == "tool_calls":
        return "toolUse", None
    if reason == "error":
        return "error", "Provider stopped with: error (server error)"
    return "error", f"Provider stopped with: {reason}"


def _never_skipped(_: Any) -> bool:
    return False


def _cached_tokens(usage: MistralUsage, prompt: int) -> int:
    raw = usage.cached_tokens()
    count = raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) else 0
    return int(min(prompt, max(0, count)))


class MistralStreamMapper:
    """Folds one response's chunks into ``builder``'s message (see the module docstring)."""

    __slots__ = ("_current", "_finished", "_tool_calls", "builder", "ended", "model")

    def __init__(self, builder: MessageBuilder, model: Model) -> None:
        self.builder = builder
        self.model = model
        self.ended = False  # ``[DONE]`` was received: nothing after it is read
        self._finished = False  # a finish reason was received
        self._current: tuple[str, int] | None = None  # the open text/thinking block
        self._tool_calls: dict[int | str, int] = {}  # wire key -> content index

    # ------------------------------------------------------------------ feeding

    def feed(self, data: str) -> list[AssistantMessageEvent]:
        """The events of one SSE event's ``data`` text."""
        data = data.strip()
        if not data or self.ended:
            return []
        if data == "[DONE]":
            self.ended = True
            return []
        chunk = self._decode(data)
        message = self.builder.message
        note_response(message, self.model, chunk.id, None)
        if chunk.usage is not None:
            self._usage(chunk.usage)
        if not chunk.choices:
            return []
        choice = chunk.choices[0]
        if choice.finish_reason:
            self._finished = True
            message.raw_stop_reason = choice.finish_reason
            stop, error = map_mistral_stop_reason(choice.finish_reason)
            message.stop_reason = stop  # type: ignore[assignment]
            if error is not None:
                message.error_message = error
        delta = choice.delta
        if delta is None:
            return []
        events: list[AssistantMessageEvent] = []
        if delta.content is not None:
            self._content(delta.content, events)
        if delta.tool_calls:
            self._tool_call_deltas(delta, events)
        return events

    def _decode(self, data: str) -> MistralChunk:
        try:
            return CHUNK_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            try:
                chunk = decode_failed(exc, CHUNK_DECODER, data, _WHAT, _never_skipped)
            except ProviderError:
                reported = provider_error_message(data)
                if reported is not None:
                    raise ProviderError(f"Mistral stream error: {reported}") from None
                raise
        assert chunk is not None  # nothing is skipped
        return chunk

    def _usage(self, usage: MistralUsage) -> None:
        out = self.builder.message.usage
        prompt = usage.prompt_tokens or 0
        cached = _cached_tokens(usage, prompt)
        out.input = max(0, prompt - cached)
        out.output = usage.completion_tokens or 0
        out.cache_read = cached
        out.cache_write = 0
        out.total_tokens = usage.total_tokens or (out.input + out.output + out.cache_read)
        calculate_cost(self.model, out)

    # ------------------------------------------------------------------ content

    def _content(self, content: Any, events: list[AssistantMessageEvent]) -> None:
        if isinstance(content, str):
            self._append("text", content, events)
            return
        for part in content:
            if part.type == "thinking":
                text = "".join(p.text for p in part.thinking or () if p.text)
                self._append("thinking", text, events)
            elif part.type == "text":
                self._append("text", part.text or "", events)

    def _append(self, kind: str, delta: str, events: list[AssistantMessageEvent]) -> None:
        delta = sanitize_surrogates(delta)
        if not delta:
            return
        b = self.builder
        current = self._current
        if current is None or current[0] != kind:
            self._end_current(events)
            start = b.text_start() if kind == "text" else b.thinking_start()
            events.append(start)
            current = self._current = (kind, start.content_index)
        if kind == "text":
            events.append(b.text_delta(current[1], delta))
        else:
            events.append(b.thinking_delta(current[1], delta))

    def _end_current(self, events: list[AssistantMessageEvent]) -> None:
        current = self._current
        if current is None:
            return
        self._current = None
        kind, index = current
        events.append(
            self.builder.text_end(index) if kind == "text" else self.builder.thinking_end(index)
        )

    def _tool_call_deltas(self, delta: MistralDelta, events: list[AssistantMessageEvent]) -> None:
        b = self.builder
        for call in delta.tool_calls or ():
            self._end_current(events)
            call_id = call.id
            if not call_id or call_id == "null":
                call_id = derive_mistral_tool_call_id(f"toolcall:{call.index or 0}", 0)
            key: int | str = call.index if call.index is not None else call_id
            function = call.function
            index = self._tool_calls.get(key)
            if index is None:
                start = b.toolcall_start(call_id, (function.name if function else None) or "")
                events.append(start)
                index = self._tool_calls[key] = start.content_index
            arguments = function.arguments if function is not None else None
            if not isinstance(arguments, str):
                arguments = msgspec.json.encode(arguments or {}).decode()
            events.append(b.toolcall_delta(index, arguments))

    # ------------------------------------------------------------------ the end

    def finish(self) -> list[AssistantMessageEvent]:
        """The closing events: the open text or thinking block, then each tool call."""
        events: list[AssistantMessageEvent] = []
        self._end_current(events)
        for index in self._tool_calls.values():
            events.append(self.builder.toolcall_end(index))
        self._tool_calls.clear()
        return events

    @property
    def failure(self) -> str | None:
        """Why the stream cannot end successfully once the wire stream ended (no finish
        reason), else ``None`` (an ``error`` finish reason is on the message)."""
        return None if self._finished else NO_FINISH_REASON_TEXT
