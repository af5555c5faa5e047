"""JSON in the original runtime's format: ``to_json`` / ``from_json`` and list helpers.

Decoding is strict: an unknown field, an unknown content ``type`` or message ``role``, or a
wrong type raises ``msgspec.ValidationError`` naming the path (``$.content[0].type``).
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

import msgspec

from ._builder import _LIVE
from ._types import AssistantMessage, Message

__all__ = ["from_json", "messages_from_json", "messages_to_json", "to_json"]

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
_message_list_decoder = msgspec.json.Decoder(list[Message])
_message_decoder = msgspec.json.Decoder(Message)


def _sync_open_blocks(value: Any) -> None:
    """Open streaming blocks join their parts when read; read them before encoding."""
    if isinstance(value, AssistantMessage):
        for block in value.content:
            if isinstance(block, _LIVE):
                block.text if block.type == "text" else (  # noqa: B018
                    block.thinking if block.type == "thinking" else block.arguments
                )
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _sync_open_blocks(item)
        return
    for name in ("partial", "message", "error", "messages", "assistant_message_event"):
        inner = getattr(value, name, None)
        if inner is not None and not isinstance(inner, str):
            _sync_open_blocks(inner)


def to_json(value: Any) -> bytes:
    """Encode a message, block, event, model or a list of them to compact JSON bytes."""
    _sync_open_blocks(value)
    return _encoder.encode(value)


@overload
def from_json(data: bytes | str) -> Message: ...


@overload
def from_json(data: bytes | str, type: type[T]) -> T: ...


def from_json(data: bytes | str, type: Any = None) -> Any:
    """Decode JSON into ``type`` (default: any message)."""
    if type is None:
        return _message_decoder.decode(data)
    return msgspec.json.decode(data, type=type)


def messages_to_json(messages: list[Any]) -> bytes:
    """Encode a transcript (a JSON array of messages)."""
    return to_json(messages)


def messages_from_json(data: bytes | str) -> list[Message]:
    """Decode a transcript written by pi_trio or the TypeScript runtime."""
    return _message_list_decoder.decode(data)
