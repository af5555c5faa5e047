"""Message content in the GenAI conventions' JSON shapes, recorded only on opt-in
(``capture_content=True``): the chat history sent with a request, the model's output, the
system instructions, the tool definitions, and a tool call's arguments and result.

Spans take these as JSON strings (the conventions allow that where structured attribute
values are not supported yet).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ._semconv import finish_reason

__all__ = [
    "input_messages",
    "output_messages",
    "system_instructions",
    "to_json",
    "tool_definitions",
    "tool_result",
]


def _unknown(value: Any) -> str:
    return repr(value)  # tool details may hold any object: record its repr, never fail


_encode = msgspec.json.Encoder(enc_hook=_unknown).encode


def to_json(value: Any) -> str:
    return _encode(value).decode()


def _text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    parts: list[dict[str, Any]] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append({"type": "text", "content": block.text})
        elif kind == "image":
            parts.append(
                {
                    "type": "blob",
                    "modality": "image",
                    "mime_type": block.mime_type,
                    "content": block.data,
                }
            )
        elif kind == "thinking":
            parts.append({"type": "reasoning", "content": block.thinking})
        elif kind == "toolCall":
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
    return parts


def _joined_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if getattr(block, "type", None) == "text")


def _message(message: Any) -> dict[str, Any] | None:
    role = getattr(message, "role", None)
    if role == "user" or role == "assistant":
        return {"role": role, "parts": _text_parts(message.content)}
    if role == "toolResult":
        return {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": message.tool_call_id,
                    "response": _joined_text(message.content),
                }
            ],
        }
    return None  # system messages are the instructions; application messages are not sent


def input_messages(transcript: list[Any]) -> str:
    """The chat history as the agent holds it when the request starts (before
    ``transform_context`` / ``convert_to_llm``)."""
    converted = (_message(m) for m in transcript)
    return to_json([m for m in converted if m is not None])


def output_messages(message: Any) -> str:
    return to_json(
        [
            {
                "role": "assistant",
                "parts": _text_parts(message.content),
                "finish_reason": finish_reason(message.stop_reason),
            }
        ]
    )


def system_instructions(system_prompt: str) -> str | None:
    if not system_prompt:
        return None
    return to_json([{"type": "text", "content": system_prompt}])


def tool_definitions(tools: list[Any]) -> str | None:
    if not tools:
        return None
    return to_json(
        [
            {
                "type": "function",
                "name": getattr(t, "name", None),
                "description": getattr(t, "description", None),
                "parameters": getattr(t, "parameters", None),
            }
            for t in tools
        ]
    )


def tool_result(result: Any) -> str:
    """A tool's result: its content parts, and ``details`` when it has them."""
    value: dict[str, Any] = {"content": _text_parts(result.content or [])}
    if result.details is not None:
        value["details"] = result.details
    return to_json(value)
