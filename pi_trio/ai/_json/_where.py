"""Where a field is in a JSON text: the line and column at which the value at a msgspec
path (``$[1].content[0].type``) starts, so that an error about a file names its line.

msgspec reports a wrong field by its path only; this follows the path through the text
with a small scanner. It runs only on the error path, on text msgspec has already parsed
(a validation error means the JSON itself is well-formed).
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

__all__ = ["position_of_path"]

_STEP: Final = re.compile(r"\[(\d+)\]|\.([A-Za-z_][A-Za-z0-9_]*)")
_SPACE: Final = b" \t\r\n"
_SCALAR_END: Final = b",]} \t\r\n"
_QUOTE: Final = ord('"')
_BACKSLASH: Final = ord("\\")
_COMMA: Final = ord(",")


def position_of_path(data: bytes, path: str) -> tuple[int, int] | None:
    """The 1-based line and column (in bytes) where the value at ``path`` starts in the
    JSON text ``data``, or where the deepest value on the way to it starts; ``None`` when
    not even the first step of the path is in the text."""
    at = _skip_space(data, 0)
    found: int | None = None
    step = _STEP.match(path, 1) if path.startswith("$") else None
    while step is not None:
        index, key = step.group(1), step.group(2)
        member = _member(data, at, int(index) if index is not None else key)
        if member is None:
            break
        at = found = member
        step = _STEP.match(path, step.end())
    if found is None:
        return None
    line_start = data.rfind(b"\n", 0, found) + 1
    return data.count(b"\n", 0, found) + 1, found - line_start + 1


def _member(data: bytes, start: int, wanted: int | str) -> int | None:
    """Where the element ``wanted`` (an index) of the array, or the value of the member
    ``wanted`` (a key) of the object, whose text starts at ``start``, starts."""
    opening = data[start : start + 1]
    if opening not in (b"[", b"{") or (opening == b"[") != isinstance(wanted, int):
        return None
    at = start + 1
    count = 0
    while True:
        at = _skip_space(data, at)
        if at >= len(data) or data[at] in b"]}":
            return None
        if isinstance(wanted, str):
            key_end = _string_end(data, at)
            if key_end is None:
                return None
            key = msgspec.json.decode(data[at:key_end], type=str)
            at = _skip_space(data, _skip_space(data, key_end) + 1)  # past the colon
            if key == wanted:
                return at
        elif count == wanted:
            return at
        count += 1
        end = _value_end(data, at)
        if end is None:
            return None
        at = _skip_space(data, end)
        if at < len(data) and data[at] == _COMMA:
            at += 1


def _skip_space(data: bytes, at: int) -> int:
    while at < len(data) and data[at] in _SPACE:
        at += 1
    return at


def _value_end(data: bytes, at: int) -> int | None:
    """The offset after the value whose text starts at ``at``."""
    if at >= len(data):
        return None
    first = data[at]
    if first == _QUOTE:
        return _string_end(data, at)
    if first not in b"[{":
        while at < len(data) and data[at] not in _SCALAR_END:
            at += 1
        return at
    depth = 0
    while at < len(data):
        byte = data[at]
        if byte == _QUOTE:
            end = _string_end(data, at)
            if end is None:
                return None
            at = end
            continue
        if byte in b"[{":
            depth += 1
        elif byte in b"]}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return None


def _string_end(data: bytes, at: int) -> int | None:
    """The offset after the JSON string whose opening quote is at ``at``."""
    if at >= len(data) or data[at] != _QUOTE:
        return None
    at += 1
    while at < len(data):
        byte = data[at]
        if byte == _BACKSLASH:
            at += 2
        elif byte == _QUOTE:
            return at + 1
        else:
            at += 1
    return None
