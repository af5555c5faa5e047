"""Best-effort JSON for streamed tool-call arguments (the original's ``parseStreamingJson``
and ``repairJson``, ``src/utils/json-parse.ts``), in linear time.

`parse_streaming_json` turns any text into a dict and never raises: strict parse, strict
parse of the repaired text, partial parse of the original, partial parse of the repaired
text, ``{}``. The partial parser is a resumable state machine that reads its input once, in
time linear in its length. (Streamed arguments are read by `StreamingJsonParser`, in
``_streaming``, whose snapshots follow the original's streaming rules.)

Partial semantics at the end of the text: an unterminated string keeps its text (an
incomplete escape, or a high surrogate still waiting for its low half, is dropped); a
trailing number keeps its longest complete prefix (``123.`` → 123, ``-`` → no value); a
partial literal completes (``nu``, ``tr``, ``fa``, ``Na``, ``Inf``, ``-Inf``); unterminated
arrays and objects keep what they hold, and an object drops a key that has no value yet.
A trailing comma before a closing bracket and text after the top-level value are ignored.
Other malformed input (a misplaced character, nesting deeper than `MAX_DEPTH`) makes the
partial parse fail; non-object results become ``{}``. Unpaired surrogate escapes (``"\\ud83d"``) decode to U+FFFD: a Python ``str`` that
holds a lone surrogate cannot be encoded to UTF-8, so keeping it would break every later
encode of the tool call.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

__all__ = ["MAX_DEPTH", "copy_json", "parse_streaming_json", "repair_json"]

MAX_DEPTH: Final = 512
"""Deepest nesting the partial parser accepts; Python's own JSON encoders and copiers
recurse once per level and stop near 1000, so deeper arguments could not be used anyway."""

_REPLACEMENT: Final = "\ufffd"
_WS_RUN: Final = re.compile(r"[ \t\n\r]*")
_STR_RUN: Final = re.compile('[^"\\\\\x00-\x1f\ud800-\udfff]+')
_NUM_RUN: Final = re.compile(r"[0-9eE.+\-]+")
_LIT_RUN: Final = re.compile(r"[A-Za-z]+")
_NUM_FULL: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_NUM_PREFIX: Final = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:(?<=[0-9])[eE][+-]?[0-9]*)?)?"
)
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES: Final = dict(zip('"\\/bfnrt', '"\\/\b\f\n\r\t', strict=True))
_LITERALS: Final[dict[str, tuple[str, Any]]] = {
    "n": ("null", None),
    "t": ("true", True),
    "f": ("false", False),
    "N": ("NaN", float("nan")),
    "I": ("Infinity", float("inf")),
    "-": ("-Infinity", float("-inf")),
}
_CONTROL_ESCAPES: Final = {v: f"\\{k}" for k, v in _SIMPLE_ESCAPES.items() if v < " "}
_REPAIR_RUN: Final = re.compile('[^"\\\\\x00-\x1f]+')
_REPAIR_UNICODE: Final = re.compile(r"u[0-9a-fA-F]{4}")

# Scanner states.
_VALUE, _ARRAY_FIRST, _OBJECT_FIRST, _COLON, _AFTER = range(5)
_STRING, _NUMBER, _LITERAL, _DONE, _NOT_OBJECT = range(5, 10)
_MISSING: Final[Any] = object()


class _Malformed(ValueError):
    """The text is not a prefix of a JSON document (after repairs, when enabled)."""


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Parse possibly truncated or slightly broken JSON into a dict; never raises for a str.

    >>> parse_streaming_json('{"a": "hel')
    {'a': 'hel'}
    """
    if text is None:
        return {}
    if not isinstance(text, str):
        raise TypeError(f"parse_streaming_json() takes a str or None, got {type(text).__name__}")
    if not text.strip():
        return {}
    try:
        return _object_or_empty(_strict_parse(text))
    except _STRICT_ERRORS:
        pass
    repaired = repair_json(text)
    if repaired != text:
        try:
            return _object_or_empty(_strict_parse(repaired))
        except _STRICT_ERRORS:
            pass
    for candidate in (text, repaired) if repaired != text else (text,):
        try:
            return _object_or_empty(_partial_parse(candidate))
        except _Malformed:
            pass
    return {}


def repair_json(text: str) -> str:
    """Escape raw control characters inside string literals and double every backslash that
    does not start a valid escape (``\\H``, ``\\u12``, a trailing ``\\``); keep the rest."""
    out: list[str] = []
    start = i = 0
    n = len(text)
    in_string = False
    while i < n:
        if not in_string:
            i = text.find('"', i)
            if i < 0:
                break
            in_string = True
            i += 1
            continue
        run = _REPAIR_RUN.match(text, i)
        if run is not None:
            i = run.end()
            continue
        char = text[i]
        if char == '"':
            in_string = False
            i += 1
        elif char == "\\":
            following = text[i + 1 : i + 2]
            if following and following in _SIMPLE_ESCAPES:
                i += 2
            elif _REPAIR_UNICODE.match(text, i + 1):
                i += 6
            else:
                out.append(text[start:i])
                out.append("\\\\")
                i += 1
                start = i
        else:
            out.append(text[start:i])
            out.append(_CONTROL_ESCAPES.get(char) or f"\\u{ord(char):04x}")
            i += 1
            start = i
    if not out:
        return text
    out.append(text[start:])
    return "".join(out)


_STRICT_ERRORS: Final = (msgspec.DecodeError, UnicodeEncodeError, RecursionError)


def _strict_parse(text: str) -> Any:
    return msgspec.json.decode(text)


def _partial_parse(text: str) -> Any:
    scanner = _Scanner()
    scanner.feed(text)
    return scanner.snapshot()


def _object_or_empty(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def copy_json(value: Any) -> Any:
    """Copy nested dicts and lists without recursion (deep nesting is fine, cycles are
    kept); other values are shared."""
    if not isinstance(value, dict | list):
        return value
    if type(value) is dict:
        for item in value.values():
            if isinstance(item, dict | list):
                break
        else:
            return dict(value)  # flat: the common case for tool arguments
    memo: dict[int, Any] = {}
    root = memo[id(value)] = _shallow(value)
    pending = [root]
    while pending:
        node = pending.pop()
        for key, item in node.items() if isinstance(node, dict) else enumerate(node):
            if isinstance(item, dict | list):
                copied = memo.get(id(item))
                if copied is None:
                    copied = memo[id(item)] = _shallow(item)
                    pending.append(copied)
                node[key] = copied
    return root


def _shallow(value: dict[Any, Any] | list[Any]) -> dict[Any, Any] | list[Any]:
    return dict(value) if isinstance(value, dict) else list(value)


class _Scanner:
    """A resumable JSON scanner that builds the value as it goes (sans-IO, no recursion)."""

    def __init__(self) -> None:
        self.state = _VALUE
        self.containers: list[dict[str, Any] | list[Any]] = []
        self.keys: list[str | None] = []
        self.root: dict[str, Any] | None = None
        self.token: list[str] = []  # pieces of the current string, number or literal
        self.escape = ""  # a pending escape: "\\", "\\u", "\\u1", ...
        self.high = 0  # a decoded high surrogate waiting for its low half
        self.is_key = False
        self.literal: tuple[str, Any] = ("", None)

    def feed(self, chunk: str) -> None:
        i, n = 0, len(chunk)
        while i < n:
            state = self.state
            if state == _STRING:
                i = self._string(chunk, i)
            elif state == _NUMBER:
                i = self._number(chunk, i)
            elif state == _LITERAL:
                i = self._literal(chunk, i)
            elif state >= _DONE:
                return
            else:
                i = _WS_RUN.match(chunk, i).end()  # type: ignore[union-attr]
                if i < n:
                    self._structural(chunk[i])
                    i += 1

    def _structural(self, char: str) -> None:
        state = self.state
        if state in (_VALUE, _ARRAY_FIRST):
            if char == "]" and state == _ARRAY_FIRST:
                self._close()
            elif not self.containers and char != "{":
                self.state = _NOT_OBJECT
            else:
                self._start_value(char)
        elif state == _AFTER:
            top = self.containers[-1]
            if char == ",":
                # a trailing comma before the bracket is accepted, as upstream's parser does
                self.state = _OBJECT_FIRST if type(top) is dict else _ARRAY_FIRST
            elif char == ("}" if type(top) is dict else "]"):
                self._close()
            else:
                raise _Malformed(f"expected ',' or a closing bracket, got {char!r}")
        elif state == _OBJECT_FIRST:
            if char == '"':
                self.state, self.is_key, self.token = _STRING, True, []
            elif char == "}":
                self._close()
            else:
                raise _Malformed(f"expected a key string, got {char!r}")
        elif char == ":":  # _COLON
            self.state = _VALUE
        else:
            raise _Malformed(f"expected ':', got {char!r}")

    def _start_value(self, char: str) -> None:
        if char == '"':
            self.state, self.is_key, self.token = _STRING, False, []
        elif char == "{" or char == "[":
            if len(self.containers) >= MAX_DEPTH:
                raise _Malformed(f"nesting deeper than {MAX_DEPTH} levels")
            self.containers.append({} if char == "{" else [])
            self.keys.append(None)
            self.state = _OBJECT_FIRST if char == "{" else _ARRAY_FIRST
        elif char in "-0123456789":
            self.state, self.token = _NUMBER, [char]
        elif char in _LITERALS:
            self.state, self.token, self.literal = _LITERAL, [char], _LITERALS[char]
        else:
            raise _Malformed(f"expected a JSON value, got {char!r}")

    def _close(self) -> None:
        done = self.containers.pop()
        self.keys.pop()
        if self.containers:
            self._add(done)
        else:
            self.root, self.state = done, _DONE  # type: ignore[assignment]

    def _add(self, value: Any) -> None:
        top = self.containers[-1]
        if type(top) is dict:
            top[self.keys[-1]] = value  # type: ignore[index]
            self.keys[-1] = None
        else:
            top.append(value)  # type: ignore[union-attr]
        self.state = _AFTER

    # -- strings

    def _string(self, chunk: str, i: int) -> int:
        n, parts = len(chunk), self.token
        while i < n:
            if self.escape:
                i = self._escaped(chunk, i)
                continue
            run = _STR_RUN.match(chunk, i)
            if run is not None:
                self._flush_high()
                parts.append(run.group())
                i = run.end()
                continue
            char = chunk[i]
            i += 1
            if char == '"':
                self._flush_high()
                text = "".join(parts)
                self.token = []
                if self.is_key:
                    self.keys[-1], self.state = text, _COLON
                else:
                    self._add(text)
                return i
            if char == "\\":
                self.escape = "\\"
            elif char < " ":
                raise _Malformed(f"raw control character {char!r} inside a string")
            else:
                self._flush_high()
                parts.append(char if char < " " else _REPLACEMENT)  # raw surrogate code point
        return i

    def _escaped(self, chunk: str, i: int) -> int:
        char, escape = chunk[i], self.escape
        if escape == "\\" and char in _SIMPLE_ESCAPES:
            self._flush_high()
            self.token.append(_SIMPLE_ESCAPES[char])
        elif (escape == "\\" and char == "u") or (len(escape) > 1 and char in _HEX):
            escape += char
            if len(escape) < 6:
                self.escape = escape
                return i + 1
            self._code_unit(int(escape[2:], 16))
        else:
            raise _Malformed(f"invalid escape {escape + char!r} inside a string")
        self.escape = ""
        return i + 1

    def _code_unit(self, code: int) -> None:
        if 0xD800 <= code <= 0xDBFF:
            self._flush_high()
            self.high = code
        elif 0xDC00 <= code <= 0xDFFF:
            if self.high:
                self.token.append(chr(0x10000 + ((self.high - 0xD800) << 10) + code - 0xDC00))
                self.high = 0
            else:
                self.token.append(_REPLACEMENT)
        else:
            self._flush_high()
            self.token.append(chr(code))

    def _flush_high(self) -> None:
        if self.high:
            self.token.append(_REPLACEMENT)
            self.high = 0

    # -- numbers and literals

    def _number(self, chunk: str, i: int) -> int:
        run = _NUM_RUN.match(chunk, i)
        if run is not None:
            self.token.append(run.group())
            i = run.end()
        if i < len(chunk):
            text = "".join(self.token)
            if text == "-" and chunk[i] == "I":
                self.state, self.literal = _LITERAL, _LITERALS["-"]
            else:
                self._add(_number_value(text))
        return i

    def _literal(self, chunk: str, i: int) -> int:
        run = _LIT_RUN.match(chunk, i)
        word, value = self.literal
        text = "".join(self.token)
        if run is not None:
            text += run.group()
            if not word.startswith(text):
                raise _Malformed(f"expected {word!r}, got {text!r}")
            self.token = [text]
            i = run.end()
        if i < len(chunk):
            if text != word:
                raise _Malformed(f"expected {word!r}, got {text!r}")
            self._add(value)
        return i

    # -- the value so far

    def snapshot(self) -> Any:
        """The value so far, with the token in progress completed (see the module doc)."""
        if self.state == _DONE:
            return self.root
        if not self.containers:
            return None
        child = self._pending_leaf()
        for node, key in zip(reversed(self.containers), reversed(self.keys), strict=True):
            if child is not _MISSING:
                if type(node) is dict:
                    if key is not None:
                        node[key] = child
                else:
                    node.append(child)
            child = node
        return child

    def _pending_leaf(self) -> Any:
        state = self.state
        if state == _STRING and not self.is_key:
            return "".join(self.token)
        if state == _LITERAL:
            return self.literal[1]
        if state == _NUMBER:
            text = "".join(self.token)
            if _NUM_PREFIX.fullmatch(text) is None:
                raise _Malformed(f"{text!r} does not start a JSON number")
            head = _NUM_FULL.match(text)
            return _MISSING if head is None else _number_value(head.group())
        return _MISSING


def _number_value(text: str) -> int | float:
    match = _NUM_FULL.fullmatch(text)
    if match is None:
        raise _Malformed(f"{text!r} is not a JSON number")
    if match.group(1) is None and match.group(2) is None:
        try:
            return int(text)
        except ValueError:  # more digits than int() converts by default
            return float(text)
    return float(text)
