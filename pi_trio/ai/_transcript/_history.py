"""Questions about a transcript's history of tool declarations and its leading system
message, for providers deciding how to send a transcript.

A history is *purely additive* when no system message removes a tool and no tool name is
declared twice; such a history can be sent as the initial tool set plus later additions,
while any other one has to be sent as the current tool set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from .._types import Context, SystemMessage, Tool
from ._system import (
    collapse_system_messages,
    declaration_key,
    get_current_tools,
    system_messages,
)

__all__ = [
    "ResolvedTranscriptTools",
    "get_declared_tools",
    "get_initial_system_message",
    "has_non_additive_tool_changes",
    "has_tool_redefinitions",
    "resolve_transcript",
    "resolve_transcript_tools",
    "without_initial_system_message",
]


def get_declared_tools(messages: Sequence[Any]) -> list[Tool]:
    """Every tool the system messages ever declared, one entry per name (its latest
    declaration), in the order names were first declared; removals are ignored."""
    tools: dict[str, Tool] = {}
    for message in system_messages(messages):
        for tool in message.tools_added or ():
            tools[tool.name] = tool
    return list(tools.values())


def has_tool_redefinitions(messages: Sequence[Any]) -> bool:
    """True when some tool name is declared again with a different definition."""
    seen: dict[str, bytes] = {}
    for message in system_messages(messages):
        for tool in message.tools_added or ():
            key = declaration_key(tool)
            if seen.setdefault(tool.name, key) != key:
                return True
    return False


def has_non_additive_tool_changes(messages: Sequence[Any]) -> bool:
    """True when a system message removes a tool or declares a name declared before
    (even with the same definition)."""
    names: set[str] = set()
    for message in system_messages(messages):
        if message.tools_removed:
            return True
        for tool in message.tools_added or ():
            if tool.name in names:
                return True
            names.add(tool.name)
    return False


class ResolvedTranscriptTools(msgspec.Struct, frozen=True, kw_only=True):
    """``request_tools``: the tool list to send with the request; ``anchors_additions``:
    whether later declarations can be sent as additions to that list."""

    request_tools: list[Tool]
    anchors_additions: bool


def resolve_transcript_tools(
    messages: Sequence[Any], supports_tool_additions: bool
) -> ResolvedTranscriptTools:
    """A purely additive history sent to a provider that supports tool additions keeps
    the initial message's tools and anchors the additions; anything else sends the
    current tool set."""
    if supports_tool_additions and not has_non_additive_tool_changes(messages):
        initial = get_initial_system_message(messages)
        tools = list(initial.tools_added or []) if initial is not None else []
        return ResolvedTranscriptTools(request_tools=tools, anchors_additions=True)
    return ResolvedTranscriptTools(
        request_tools=get_current_tools(messages), anchors_additions=False
    )


def get_initial_system_message(messages: Sequence[Any]) -> SystemMessage | None:
    """The leading system message, or ``None`` (a system message later on does not
    count)."""
    if messages and isinstance(messages[0], SystemMessage):
        return messages[0]
    return None


def without_initial_system_message(messages: Sequence[Any]) -> list[Any]:
    """The messages after the leading system message (all of them when there is none)."""
    if get_initial_system_message(messages) is not None:
        return list(messages[1:])
    return list(messages)


def resolve_transcript(context: Context, supports_system_updates: bool) -> Context:
    """``context`` unchanged for providers that accept system messages mid-conversation;
    otherwise collapsed into one leading system message followed by the other messages."""
    if supports_system_updates:
        return context
    prompt, rest = collapse_system_messages(context.messages)
    tools = get_current_tools(context.messages)
    if not prompt and not tools:
        return Context(messages=rest)
    head = SystemMessage(content=prompt, tools_added=tools or None, timestamp=0)
    return Context(messages=[head, *rest])
