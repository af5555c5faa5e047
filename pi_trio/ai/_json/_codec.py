"""JSON in the original runtime's format: ``to_json`` / ``from_json`` and list helpers.

Decoding keeps what pi_trio does not know. A field of an object that pi_trio has no
attribute for (written by a newer line of the original, or by a host) stays with the
decoded struct and is written back unchanged, in its place; `extra_fields` reads such
fields. ``strict=True`` refuses them instead (``msgspec.ValidationError`` naming the field
and its path). An unknown content ``type`` or message ``role`` is always an error, and so
is a wrong type in a known field or a message without ``timestamp``. Such errors are
``MessageValidationError``s naming the path (``$.content[0].type``); malformed JSON, and
JSON nesting arrays and objects deeper than ``MAX_JSON_DEPTH`` (256) levels, raise
``MessageDecodeError`` naming the line and column. Both are ``PiError``s and msgspec
``DecodeError``s; given a ``source`` (a file name) they name it too, and the line: for JSON
Lines the line of the message, for a JSON array the line and column of the wrong field.

Re-encoding gives back the bytes pi_trio or the TypeScript runtime wrote, with these
limits. Known fields are written in pi_trio's order, which is the order of the original's
type declarations; the original's providers add some fields later (``responseId``,
``errorMessage``, ``durationMs``…), so its objects can list them elsewhere. An object that
carried unknown fields keeps its source key order, and ``exact=True`` keeps the key order
of every object (at the price of one extra encode while decoding), so compact JSON as the
original writes it re-encodes byte for byte. Numbers are written as JavaScript writes them
in costs (``0.000003``, not msgspec's ``3e-6``), and with ``exact=True`` (or in an object
that carried unknown fields) also in the free-form values that held such a spelling (tool
arguments, details, schemas), also after a change; otherwise a float there is written in
msgspec's spelling, which differs from JavaScript's only for magnitudes in [1e-6, 1e-5)
and from 1e21 up (same value, other bytes). Whitespace is not kept: the output is compact.

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

from .._errors import MessageDecodeError, MessageValidationError
from .._sanitize import replace_lone_surrogate_escapes
from .._stream._live import LIVE_BLOCKS
from .._types import (
    DECODING,
    AssistantMessage,
    Cost,
    Message,
    MissingTimestampError,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ._depth import decode_checked
from ._jsnum import js_number_text, needs_js_spelling
from ._lossless import (
    apply_layouts,
    decode_keeping_layout,
    extra_fields,
    layouts_alive,
    replace_keeping_layout,
)
from ._where import position_of_path

__all__ = [
    "extra_fields",
    "from_json",
    "messages_from_json",
    "messages_from_jsonl",
    "messages_to_json",
    "messages_to_jsonl",
    "to_json",
]

T = TypeVar("T")

_encoder: Final = msgspec.json.Encoder()
_DECODERS_KEPT: Final = 64
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_UNKNOWN_FIELD: Final = "Object contains unknown field"
_OPEN_FIELD: Final = {"text": "text", "thinking": "thinking", "toolCall": "arguments"}
_INNER: Final = ("partial", "message", "error", "messages", "assistant_message_event")
_COST_FIELDS: Final = ("input", "output", "cache_read", "cache_write", "total")
_LIVE_TYPES: Final = frozenset(LIVE_BLOCKS)
# msgspec's texts: "... - at `$[1].content`" and "JSON is malformed: ... (byte 31)"
_AT_PATH: Final = re.compile(r" - at `(\$[^`]*)`$")
_AT_BYTE: Final = re.compile(r"\(byte (\d+)\)$")
_PLAIN: Final = 0
_ASSISTANT: Final = 1
# exact message types whose encoding needs nothing, or the assistant check; anything else
# (tool results, subclasses, events) takes the general path
_KINDS: Final[dict[type, int]] = {
    UserMessage: _PLAIN,
    SystemMessage: _PLAIN,
    AssistantMessage: _ASSISTANT,
}


def to_json(value: Any) -> bytes:
    """Encode a message, block, event, model or a list of them to compact JSON bytes."""
    value = _encodable(value)
    if layouts_alive():
        value = apply_layouts(value, _encoder.encode)
    try:
        return _encoder.encode(value)
    except UnicodeEncodeError as exc:
        raise _surrogate_encode_error(value, exc) from exc


@overload
def from_json(data: bytes | str, *, strict: bool = ..., exact: bool = ...) -> Message: ...


@overload
def from_json(data: bytes | str, type: type[T], *, strict: bool = ..., exact: bool = ...) -> T: ...


def from_json(
    data: bytes | str, type: Any = None, *, strict: bool = False, exact: bool = False
) -> Any:
    """Decode JSON into ``type`` (default: any message). ``strict`` refuses unknown fields;
    ``exact`` keeps every object's key order (see the module doc)."""
    return _decode(data, Message if type is None else type, strict=strict, exact=exact)


def messages_to_json(messages: list[Any]) -> bytes:
    """Encode a transcript (a JSON array of messages)."""
    return to_json(messages)


def messages_to_jsonl(messages: list[Any]) -> bytes:
    """Encode a transcript as JSON Lines: one message per line, each line ending in
    ``\n`` (what the session store appends, one message at a time)."""
    return b"".join(to_json(m) + b"\n" for m in messages)


def messages_from_json(
    data: bytes | str, *, strict: bool = False, exact: bool = False, source: str | None = None
) -> list[Message]:
    """Decode a transcript (a JSON array) written by pi_trio or the TypeScript runtime
    (any line). ``source`` (e.g. the file name) is named in errors, with the line and
    column of a wrong field."""
    return _decode(  # type: ignore[no-any-return]
        data, list[Message], strict=strict, exact=exact, source=source
    )


def messages_from_jsonl(
    data: bytes | str, *, strict: bool = False, source: str | None = None
) -> list[Message]:
    """Decode JSON Lines, one message per line (blank lines are skipped). An error names
    ``source``, the line and the field."""
    raw = data.encode() if isinstance(data, str) else data
    messages: list[Message] = []
    for number, line in enumerate(raw.split(b"\n"), 1):
        if line.strip():
            messages.append(
                _decode(line, Message, strict=strict, exact=False, source=source, line=number)
            )
    return messages


# --------------------------------------------------------------------------- decoding


def _decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    try:
        return _decoders[type_]
    except KeyError:
        pass
    except TypeError:  # unhashable type expression
        return msgspec.json.Decoder(type_)
    decoder = msgspec.json.Decoder(type_)
    if len(_decoders) >= _DECODERS_KEPT:
        _decoders.pop(next(iter(_decoders)))
    _decoders[type_] = decoder
    return decoder


def _decode(
    data: bytes | str,
    type_: Any,
    *,
    strict: bool,
    exact: bool,
    source: str | None = None,
    line: int | None = None,
) -> Any:
    try:
        return decode_checked(
            lambda checked: _decode_value(checked, type_, strict=strict, exact=exact), data
        )
    except msgspec.ValidationError as exc:
        found = _AT_PATH.search(str(exc))
        path = found.group(1) if found else "$"
        column = None
        if source is not None and line is None:  # a file: say where in it, too
            raw = data.encode() if isinstance(data, str) else data
            line, column = position_of_path(raw, path) or (None, None)
        raise MessageValidationError(
            str(exc), source=source, line=line, column=column, path=path
        ) from exc
    except msgspec.DecodeError as exc:
        raise _malformed(str(exc), data, source, line) from exc


def _malformed(
    reason: str, data: bytes | str, source: str | None, line: int | None
) -> MessageDecodeError:
    found = _AT_BYTE.search(reason)
    if found is None:
        return MessageDecodeError(reason, source=source, line=line)
    raw = data.encode() if isinstance(data, str) else data
    at = int(found.group(1))
    lines_before = raw.count(b"\n", 0, at)
    column = at - (raw.rfind(b"\n", 0, at) + 1) + 1
    return MessageDecodeError(reason, source=source, line=(line or 1) + lines_before, column=column)


def _decode_value(data: bytes | str, type_: Any, *, strict: bool, exact: bool) -> Any:
    decoder = _decoder(type_)
    try:
        value = _strict_decode(decoder, data)
    except msgspec.ValidationError as exc:
        if strict or not str(exc).startswith(_UNKNOWN_FIELD):
            raise
        return _decode_keeping_layout(data, type_, decoder)
    if exact:
        raw = data.encode() if isinstance(data, str) else data
        if to_json(value) != raw:
            return _decode_keeping_layout(data, type_, decoder)
    return value


def _decode_keeping_layout(data: bytes | str, type_: Any, decoder: Any) -> Any:
    # ``bytes`` of a ``msgspec.Raw`` or a ``memoryview``: the layout pass searches bytes
    raw = data.encode() if isinstance(data, str) else bytes(data)

    def decode(stripped: bytes) -> Any:
        return _strict_decode(decoder, stripped)

    try:
        return decode_keeping_layout(raw, type_, decode)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError:  # a lone surrogate escape in a key or tag
        repaired = replace_lone_surrogate_escapes(raw)
        if repaired == raw:
            raise
        return decode_keeping_layout(repaired, type_, decode)


def _strict_decode(decoder: msgspec.json.Decoder[Any], data: bytes | str) -> Any:
    token = DECODING.set(True)
    try:
        try:
            return decoder.decode(data)
        except msgspec.ValidationError:
            raise
        except msgspec.DecodeError:
            raw = data.encode() if isinstance(data, str) else data
            repaired = replace_lone_surrogate_escapes(raw)
            if repaired == raw:
                raise
            return decoder.decode(repaired)
    except MissingTimestampError:
        raise _missing_timestamp(data) from None
    except UnicodeEncodeError as exc:
        raise msgspec.DecodeError(
            f"the JSON text holds the unpaired surrogate {exc.object[exc.start]!r} at index "
            f"{exc.start}, which no UTF-8 text can hold; decode bytes, or clean the text "
            "with pi_trio.ai.json.sanitize_surrogates() first"
        ) from exc
    finally:
        DECODING.reset(token)


_TIMESTAMPED_ROLES: Final = frozenset({"user", "system", "toolResult"})


def _missing_timestamp(data: bytes | str) -> msgspec.ValidationError:
    """The error for a message without ``timestamp``, naming its path like msgspec does."""
    raw = data.encode() if isinstance(data, str) else data
    found = _timestampless(msgspec.json.decode(replace_lone_surrogate_escapes(raw)), "$")
    at = "" if found in (None, "$") else f" - at `{found}`"
    return msgspec.ValidationError(f"Object missing required field `timestamp`{at}")


def _timestampless(value: Any, path: str) -> str | None:
    """The path of the first message (in decoding order) that lacks a timestamp."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _timestampless(item, f"{path}[{index}]")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = _timestampless(item, f"{path}.{key}")
            if found is not None:
                return found
        if value.get("role") in _TIMESTAMPED_ROLES and "timestamp" not in value:
            return path
    return None


# --------------------------------------------------------------------------- encoding


def _encodable(value: Any) -> Any:
    """``value`` ready for the encoder: open streaming blocks join their parts (in place),
    and a cost amount that msgspec would spell differently from JavaScript is written as
    JavaScript writes it (on a copy of the message: ``value`` is not changed). Written for
    speed: a transcript passes here on every encode."""
    kind = type(value)
    if kind is list or kind is tuple:
        copied: list[Any] | None = None
        kinds = _KINDS
        for index, item in enumerate(value):
            known = kinds.get(type(item))
            if known is _PLAIN:
                continue
            new = _assistant(item) if known is _ASSISTANT else _encodable(item)
            if new is not item:
                if copied is None:
                    copied = list(value)
                copied[index] = new
        return value if copied is None else copied
    if isinstance(value, AssistantMessage):
        return _assistant(value)
    if isinstance(value, ToolResultMessage):
        if value.usage is None:
            return value
        result_usage = _encodable_usage(value.usage)
        if result_usage is value.usage:
            return value
        return replace_keeping_layout(value, usage=result_usage)
    if isinstance(value, UserMessage | SystemMessage):
        return value
    if isinstance(value, Usage):
        return _encodable_usage(value)
    if isinstance(value, Cost):
        return _encodable_cost(value)
    if isinstance(value, msgspec.Struct):
        changes = {}
        for name in _INNER:
            inner = getattr(value, name, None)
            if inner is not None and not isinstance(inner, str):
                new = _encodable(inner)
                if new is not inner:
                    changes[name] = new
        if changes:
            return replace_keeping_layout(value, **changes)
    return value


def _assistant(message: AssistantMessage) -> AssistantMessage:
    for block in message.content:
        if type(block) in _LIVE_TYPES:
            getattr(block, _OPEN_FIELD[block.type])  # reading joins the parts
    usage = _encodable_usage(message.usage)
    return message if usage is message.usage else replace_keeping_layout(message, usage=usage)


def _encodable_usage(usage: Usage) -> Usage:
    c = usage.cost
    # the common case, decided without a call: every amount is 0 or spelled alike
    i, o, r, w, t = c.input, c.output, c.cache_read, c.cache_write, c.total
    if (
        (not i or 1e-5 <= i < 1e21)
        and (not o or 1e-5 <= o < 1e21)
        and (not r or 1e-5 <= r < 1e21)
        and (not w or 1e-5 <= w < 1e21)
        and (not t or 1e-5 <= t < 1e21)
    ):
        return usage
    cost = _encodable_cost(c)
    return usage if cost is c else replace_keeping_layout(usage, cost=cost)


def _encodable_cost(cost: Cost) -> Cost:
    changes = {}
    for name in _COST_FIELDS:
        amount = getattr(cost, name)
        if type(amount) is float and needs_js_spelling(amount):
            changes[name] = msgspec.Raw(js_number_text(amount).encode())
    return replace_keeping_layout(cost, **changes) if changes else cost


def _surrogate_encode_error(value: Any, exc: UnicodeEncodeError) -> msgspec.EncodeError:
    path = _surrogate_path(value, "$") or "an unknown path"
    return msgspec.EncodeError(
        f"cannot encode the unpaired surrogate {exc.object[exc.start]!r} in the string at "
        f"{path} ({exc.object[:40]!r}): JSON text is UTF-8, which has no form for a lone "
        "surrogate; clean the text with pi_trio.ai.json.sanitize_surrogates() before encoding"
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
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None
