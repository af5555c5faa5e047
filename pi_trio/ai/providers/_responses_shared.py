"""Transcript → OpenAI Responses input items and tools (sans-IO; the original's
``convertResponsesMessages`` and ``convertResponsesTools``, ``src/api/openai-responses-shared.ts``).

Shared by ``openai-responses``, ``azure-openai-responses`` and ``openai-codex-responses``.
Replay data written by this api is kept exact: a thinking block's signature is the whole
reasoning item as JSON, a text block's signature is ``{"v":1,"id":<message item
id>,"phase"?}`` (legacy: the bare id), and tool-call ids are composite
``"<call_id>|<item id>"``.

How tools reach the model (``responses_tool_support``): models whose compat has both
``supportsMidConvoSystemMessages`` and ``supportsAdditionalTools`` get every tool
declaration as an ``additional_tools`` input item where the transcript's system message
declares it, with removals announced as text (``"changes"``, as the Codex client does);
every other model gets the current tool set as the request's ``tools`` (``"none"``).
Models with ``supportsMidConvoEffort`` can carry the thinking level of each turn as
``configuration_update`` items (``configuration_update_effort``). Grammar (custom) tools
and the tool-search form of additions are not sent: such tools go as JSON-schema
function tools.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final

import msgspec

from .._json._depth import decode_json
from .._sanitize import sanitize_surrogates
from .._transcript._system import get_system_message_text, render_system_message_update
from .._transcript._transform import ToolCallIdNormalizer, transform_messages
from .._types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._common import cache_retention, replace_unsafe_id_chars, short_hash
from ._responses_tools import (
    ToolChanges,
    ToolSupport,
    convert_responses_tools,
    request_tools,
    responses_text_format,
    responses_tool_support,
)

__all__ = [
    "NO_TOOL_OUTPUT",
    "NORMALIZED_PROVIDERS",
    "ToolSupport",
    "cache_retention",
    "convert_responses_input",
    "convert_responses_tools",
    "encode_text_signature",
    "normalize_responses_tool_call_id",
    "parse_text_signature",
    "request_tools",
    "responses_text_format",
    "responses_tool_support",
    "short_hash",
]

NO_TOOL_OUTPUT: Final = "(no tool output)"
MAX_ID_LENGTH: Final = 64
# Target providers whose tool-call ids are rewritten into the composite call|item form.
NORMALIZED_PROVIDERS: Final = frozenset({"openai", "openai-codex", "opencode"})
_PHASES: Final = frozenset({"commentary", "final_answer"})

# --------------------------------------------------------------------------- ids


def _id_part(value: str) -> str:
    return replace_unsafe_id_chars(value)[:MAX_ID_LENGTH].rstrip("_")


def normalize_responses_tool_call_id(
    tool_call_id: str, model: Model, source: AssistantMessage
) -> str:
    """A tool-call id from another model made acceptable to the Responses api.

    ``call|item`` ids: both halves sanitized to ``[a-zA-Z0-9_-]`` and cut to 64 without
    trailing ``_``; an item id written by another provider or api becomes
    ``fc_<hash>``, and one that does not start with ``fc_`` gets that prefix. Other ids
    are sanitized and cut the same way."""
    if "|" not in tool_call_id:
        return _id_part(tool_call_id)
    call_id, item_id = tool_call_id.split("|")[:2]
    if source.provider != model.provider or source.api != model.api:
        item_id = f"fc_{short_hash(item_id)}"[:MAX_ID_LENGTH]
    else:
        item_id = _id_part(item_id)
    if not item_id.startswith("fc_"):
        item_id = _id_part(f"fc_{item_id}")
    return f"{_id_part(call_id)}|{item_id}"


def _sanitize_only(tool_call_id: str, model: Model, source: AssistantMessage) -> str:
    return _id_part(tool_call_id)


def _id_normalizer(model: Model, providers: Collection[str]) -> ToolCallIdNormalizer:
    return normalize_responses_tool_call_id if model.provider in providers else _sanitize_only


# --------------------------------------------------------------------------- signatures


def encode_text_signature(item_id: str, phase: str | None = None) -> str:
    """``{"v":1,"id":…,"phase"?:…}`` as compact JSON."""
    signature: dict[str, Any] = {"v": 1, "id": item_id}
    if phase in _PHASES:
        signature["phase"] = phase
    return msgspec.json.encode(signature).decode()


def parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    """``(item id, phase)`` of a text signature: v1 JSON, else the signature itself as a
    legacy bare id."""
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            value = decode_json(signature)
        except msgspec.DecodeError:
            value = None
        if isinstance(value, dict) and value.get("v") == 1 and isinstance(value.get("id"), str):
            phase = value.get("phase")
            return value["id"], phase if phase in _PHASES else None
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
    same_api = message.provider == model.provider and message.api == model.api
    same_model = same_api and message.model == model.id
    unnamed_texts = 0
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking_signature:
                try:
                    item = decode_json(block.thinking_signature)
                except msgspec.DecodeError:
                    continue
                if isinstance(item, dict):
                    items.append(item)
        elif isinstance(block, TextContent):
            parsed = parse_text_signature(block.text_signature)
            phase = None
            if parsed is None:
                item_id = (
                    f"msg_pi_{index}" if unnamed_texts == 0 else f"msg_pi_{index}_{unnamed_texts}"
                )
            else:
                item_id, phase = parsed
                if len(item_id) > MAX_ID_LENGTH:
                    item_id = f"msg_{short_hash(item_id)}"
            unnamed_texts += 1
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
            # another model's item ids would trip reasoning-pairing validation
            if fc_id.startswith("fc_") and not (same_api and not same_model):
                call["id"] = fc_id.partition("|")[0]
            call["call_id"] = call_id
            call["name"] = block.name
            call["arguments"] = msgspec.json.encode(block.arguments).decode()
            if same_model and block.namespace is not None:
                call["namespace"] = block.namespace
            items.append(call)
    return items


def _tool_output_item(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    images = [b for b in message.content if isinstance(b, ImageContent)]
    has_text = bool(text.strip())
    output: str | list[dict[str, Any]]
    if images and "image" in model.input:
        output = []
        if has_text:
            output.append({"type": "input_text", "text": sanitize_surrogates(text)})
        output.extend(
            {"type": "input_image", "detail": "auto", "image_url": _image_url(b)} for b in images
        )
    elif has_text:
        output = sanitize_surrogates(text)
    else:
        output = "(see attached image)" if images else NO_TOOL_OUTPUT
    return {
        "type": "function_call_output",
        "call_id": message.tool_call_id.split("|")[0],
        "output": output,
    }


def convert_responses_input(
    messages: Sequence[Message],
    model: Model,
    *,
    tool_support: ToolSupport = "none",
    tool_options: dict[str, Any] | None = None,
    configuration_update_effort: str | None = None,
    id_providers: Collection[str] = NORMALIZED_PROVIDERS,
) -> list[dict[str, Any]]:
    """The ``input`` items of a resolved transcript.

    The first message, when it is a system message, becomes the instruction message
    (``developer`` for reasoning models unless ``compat.supportsDeveloperRole`` is false,
    else ``system``); later system messages become instruction messages where they
    stand. ``tool_options`` go to ``convert_responses_tools`` for ``additional_tools``
    items. With ``configuration_update_effort`` each earlier turn of this model is
    preceded by a ``configuration_update`` holding its thinking level, and the input
    ends with one holding this request's. Tool-call ids are rewritten for the providers
    in ``id_providers`` (``normalize_responses_tool_call_id``), sanitized for others."""
    role = _system_role(model)
    changes = ToolChanges(role, tool_options or {}) if tool_support == "changes" else None
    items: list[dict[str, Any]] = []
    transformed = transform_messages(messages, model, _id_normalizer(model, id_providers))
    index = 0
    for position, message in enumerate(transformed):
        leading = position == 0 and isinstance(message, SystemMessage)
        if isinstance(message, SystemMessage):
            if changes is not None:
                changes.additions(message, items)
            parts = [
                get_system_message_text(message)
                if leading
                else render_system_message_update(message),
                changes.removals(message) if changes is not None else "",
            ]
            text = "\n\n".join(part for part in parts if part)
            if text:
                items.append({"role": role, "content": sanitize_surrogates(text)})
        elif isinstance(message, UserMessage):
            user = _user_item(message)
            if user is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            produced = _assistant_items(message, index, model)
            if produced:
                if (
                    configuration_update_effort is not None
                    and message.provider == model.provider
                    and message.api == model.api
                    and message.model == model.id
                    and message.provider_thinking_level is not None
                ):
                    items.append(_configuration_update(message.provider_thinking_level))
                items.extend(produced)
        elif isinstance(message, ToolResultMessage):
            items.append(_tool_output_item(message, model))
        if not leading:
            index += 1
    if configuration_update_effort is not None:
        items.append(_configuration_update(configuration_update_effort))
    return items


def _configuration_update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}
