"""Cross-provider handoff: make a transcript safe to replay to another model.

Every adapter runs :func:`transform_messages` before converting to its wire format. It
downgrades images for text-only models, keeps provider-specific replay data (thinking
signatures, text signatures, tool-call thought signatures) only for the model that wrote
it, renames tool-call ids the target cannot accept, drops failed assistant turns and gives
every remaining tool call exactly one result. The input messages are never mutated;
changed messages are copies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import msgspec

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
    now_ms,
)

__all__ = ["ToolCallIdNormalizer", "transform_messages"]

ToolCallIdNormalizer = Callable[[str, Model, AssistantMessage], str]
"""``normalize(tool_call_id, target_model, source_message) -> new id``."""

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"

_replace = msgspec.structs.replace


# --------------------------------------------------------------------------- pass 0


def _without_images(blocks: Sequence[Any], placeholder: str) -> list[Any] | None:
    """``blocks`` with every run of consecutive images replaced by one placeholder text,
    or ``None`` when there is no image."""
    if not any(isinstance(block, ImageContent) for block in blocks):
        return None
    result: list[Any] = []
    previous_was_image = False
    for block in blocks:
        if isinstance(block, ImageContent):
            if not previous_was_image:
                result.append(TextContent(text=placeholder))
            previous_was_image = True
        else:
            result.append(block)
            previous_was_image = False
    return result


def _prepare(message: Any, supports_images: bool) -> Any:
    known = (UserMessage, AssistantMessage, ToolResultMessage, SystemMessage)
    if not isinstance(message, known):
        return message
    if message.content is None:
        message = _replace(message, content=[])
    if supports_images:
        return message
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        blocks = _without_images(message.content, USER_IMAGE_PLACEHOLDER)
    elif isinstance(message, ToolResultMessage):
        blocks = _without_images(message.content, TOOL_IMAGE_PLACEHOLDER)
    else:
        return message
    return message if blocks is None else _replace(message, content=blocks)


# --------------------------------------------------------------------------- pass 1


def _is_same_model(message: AssistantMessage, model: Model) -> bool:
    return (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )


def _transform_assistant(
    message: AssistantMessage,
    model: Model,
    normalize_tool_call_id: ToolCallIdNormalizer | None,
    renamed: dict[str, str],
) -> AssistantMessage:
    same_model = _is_same_model(message, model)
    content: list[TextContent | ThinkingContent | ToolCall] = []
    changed = False
    for block in message.content:
        new_block = _transform_block(
            block, message, model, same_model, normalize_tool_call_id, renamed
        )
        if new_block is not block:
            changed = True
        if new_block is not None:
            content.append(new_block)
    return _replace(message, content=content) if changed else message


def _transform_block(
    block: Any,
    message: AssistantMessage,
    model: Model,
    same_model: bool,
    normalize_tool_call_id: ToolCallIdNormalizer | None,
    renamed: dict[str, str],
) -> Any:
    """The replayable form of one assistant block, ``None`` to drop it."""
    if isinstance(block, ThinkingContent):
        # Another model's thinking is dropped (pi 1.6): its signature is only valid for
        # the model that wrote it, and as plain text it reads as part of the visible reply.
        if not same_model:
            return None
        if block.redacted or block.thinking_signature:
            return block
        return block if block.thinking.strip() else None
    if isinstance(block, TextContent):
        if same_model or block.text_signature is None:
            return block
        return TextContent(text=block.text)
    if isinstance(block, ToolCall) and not same_model:
        new_block = block
        if block.thought_signature is not None:
            new_block = _replace(new_block, thought_signature=None)
        if normalize_tool_call_id is not None:
            new_id = normalize_tool_call_id(block.id, model, message)
            if not isinstance(new_id, str):
                raise TypeError(
                    f"normalize_tool_call_id must return a str, got {new_id!r} "
                    f"for tool call id {block.id!r}"
                )
            if new_id != block.id:
                renamed[block.id] = new_id
                new_block = _replace(new_block, id=new_id)
        return new_block
    return block


# --------------------------------------------------------------------------- pass 2


def _missing_results(pending: list[ToolCall], seen: set[str]) -> Iterable[ToolResultMessage]:
    for call in pending:
        if call.id not in seen:
            yield ToolResultMessage(
                tool_call_id=call.id,
                tool_name=call.name,
                content=[TextContent(text=NO_RESULT_TEXT)],
                is_error=True,
                timestamp=now_ms(),
            )


def _pair_tool_results(messages: list[Any]) -> list[Any]:
    result: list[Any] = []
    pending: list[ToolCall] = []
    seen: set[str] = set()

    def flush() -> None:
        nonlocal pending, seen
        result.extend(_missing_results(pending, seen))
        pending, seen = [], set()

    for message in messages:
        if isinstance(message, AssistantMessage):
            flush()
            if message.stop_reason in ("error", "aborted"):
                continue
            calls = [block for block in message.content if isinstance(block, ToolCall)]
            if calls:
                pending = calls
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            seen.add(message.tool_call_id)
            result.append(message)
        elif isinstance(message, UserMessage | SystemMessage):
            flush()
            result.append(message)
        else:
            result.append(message)
    flush()
    return result


# --------------------------------------------------------------------------- entry point


def transform_messages(
    messages: Sequence[Message],
    model: Model,
    normalize_tool_call_id: ToolCallIdNormalizer | None = None,
) -> list[Message]:
    """``messages`` made replayable to ``model``.

    - Models without ``"image"`` input see a text placeholder for each run of images in
      user messages and tool results.
    - Assistant messages from another model (provider, api or id differ) lose their
      thinking (as pi 1.6 does), text signatures and tool-call thought signatures. Their
      tool-call ids go through
      ``normalize_tool_call_id(id, model, source_message)`` and the matching tool results
      follow the new ids.
    - Assistant messages that ended in ``error`` or ``aborted`` are dropped.
    - A tool call left without a result before the next assistant, user or system message,
      or at the end, gets an error result ``No result provided``.
    """
    supports_images = "image" in model.input
    renamed: dict[str, str] = {}
    transformed: list[Any] = []
    for original in messages:
        message = _prepare(original, supports_images)
        if isinstance(message, AssistantMessage):
            message = _transform_assistant(message, model, normalize_tool_call_id, renamed)
        elif isinstance(message, ToolResultMessage) and message.tool_call_id in renamed:
            message = _replace(message, tool_call_id=renamed[message.tool_call_id])
        transformed.append(message)
    return _pair_tool_results(transformed)
