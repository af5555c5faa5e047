"""A transcript's system messages, and a transcript handed to another model.

A transcript owns what the model was told: its ``system`` messages hold the prompt, the
sections and the declared tools (``create_initial_system_message``,
``declare_tool_changes``); ``get_current_system_prompt`` / ``get_current_tools`` replay
them, ``resolve_transcript`` answers the providers' questions about that history, and
``transform_messages`` rewrites a transcript for another model. ``normalize_context``
turns a ``Context`` with ``system_prompt`` / ``tools`` into its system messages. The
message parts few programs write (``ToolRef``, ``DeferredHandle``, ``NestedToolCalls``)
are here too.
"""

from __future__ import annotations

from ._transcript._history import ResolvedTranscriptTools as ResolvedTranscriptTools
from ._transcript._history import get_declared_tools as get_declared_tools
from ._transcript._history import get_initial_system_message as get_initial_system_message
from ._transcript._history import has_non_additive_tool_changes as has_non_additive_tool_changes
from ._transcript._history import has_tool_redefinitions as has_tool_redefinitions
from ._transcript._history import resolve_transcript as resolve_transcript
from ._transcript._history import resolve_transcript_tools as resolve_transcript_tools
from ._transcript._history import without_initial_system_message as without_initial_system_message
from ._transcript._system import ToolStateChanges as ToolStateChanges
from ._transcript._system import collapse_system_messages as collapse_system_messages
from ._transcript._system import create_initial_system_message as create_initial_system_message
from ._transcript._system import declarations_equal as declarations_equal
from ._transcript._system import declare_tool_changes as declare_tool_changes
from ._transcript._system import get_added_tool_names as get_added_tool_names
from ._transcript._system import get_current_system_message as get_current_system_message
from ._transcript._system import get_current_system_prompt as get_current_system_prompt
from ._transcript._system import get_current_tools as get_current_tools
from ._transcript._system import get_system_message_text as get_system_message_text
from ._transcript._system import get_tool_state_changes as get_tool_state_changes
from ._transcript._system import normalize_context as normalize_context
from ._transcript._system import render_system_message_update as render_system_message_update
from ._transcript._system import to_tool_declaration as to_tool_declaration
from ._transcript._transform import transform_messages as transform_messages
from ._types import NestedToolCallRecord as NestedToolCallRecord
from ._types import NestedToolCalls as NestedToolCalls
from ._types import ToolRef as ToolRef

__all__ = [
    "NestedToolCallRecord",
    "NestedToolCalls",
    "ResolvedTranscriptTools",
    "ToolRef",
    "ToolStateChanges",
    "collapse_system_messages",
    "create_initial_system_message",
    "declarations_equal",
    "declare_tool_changes",
    "get_added_tool_names",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_declared_tools",
    "get_initial_system_message",
    "get_system_message_text",
    "get_tool_state_changes",
    "has_non_additive_tool_changes",
    "has_tool_redefinitions",
    "normalize_context",
    "render_system_message_update",
    "resolve_transcript",
    "resolve_transcript_tools",
    "to_tool_declaration",
    "transform_messages",
    "without_initial_system_message",
]
