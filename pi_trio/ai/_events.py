"""The twelve assistant-message events: the streaming protocol of one LLM call.

A stream sends zero or more of these and then exactly one terminal ``done`` or ``error``.
Every non-terminal event carries ``partial``, the message accumulated so far (a live
object: it keeps growing after the event was sent, as in the original runtime).
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

import msgspec

from ._types import AssistantMessage, ToolCall

__all__ = [
    "AssistantMessageEvent",
    "DoneEvent",
    "ErrorEvent",
    "StartEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
]


class _Event(
    msgspec.Struct, tag_field="type", rename="camel", kw_only=True, omit_defaults=True, gc=False
):
    """Events hold messages and never form reference cycles: untracked by the garbage
    collector (see ``_types._Wire``)."""


class StartEvent(_Event, tag="start", kw_only=True):
    """The stream began; ``partial`` is the (still empty) assistant message."""

    type: ClassVar[Literal["start"]] = "start"
    partial: AssistantMessage


class TextStartEvent(_Event, tag="text_start", kw_only=True):
    """A text block opened at ``partial.content[content_index]``."""

    type: ClassVar[Literal["text_start"]] = "text_start"
    content_index: int
    partial: AssistantMessage


class TextDeltaEvent(_Event, tag="text_delta", kw_only=True):
    """``delta`` was appended to the text block at ``content_index``; ``partial`` holds the
    text so far."""

    type: ClassVar[Literal["text_delta"]] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(_Event, tag="text_end", kw_only=True):
    """The text block at ``content_index`` is complete; ``content`` is its whole text."""

    type: ClassVar[Literal["text_end"]] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(_Event, tag="thinking_start", kw_only=True):
    """A thinking (reasoning) block opened at ``partial.content[content_index]``."""

    type: ClassVar[Literal["thinking_start"]] = "thinking_start"
    content_index: int
    partial: AssistantMessage


class ThinkingDeltaEvent(_Event, tag="thinking_delta", kw_only=True):
    """``delta`` was appended to the thinking block at ``content_index``."""

    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(_Event, tag="thinking_end", kw_only=True):
    """The thinking block at ``content_index`` is complete; ``content`` is its whole text."""

    type: ClassVar[Literal["thinking_end"]] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(_Event, tag="toolcall_start", kw_only=True):
    """A tool call opened at ``partial.content[content_index]`` (its name and id are known)."""

    type: ClassVar[Literal["toolcall_start"]] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


class ToolCallDeltaEvent(_Event, tag="toolcall_delta", kw_only=True):
    """``delta`` is the next piece of the call's JSON argument text; the tool call in
    ``partial`` already holds the arguments parsed so far (a partial object)."""

    type: ClassVar[Literal["toolcall_delta"]] = "toolcall_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


class ToolCallEndEvent(_Event, tag="toolcall_end", kw_only=True):
    """The tool call at ``content_index`` is complete; ``tool_call`` holds its final
    arguments."""

    type: ClassVar[Literal["toolcall_end"]] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


class DoneEvent(_Event, tag="done", kw_only=True):
    """Successful end; ``message`` is the final message (``reason`` is its stop reason)."""

    type: ClassVar[Literal["done"]] = "done"
    reason: Literal["stop", "length", "toolUse", "deferred"]
    message: AssistantMessage


class ErrorEvent(_Event, tag="error", kw_only=True):
    """Failed end; ``error`` is the final message, with ``stop_reason == reason`` and an
    ``error_message``."""

    type: ClassVar[Literal["error"]] = "error"
    reason: Literal["error", "aborted"]
    error: AssistantMessage


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
