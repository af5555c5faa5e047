"""Content blocks that are still streaming, and sealing them.

An open text, thinking or tool-call block keeps its deltas as a list of parts and joins
them only when read, so streaming costs linear time overall however many deltas arrive
and however often the partial message is read. A live block has the JSON and the
attributes of its plain block; ``sealed()`` gives the plain block once it is finished.

A block may be told its final value before it ends (``set_final``): providers that resend
the whole text or arguments at the end of a block use it, and it takes effect when the
block is sealed, so deltas still on their way are never overwritten.
"""

from __future__ import annotations

from typing import Any

from .._arguments._final import parse_tool_call_arguments
from .._arguments._partial import parse_streaming_json
from .._arguments._streaming import StreamingJsonParser
from .._errors import StreamProtocolError
from .._types import AssistantMessage, TextContent, ThinkingContent, ToolCall

__all__ = [
    "LIVE_BLOCKS",
    "LiveBlock",
    "LiveText",
    "LiveThinking",
    "LiveToolCall",
    "join_open_blocks",
    "open_block",
    "seal_message",
]

_TEXT_SLOT: Any = TextContent.__dict__["text"]
_THINKING_SLOT: Any = ThinkingContent.__dict__["thinking"]
_ARGUMENTS_SLOT: Any = ToolCall.__dict__["arguments"]


def _joined(block: Any, slot: Any) -> str:
    parts: list[str] = block.__dict__["parts"]
    if len(parts) > 1:
        text = "".join(parts)
        parts[:] = [text]
        slot.__set__(block, text)
    return slot.__get__(block)  # type: ignore[no-any-return]


class LiveText(TextContent, tag="text", dict=True, gc=True):
    """A text block still streaming. Same JSON and attributes as ``TextContent``."""

    def __post_init__(self) -> None:
        self.__dict__["parts"] = [_TEXT_SLOT.__get__(self)]

    @property  # type: ignore[misc]
    def text(self) -> str:
        return _joined(self, _TEXT_SLOT)

    @text.setter
    def text(self, value: str) -> None:
        self.__dict__["parts"] = [value]
        _TEXT_SLOT.__set__(self, value)

    def add_part(self, delta: str) -> None:
        self.__dict__["parts"].append(delta)

    def set_final(self, text: str) -> None:
        self.__dict__["final"] = text

    def sealed(self) -> TextContent:
        final = self.__dict__.get("final")
        return TextContent(
            text=self.text if final is None else final, text_signature=self.text_signature
        )


class LiveThinking(ThinkingContent, tag="thinking", dict=True, gc=True):
    """A thinking block still streaming. Same JSON and attributes as ``ThinkingContent``."""

    def __post_init__(self) -> None:
        self.__dict__["parts"] = [_THINKING_SLOT.__get__(self)]

    @property  # type: ignore[misc]
    def thinking(self) -> str:
        return _joined(self, _THINKING_SLOT)

    @thinking.setter
    def thinking(self, value: str) -> None:
        self.__dict__["parts"] = [value]
        _THINKING_SLOT.__set__(self, value)

    def add_part(self, delta: str) -> None:
        self.__dict__["parts"].append(delta)

    def set_final(self, thinking: str) -> None:
        self.__dict__["final"] = thinking

    def sealed(self) -> ThinkingContent:
        final = self.__dict__.get("final")
        return ThinkingContent(
            thinking=self.thinking if final is None else final,
            thinking_signature=self.thinking_signature,
            redacted=self.redacted,
        )


class LiveToolCall(ToolCall, tag="toolCall", dict=True, gc=True):
    """A tool call whose argument JSON is still streaming. Reading ``arguments`` feeds the
    parts that arrived since the last read to an incremental parser and returns its
    best-effort value, so streaming stays linear however often it is read."""

    def __post_init__(self) -> None:
        state = self.__dict__
        state["parts"] = []
        state["fed"] = 0
        state["parser"] = None

    @property  # type: ignore[misc]
    def arguments(self) -> dict[str, Any]:
        state = self.__dict__
        parts: list[str] = state["parts"]
        if not parts:
            return _ARGUMENTS_SLOT.__get__(self)  # type: ignore[no-any-return]
        parser: StreamingJsonParser | None = state["parser"]
        if parser is None:
            parser = state["parser"] = StreamingJsonParser()
        fed: int = state["fed"]
        for part in parts[fed:]:
            parser.feed(part)
        state["fed"] = len(parts)
        value = parser.value()
        _ARGUMENTS_SLOT.__set__(self, value)
        return value

    @arguments.setter
    def arguments(self, value: dict[str, Any]) -> None:
        self.__post_init__()
        _ARGUMENTS_SLOT.__set__(self, value)

    def add_part(self, delta: str) -> None:
        self.__dict__["parts"].append(delta)

    def set_final(self, arguments: dict[str, Any], arguments_error: str | None = None) -> None:
        self.__dict__["final"] = (arguments, arguments_error)

    def sealed(self, *, finished: bool = False) -> ToolCall:
        """The plain call. Final arguments, if given, win. A ``finished`` call parses its
        complete argument text once (malformed text gives ``{}`` and
        ``arguments_error``); an unfinished one (an aborted stream) keeps what parsed."""
        final = self.__dict__.get("final")
        arguments_error = None
        if final is not None:
            arguments, arguments_error = final
        else:
            parts: list[str] = self.__dict__["parts"]
            if not parts:
                arguments = _ARGUMENTS_SLOT.__get__(self)
            elif finished:
                arguments, arguments_error = parse_tool_call_arguments("".join(parts))
            else:
                arguments = parse_streaming_json("".join(parts))
        return ToolCall(
            id=self.id,
            name=self.name,
            arguments=arguments,
            thought_signature=self.thought_signature,
            namespace=self.namespace,
            arguments_error=arguments_error,
        )


LiveBlock = LiveText | LiveThinking | LiveToolCall
LIVE_BLOCKS = (LiveText, LiveThinking, LiveToolCall)


def seal_message(message: AssistantMessage) -> AssistantMessage:
    """Replace every still-open block of ``message`` with its finished block (in place)
    and return the message."""
    content = message.content
    for i, block in enumerate(content):
        if isinstance(block, LIVE_BLOCKS):
            content[i] = block.sealed()
    return message


def join_open_blocks(message: AssistantMessage) -> None:
    """Join the parts of every open block into its field (before encoding: the encoder
    reads the fields, not the parts)."""
    for block in message.content:
        if isinstance(block, LiveText):
            block.text  # noqa: B018 - reading joins the parts into the field
        elif isinstance(block, LiveThinking):
            block.thinking  # noqa: B018
        elif isinstance(block, LiveToolCall):
            block.arguments  # noqa: B018


def open_block(content: list[Any], index: int, kind: type, action: str) -> Any:
    """The open block of type ``kind`` at ``index``, or ``StreamProtocolError``."""
    if 0 <= index < len(content):
        block = content[index]
        if isinstance(block, kind):
            return block
    raise StreamProtocolError(
        f"received {action} for content index {index}, which is not an open "
        f"{kind.__mro__[1].__name__} block; send the matching *_start event first"
    )
