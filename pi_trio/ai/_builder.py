"""Sans-IO folding of assistant-message events: the producer and consumer halves.

``MessageBuilder`` is used by stream functions: each method mutates the builder's message
(the live ``partial``) and returns the event to send. ``MessageFold`` is used by whoever
consumes a stream: ``fold.apply(event)`` replays each event onto its own copy of the
message, so the consumer knows exactly what it received (an aborted message holds the
deltas that were delivered, not ones the producer appended but never sent).

Open text, thinking and tool-call blocks accumulate their deltas as parts and join them
only when read, so streaming costs linear time overall no matter how many deltas arrive.
Reading ``block.text`` of an open block joins what arrived so far (and caches it).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._errors import StreamProtocolError
from ._events import (
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
from ._json_parse import parse_streaming_json
from ._streaming_json import StreamingJsonParser, parse_tool_call_arguments
from ._types import (
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    now_ms,
)

__all__ = ["MessageBuilder", "MessageFold", "empty_message", "seal_message"]

_TEXT_SLOT: Any = TextContent.__dict__["text"]
_THINKING_SLOT: Any = ThinkingContent.__dict__["thinking"]
_ARGUMENTS_SLOT: Any = ToolCall.__dict__["arguments"]


# --------------------------------------------------------------------------- live blocks


def _joined(block: Any, slot: Any) -> str:
    parts: list[str] = block.__dict__["_parts"]
    if len(parts) > 1:
        text = "".join(parts)
        parts[:] = [text]
        slot.__set__(block, text)
    return slot.__get__(block)  # type: ignore[no-any-return]


class _LiveText(TextContent, tag="text", dict=True):
    """A text block still streaming. Same JSON and attributes as ``TextContent``."""

    def __post_init__(self) -> None:
        self.__dict__["_parts"] = [_TEXT_SLOT.__get__(self)]

    @property  # type: ignore[misc]
    def text(self) -> str:
        return _joined(self, _TEXT_SLOT)

    @text.setter
    def text(self, value: str) -> None:
        self.__dict__["_parts"] = [value]
        _TEXT_SLOT.__set__(self, value)

    def _append(self, delta: str) -> None:
        self.__dict__["_parts"].append(delta)

    def _seal(self) -> TextContent:
        return TextContent(text=self.text, text_signature=self.text_signature)


class _LiveThinking(ThinkingContent, tag="thinking", dict=True):
    """A thinking block still streaming. Same JSON and attributes as ``ThinkingContent``."""

    def __post_init__(self) -> None:
        self.__dict__["_parts"] = [_THINKING_SLOT.__get__(self)]

    @property  # type: ignore[misc]
    def thinking(self) -> str:
        return _joined(self, _THINKING_SLOT)

    @thinking.setter
    def thinking(self, value: str) -> None:
        self.__dict__["_parts"] = [value]
        _THINKING_SLOT.__set__(self, value)

    def _append(self, delta: str) -> None:
        self.__dict__["_parts"].append(delta)

    def _seal(self) -> ThinkingContent:
        return ThinkingContent(
            thinking=self.thinking,
            thinking_signature=self.thinking_signature,
            redacted=self.redacted,
        )


class _LiveToolCall(ToolCall, tag="toolCall", dict=True):
    """A tool call whose argument JSON is still streaming. The fragments are kept as
    parts; reading ``arguments`` feeds the new ones to an incremental parser and returns
    its best-effort value, so streaming stays linear however often it is read."""

    def __post_init__(self) -> None:
        self.__dict__["_parts"] = []
        self.__dict__["_fed"] = 0
        self.__dict__["_parser"] = None

    @property  # type: ignore[misc]
    def arguments(self) -> dict[str, Any]:
        state = self.__dict__
        parts: list[str] = state["_parts"]
        if not parts:
            return _ARGUMENTS_SLOT.__get__(self)  # type: ignore[no-any-return]
        parser: StreamingJsonParser | None = state["_parser"]
        if parser is None:
            parser = state["_parser"] = StreamingJsonParser()
        fed: int = state["_fed"]
        for part in parts[fed:]:
            parser.feed(part)
        state["_fed"] = len(parts)
        value = parser.value()
        _ARGUMENTS_SLOT.__set__(self, value)
        return value

    @arguments.setter
    def arguments(self, value: dict[str, Any]) -> None:
        self.__post_init__()
        _ARGUMENTS_SLOT.__set__(self, value)

    def _append(self, delta: str) -> None:
        self.__dict__["_parts"].append(delta)

    def _final_arguments(self) -> dict[str, Any]:
        parts: list[str] = self.__dict__["_parts"]
        if not parts:
            return _ARGUMENTS_SLOT.__get__(self)  # type: ignore[no-any-return]
        return parse_streaming_json("".join(parts))

    def _seal(
        self,
        arguments: dict[str, Any] | None = None,
        *,
        finished: bool = False,
        arguments_error: str | None = None,
    ) -> ToolCall:
        """The plain block. A ``finished`` call parses its complete text once (malformed
        text gives ``{}`` and ``arguments_error``); an unfinished one keeps what parsed."""
        parts: list[str] = self.__dict__["_parts"]
        if arguments is None and finished and parts:
            arguments, arguments_error = parse_tool_call_arguments("".join(parts))
        return ToolCall(
            id=self.id,
            name=self.name,
            arguments=self._final_arguments() if arguments is None else arguments,
            thought_signature=self.thought_signature,
            namespace=self.namespace,
            arguments_error=arguments_error,
        )


_LIVE = (_LiveText, _LiveThinking, _LiveToolCall)


def seal_message(message: AssistantMessage) -> AssistantMessage:
    """Replace every still-open block of ``message`` with a plain, finished block (in
    place) and return the message. Unfinished tool-call arguments get the full parse."""
    content = message.content
    for i, block in enumerate(content):
        if isinstance(block, _LIVE):
            content[i] = block._seal()
    return message


def _open_block(content: list[Any], index: int, kind: type, action: str) -> Any:
    if 0 <= index < len(content):
        block = content[index]
        if isinstance(block, kind):
            return block
    raise StreamProtocolError(
        f"received {action} for content index {index}, which is not an open "
        f"{kind.__mro__[1].__name__} block; send the matching *_start event first"
    )


# --------------------------------------------------------------------------- producer


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


class MessageBuilder:
    """Builds one assistant message and the events that describe it.

    Stream functions create one per request, call its methods as wire data arrives and
    send the returned events. ``message`` is the live partial carried by every event.
    Block methods take the content index returned by the matching ``*_start`` call
    (read it from the event's ``content_index``).
    """

    __slots__ = ("message",)

    def __init__(self, model: Model, *, timestamp: int | None = None) -> None:
        self.message = empty_message(model, "pending", timestamp=timestamp)

    @property
    def usage(self) -> Usage:
        return self.message.usage

    def start(self) -> StartEvent:
        return StartEvent(partial=self.message)

    # text
    def text_start(self, *, text_signature: str | None = None) -> TextStartEvent:
        content = self.message.content
        content.append(_LiveText(text="", text_signature=text_signature))
        return TextStartEvent(content_index=len(content) - 1, partial=self.message)

    def text_delta(self, index: int, delta: str) -> TextDeltaEvent:
        content = self.message.content
        block = content[index] if 0 <= index < len(content) else None
        if type(block) is not _LiveText:
            block = _open_block(content, index, _LiveText, "text_delta")
        block.__dict__["_parts"].append(delta)
        return TextDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def text_end(self, index: int, *, text_signature: str | None = None) -> TextEndEvent:
        content = self.message.content
        block = _open_block(content, index, _LiveText, "text_end")
        if text_signature is not None:
            block.text_signature = text_signature
        sealed = content[index] = block._seal()
        return TextEndEvent(content_index=index, content=sealed.text, partial=self.message)

    # thinking
    def thinking_start(
        self,
        *,
        thinking: str = "",
        thinking_signature: str | None = None,
        redacted: bool | None = None,
    ) -> ThinkingStartEvent:
        content = self.message.content
        content.append(
            _LiveThinking(
                thinking=thinking, thinking_signature=thinking_signature, redacted=redacted
            )
        )
        return ThinkingStartEvent(content_index=len(content) - 1, partial=self.message)

    def thinking_delta(self, index: int, delta: str) -> ThinkingDeltaEvent:
        _open_block(self.message.content, index, _LiveThinking, "thinking_delta")._append(delta)
        return ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def thinking_signature_delta(self, index: int, delta: str) -> None:
        """Append to an open thinking block's signature (no event: signatures are replay
        data, not content)."""
        block = _open_block(self.message.content, index, _LiveThinking, "signature_delta")
        block.thinking_signature = (block.thinking_signature or "") + delta

    def thinking_end(
        self, index: int, *, thinking_signature: str | None = None
    ) -> ThinkingEndEvent:
        content = self.message.content
        block = _open_block(content, index, _LiveThinking, "thinking_end")
        if thinking_signature is not None:
            block.thinking_signature = thinking_signature
        sealed = content[index] = block._seal()
        return ThinkingEndEvent(content_index=index, content=sealed.thinking, partial=self.message)

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
        content = self.message.content
        content.append(
            _LiveToolCall(
                id=tool_call_id,
                name=name,
                arguments={} if arguments is None else arguments,
                thought_signature=thought_signature,
                namespace=namespace,
            )
        )
        return ToolCallStartEvent(content_index=len(content) - 1, partial=self.message)

    def toolcall_delta(self, index: int, delta: str) -> ToolCallDeltaEvent:
        _open_block(self.message.content, index, _LiveToolCall, "toolcall_delta")._append(delta)
        return ToolCallDeltaEvent(content_index=index, delta=delta, partial=self.message)

    def tool_call(self, index: int) -> ToolCall:
        """The open tool call at ``index`` (to update its id, name or signature)."""
        return _open_block(self.message.content, index, _LiveToolCall, "tool_call")  # type: ignore[no-any-return]

    def toolcall_end(
        self,
        index: int,
        *,
        arguments: dict[str, Any] | None = None,
        arguments_error: str | None = None,
    ) -> ToolCallEndEvent:
        """Finish the tool call; its arguments are the parse of the streamed JSON (with
        ``arguments_error`` when it is not an object) unless ``arguments`` gives them
        (providers that send whole objects, or parse the text themselves)."""
        content = self.message.content
        block = _open_block(content, index, _LiveToolCall, "toolcall_end")
        sealed = content[index] = block._seal(
            arguments, finished=True, arguments_error=arguments_error
        )
        return ToolCallEndEvent(content_index=index, tool_call=sealed, partial=self.message)

    def open_block_indices(self) -> list[int]:
        """Indices of blocks started but not yet ended, in content order."""
        return [i for i, b in enumerate(self.message.content) if isinstance(b, _LIVE)]

    def end_open_blocks(self) -> list[AssistantMessageEvent]:
        """End every open block in content order and return the end events."""
        events: list[AssistantMessageEvent] = []
        for i in self.open_block_indices():
            block = self.message.content[i]
            if isinstance(block, _LiveText):
                events.append(self.text_end(i))
            elif isinstance(block, _LiveThinking):
                events.append(self.thinking_end(i))
            else:
                events.append(self.toolcall_end(i))
        return events

    # terminal
    def done(
        self, reason: Literal["stop", "length", "toolUse", "deferred"] | None = None
    ) -> DoneEvent:
        """The successful terminal event. ``reason`` defaults to the message's stop reason
        (``toolUse`` when it holds tool calls and no reason was set, else ``stop``)."""
        message = seal_message(self.message)
        if reason is None:
            current = message.stop_reason
            if current in ("stop", "length", "toolUse", "deferred"):
                reason = current
            elif any(isinstance(b, ToolCall) for b in message.content):
                reason = "toolUse"
            else:
                reason = "stop"
        assert reason is not None
        message.stop_reason = reason
        return DoneEvent(reason=reason, message=message)

    def error(
        self, error_message: str, *, reason: Literal["error", "aborted"] = "error"
    ) -> ErrorEvent:
        """The failed terminal event; content received so far stays in the message."""
        message = seal_message(self.message)
        message.stop_reason = reason
        message.error_message = error_message
        return ErrorEvent(reason=reason, error=message)


# --------------------------------------------------------------------------- consumer


class MessageFold:
    """Replays received events onto a message of its own.

    ``message`` is what has been received so far (``None`` before ``start``); ``result``
    is the final message once a terminal event arrived. Raises ``StreamProtocolError``
    for events that break the protocol.
    """

    __slots__ = ("message", "result")

    def __init__(self) -> None:
        self.message: AssistantMessage | None = None
        self.result: AssistantMessage | None = None

    def apply(self, event: AssistantMessageEvent) -> None:
        if self.result is not None:
            raise StreamProtocolError(
                f"received {event.type!r} after the terminal event; a stream sends "
                "exactly one terminal 'done' or 'error', last"
            )
        t = event.type
        if t == "done":
            self.result = event.message  # type: ignore[union-attr]
            return
        if t == "error":
            self.result = event.error  # type: ignore[union-attr]
            return
        if t == "start":
            # The producer may already be ahead of this event (its partial is live), so
            # only the message's metadata is taken; content arrives through block events.
            self.message = msgspec.structs.replace(event.partial, content=[])  # type: ignore[union-attr]
            return
        message = self.message
        if message is None:
            return  # block events before ``start`` are ignored, as upstream does
        content = message.content
        index: int = event.content_index  # type: ignore[union-attr]
        if t == "text_delta":
            # the hot path, inlined: an open text block at ``index`` takes the part
            if 0 <= index < len(content):
                block = content[index]
                if type(block) is _LiveText:
                    block.__dict__["_parts"].append(event.delta)  # type: ignore[union-attr]
                    return
            _open_block(content, index, _LiveText, t)
        elif t == "toolcall_delta":
            _open_block(content, index, _LiveToolCall, t)._append(event.delta)  # type: ignore[union-attr]
        elif t == "thinking_delta":
            _open_block(content, index, _LiveThinking, t)._append(event.delta)  # type: ignore[union-attr]
        elif t == "text_start" or t == "thinking_start" or t == "toolcall_start":
            if index != len(content):
                raise StreamProtocolError(
                    f"received {t} for content index {index}, expected {len(content)}: "
                    "content indices are assigned in append order starting at 0"
                )
            source = _source_block(event.partial, index, t)  # type: ignore[union-attr]
            content.append(_empty_live_copy(source))
        elif t == "text_end":
            block = _open_block(content, index, _LiveText, t)
            source = _source_block(event.partial, index, t)  # type: ignore[union-attr]
            content[index] = TextContent(
                text=event.content,  # type: ignore[union-attr]
                text_signature=getattr(source, "text_signature", None) or block.text_signature,
            )
        elif t == "thinking_end":
            block = _open_block(content, index, _LiveThinking, t)
            source = _source_block(event.partial, index, t)  # type: ignore[union-attr]
            content[index] = ThinkingContent(
                thinking=event.content,  # type: ignore[union-attr]
                thinking_signature=getattr(source, "thinking_signature", None)
                or block.thinking_signature,
                redacted=getattr(source, "redacted", None) or block.redacted,
            )
        elif t == "toolcall_end":
            _open_block(content, index, _LiveToolCall, t)
            content[index] = event.tool_call  # type: ignore[union-attr]


def _source_block(partial: AssistantMessage, index: int, action: str) -> Any:
    content = partial.content
    if 0 <= index < len(content):
        return content[index]
    raise StreamProtocolError(
        f"received {action} for content index {index}, but its partial has only "
        f"{len(content)} blocks"
    )


def _empty_live_copy(block: Any) -> Any:
    """A fresh open block of the same kind; text and arguments arrive through deltas
    (the producer's block may already hold deltas this consumer has not received)."""
    if isinstance(block, TextContent):
        return _LiveText(text="", text_signature=block.text_signature)
    if isinstance(block, ThinkingContent):
        return _LiveThinking(
            thinking="", thinking_signature=block.thinking_signature, redacted=block.redacted
        )
    if isinstance(block, ToolCall):
        return _LiveToolCall(
            id=block.id,
            name=block.name,
            arguments={},
            thought_signature=block.thought_signature,
            namespace=block.namespace,
        )
    raise StreamProtocolError(f"unexpected content block {block!r} in a partial message")
