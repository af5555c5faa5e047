"""The syntax error of a JSON text, worded as JavaScript's ``JSON.parse`` words it.

The original reports malformed tool arguments to the model with V8's message (``Unexpected
end of JSON input``, ``Expected ',' or '}' after property value in JSON at position 12``…),
so pi_trio finds the first error the way V8's parser does and words it the same way.
Positions count UTF-16 code units, as JavaScript strings do. It runs only on text that
failed to parse, so it favours plain code over speed.
"""

from __future__ import annotations

from typing import Final

__all__ = ["describe_json_error"]

_WHITESPACE: Final = " \t\n\r"
_DIGITS: Final = "0123456789"
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_ESCAPES: Final = frozenset('"\\/bfnrtu')
_CONTEXT: Final = 10  # characters of context either side of an unexpected token
_WHOLE_SOURCE_BELOW: Final = 2 * _CONTEXT + 1


class _Found(Exception):
    def __init__(self, message: str) -> None:
        self.message = message


def describe_json_error(text: str) -> str | None:
    """V8's ``JSON.parse`` message for ``text``, or None when V8 would accept it."""
    try:
        _Parser(text).document()
    except _Found as found:
        return found.message
    return None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- messages

    def _at(self, index: int) -> int:
        """``index`` in UTF-16 code units."""
        return len(self.text[:index].encode("utf-16-le", "surrogatepass")) // 2

    def fail(self, template: str, index: int | None = None) -> _Found:
        where = self.pos if index is None else index
        return _Found(f"{template} in JSON at position {self._at(where)}")

    def unexpected(self, index: int | None = None) -> _Found:
        where = self.pos if index is None else index
        text = self.text
        if where >= len(text):
            return _Found("Unexpected end of JSON input")
        char = text[where]
        if char in _DIGITS or char == "-":
            return self.fail("Unexpected number", where)
        if char == '"':
            return self.fail("Unexpected string", where)
        if len(text) < _WHOLE_SOURCE_BELOW:
            context = f'"{text}"'
        else:
            start, end = max(0, where - _CONTEXT), min(len(text), where + _CONTEXT)
            head = "..." if start > 0 else ""
            tail = "..." if end < len(text) else ""
            context = f'{head}"{text[start:end]}"{tail}'
        return _Found(f"Unexpected token '{char}', {context} is not valid JSON")

    # -- grammar

    def peek(self) -> str:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        self.pos = pos
        return text[pos] if pos < len(text) else ""

    def document(self) -> None:
        self.value()
        if self.peek():
            raise _Found(
                f"Unexpected non-whitespace character after JSON at position {self._at(self.pos)}"
            )

    def value(self) -> None:
        char = self.peek()
        if char == '"':
            self.string()
        elif char == "{":
            self.object()
        elif char == "[":
            self.array()
        elif char == "-" or (char and char in _DIGITS):
            self.number()
        elif char and char in "tfn":
            self.literal({"t": "true", "f": "false", "n": "null"}[char])
        else:
            raise self.unexpected()

    def object(self) -> None:
        self.pos += 1
        if self.peek() == "}":
            self.pos += 1
            return
        first = True
        while True:
            if self.peek() != '"':
                raise self.fail(
                    "Expected property name or '}'"
                    if first
                    else "Expected double-quoted property name"
                )
            self.string()
            if self.peek() != ":":
                raise self.fail("Expected ':' after property name") if first else self.unexpected()
            self.pos += 1
            self.value()
            char = self.peek()
            if char == ",":
                self.pos += 1
                first = False
            elif char == "}":
                self.pos += 1
                return
            else:
                raise self.fail("Expected ',' or '}' after property value")

    def array(self) -> None:
        self.pos += 1
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            self.value()
            char = self.peek()
            if char == ",":
                self.pos += 1
            elif char == "]":
                self.pos += 1
                return
            else:
                raise self.fail("Expected ',' or ']' after array element")

    def string(self) -> None:
        text, pos = self.text, self.pos + 1
        while True:
            if pos >= len(text):
                raise self.fail("Unterminated string", len(text))
            char = text[pos]
            if char == '"':
                self.pos = pos + 1
                return
            if char < " ":
                raise self.fail("Bad control character in string literal", pos)
            if char == "\\":
                pos += 1
                if pos >= len(text):
                    raise _Found("Unexpected end of JSON input")
                if text[pos] not in _ESCAPES:
                    raise self.fail("Bad escaped character", pos)
                if text[pos] == "u":
                    for offset in range(1, 5):
                        if pos + offset >= len(text) or text[pos + offset] not in _HEX:
                            raise self.fail("Bad Unicode escape", min(pos + offset, len(text)))
                    pos += 4
            pos += 1

    def number(self) -> None:
        text, pos = self.text, self.pos
        if text[pos] == "-":
            pos += 1
            if pos >= len(text) or text[pos] not in _DIGITS:
                raise self.fail("No number after minus sign", pos)
        if text[pos] == "0":
            pos += 1
            if pos < len(text) and text[pos] in _DIGITS:
                raise self.fail("Unexpected number", pos)
        else:
            while pos < len(text) and text[pos] in _DIGITS:
                pos += 1
        if pos < len(text) and text[pos] == ".":
            pos += 1
            if pos >= len(text) or text[pos] not in _DIGITS:
                raise self.fail("Unterminated fractional number", pos)
            while pos < len(text) and text[pos] in _DIGITS:
                pos += 1
        if pos < len(text) and text[pos] in "eE":
            pos += 1
            if pos < len(text) and text[pos] in "+-":
                pos += 1
            if pos >= len(text) or text[pos] not in _DIGITS:
                raise self.fail("Exponent part is missing a number", pos)
            while pos < len(text) and text[pos] in _DIGITS:
                pos += 1
        self.pos = pos

    def literal(self, word: str) -> None:
        text, pos = self.text, self.pos
        for offset, expected in enumerate(word):
            if pos + offset >= len(text) or text[pos + offset] != expected:
                raise self.unexpected(pos + offset)
        self.pos = pos + len(word)
