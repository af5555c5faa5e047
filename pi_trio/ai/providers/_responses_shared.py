"""Transcript → OpenAI Responses input items and tools (sans-IO, reference/ai.md §7.4).

Shared by ``openai-responses`` and ``azure-openai-responses``. Replay data written by this
api is kept exact: a thinking block's signature is the whole reasoning item as JSON, a text
block's signature is ``{"v":1,"id":<message item id>,"phase"?}`` (legacy: the bare id),
and tool-call ids are composite ``"<call_id>|<item id>"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._sanitize import sanitize_surrogates
from .._transcript import (
    render_system_message_update,
    split_leading_system_prompt,
)
from .._transform import ToolCallIdNormalizer, transform_messages
from .._types import (
    AssistantMessage,
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
from ._common import cache_retention, replace_unsafe_id_chars, short_hash

__all__ = [
    "NO_TOOL_OUTPUT",
    "cache_retention",
    "convert_responses_input",
    "convert_responses_tools",
    "encode_text_signature",
    "normalize_responses_tool_call_id",
    "parse_text_signature",
    "short_hash",
]

NO_TOOL_OUTPUT: Final = "(no tool output)"
MAX_ID_LENGTH: Final = 64
# Target providers whose tool-call ids are rewritten into the composite call|item form.
NORMALIZED_PROVIDERS: Final = frozenset({"openai", "openai-codex", "opencode"})
_PHASES: Final = frozenset({"commentary", "final_answer"})


# --------------------------------------------------------------------------- ids


def _sanitize_id(value: str) -> str:
    return replace_unsafe_id_chars(value)


def normalize_responses_tool_call_id(
    tool_call_id: str, model: Model, source: AssistantMessage
) -> str:
    """A tool-call id from another model made acceptable to the Responses api.

    ``call|item`` ids: both halves sanitized to ``[a-zA-Z0-9_-]``, the item id prefixed
    ``fc_`` unless it starts with ``fc`` (an item id written by another provider or api is
    replaced by ``fc_<hash>``), each half cut to 64 without trailing ``_``. Other ids are
    sanitized and cut to 64."""
    if "|" not in tool_call_id:
        return _sanitize_id(tool_call_id)[:MAX_ID_LENGTH]
    call_id, item_id = tool_call_id.split("|", 1)
    call_id = _sanitize_id(call_id)
    if source.provider != model.provider or source.api != model.api:
        item_id = f"fc_{short_hash(item_id)}"
    else:
        item_id = _sanitize_id(item_id)
        if not item_id.startswith("fc"):
            item_id = f"fc_{item_id}"
    call_id = call_id[:MAX_ID_LENGTH].rstrip("_")
    item_id = item_id[:MAX_ID_LENGTH].rstrip("_")
    return f"{call_id}|{item_id}"


def _id_normalizer(model: Model) -> ToolCallIdNormalizer | None:
    return normalize_responses_tool_call_id if model.provider in NORMALIZED_PROVIDERS else None


# --------------------------------------------------------------------------- signatures


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    """``{"v":1,"id":…,"phase"?:…}`` as compact JSON."""
    signature: dict[str, Any] = {"v": 1, "id": item_id}
    if phase in _PHASES:
        signature["phase"] = phase
    return msgspec.json.encode(signature).decode()


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(item id, phase)`` of a text signature (v1 JSON or a legacy bare id)."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            value = msgspec.json.decode(signature)
        except msgspec.DecodeError:
            return None
        if isinstance(value, dict) and value.get("v") == 1 and isinstance(value.get("id"), str):
            phase = value.get("phase")
            return value["id"], phase if phase in _PHASES else None
        return None
    return signature, None


# --------------------------------------------------------------------------- items


def _system_role(model: Model) -> str:
    developer = model.reasoning and (model.compat or {}).get("supportsDeveloperRole") is not False
    return "developer" if developer else "system"


def _image_url(block: ImageContent) -> str:
    return f"data:{block.mime_type};base64,{block.data}"


def _user_item(message: UserMessage) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        parts = [{"type": "input_text", "text": sanitize_surrogates(message.content)}]
    else:
        parts = []
        for block in message.content:
            if isinstance(block, TextContent):
                parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
            elif isinstance(block, ImageContent):
                parts.append(
                    {"type": "input_image", "detail": "auto", "image_url": _image_url(block)}
                )
        if not parts:
            return None
    return {"role": "user", "content": parts}


def _assistant_items(message: AssistantMessage, index: int, model: Model) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    other_model = (
        message.provider == model.provider
        and message.api == model.api
        and message.model != model.id
    )
    unnamed_texts = 0
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking_signature:
                try:
                    item = msgspec.json.decode(block.thinking_signature)
                except msgspec.DecodeError:
                    continue
                if isinstance(item, dict):
                    items.append(item)
        elif isinstance(block, TextContent):
            parsed = parse_text_signature(block.text_signature)
            phase = None
            if parsed is None:
                item_id = (
                    f"msg_pi_{index}" if unnamed_texts == 0 else (f"msg_pi_{index}_{unnamed_texts}")
                )
                unnamed_texts += 1
            else:
                item_id, phase = parsed
                if len(item_id) > MAX_ID_LENGTH:
                    item_id = f"msg_{short_hash(item_id)}"
            text_item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": sanitize_surrogates(block.text),
                        "annotations": [],
                    }
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase is not None:
                text_item["phase"] = phase
            items.append(text_item)
        elif isinstance(block, ToolCall):
            call_id, _, fc_id = block.id.partition("|")
            call: dict[str, Any] = {"type": "function_call"}
            if fc_id and not (other_model and fc_id.startswith("fc_")):
                call["id"] = fc_id
            call["call_id"] = call_id
            call["name"] = block.name
            call["arguments"] = msgspec.json.encode(block.arguments or {}).decode()
            items.append(call)
    return items


def _tool_output_item(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    text = sanitize_surrogates(
        "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    )
    images = [b for b in message.content if isinstance(b, ImageContent)]
    output: str | list[dict[str, Any]]
    if images and "image" in model.input:
        output = []
        if text:
            output.append({"type": "input_text", "text": text})
        output.extend(
            {"type": "input_image", "detail": "auto", "image_url": _image_url(b)} for b in images
        )
    else:
        output = text or NO_TOOL_OUTPUT
    return {
        "type": "function_call_output",
        "call_id": message.tool_call_id.partition("|")[0],
        "output": output,
    }


def convert_responses_input(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """The ``input`` items of a normalized transcript.

    The leading system messages become one instruction message (``developer`` for
    reasoning models unless ``compat.supportsDeveloperRole`` is false, else ``system``);
    later system messages become instruction messages where they stand."""
    prompt, rest = split_leading_system_prompt(messages)
    role = _system_role(model)
    items: list[dict[str, Any]] = []
    if prompt:
        items.append({"role": role, "content": sanitize_surrogates(prompt)})
    for index, message in enumerate(transform_messages(rest, model, _id_normalizer(model))):
        if isinstance(message, UserMessage):
            user = _user_item(message)
            if user is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, index, model))
        elif isinstance(message, ToolResultMessage):
            items.append(_tool_output_item(message, model))
        elif isinstance(message, SystemMessage):
            text = render_system_message_update(message)
            if text:
                items.append({"role": role, "content": sanitize_surrogates(text)})
    return items


def convert_responses_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,
        }
        for tool in tools
    ]
