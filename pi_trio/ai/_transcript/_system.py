"""The transcript owns the system prompt and the declared tools.

A leading system message carries the initial prompt and tool set; later system messages
append prompt text, patch named ``sections`` (``None`` deletes one) and declare tool
changes. The functions here replay that state, compute the difference between what the
transcript declares and what is executable, and help adapters whose wire format has no
mid-conversation system role. All are pure: they never mutate their arguments.

Transcripts may also hold application messages of other roles (any object with a ``role``
attribute); everything here looks only at :class:`SystemMessage` instances and passes the
rest through untouched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from .._types import Context, Message, SystemMessage, Tool, ToolRef, ToolResultMessage, now_ms

__all__ = [
    "ToolLike",
    "ToolStateChanges",
    "collapse_system_messages",
    "create_initial_system_message",
    "declaration_key",
    "declarations_equal",
    "declare_tool_changes",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_added_tool_names",
    "get_current_tools",
    "get_system_message_text",
    "get_tool_state_changes",
    "normalize_context",
    "render_system_message_update",
    "split_leading_system_prompt",
    "system_messages",
    "system_reminder_text",
    "to_tool_declaration",
]


_M = TypeVar("_M")


class ToolLike(Protocol):
    """Anything that can be declared to a model: a :class:`Tool`, an ``AgentTool``, ...
    (``constrained_sampling`` is optional and read when present)."""

    name: str
    description: str
    parameters: Mapping[str, Any]


class ToolStateChanges(msgspec.Struct, kw_only=True):
    """What a system message must declare to move from one tool set to another.

    A tool whose declaration changed under the same name is in both lists (removed, then
    added again)."""

    tools_added: list[Tool] = msgspec.field(default_factory=list)
    tools_removed: list[ToolRef] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- declarations


def _json_clone(value: Any, *, what: str) -> Any:
    try:
        return msgspec.json.decode(msgspec.json.encode(value))
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(
            f"{what} must be JSON-serialisable data (dicts, lists, str, numbers, "
            f"bools, None): {exc}"
        ) from exc


def to_tool_declaration(tool: ToolLike | Tool) -> Tool:
    """The declaration of ``tool`` as the model sees it: name, description, a deep JSON copy
    of ``parameters`` and ``constrained_sampling`` when set. Everything else an executable
    tool carries (label, ``execute``, ...) is left out."""
    try:
        name = tool.name
        description = tool.description
        parameters = tool.parameters
    except AttributeError as exc:
        raise TypeError(
            f"expected a tool with 'name', 'description' and 'parameters' attributes "
            f"(a Tool or an AgentTool), got {tool!r}"
        ) from exc
    if not isinstance(name, str):
        raise TypeError(f"a tool name must be a str, got {name!r} on {tool!r}")
    if not isinstance(description, str):
        raise TypeError(f"the description of tool {name!r} must be a str, got {description!r}")
    if not isinstance(parameters, Mapping):
        raise TypeError(
            f"the parameters of tool {name!r} must be a JSON schema object (a dict), "
            f"got {parameters!r}"
        )
    constrained = getattr(tool, "constrained_sampling", None)
    return Tool(
        name=name,
        description=description,
        parameters=_json_clone(dict(parameters), what=f"the parameters of tool {name!r}"),
        constrained_sampling=(
            None
            if constrained is None
            else _json_clone(constrained, what=f"the constrained_sampling of tool {name!r}")
        ),
    )


def declaration_key(tool: ToolLike | Tool) -> bytes:
    declaration = tool if isinstance(tool, Tool) else to_tool_declaration(tool)
    try:
        return msgspec.json.encode(declaration)
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(
            f"the declaration of tool {declaration.name!r} must be JSON-serialisable: {exc}"
        ) from exc


def declarations_equal(a: ToolLike | Tool, b: ToolLike | Tool) -> bool:
    """Whether two tools declare the same thing: their compact JSON, keys in insertion
    order, is identical (``{"a":1,"b":2}`` and ``{"b":2,"a":1}`` differ)."""
    return declaration_key(a) == declaration_key(b)


# --------------------------------------------------------------------------- replay


def system_messages(messages: Iterable[object]) -> Iterable[SystemMessage]:
    return (message for message in messages if isinstance(message, SystemMessage))


def _content_text(message: SystemMessage) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content)


def _join(parts: Iterable[str | None]) -> str:
    return "\n\n".join(part for part in parts if part)


def create_initial_system_message(
    system_prompt: str | None = None, tools: Sequence[ToolLike | Tool] | None = None
) -> SystemMessage | None:
    """The leading system message for a prompt and a tool set (``timestamp`` 0), or ``None``
    when the prompt is empty and there are no tools. Non-:class:`Tool` objects are turned
    into declarations."""
    if not system_prompt and not tools:
        return None
    declared = [
        tool if isinstance(tool, Tool) else to_tool_declaration(tool) for tool in tools or ()
    ]
    return SystemMessage(content=system_prompt or "", tools_added=declared or None, timestamp=0)


def normalize_context(context: Context) -> Context:
    """The transcript-only form of ``context`` that providers read: ``system_prompt`` and
    ``tools`` folded into a leading system message, only ``messages`` set."""
    initial = create_initial_system_message(context.system_prompt, context.tools)
    if initial is not None:
        return Context(messages=[initial, *context.messages])
    if context.system_prompt is None and context.tools is None:
        return context
    return Context(messages=context.messages)


def get_current_tools(messages: Iterable[object]) -> list[Tool]:
    """The declared tools after replaying every system message in order. Within one
    message removals apply before additions, so a removed and re-added tool moves to the
    end; an addition under a known name replaces that declaration in place."""
    tools: dict[str, Tool] = {}
    replay_tool_declarations(tools, messages)
    return list(tools.values())


def replay_tool_declarations(tools: dict[str, Tool], messages: Iterable[object]) -> None:
    """Apply the tool declarations of the system messages among ``messages`` to
    ``tools`` (name → declaration), in order; lets a caller replay incrementally."""
    for message in system_messages(messages):
        for ref in message.tools_removed or ():
            tools.pop(ref.name, None)
        for tool in message.tools_added or ():
            tools[tool.name] = tool


def get_current_system_message(messages: Sequence[object]) -> SystemMessage | None:
    """All system messages collapsed into one head: their non-empty texts joined by a blank
    line, the live sections, the currently declared tools and the first one's timestamp.
    ``None`` when the transcript has no system message."""
    texts: list[str] = []
    sections: dict[str, str | None] = {}
    first: SystemMessage | None = None
    for message in system_messages(messages):
        if first is None:
            first = message
        text = _content_text(message)
        if text:
            texts.append(text)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    if first is None:
        return None
    tools = get_current_tools(messages)
    return SystemMessage(
        content="\n\n".join(texts),
        sections=sections or None,
        tools_added=tools or None,
        timestamp=first.timestamp,
    )


def get_system_message_text(message: SystemMessage) -> str:
    """The prompt text of one system message: its content, then the values of its sections
    (deleted ones skipped), empty parts dropped, joined by a blank line."""
    return _join([_content_text(message), *(message.sections or {}).values()])


def get_current_system_prompt(messages: Sequence[object]) -> str:
    """The replayed system prompt of a transcript (``""`` without system messages)."""
    head = get_current_system_message(messages)
    return "" if head is None else get_system_message_text(head)


def split_leading_system_prompt(messages: Sequence[_M]) -> tuple[str, Sequence[_M]]:
    """The prompt of the leading system messages, and the messages after them (where a
    provider renders any later system message as a reminder)."""
    lead = 0
    while lead < len(messages) and isinstance(messages[lead], SystemMessage):
        lead += 1
    return get_current_system_prompt(messages[:lead]), messages[lead:]


def get_tool_state_changes(
    previous: Sequence[ToolLike | Tool], current: Sequence[ToolLike | Tool]
) -> ToolStateChanges:
    """The declarations that turn ``previous`` (declared) into ``current`` (executable).

    ``tools_added``: current tools whose name is new or whose declaration differs, in
    ``current`` order; ``tools_removed``: previous tools whose name is gone or whose
    declaration differs, in ``previous`` order."""
    previous_keys = {tool.name: declaration_key(tool) for tool in previous}
    current_declarations = [
        tool if isinstance(tool, Tool) else to_tool_declaration(tool) for tool in current
    ]
    current_keys = {tool.name: declaration_key(tool) for tool in current_declarations}
    added = [
        tool
        for tool in current_declarations
        if previous_keys.get(tool.name) != current_keys[tool.name]
    ]
    removed = [
        ToolRef(name=tool.name)
        for tool in previous
        if current_keys.get(tool.name) != previous_keys[tool.name]
    ]
    return ToolStateChanges(tools_added=added, tools_removed=removed)


# --------------------------------------------------------------------------- declaring


def _strip_tool_fields(message: SystemMessage) -> SystemMessage:
    if message.tools_added is None and message.tools_removed is None:
        return message
    return msgspec.structs.replace(message, tools_added=None, tools_removed=None)


def declare_tool_changes(
    messages: Sequence[object],
    executable_tools: Sequence[ToolLike | Tool],
    pending: list[Any],
    *,
    declared: dict[str, Tool] | None = None,
) -> list[Any]:
    """Make the transcript declare exactly ``executable_tools`` before the next request.

    ``messages`` is the context so far, ``pending`` the messages about to be appended.
    The last pending system message, if any, carries the difference (its own tool fields
    are overwritten: a host cannot declare tools that cannot run); otherwise a new system
    message with empty content is inserted before the first non-system pending message.
    When nothing differs, ``pending`` itself is returned untouched. ``declared`` (the
    replay of ``messages``, name → declaration) saves replaying the whole transcript."""
    last_system = None
    for index in range(len(pending) - 1, -1, -1):
        if isinstance(pending[index], SystemMessage):
            last_system = index
            break

    baseline = list(pending)
    if last_system is not None:
        baseline[last_system] = _strip_tool_fields(pending[last_system])
    if declared is None:
        current = get_current_tools([*messages, *baseline])
    else:
        replayed = dict(declared)
        replay_tool_declarations(replayed, baseline)
        current = list(replayed.values())
    changes = get_tool_state_changes(current, executable_tools)

    if last_system is not None:
        original: SystemMessage = pending[last_system]
        if not (
            changes.tools_added
            or changes.tools_removed
            or original.tools_added
            or original.tools_removed
        ):
            return pending
        baseline[last_system] = msgspec.structs.replace(
            original,
            tools_added=changes.tools_added or None,
            tools_removed=changes.tools_removed or None,
        )
        return baseline

    if not (changes.tools_added or changes.tools_removed):
        return pending
    declaration = SystemMessage(
        content="",
        tools_added=changes.tools_added or None,
        tools_removed=changes.tools_removed or None,
        timestamp=now_ms(),
    )
    insert_at = next(
        (i for i, message in enumerate(pending) if not isinstance(message, SystemMessage)),
        len(pending),
    )
    baseline.insert(insert_at, declaration)
    return baseline


def get_added_tool_names(message: object) -> list[str]:
    """The names of the tools ``message`` makes available, each once in first-seen order:
    a tool result's ``added_tool_names`` marker, or a system message's ``tools_added``;
    ``[]`` for any other message."""
    if isinstance(message, ToolResultMessage):
        names = message.added_tool_names or []
    elif isinstance(message, SystemMessage):
        names = [tool.name for tool in message.tools_added or []]
    else:
        return []
    return list(dict.fromkeys(names))


# --------------------------------------------------------------------------- provider side


def collapse_system_messages(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """For wire formats with one leading system prompt: the replayed prompt text of all
    system messages and the remaining (non-system) messages in order."""
    rest: list[Message] = [
        message for message in messages if not isinstance(message, SystemMessage)
    ]
    return get_current_system_prompt(messages), rest


def render_system_message_update(message: SystemMessage) -> str:
    """A later system message as prompt text: its content, then one paragraph per section
    (``Updated system prompt section "<name>":`` and the value, or ``Removed system prompt
    section "<name>".``), joined by a blank line."""
    parts = [_content_text(message)]
    for name, value in (message.sections or {}).items():
        if value is None:
            parts.append(f'Removed system prompt section "{name}".')
        else:
            parts.append(f'Updated system prompt section "{name}":\n\n{value}')
    return _join(parts)


def system_reminder_text(text: str) -> str:
    """``text`` wrapped for a user turn that carries operator context (``""`` stays empty)."""
    return f"<system_reminder>\n{text}\n</system_reminder>" if text else ""
