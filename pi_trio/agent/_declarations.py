"""Keeping the transcript's tool declarations equal to the executable tools, cheaply.

Before each request the loop checks that replaying the transcript's system messages gives
exactly the executable tool set, and declares the difference otherwise. Replaying the
whole transcript every turn would cost O(transcript) per turn; this replays only what was
appended since the last check, and makes the executable tools' declarations once per
tool list.

``shared_declaration`` gives agents that declare the same, unchanged tool one
declaration (a deep copy made once), so a thousand agents built from one tool list do
not each hold a copy of its schemas.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..ai import SystemMessage, Tool
from ..ai._seam import replay_tool_declarations
from ..ai.transcript import declare_tool_changes, to_tool_declaration
from ._types import AgentContext, AgentMessage

__all__ = ["ToolDeclarations", "shared_declaration"]

# id(tool) -> (tool, its declaration's compact JSON, the declaration); the tool is held so
# that its id is not reused while the entry lives. Bounded: cleared when full.
_SHARED: dict[int, tuple[Any, bytes, Tool]] = {}
_SHARED_MAX = 512


def shared_declaration(tool: Any) -> Tool:
    """``to_tool_declaration(tool)``, made once per tool and shared while the tool declares
    the same thing: a tool whose name, description, parameters or
    ``constrained_sampling`` changed since (compact JSON, keys in insertion order) gets a
    new copy, as does one whose shared declaration was changed in place. A declaration in
    a transcript is data like the transcript's messages: read it, do not mutate it."""
    try:
        key = msgspec.json.encode(
            Tool(
                name=tool.name,
                description=tool.description,
                parameters=tool.parameters,
                constrained_sampling=getattr(tool, "constrained_sampling", None),
            )
        )
    except (AttributeError, TypeError, msgspec.EncodeError):
        return to_tool_declaration(tool)  # raises the error that names the problem
    entry = _SHARED.get(id(tool))
    if entry is not None and entry[0] is tool and entry[1] == key:
        declaration = entry[2]
        if msgspec.json.encode(declaration) == key:
            return declaration
    declaration = to_tool_declaration(tool)
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[id(tool)] = (tool, key, declaration)
    return declaration


class ToolDeclarations:
    __slots__ = ("_declared", "_executable", "_in_sync")

    def __init__(self) -> None:
        self._declared: tuple[list[Any], int, dict[str, Tool]] | None = None
        self._executable: tuple[list[Any], int, list[Tool]] | None = None
        # the executable tool list (and its length) the transcript last declared exactly
        self._in_sync: tuple[list[Any], int] | None = None

    def declared(self, messages: list[Any]) -> dict[str, Tool]:
        """The tools ``messages`` declare, replaying only the messages appended since
        the last call (everything when the list was replaced or shrank)."""
        cache = self._declared
        if cache is None or cache[0] is not messages or cache[1] > len(messages):
            tools: dict[str, Tool] = {}
            upto = 0
            self._in_sync = None
        else:
            _, upto, tools = cache
        new = messages[upto:]
        if any(isinstance(m, SystemMessage) for m in new):
            self._in_sync = None
        replay_tool_declarations(tools, new)
        self._declared = (messages, len(messages), tools)
        return tools

    def executable(self, tools: list[Any]) -> list[Tool]:
        """Declarations of the executable tools, made once per tool list."""
        cache = self._executable
        if cache is None or cache[0] is not tools or cache[1] != len(tools):
            cache = self._executable = (tools, len(tools), [shared_declaration(t) for t in tools])
        return cache[2]

    def declare(self, context: AgentContext, pending: list[AgentMessage]) -> list[AgentMessage]:
        """``pending`` with the tool changes declared (see ``declare_tool_changes``)."""
        declared = self.declared(context.messages)
        tools = context.tools
        in_sync = self._in_sync
        if (
            in_sync is not None
            and in_sync[0] is tools
            and in_sync[1] == len(tools)
            and not any(isinstance(m, SystemMessage) for m in pending)
        ):
            return pending  # nothing changed since the transcript last matched
        if not any(isinstance(m, SystemMessage) for m in pending) and _matches(declared, tools):
            self._in_sync = (tools, len(tools))
            return pending
        executable = self.executable(tools)
        result = declare_tool_changes(context.messages, executable, pending, declared=declared)
        if result is pending and not any(isinstance(m, SystemMessage) for m in pending):
            self._in_sync = (tools, len(tools))
        return result


def _matches(declared: dict[str, Tool], tools: list[Any]) -> bool:
    """Whether ``declared`` is exactly the declarations of ``tools``: the comparison
    ``declare_tool_changes`` makes (compact JSON, keys in insertion order), without deep
    copies. ``False`` also when a tool is malformed: the full path reports that."""
    if len(declared) != len(tools):
        return False
    encode = msgspec.json.encode
    try:
        for tool in tools:
            known = declared.get(tool.name)
            if known is None:
                return False
            if not isinstance(tool, Tool):
                tool = Tool(
                    name=tool.name,
                    description=tool.description,
                    parameters=tool.parameters,
                    constrained_sampling=getattr(tool, "constrained_sampling", None),
                )
            if tool is not known and encode(tool) != encode(known):
                return False
    except (AttributeError, TypeError, msgspec.EncodeError):
        return False
    return True
