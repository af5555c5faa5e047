"""System messages in the middle of an Anthropic conversation, as pi 1.6 sends them
(sans-IO).

A model whose compat has ``supportsMidConvoSystemMessages`` gets each later system
message in place, as a ``{"role": "system", "content": [...]}`` message, so the cached
prefix before it stays the same: its text (``render_system_message_update``: added
instructions, then the sections it changes, framed by name). Anthropic wants a
``tool_result`` right after its ``tool_use``, so a system message is held back and sent
just before the next assistant message that is sent (or at the end of the request); one
written before a user message therefore lands after it.

With ``supportsMidConvoToolChanges`` too, and at least one tool in the leading system
message, tool changes are native (the ``inline-tools-2026-09-15`` beta): the top-level
``tools`` are the initial ones plus ``DEFERRED_TOOL_PLACEHOLDER`` and never change; a
later tool is defined by value in a ``tool_addition`` block (a new definition under a
name replaces the old one) and a removal is a ``tool_removal`` reference, so a tool
change does not invalidate the cache either. Without an initial tool the current tool
list goes at the top level and the system messages carry their text only. Other models
get the transcript collapsed into the leading prompt (``resolve_transcript``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from .._sanitize import sanitize_surrogates
from .._transcript._history import get_initial_system_message
from .._transcript._system import render_system_message_update
from .._types import Message, Model, SystemMessage, Tool
from ._anthropic_tools import canonical_tool_name

__all__ = [
    "BETA_INLINE_TOOLS",
    "DEFERRED_TOOL_PLACEHOLDER",
    "ToolDefinitions",
    "native_tool_changes",
    "supports_mid_convo_system_messages",
    "system_update_blocks",
]

BETA_INLINE_TOOLS: Final = "inline-tools-2026-09-15"

# Declared whenever tool changes are native: Anthropic adds hidden prompt scaffolding for
# mid-conversation tool changes, and declaring a deferred tool from the first request on
# keeps that scaffolding in the cached prefix (pi 1.6 measured a full miss without it). It
# is never activated, and the model cannot see it.
DEFERRED_TOOL_PLACEHOLDER: Final = {
    "name": "__pi_deferred_placeholder__",
    "description": "Reserved placeholder. Never available. Never call this.",
    "input_schema": {"type": "object", "properties": {}, "required": []},
    "defer_loading": True,
}

ToolDefinitions = Callable[[Sequence[Tool]], list[dict[str, Any]]]
"""Converts tool declarations to Anthropic tool definitions (no cache marker)."""


def _compat(model: Model, key: str) -> bool:
    return (model.compat or {}).get(key) is True


def supports_mid_convo_system_messages(model: Model) -> bool:
    return _compat(model, "supportsMidConvoSystemMessages")


def native_tool_changes(model: Model, messages: Sequence[Message]) -> list[Tool] | None:
    """The initial tools when tool changes go as ``tool_addition`` / ``tool_removal``
    blocks, else ``None``."""
    if not (
        supports_mid_convo_system_messages(model) and _compat(model, "supportsMidConvoToolChanges")
    ):
        return None
    initial = get_initial_system_message(messages)
    tools = list(initial.tools_added or ()) if initial is not None else []
    return tools or None


def system_update_blocks(
    message: SystemMessage, *, oauth: bool, definitions: ToolDefinitions | None
) -> list[dict[str, Any]]:
    """The content of a later system message: its text, then (tool changes being native)
    a removal per tool it removes and does not declare again, and an addition per tool it
    declares."""
    blocks: list[dict[str, Any]] = []
    text = render_system_message_update(message)
    if text:
        blocks.append({"type": "text", "text": sanitize_surrogates(text)})
    if definitions is None:
        return blocks
    added = list(message.tools_added or ())
    redefined = {tool.name for tool in added}
    for ref in message.tools_removed or ():
        if ref.name in redefined:
            continue  # the new definition replaces the old one
        name = canonical_tool_name(ref.name) if oauth else ref.name
        blocks.append({"type": "tool_removal", "tool": {"type": "tool_reference", "name": name}})
    for definition in definitions(added):
        blocks.append(
            {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": definition}}
        )
    return blocks
