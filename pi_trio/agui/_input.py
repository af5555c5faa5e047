"""AG-UI input into pi (sans-IO): the transcript, the client's tools, the shared state.

AG-UI servers are stateless: every run brings the whole thread (``messages``), the tools
the client executes itself (``tools``), extra context (``context``) and the shared
``state``. ``to_transcript`` turns the messages into pi messages (refusing what pi cannot
hold with an ``InputError`` that names the message), ``client_tool`` makes an ``AgentTool``
for a client tool, and ``apply_patch`` applies the JSON Patch of a state delta.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    Context as AguiContext,
)
from ag_ui.core import (
    DataSource,
    DeveloperMessage,
    ImagePart,
    ReasoningMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import (
    SystemMessage as AguiSystem,
)
from ag_ui.core import (
    Tool as AguiTool,
)

from ..agent import AgentTool, AgentToolResult
from ..ai import (
    AssistantMessage,
    ImageContent,
    MessageDecodeError,
    Model,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    from_json,
)
from ..ai import (
    UserMessage as PiUser,
)
from ..ai.providers import now_ms

__all__ = [
    "CLIENT_TOOL_TEXT",
    "InputError",
    "apply_patch",
    "client_tool",
    "to_transcript",
]

# What the model would read as the result of a call to a client tool if the run went on;
# it does not: the run stops after the turn, and the client answers in the next run.
CLIENT_TOOL_TEXT = "The client runs this tool; its result comes with the next message."


class InputError(ValueError):
    """AG-UI input pi cannot run; the message says which part and why (answered 400)."""


def to_transcript(
    messages: Sequence[Any], context: Sequence[AguiContext] | None, model: Model
) -> list[Any]:
    """The pi messages of an AG-UI thread. Assistant messages are attributed to ``model``
    (AG-UI does not say which model wrote them); ``reasoning`` and ``activity`` messages
    are left out (the client's display, with no signature a model would accept back); the
    ``context`` entries become one system message before them."""
    names: dict[str, str] = {}  # tool call id -> tool name, for the results
    out: list[Any] = []
    if context:
        lines = [f"{entry.description}: {entry.value}" for entry in context]
        out.append(SystemMessage(content="Context from the application:\n" + "\n".join(lines)))
    for position, message in enumerate(messages):
        where = f"messages[{position}] (id {message.id!r})"
        match message:
            case UserMessage():
                out.append(PiUser(content=_user_content(message.content, where)))
            case AguiSystem() | DeveloperMessage():
                out.append(SystemMessage(content=message.content))
            case AguiAssistant():
                out.append(_assistant(message, model, names, where))
            case ToolMessage():
                out.append(
                    ToolResultMessage(
                        tool_call_id=message.tool_call_id,
                        tool_name=names.get(message.tool_call_id, ""),
                        content=_blocks(_user_content(message.content, where)),
                        is_error=message.error is not None,
                    )
                )
            case ReasoningMessage():
                continue
            case _:
                if getattr(message, "role", None) == "activity":
                    continue
                raise InputError(f"{where}: role {message.role!r} has no pi equivalent")
    return out


def _user_content(content: str | list[Any], where: str) -> str | list[TextContent | ImageContent]:
    if isinstance(content, str):
        return content
    blocks: list[TextContent | ImageContent] = []
    for index, part in enumerate(content):
        if isinstance(part, TextPart):
            blocks.append(TextContent(text=part.text))
        elif isinstance(part, ImagePart) and isinstance(part.source, DataSource):
            blocks.append(ImageContent(data=part.source.value, mime_type=part.source.mime_type))
        else:
            kind = getattr(part, "type", type(part).__name__)
            raise InputError(
                f"{where}: content[{index}] is a {kind!r} part; pi takes text parts and "
                "image parts with inline data (source type 'data')"
            )
    return blocks


def _blocks(content: str | list[TextContent | ImageContent]) -> list[TextContent | ImageContent]:
    return [TextContent(text=content)] if isinstance(content, str) else content


def _assistant(
    message: AguiAssistant, model: Model, names: dict[str, str], where: str
) -> AssistantMessage:
    content: list[Any] = []
    if message.content:
        content.append(TextContent(text=message.content))
    for call in message.tool_calls or ():
        try:
            # pi_trio's decoder: it refuses JSON nested deeper than MAX_JSON_DEPTH
            arguments = from_json(call.function.arguments or "{}", Any)
        except MessageDecodeError as exc:
            raise InputError(
                f"{where}: the arguments of tool call {call.id!r} are not JSON ({exc}): "
                f"{call.function.arguments[:80]!r}"
            ) from exc
        if not isinstance(arguments, dict):
            raise InputError(
                f"{where}: the arguments of tool call {call.id!r} must be a JSON object, "
                f"got {call.function.arguments[:80]!r}"
            )
        names[call.id] = call.function.name
        content.append(ToolCall(id=call.id, name=call.function.name, arguments=arguments))
    return AssistantMessage(
        content=content,
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="toolUse" if message.tool_calls else "stop",
        timestamp=now_ms(),
    )


def client_tool(tool: AguiTool) -> AgentTool:
    """An ``AgentTool`` declaring a client tool to the model. Its execution only marks
    the call as the client's (``terminate``); the AG-UI app stops the run after the turn
    and reports the call as pending."""

    def execute(tool_call_id: str, params: Any) -> AgentToolResult:
        return AgentToolResult(content=[TextContent(text=CLIENT_TOOL_TEXT)], terminate=True)

    parameters = tool.parameters if isinstance(tool.parameters, dict) else {"type": "object"}
    return AgentTool(
        name=tool.name, description=tool.description, parameters=parameters, execute=execute
    )


def apply_patch(document: Any, operations: Sequence[dict[str, Any]]) -> Any:
    """``document`` after the JSON Patch (RFC 6902) ``operations`` ``add``, ``remove`` and
    ``replace``; a copy, the original is untouched."""
    result = copy.deepcopy(document)
    for number, operation in enumerate(operations):
        op, path = operation.get("op"), operation.get("path")
        if op not in ("add", "remove", "replace") or not isinstance(path, str):
            raise ValueError(
                f"state patch operation {number} is {operation!r}; this app applies 'add', "
                "'remove' and 'replace' with a JSON Pointer 'path' (send a snapshot for others)"
            )
        if path == "":
            if op == "remove":
                raise ValueError(f"state patch operation {number}: the root cannot be removed")
            result = copy.deepcopy(operation.get("value"))
            continue
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")
        ]
        target = result
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            index = len(target) if last == "-" else int(last)
            if op == "add":
                target.insert(index, copy.deepcopy(operation.get("value")))
            elif op == "remove":
                del target[index]
            else:
                target[index] = copy.deepcopy(operation.get("value"))
        elif op == "remove":
            del target[last]
        else:
            if op == "replace" and last not in target:
                raise ValueError(f"state patch operation {number}: nothing to replace at {path!r}")
            target[last] = copy.deepcopy(operation.get("value"))
    return result
