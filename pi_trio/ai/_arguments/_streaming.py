"""Streamed tool-call arguments: an incremental JSON parser and the one final parse.

`StreamingJsonParser` reads the argument text piece by piece, each piece once, and keeps
the value of the text so far. `value` returns a *snapshot*: the containers that are still
open (the path from the root to the innermost open one) are copied, the completed ones
and the strings are shared. A snapshot never changes once returned, so a reader may keep
it; it must not change it either, since later snapshots share its completed parts. So a
listener that reads the partial arguments on every delta pays for the change, not for the
whole value: every `feed` earns copy credit proportional to its length, and `value`
returns the previous snapshot while a fresh copy of the open path (its members, and the
characters of an unterminated string) costs more than the credit saved up. A document
that keeps a very large container or string open therefore shows a preview that lags a
little behind the text (a few percent of it), and no input makes the total work grow
faster than the text.

Rules for incomplete text: an unterminated string shows the characters read so far (an
unfinished escape, or a high surrogate waiting for its low half, is held back); an
unterminated container shows its members so far; a member whose key or value has not
started is omitted; an unterminated literal shows once it is a prefix of ``true``,
``false`` or ``null``; an unterminated number shows when its characters so far form a
number (an exponent without digits is ignored). Malformed text is read leniently: raw
control characters stay in strings, an invalid escape stays as literal text, missing
commas and colons are tolerated, values in invalid positions and unknown words (``NaN``,
``Infinity``) are dropped, and text after the root value is ignored; the parser never
raises. Unpaired surrogate escapes become U+FFFD, so every snapshot encodes to UTF-8.

The parse of the finished text is ``_final.parse_tool_call_arguments``.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["StreamingJsonParser"]

# Copy credit, in units of one container member copied; a string costs one unit per
# _STRING_CHARS_PER_UNIT characters. The floor per feed keeps small documents fresh.
_CREDIT_PER_FEED: Final = 64
_CREDIT_PER_CHAR: Final = 2
_STRING_CHARS_PER_UNIT: Final = 16
_MAX_PENDING_SCALAR: Final = 64  # an unterminated number longer than this shows at its end

_WS: Final = re.compile(r"[ \t\n\r]+")
_STRING_RUN: Final = re.compile('[^"\\\\\ud800-\udfff]+')
_SCALAR_RUN: Final = re.compile('[^ \t\n\r,:{}\\[\\]"]+')
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_MANTISSA: Final = re.compile(r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?)[eE][+-]?")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ESCAPES: Final = dict(zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True))
_LITERALS: Final = (("true", True), ("false", False), ("null", None))
_REPLACEMENT: Final = "\ufffd"
_NONE: Final[Any] = object()  # no value (yet)

# Where a value goes: the root, a member of the innermost open object, or an element.
_ROOT: Final = ("root", None)

_KEY, _COLON, _VALUE, _COMMA = range(4)  # phases of an open container


class _Frame:
    __slots__ = ("container", "key", "phase", "size", "slot")

    def __init__(self, container: dict[str, Any] | list[Any], slot: Any) -> None:
        self.container = container
        self.slot = slot
        self.size = 0
        self.key: str | None = None
        self.phase = _VALUE if type(container) is list else _KEY


class _String:
    __slots__ = ("escape", "high", "is_key", "length", "parts", "slot")

    def __init__(self, is_key: bool, slot: Any) -> None:
        self.is_key = is_key
        self.slot = slot
        self.parts: list[str] = []
        self.length = 0
        self.escape = ""  # "\\", "\\u", "\\u1", ... while an escape is unfinished
        self.high = 0  # a decoded high surrogate waiting for its low half

    def add(self, text: str) -> None:
        if self.high:
            self.flush_high()
        self.parts.append(text)
        self.length += len(text)

    def flush_high(self) -> None:
        """A held high surrogate that got no low half is U+FFFD."""
        self.high = 0
        self.parts.append(_REPLACEMENT)
        self.length += 1

    def text(self) -> str:
        parts = self.parts
        if len(parts) > 1:
            parts[:] = ["".join(parts)]
        return parts[0] if parts else ""


class StreamingJsonParser:
    """Accumulates a streamed JSON text and keeps a snapshot of its value (module doc).

    ``feed`` costs time proportional to the chunk; ``value`` costs time proportional to the
    change since the last snapshot it returned (amortised). ``final`` is the lenient
    one-shot parse of the whole text (`parse_streaming_json`) and ``text`` the text fed.
    """

    __slots__ = (
        "_chunks",
        "_credit",
        "_dirty",
        "_done",
        "_final",
        "_path_cost",
        "_root",
        "_scalar",
        "_scalar_slot",
        "_snapshot",
        "_stack",
        "_string",
        "_value",
    )

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._root: Any = _NONE
        self._done = False
        self._stack: list[_Frame] = []
        self._string: _String | None = None
        self._scalar = ""
        self._scalar_slot: Any = None
        self._path_cost = 0  # sum of size + 1 over the open containers
        self._credit = 0
        self._dirty = False
        self._snapshot: Any = _NONE
        self._value: dict[str, Any] = {}
        self._final: dict[str, Any] | None = None

    # -- public

    def feed(self, chunk: str) -> None:
        if not isinstance(chunk, str):
            raise TypeError(f"feed() takes a str chunk, got {type(chunk).__name__}: {chunk!r}")
        if not chunk:
            return
        self._chunks.append(chunk)
        self._final = None
        self._credit += _CREDIT_PER_FEED + _CREDIT_PER_CHAR * len(chunk)
        i, n = 0, len(chunk)
        while i < n and not self._done:
            string = self._string
            if string is not None:
                i = self._read_string(string, chunk, i)
            elif self._scalar:
                i = self._read_scalar(chunk, i)
            else:
                space = _WS.match(chunk, i)
                if space is not None:
                    i = space.end()
                    continue
                i = self._structural(chunk, i)

    @property
    def text(self) -> str:
        """The full text fed so far."""
        chunks = self._chunks
        if len(chunks) > 1:
            chunks[:] = ["".join(chunks)]
        return chunks[0] if chunks else ""

    def value(self) -> dict[str, Any]:
        """A snapshot of the arguments so far (``{}`` until the root is an object); the same
        object as the previous call while nothing changed or a fresh copy is not paid for.
        Shared with later snapshots: read it, do not change it."""
        if not self._dirty:
            return self._value
        pending = self._pending_scalar()
        string = self._string
        cost = self._path_cost + (pending is not _NONE)
        if string is not None and not string.is_key:
            cost += 1 + string.length // _STRING_CHARS_PER_UNIT
        if cost > self._credit:
            return self._value
        self._credit -= cost
        self._dirty = False
        snapshot = self._copy_open_path(pending)
        if snapshot is not self._snapshot:
            self._snapshot = snapshot
            self._value = snapshot if type(snapshot) is dict else {}
        return self._value

    def final(self) -> dict[str, Any]:
        """`parse_streaming_json` of the whole text (lenient: a truncated text keeps the
        complete part)."""
        if self._final is None:
            from ._partial import parse_streaming_json

            self._final = parse_streaming_json(self.text)
        return self._final

    # -- reading

    def _read_string(self, string: _String, chunk: str, i: int) -> int:
        n = len(chunk)
        while i < n:
            if string.escape:
                i = self._escaped(string, chunk, i)
                continue
            run = _STRING_RUN.match(chunk, i)
            if run is not None:
                string.add(run.group())
                i = run.end()
                if not string.is_key:
                    self._dirty = True
                continue
            char = chunk[i]
            i += 1
            if char == '"':
                self._end_string(string)
                return i
            if char == "\\":
                decoded = _ESCAPES.get(chunk[i : i + 1])
                if decoded is None:
                    string.escape = "\\"  # \u, an invalid escape, or the chunk's end
                else:
                    string.add(decoded)
                    i += 1
                    if not string.is_key:
                        self._dirty = True
            else:  # a raw surrogate code point: paired like an escaped one
                self._code_unit(string, ord(char))
                if not string.is_key:
                    self._dirty = True
        return i

    def _escaped(self, string: _String, chunk: str, i: int) -> int:
        char, escape = chunk[i], string.escape
        if escape == "\\":
            if char in _ESCAPES:
                string.escape = ""
                string.add(_ESCAPES[char])
                self._dirty = self._dirty or not string.is_key
                return i + 1
            if char == "u":
                string.escape = "\\u"
                return i + 1
            string.escape = ""  # invalid escape: the backslash is text, the char is read
            string.add("\\")
            self._dirty = self._dirty or not string.is_key
            return i
        if char in _HEX:
            escape += char
            if len(escape) < 6:
                string.escape = escape
                return i + 1
            string.escape = ""
            self._code_unit(string, int(escape[2:], 16))
            self._dirty = self._dirty or not string.is_key
            return i + 1
        string.escape = ""  # "\u" without four hex digits stays as text
        string.add(escape)
        self._dirty = self._dirty or not string.is_key
        return i

    def _code_unit(self, string: _String, code: int) -> None:
        if 0xD800 <= code <= 0xDBFF:
            if string.high:
                string.flush_high()
            string.high = code
        elif 0xDC00 <= code <= 0xDFFF:
            if string.high:
                pair = chr(0x10000 + ((string.high - 0xD800) << 10) + code - 0xDC00)
                string.high = 0
                string.add(pair)
            else:
                string.add(_REPLACEMENT)
        else:
            string.add(chr(code))

    def _read_scalar(self, chunk: str, i: int) -> int:
        run = _SCALAR_RUN.match(chunk, i)
        if run is not None:
            self._scalar += run.group()
            i = run.end()
            if self._scalar_slot is not None:
                self._dirty = True
        if i < len(chunk):
            self._end_scalar()
        return i

    def _structural(self, chunk: str, i: int) -> int:
        char = chunk[i]
        stack = self._stack
        if char == '"':
            frame = stack[-1] if stack else None
            # a missing comma is tolerated: {"a": 1 "b": 2} reads the second member
            if (
                frame is not None
                and type(frame.container) is dict
                and frame.phase in (_KEY, _COMMA)
            ):
                self._string = _String(True, None)
            else:
                slot = self._value_slot()
                self._string = _String(False, slot)
                self._place(slot, "")
        elif char == "{" or char == "[":
            container: dict[str, Any] | list[Any] = {} if char == "{" else []
            slot = self._value_slot()
            self._place(slot, container)
            stack.append(_Frame(container, slot))
            self._path_cost += 1
            self._dirty = True
        elif char == "}" or char == "]":
            if stack:  # a stray closer outside any container is ignored
                frame = stack.pop()
                self._path_cost -= frame.size + 1
                self._dirty = True
                self._value_ended()
        elif char == ":":
            if stack and type(stack[-1].container) is dict and stack[-1].phase == _COLON:
                stack[-1].phase = _VALUE
        elif char == ",":
            if stack:
                stack[-1].phase = _VALUE if type(stack[-1].container) is list else _KEY
        else:
            self._scalar_slot = self._value_slot()
            run = _SCALAR_RUN.match(chunk, i)
            self._scalar = run.group() if run is not None else char
            if self._scalar_slot is not None:
                self._dirty = True
            return i + len(self._scalar)
        return i + 1

    def _value_slot(self) -> Any:
        """Where a value starting now goes, or None when this position takes no value."""
        stack = self._stack
        if not stack:
            return _ROOT if self._root is _NONE else None
        frame = stack[-1]
        if type(frame.container) is list:
            return ("element", len(frame.container))
        # a missing colon is tolerated: {"a" 1} reads as {"a": 1}
        if frame.phase in (_VALUE, _COLON) and frame.key is not None:
            return ("member", frame.key)
        return None

    def _end_string(self, string: _String) -> None:
        self._string = None
        if string.high:
            string.flush_high()
        text = string.text()
        stack = self._stack
        if string.is_key:
            if stack:
                stack[-1].key, stack[-1].phase = text, _COLON
            return
        self._place(string.slot, text)
        self._value_ended()

    def _end_scalar(self) -> None:
        token, slot = self._scalar, self._scalar_slot
        self._scalar, self._scalar_slot = "", None
        value = _scalar_value(token)
        if value is not _NONE:
            self._place(slot, value)
        self._value_ended()

    def _value_ended(self) -> None:
        if self._stack:
            self._stack[-1].phase = _COMMA
        elif self._root is not _NONE:
            self._done = True  # text after the root value is ignored

    def _place(self, slot: Any, value: Any) -> None:
        if slot is None:
            return
        self._dirty = True
        kind, where = slot
        if kind == "root":
            self._root = value
            return
        frame = self._stack[-1]
        container = frame.container
        if kind == "element":
            if where == len(container):
                container.append(value)  # type: ignore[union-attr]
                frame.size += 1
                self._path_cost += 1
            else:
                container[where] = value
            return
        if where not in container:
            frame.size += 1
            self._path_cost += 1
        container[where] = value

    # -- snapshots

    def _pending_scalar(self) -> Any:
        token = self._scalar
        if self._scalar_slot is None or not token or len(token) > _MAX_PENDING_SCALAR:
            return _NONE
        for word, value in _LITERALS:
            if word.startswith(token):
                return value
        if _NUMBER.fullmatch(token):
            return _number(token)
        mantissa = _MANTISSA.fullmatch(token)
        return _NONE if mantissa is None else _number(mantissa.group(1))

    def _copy_open_path(self, pending: Any) -> Any:
        string = self._string
        open_text = string.text() if string is not None and not string.is_key else _NONE
        stack = self._stack
        if not stack:
            if pending is not _NONE and self._scalar_slot is _ROOT:
                return pending
            if open_text is not _NONE and string is not None and string.slot is _ROOT:
                return open_text
            return None if self._root is _NONE else self._root
        child: Any = _NONE
        child_slot: Any = None
        for depth in range(len(stack) - 1, -1, -1):
            frame = stack[depth]
            container = frame.container
            copy: Any = container.copy()
            if depth == len(stack) - 1:
                if pending is not _NONE:
                    _set(copy, self._scalar_slot, pending)
                if open_text is not _NONE and string is not None and string.slot is not None:
                    _set(copy, string.slot, open_text)
            if child is not _NONE and child_slot is not None:
                _set(copy, child_slot, child)
            child, child_slot = copy, frame.slot
        # the outermost open container is the root unless it sits in an invalid position
        if child_slot is _ROOT:
            return child
        return None if self._root is _NONE else self._root


def _set(container: Any, slot: Any, value: Any) -> None:
    kind, where = slot
    if kind == "element" and where == len(container):
        container.append(value)
    elif kind != "root":
        container[where] = value


def _scalar_value(token: str) -> Any:
    """The value of a complete number or literal token; `_NONE` for anything else."""
    for word, value in _LITERALS:
        if token == word:
            return value
    return _number(token) if _NUMBER.fullmatch(token) else _NONE


def _number(text: str) -> int | float:
    match = _NUMBER.fullmatch(text)
    if match is not None and match.group(1) is None and match.group(2) is None:
        try:
            return int(text)
        except ValueError:  # more digits than int() converts by default
            pass
    return float(text)
