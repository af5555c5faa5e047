"""``MessageBuilder``: the producer side of one assistant message (sans-IO).

A stream function makes one builder per request, calls its methods as wire data arrives
and sends the events they return. The builder describes content; it never changes the
message's content itself. Whoever consumes the events applies each one to
``builder.message`` as it accepts it (``MessageFold``: ``open_stream``, or the engine of
an agent run), exactly once. So ``message`` holds what the consumer has received, also
after an abort, when events built but never accepted are simply not in it.

Metadata (usage, ids, stop and raw stop reason) is written to ``builder.message``
directly. The events of a builder are completed by the fold that applies them: the
``content`` of ``text_end``/``thinking_end``, the ``tool_call`` of ``toolcall_end`` and the
final message of ``done``/``error`` are filled in when they are applied. Without a stream,
apply them with a ``MessageFold`` (``fold.apply(event)``) to read the message.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .._errors import StreamProtocolError
from .._events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .._types import AssistantMessage, Model, Usage, now_ms
from ._live import LiveBlock, LiveText, LiveThinking, LiveToolCall

__all__ = ["BuilderStartEvent", "MessageBuilder", "empty_message"]


def empty_message(
    model: Model,
    stop_reason: Any,
    *,
    error_message: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    """An assistant message of ``model`` with no content and zero usage."""
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=now_ms() if timestamp is None else timestamp,
    )


class BuilderStartEvent(StartEvent, tag="start", dict=True, gc=True):
    """The ``start`` event of a ``MessageBuilder``: same JSON as ``StartEvent``; it tells
    the consumer to apply the following events to the builder's message (``builder``)."""

    @property
    def builder(self) -> MessageBuilder:
        return self.__dict__["builder"]  # type: ignore[no-any-return]


class MessageBuilder:
    """Makes the events of one assistant message; see the module docstring.

    Block methods take the content index of the matching ``*_start`` event (read it from
    the event's ``content_index``) and raise ``StreamProtocolError`` for an index that is
    not an open block of that kind.
    """

    __slots__ = ("_blocks", "_ended", "_tool_calls", "message")

    def __init__(self, model: Model, *, timestamp: int | None = None) -> None:
        self.message = empty_message(model, "pending", timestamp=timestamp)
        self._blocks: list[LiveBlock] = []  # every block started, by content index
        # bit ``i`` set: block ``i`` ended (an int, not a set: a set costs 216 bytes for
        # every request in flight)
        self._ended = 0
        self._tool_calls = 0

    @property
    def usage(self) -> Usage:
        return self.message.usage

    def start(self) -> StartEvent:
        event = BuilderStartEvent(partial=self.message)
        event.__dict__["builder"] = self
        return event

    def started_block(self, index: int) -> LiveBlock | None:
        """The block started at ``index`` (``None`` if none was), open or ended."""
        blocks = self._blocks
        return blocks[index] if 0 <= index < len(blocks) else None

    @property
    def block_count(self) -> int:
        """How many blocks were started."""
        return len(self._blocks)

    @property
    def tool_call_count(self) -> int:
        """How many tool calls were started."""
        return self._tool_calls

    def _open(self, index: int, kind: type, action: str) -> Any:
        blocks = self._blocks
        if 0 <= index < len(blocks):
            block = blocks[index]
            if type(block) is kind and not (self._ended >> index) & 1:
                return block
        raise StreamProtocolError(
            f"received {action} for content index {index}, which is not an open "
            f"{kind.__mro__[1].__name__} block; send the matching *_start event first"
        )

    def _begin(self, block: LiveBlock) -> int:
        self._blocks.append(block)
        return len(self._blocks) - 1

    # text
    def text_start(self, *, text_signature: str | None = None) -> TextStartEvent:
        index = self._begin(LiveText(text="", text_signature=text_signature))
        return TextStartEvent(content_index=index, partial=self.message)

    def text_delta(self, index: int, delta: str) -> TextDeltaEvent:
        blocks = self._blocks
        if not (
            0 <= index < len(blocks)
            and type(blocks[index]) is LiveText
            and not (self._ended >> index) & 1
        ):
            self._open(index, LiveText, "text_delta")
        return TextDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def text_end(
        self, index: int, *, text_signature: str | None = None, text: str | None = None
    ) -> TextEndEvent:
        """End the text block; ``text`` replaces what was streamed (providers that resend
        the whole text at the end)."""
        block: LiveText = self._open(index, LiveText, "text_end")
        self._ended |= 1 << index
        if text_signature is not None:
            block.text_signature = text_signature
        if text is not None:
            block.set_final(text)
        return TextEndEvent(content_index=index, content="", partial=self.message)

    # thinking
    def thinking_start(
        self,
        *,
        thinking: str = "",
        thinking_signature: str | None = None,
        redacted: bool | None = None,
    ) -> ThinkingStartEvent:
        block = LiveThinking(
            thinking=thinking, thinking_signature=thinking_signature, redacted=redacted
        )
        return ThinkingStartEvent(content_index=self._begin(block), partial=self.message)

    def thinking_delta(self, index: int, delta: str) -> ThinkingDeltaEvent:
        self._open(index, LiveThinking, "thinking_delta")
        return ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def thinking_signature_delta(self, index: int, delta: str) -> None:
        """Append to an open thinking block's signature (no event: signatures are replay
        data, not content)."""
        block: LiveThinking = self._open(index, LiveThinking, "signature_delta")
        block.thinking_signature = (block.thinking_signature or "") + delta

    def thinking_end(
        self,
        index: int,
        *,
        thinking_signature: str | None = None,
        thinking: str | None = None,
    ) -> ThinkingEndEvent:
        """End the thinking block; ``thinking`` replaces what was streamed."""
        block: LiveThinking = self._open(index, LiveThinking, "thinking_end")
        self._ended |= 1 << index
        if thinking_signature is not None:
            block.thinking_signature = thinking_signature
        if thinking is not None:
            block.set_final(thinking)
        return ThinkingEndEvent(content_index=index, content="", partial=self.message)

    # tool calls
    def toolcall_start(
        self,
        tool_call_id: str,
        name: str,
        *,
        arguments: dict[str, Any] | None = None,
        thought_signature: str | None = None,
        namespace: str | None = None,
    ) -> ToolCallStartEvent:
        block = LiveToolCall(
            id=tool_call_id,
            name=name,
            arguments={} if arguments is None else arguments,
            thought_signature=thought_signature,
            namespace=namespace,
        )
        self._tool_calls += 1
        return ToolCallStartEvent(content_index=self._begin(block), partial=self.message)

    def toolcall_delta(self, index: int, delta: str) -> ToolCallDeltaEvent:
        self._open(index, LiveToolCall, "toolcall_delta")
        return ToolCallDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def tool_call(self, index: int) -> LiveToolCall:
        """The open tool call at ``index`` (to update its id, name or signature)."""
        return self._open(index, LiveToolCall, "tool_call")  # type: ignore[no-any-return]

    def toolcall_end(
        self,
        index: int,
        *,
        arguments: dict[str, Any] | None = None,
        arguments_error: str | None = None,
    ) -> ToolCallEndEvent:
        """End the tool call; its arguments are the parse of the streamed JSON (with
        ``arguments_error`` when it is not an object) unless ``arguments`` gives them
        (providers that send whole objects, or parse the text themselves)."""
        block: LiveToolCall = self._open(index, LiveToolCall, "toolcall_end")
        self._ended |= 1 << index
        if arguments is not None:
            block.set_final(arguments, arguments_error)
        return ToolCallEndEvent(content_index=index, tool_call=block, partial=self.message)

    def open_block_indices(self) -> list[int]:
        """Indices of blocks started but not yet ended, in content order."""
        ended = self._ended
        return [i for i in range(len(self._blocks)) if not (ended >> i) & 1]

    def end_open_blocks(self) -> list[AssistantMessageEvent]:
        """End every open block in content order and return the end events."""
        events: list[AssistantMessageEvent] = []
        for i in self.open_block_indices():
            block = self._blocks[i]
            if type(block) is LiveText:
                events.append(self.text_end(i))
            elif type(block) is LiveThinking:
                events.append(self.thinking_end(i))
            else:
                events.append(self.toolcall_end(i))
        return events

    # terminal
    def done(
        self, reason: Literal["stop", "length", "toolUse", "deferred"] | None = None
    ) -> DoneEvent:
        """The successful terminal event. ``reason`` defaults to the message's stop reason
        (``toolUse`` when a tool call was started and no reason was set, else ``stop``)."""
        if reason is None:
            current = self.message.stop_reason
            if current in ("stop", "length", "toolUse", "deferred"):
                reason = current
            else:
                reason = "toolUse" if self._tool_calls else "stop"
        assert reason is not None
        final = msgspec.structs.replace(self.message, stop_reason=reason)
        return DoneEvent(reason=reason, message=final)

    def error(
        self, error_message: str | None, *, reason: Literal["error", "aborted"] = "error"
    ) -> ErrorEvent:
        """The failed terminal event; content received so far stays in the message."""
        final = msgspec.structs.replace(
            self.message, stop_reason=reason, error_message=error_message
        )
        return ErrorEvent(reason=reason, error=final)
