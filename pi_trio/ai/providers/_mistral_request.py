"""Transcript → the request body of the ``mistral-conversations`` api (sans-IO).

Mistral's chat completions take OpenAI-like messages with its own rules: tool-call ids are
exactly nine letters or digits (``MistralToolCallIds`` maps every other id to one, stably
and without collisions), thinking is replayed as ``{"type": "thinking", "thinking": [text
parts]}`` content, an assistant message carries ``prefix: false``, and a tool result
names its tool. The transcript is collapsed to one leading system message unless the
model's compat has ``supportsMidConvoSystemMessages``. Tools are sent with ``strict``
only when a tool asks for JSON-schema constrained sampling and the model's compat has
``supportsStrictMode`` (off by default: strict tool calls can keep Mistral Large silent
for minutes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._sanitize import sanitize_surrogates
from .._stream._options import StreamOptions
from .._transcript._history import resolve_transcript
from .._transcript._system import (
    get_current_tools,
    get_system_message_text,
    render_system_message_update,
)
from .._transcript._transform import transform_messages
from .._types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._common import short_hash
from ._constrained import strict_tool_schema
from ._output import fit_output_schema, openai_strict_unsupported

__all__ = [
    "MISTRAL_TOOL_CALL_ID_LENGTH",
    "MistralToolCallIds",
    "build_mistral_body",
    "derive_mistral_tool_call_id",
    "mistral_tools",
]

MISTRAL_TOOL_CALL_ID_LENGTH: Final = 9
IMAGE_OMITTED: Final = "(image omitted: model does not support images)"
_NOT_ALNUM: Final = re.compile(r"[^a-zA-Z0-9]")


# --------------------------------------------------------------------------- tool-call ids


def derive_mistral_tool_call_id(tool_call_id: str, attempt: int) -> str:
    """A nine-character id for ``tool_call_id``: the id itself when it has exactly nine
    letters and digits once the rest is stripped (first attempt only), else the start of
    the original runtime's short hash of it (salted with the attempt number after a
    collision)."""
    normalized = _NOT_ALNUM.sub("", tool_call_id)
    if attempt == 0 and len(normalized) == MISTRAL_TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or tool_call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return _NOT_ALNUM.sub("", short_hash(seed))[:MISTRAL_TOOL_CALL_ID_LENGTH]


class MistralToolCallIds:
    """Maps the tool-call ids of one request to Mistral's form: the same id always gets
    the same result, and two different ids never share one."""

    __slots__ = ("_forward", "_owners")

    def __init__(self) -> None:
        self._forward: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def __call__(self, tool_call_id: str, *_: Any) -> str:
        known = self._forward.get(tool_call_id)
        if known is not None:
            return known
        attempt = 0
        while True:
            candidate = derive_mistral_tool_call_id(tool_call_id, attempt)
            owner = self._owners.get(candidate)
            if owner is None or owner == tool_call_id:
                self._forward[tool_call_id] = candidate
                self._owners[candidate] = tool_call_id
                return candidate
            attempt += 1


# --------------------------------------------------------------------------- messages


def _image_url(block: ImageContent) -> str:
    return f"data:{block.mime_type};base64,{block.data}"


def _user_message(message: UserMessage, images: bool) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    had_images = False
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            had_images = True
            if images:
                parts.append({"type": "image_url", "image_url": _image_url(block)})
    if parts:
        return {"role": "user", "content": parts}
    if had_images and not images:
        return {"role": "user", "content": IMAGE_OMITTED}
    return None


def _assistant_message(message: AssistantMessage) -> dict[str, Any] | None:
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                thinking = [{"type": "text", "text": sanitize_surrogates(block.thinking)}]
                parts.append({"type": "thinking", "thinking": thinking})
        elif isinstance(block, ToolCall):
            arguments = msgspec.json.encode(block.arguments or {}).decode()
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {"name": block.name, "arguments": arguments},
                    "index": 0,
                }
            )
    if not parts and not calls:
        return None
    out: dict[str, Any] = {"role": "assistant", "prefix": False}
    if parts:
        out["content"] = parts
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_result_text(text: str, has_images: bool, images: bool, is_error: bool) -> str:
    trimmed = text.strip()
    prefix = "[tool error] " if is_error else ""
    if trimmed:
        omitted = (
            "\n[tool image omitted: model does not support images]"
            if has_images and not images
            else ""
        )
        return f"{prefix}{trimmed}{omitted}"
    if has_images:
        return f"{prefix}{'(see attached image)' if images else IMAGE_OMITTED}"
    return f"{prefix}(no tool output)"


def _tool_message(message: ToolResultMessage, images: bool) -> dict[str, Any]:
    text = "\n".join(
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)
    )
    pictures = [b for b in message.content if isinstance(b, ImageContent)]
    content: list[dict[str, Any]] = [
        {"type": "text", "text": _tool_result_text(text, bool(pictures), images, message.is_error)}
    ]
    if images:
        content.extend({"type": "image_url", "image_url": _image_url(b)} for b in pictures)
    return {
        "role": "tool",
        "name": message.tool_name,
        "content": content,
        "tool_call_id": message.tool_call_id,
    }


def convert_mistral_messages(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """The ``messages`` of the request for a resolved transcript (tool-call ids mapped,
    failed turns dropped, every call answered: ``transform_messages``)."""
    images = "image" in model.input
    out: list[dict[str, Any]] = []
    for index, message in enumerate(transform_messages(messages, model, MistralToolCallIds())):
        if isinstance(message, SystemMessage):
            text = (
                get_system_message_text(message)
                if index == 0
                else render_system_message_update(message)
            )
            if text:
                out.append({"role": "system", "content": sanitize_surrogates(text)})
        elif isinstance(message, UserMessage):
            user = _user_message(message, images)
            if user is not None:
                out.append(user)
        elif isinstance(message, AssistantMessage):
            assistant = _assistant_message(message)
            if assistant is not None:
                out.append(assistant)
        elif isinstance(message, ToolResultMessage):
            out.append(_tool_message(message, images))
    return out


# --------------------------------------------------------------------------- tools, body


def _tool_parameters(tool: Tool, strict_mode: bool) -> tuple[Any, bool]:
    """``(parameters, strict)`` of ``tool``: the strict subset for a tool that asks for
    JSON-schema constrained sampling when the model takes strict tools and the schema
    fits (``_constrained``); a tool that requires it and cannot have it is an error."""
    strict = strict_tool_schema(tool, strict_mode)
    return (tool.parameters, False) if strict is None else (strict, True)


def mistral_tools(tools: Sequence[Tool], strict_mode: bool) -> list[dict[str, Any]]:
    """Function tools, each with ``strict`` (see ``_tool_parameters``)."""
    out = []
    for tool in tools:
        parameters, strict = _tool_parameters(tool, strict_mode)
        function = {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
            "strict": strict,
        }
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "any", "required"):
        return choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        return {"type": "function", "function": {"name": name}}
    return None


def prompt_caching(options: StreamOptions) -> bool:
    """Whether the session id is sent as the prompt-cache key (and affinity header)."""
    return options.cache_retention != "none" and bool(options.session_id)


def build_mistral_body(
    model: Model,
    context: Context,
    options: StreamOptions,
    *,
    prompt_mode: str | None = None,
    reasoning_effort: str | None = None,
) -> dict[str, Any]:
    """The request body for ``context`` (already normalized: messages only). Native
    options (``prompt_mode``, ``reasoning_effort``) are what the simple entry point
    derives from the unified level; ``options.tool_choice`` and ``output_format`` map to
    ``tool_choice`` and ``response_format``."""
    compat = model.compat or {}
    resolved = resolve_transcript(context, compat.get("supportsMidConvoSystemMessages") is True)
    body: dict[str, Any] = {
        "model": model.id,
        "stream": True,
        "messages": convert_mistral_messages(resolved.messages, model),
    }
    tools = get_current_tools(context.messages)
    if tools:
        body["tools"] = mistral_tools(tools, compat.get("supportsStrictMode") is True)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    output = options.output_format
    if output is not None:
        schema, strict = fit_output_schema(
            output,
            strict_mode=compat.get("supportsStrictMode") is not False,
            unsupported=openai_strict_unsupported,
        )
        spec: dict[str, Any] = {"name": output.name, "schema": schema, "strict": strict}
        if output.description:
            spec["description"] = output.description
        body["response_format"] = {"type": "json_schema", "json_schema": spec}
    choice = _tool_choice(options.tool_choice) if options.tool_choice else None
    if choice is not None:
        body["tool_choice"] = choice
    if reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    if prompt_mode:
        body["prompt_mode"] = prompt_mode
    if prompt_caching(options):
        body["prompt_cache_key"] = options.session_id
    return body
