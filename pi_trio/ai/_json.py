"""JSON in the original runtime's format: ``to_json`` / ``from_json`` and list helpers.

Decoding is strict: an unknown field, an unknown content ``type`` or message ``role``, or a
wrong type raises ``msgspec.ValidationError`` naming the path (``$.content[0].type``).
Malformed JSON, and JSON nesting arrays and objects deeper than ``MAX_JSON_DEPTH`` (256)
levels, raise ``msgspec.DecodeError``.

Unpaired UTF-16 surrogates: the TypeScript runtime writes a lone surrogate in a string as
an escape (``"\\ud83d"``); decoding turns each such escape into U+FFFD, as a UTF-16
decoder does, and keeps paired escapes as the character they encode. Encoding a ``str``
that holds a lone surrogate code point raises ``msgspec.EncodeError`` naming its path
(UTF-8 has no form for it): clean such text with ``sanitize_surrogates`` first.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar, overload

import msgspec

from ._builder import _LIVE
from ._json_depth import decode_checked
from ._types import AssistantMessage, Message

__all__ = ["from_json", "messages_from_json", "messages_to_json", "to_json"]

T = TypeVar("T")

_encoder = msgspec.json.Encoder()
_message_list_decoder = msgspec.json.Decoder(list[Message])
_message_decoder = msgspec.json.Decoder(Message)

# An escaped backslash (skipped, so ``\\ud83d`` is not read as an escape), a paired
# surrogate escape (kept), or a lone one (group 1: replaced).
_SURROGATE_ESCAPE: Final = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


_OPEN_FIELD: Final = {"text": "text", "thinking": "thinking", "toolCall": "arguments"}


def _sync_open_blocks(value: Any) -> None:
    """Open streaming blocks join their parts when read; read them before encoding."""
    if isinstance(value, AssistantMessage):
        for block in value.content:
            if isinstance(block, _LIVE):
                # reading the open field joins its parts into the field itself
                getattr(block, _OPEN_FIELD[block.type])
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
    try:
        return _encoder.encode(value)
    except UnicodeEncodeError as exc:
        raise _surrogate_encode_error(value, exc) from exc


@overload
def from_json(data: bytes | str) -> Message: ...


@overload
def from_json(data: bytes | str, type: type[T]) -> T: ...


def from_json(data: bytes | str, type: Any = None) -> Any:
    """Decode JSON into ``type`` (default: any message)."""
    if type is None:
        return _decode(_message_decoder.decode, data)
    return _decode(lambda raw: msgspec.json.decode(raw, type=type), data)


def messages_to_json(messages: list[Any]) -> bytes:
    """Encode a transcript (a JSON array of messages)."""
    return to_json(messages)


def messages_from_json(data: bytes | str) -> list[Message]:
    """Decode a transcript written by pi_trio or the TypeScript runtime."""
    return _decode(_message_list_decoder.decode, data)  # type: ignore[no-any-return]


def _decode(decode: Any, data: bytes | str) -> Any:
    try:
        return decode_checked(decode, data)
    except msgspec.DecodeError:
        raw = data.encode() if isinstance(data, str) else data
        repaired = _SURROGATE_ESCAPE.sub(_replace_lone_surrogate, raw)
        if repaired == raw:
            raise
        return decode_checked(decode, repaired)
    except UnicodeEncodeError as exc:
        raise msgspec.DecodeError(
            f"the JSON text holds the unpaired surrogate {exc.object[exc.start]!r} at index "
            f"{exc.start}, which no UTF-8 text can hold; decode bytes, or clean the text "
            "with pi_trio.ai.sanitize_surrogates() first"
        ) from exc


def _replace_lone_surrogate(match: re.Match[bytes]) -> bytes:
    return b"\\ufffd" if match.group(1) else match.group(0)


def _surrogate_encode_error(value: Any, exc: UnicodeEncodeError) -> msgspec.EncodeError:
    path = _surrogate_path(value, "$") or "an unknown path"
    return msgspec.EncodeError(
        f"cannot encode the unpaired surrogate {exc.object[exc.start]!r} in the string at "
        f"{path} ({exc.object[:40]!r}): JSON text is UTF-8, which has no form for a lone "
        "surrogate; clean the text with pi_trio.ai.sanitize_surrogates() before encoding"
    )


def _surrogate_path(value: Any, path: str) -> str | None:
    """The path of the first string (or dict key) in ``value`` holding a surrogate."""
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, msgspec.Struct):
        for field in msgspec.structs.fields(value):
            found = _surrogate_path(getattr(value, field.name), f"{path}.{field.encode_name}")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"{path} (the key {key!r})"
            found = _surrogate_path(item, f"{path}[{key!r}]")
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
