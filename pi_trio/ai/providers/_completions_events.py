"""Chat Completions chunks → assistant-message events (sans-IO; the original's ``stream``
in ``src/api/openai-completions.ts``).

``CompletionsStreamMapper.feed(event)`` takes one SSE event, decodes its data into a
``Chunk`` (``_completions_wire``) and returns the events it produced; ``finish()`` ends the
open blocks and returns them plus the terminal event. Text, thinking and each tool call
keep one open block each (tool calls keyed by the chunk's ``index``, then by id), and every
``*_end`` event is sent after the wire stream ends, in content order, as the original
runtime does. ``null`` and other non-object chunks are skipped; an error the server reports
inside the stream raises ``ProviderError`` with its message.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._json._depth import decode_json
from .._stream._builder import MessageBuilder
from .._types import Model
from ._completions_wire import (
    CHUNK_DECODER,
    Chunk,
    ChunkDelta,
    ChunkToolCall,
    CompletionsUsage,
    ToolCallFunction,
)
from ._openai_compat import CompletionsCompat
from ._openai_usage import parse_usage
from ._sse import SSEEvent
from ._wire import REFUSAL_TEXT, note_response, without_lone_surrogates

__all__ = [
    "ERROR_STOP_TEXT",
    "NO_FINISH_REASON_TEXT",
    "CompletionsStreamMapper",
    "map_finish_reason",
]

NO_FINISH_REASON_TEXT: Final = "Stream ended without finish_reason"
ERROR_STOP_TEXT: Final = "Provider returned an error stop reason"

_NO_USAGE: Final = CompletionsUsage()  # a usage object without a count we read
_NO_FUNCTION: Final = ToolCallFunction()


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    """``(stop_reason, error_message)`` for a ``finish_reason``."""
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def _reasoning(delta: ChunkDelta) -> tuple[str, str]:
    """The first non-empty reasoning field: ``(its name, its text)``."""
    if delta.reasoning_content:
        return "reasoning_content", delta.reasoning_content
    if delta.reasoning:
        return "reasoning", delta.reasoning
    return "reasoning_text", delta.reasoning_text or ""


def _valid_detail(detail: Any) -> bool:
    if not isinstance(detail, dict):
        return False
    if detail.get("id") is not None and not isinstance(detail.get("id"), str):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False
    if "index" in detail and not isinstance(detail["index"], int):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        signature = detail.get("signature")
        return isinstance(detail.get("text"), str) and (
            signature is None or isinstance(signature, str)
        )
    return False


def _merge_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
    """Append an OpenRouter reasoning detail; consecutive text/summary deltas merge."""
    last = details[-1] if details else None
    kind = detail["type"]
    if (
        last is not None
        and last["type"] == kind
        and kind in ("reasoning.text", "reasoning.summary")
    ):
        key = "text" if kind == "reasoning.text" else "summary"
        last[key] += detail[key]
        if kind == "reasoning.text" and not last.get("signature") and detail.get("signature"):
            last["signature"] = detail["signature"]
        for field in ("id", "index"):
            if last.get(field) is None and detail.get(field) is not None:
                last[field] = detail[field]
        if not last.get("format") and detail.get("format"):
            last["format"] = detail["format"]
        return
    details.append(dict(detail))


class CompletionsStreamMapper:
    """Chat Completions chunks → assistant-message events (sans-IO).

    ``feed(event)`` takes one SSE event and returns the events it produced; ``finish()``
    ends the open blocks in content order and returns them plus the terminal event.
    Errors the server reports inside the stream raise ``ProviderError``.
    """

    __slots__ = (
        "_builder",
        "_compat",
        "_details",
        "_finished",
        "_model",
        "_refusal",
        "_text",
        "_thinking",
        "_tools_by_id",
        "_tools_by_index",
        "done_marker",
    )

    def __init__(self, builder: MessageBuilder, model: Model, compat: CompletionsCompat) -> None:
        self._builder = builder
        self._model = model
        self._compat = compat
        self._text: int | None = None
        self._thinking: int | None = None
        self._tools_by_index: dict[int, int] = {}
        self._tools_by_id: dict[str, int] = {}
        self._details: list[dict[str, Any]] | None = None
        self._finished = False
        self._refusal: list[str] = []  # the model declined: its explanation, streamed
        self.done_marker = False

    def feed(self, event: SSEEvent) -> list[AssistantMessageEvent]:
        data = event.data
        if self.done_marker or not data.strip():
            return []
        if data.startswith("[DONE]"):
            self.done_marker = True
            return []
        try:
            chunk = CHUNK_DECODER.decode(data)
        except msgspec.ValidationError as exc:
            return _misfit(event, exc)
        except msgspec.DecodeError as exc:
            fixed = without_lone_surrogates(data)
            if fixed == data:
                raise _unparseable(data, exc) from exc
            return self.feed(SSEEvent(event.event, fixed))
        if event.event == "error" or chunk.error:
            raise ProviderError(_stream_error_text(decode_json(data)))
        return self.chunk(chunk)

    def chunk(self, chunk: Chunk) -> list[AssistantMessageEvent]:
        builder = self._builder
        message = builder.message
        model = self._model
        out: list[AssistantMessageEvent] = []
        note_response(message, model, chunk.id, chunk.model)
        usage = chunk.usage
        if usage is not None and usage != _NO_USAGE:
            message.usage = parse_usage(usage, model)
        choices = chunk.choices
        if not choices:
            return out
        choice = choices[0]
        if choice.usage is not None and (usage is None or usage == _NO_USAGE):
            message.usage = parse_usage(choice.usage, model)
        finish = choice.finish_reason
        if finish:
            message.raw_stop_reason = finish
            stop_reason, error_message = map_finish_reason(finish)
            message.stop_reason = stop_reason  # type: ignore[assignment]
            if error_message:
                message.error_message = error_message
            self._finished = True
        delta = choice.delta
        if delta is None:
            return out
        content = delta.content
        if content and type(content) is str:
            if self._text is None:
                start = builder.text_start()
                self._text = start.content_index
                out.append(start)
            out.append(builder.text_delta(self._text, content))
        refusal = delta.refusal
        if refusal:
            # A refusal is shown as the answer's text and ends the response as an error
            # naming it, as an Anthropic refusal does.
            self._refusal.append(refusal)
            if self._text is None:
                start = builder.text_start()
                self._text = start.content_index
                out.append(start)
            out.append(builder.text_delta(self._text, refusal))
        if delta.reasoning_content or delta.reasoning or delta.reasoning_text:
            field, reasoning = _reasoning(delta)
            if model.provider == "opencode-go" and field == "reasoning":
                field = "reasoning_content"
            out.append(builder.thinking_delta(self._thinking_index(field, out), reasoning))
        for call in delta.tool_calls or ():
            self._tool_call(call, out)
        for detail in delta.reasoning_details or ():
            if _valid_detail(detail):
                self._thinking_index("", out)
                if self._details is None:
                    self._details = []
                _merge_detail(self._details, detail)
        return out

    def _thinking_index(self, signature: str, out: list[AssistantMessageEvent]) -> int:
        if self._thinking is None:
            start = self._builder.thinking_start(thinking_signature=signature)
            self._thinking = start.content_index
            out.append(start)
        return self._thinking

    def _tool_call(self, call: ChunkToolCall, out: list[AssistantMessageEvent]) -> None:
        builder = self._builder
        stream_index = call.index
        call_id = call.id or ""
        function = call.function or _NO_FUNCTION
        name = function.name or ""
        index = self._tools_by_index.get(stream_index) if stream_index is not None else None
        if index is None and call_id:
            index = self._tools_by_id.get(call_id)
        if index is None:
            start = builder.toolcall_start(call_id, name)
            index = start.content_index
            out.append(start)
        if stream_index is not None:
            self._tools_by_index.setdefault(stream_index, index)
        block = builder.tool_call(index)
        if call_id:
            self._tools_by_id[call_id] = index
            if not block.id:
                block.id = call_id
        if name and not block.name:
            block.name = name
        out.append(builder.toolcall_delta(index, function.arguments or ""))

    def finish(self) -> list[AssistantMessageEvent]:
        """The end of the wire stream: every open block ends, then ``done`` or ``error``."""
        builder = self._builder
        message = builder.message
        if self._thinking is not None and self._details is not None:
            block: Any = builder.started_block(self._thinking)
            block.thinking_signature = msgspec.json.encode(self._details).decode()
        out = builder.end_open_blocks()
        compat = self._compat
        if not self._finished and not compat.supports_finish_reason:
            message.stop_reason = "toolUse" if builder.tool_call_count else "stop"
        if self._refusal and message.stop_reason != "error":
            message.stop_reason = "error"
            message.error_message = "".join(self._refusal).strip() or REFUSAL_TEXT
        if message.stop_reason == "error":
            out.append(builder.error(message.error_message or ERROR_STOP_TEXT))
        elif (compat.supports_finish_reason and not self._finished) or (
            message.stop_reason == "pending"
        ):
            out.append(builder.error(NO_FINISH_REASON_TEXT))
        else:
            out.append(builder.done())
        return out


def _stream_error_text(chunk: Any) -> str:
    error = chunk.get("error") if isinstance(chunk, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        text = (
            message if isinstance(message, str) and message else msgspec.json.encode(error).decode()
        )
        metadata = error.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        if isinstance(raw, str) and raw and raw not in text:
            text = f"{text}\n{raw}"
        return text
    if isinstance(error, str) and error:
        return error
    if isinstance(chunk, dict) and isinstance(chunk.get("message"), str):
        return str(chunk["message"])
    return msgspec.json.encode(chunk).decode()


def _unparseable(data: str, exc: Exception) -> ProviderError:
    return ProviderError(f"Could not parse the chat completions stream: {exc}; data={data[:200]!r}")


def _misfit(event: SSEEvent, exc: msgspec.ValidationError) -> list[AssistantMessageEvent]:
    """A chunk that is JSON but no ``Chunk``: skipped when it is not an object, raised as
    the server's error when it carries one, else a parse error naming the field."""
    payload = decode_json(event.data)
    if event.event == "error" or (isinstance(payload, dict) and payload.get("error")):
        raise ProviderError(_stream_error_text(payload)) from exc
    if not isinstance(payload, dict):
        return []
    raise _unparseable(event.data, exc) from exc
