"""ECMAScript patterns rewritten for RE2, a regex engine that never backtracks (its time
is linear in the text), so that a model's value cannot make a ``pattern`` check run for
ever.

`to_re2` takes a pattern that is valid with the ``u`` flag (the caller checked it with
the ECMAScript engine) and returns an RE2 pattern matching the same strings, or None when
the pattern uses what RE2 has no linear-time form of (lookarounds, back-references, and
``\\B``, which RE2 also finds inside a multi-byte character) or what this rewriting does
not cover (long Unicode property names, a negated class escape inside a class). Only the
set of matched strings has to be the same, since the check asks only whether the pattern
matches somewhere. What differs between the two dialects is made
explicit: ``.`` is "anything but a line terminator" (RE2's excludes only ``\\n``), ``\\s``
is ECMAScript's white space and line terminators (RE2's is ASCII), every character that is
not a letter or a digit is written as ``\\x{...}``, and ``(?<name>`` becomes
``(?P<name>``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["to_re2"]

_LINE_TERMINATORS: Final = r"\x{0A}\x{0D}\x{2028}\x{2029}"
_JS_SPACE: Final = (
    r"\x{09}-\x{0D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}"
    r"\x{205F}\x{3000}\x{FEFF}"
)
_CLASS_RANGES: Final = {"d": "0-9", "w": "0-9A-Za-z_", "s": _JS_SPACE}
_CONTROL: Final = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B}
_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/")
# General categories by their short names, which ECMAScript and RE2 both know.
_CATEGORIES: Final = frozenset(
    [
        "L",
        "Lu",
        "Ll",
        "Lt",
        "Lm",
        "Lo",
        "M",
        "Mn",
        "Mc",
        "Me",
        "N",
        "Nd",
        "Nl",
        "No",
        "P",
        "Pc",
        "Pd",
        "Ps",
        "Pe",
        "Pi",
        "Pf",
        "Po",
        "S",
        "Sm",
        "Sc",
        "Sk",
        "So",
        "Z",
        "Zs",
        "Zl",
        "Zp",
        "C",
        "Cc",
        "Cf",
        "Co",
        "Cs",
    ]
)
_HEX: Final = frozenset("0123456789abcdefABCDEF")


class _Untranslatable(Exception):
    pass


def to_re2(pattern: str) -> str | None:
    """``pattern`` (ECMAScript, ``u`` flag) for RE2, or None (see the module docstring)."""
    try:
        return _Translator(pattern).translate()
    except (_Untranslatable, IndexError, ValueError):
        return None


def _char(code: int) -> str:
    char = chr(code)
    if char.isascii() and char.isalnum():
        return char
    if 0xD800 <= code <= 0xDFFF:
        raise _Untranslatable  # a lone surrogate: no UTF-8 text holds one
    return f"\\x{{{code:X}}}"


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def translate(self) -> str:
        out: list[str] = []
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c == "\\":
                self.i += 1
                out.append(self._escape(in_class=False))
            elif c == "[":
                self.i += 1
                out.append(self._class())
            elif c == "(":
                out.append(self._group())
            elif c == ".":
                self.i += 1
                out.append(f"[^{_LINE_TERMINATORS}]")
            elif c == "{":
                # valid with the ``u`` flag, so braces are a quantifier: the same in RE2
                end = p.index("}", self.i) + 1
                out.append(p[self.i : end])
                self.i = end
            elif c in "^$|)*+?":  # ``?`` after a quantifier makes it lazy in both
                self.i += 1
                out.append(c)
            elif c in "]":
                raise _Untranslatable
            else:
                self.i += 1
                out.append(_char(ord(c)))
        return "".join(out)

    def _group(self) -> str:
        p = self.p
        if p.startswith("(?:", self.i):
            self.i += 3
            return "(?:"
        if p.startswith("(?<", self.i) and not p.startswith(("(?<=", "(?<!"), self.i):
            end = p.index(">", self.i)
            name = p[self.i + 3 : end]
            if not name.isidentifier() or not name.isascii():
                raise _Untranslatable
            self.i = end + 1
            return f"(?P<{name}>"
        if p.startswith("(?", self.i):
            raise _Untranslatable  # lookarounds, modifiers
        self.i += 1
        return "("

    def _code_escape(self, e: str) -> int | None:
        """The code point of a character escape whose letter ``e`` was read, else None."""
        p = self.p
        if e in _CONTROL:
            return _CONTROL[e]
        if e == "0":
            return 0
        if e == "c":
            letter = p[self.i]
            self.i += 1
            return ord(letter) % 32
        if e == "x":
            digits = p[self.i : self.i + 2]
            self.i += 2
            return int(digits, 16)
        if e == "u":
            if p[self.i] == "{":
                end = p.index("}", self.i)
                code = int(p[self.i + 1 : end], 16)
                self.i = end + 1
                return code
            code = int(p[self.i : self.i + 4], 16)
            self.i += 4
            if 0xD800 <= code <= 0xDBFF and p.startswith("\\u", self.i):
                low_digits = p[self.i + 2 : self.i + 6]
                if len(low_digits) == 4 and set(low_digits) <= _HEX:
                    low = int(low_digits, 16)
                    if 0xDC00 <= low <= 0xDFFF:
                        self.i += 6
                        return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            return code
        if e in _SYNTAX or e == "-":
            return ord(e)
        return None

    def _property(self, e: str) -> str:
        p = self.p
        if p[self.i] != "{":
            raise _Untranslatable
        end = p.index("}", self.i)
        name = p[self.i + 1 : end]
        self.i = end + 1
        key, _, value = name.partition("=")
        if value and key in ("General_Category", "gc"):
            name = value
        elif value and key in ("Script", "sc"):
            name = value  # RE2 names scripts alone; one it does not know fails to compile
        elif value or name not in _CATEGORIES:
            raise _Untranslatable  # long names, binary properties, script extensions
        return f"\\{e}{{{name}}}"

    def _escape(self, *, in_class: bool) -> str:
        """The escape whose backslash was read: a class body (``in_class``) or an atom."""
        e = self.p[self.i]
        self.i += 1
        if e in "dws":
            ranges = _CLASS_RANGES[e]
            return ranges if in_class else f"[{ranges}]"
        if e in "DWS":
            negated = f"[^{_CLASS_RANGES[e.lower()]}]"
            return f"-{negated}" if in_class else negated  # "-": not a class body
        if e in "pP":
            return self._property(e)
        if e == "b" and in_class:
            return _char(8)
        if e == "b":
            return "\\b"  # ASCII word boundaries in both
        if e == "B":
            # RE2 looks at a boundary byte by byte: between the bytes of one UTF-8
            # character (both not ASCII word bytes) it sees no boundary, so its \B
            # matches inside "\u00a0" where ECMAScript has no position at all
            raise _Untranslatable
        code = self._code_escape(e)
        if code is None:
            raise _Untranslatable  # back-references (\1, \k<name>)
        return _char(code)

    def _class(self) -> str:
        """The class whose ``[`` was read, up to its ``]``."""
        p = self.p
        negated = p[self.i] == "^"
        if negated:
            self.i += 1
        # (code point of a single character or None for a set, its text, a raw "-")
        items: list[tuple[int | None, str, bool]] = []
        while p[self.i] != "]":
            if p[self.i] == "\\":
                self.i += 1
                text = self._escape(in_class=True)
                items.append((_single(text), text, False))
            else:
                code = ord(p[self.i])
                self.i += 1
                items.append((code, _char(code), code == ord("-")))
        self.i += 1
        # a negated escape (\S) inside: RE2 cannot put a negated set in a set, so the
        # class becomes an alternation of the rest and each negated set
        outside = [text[1:] for _, text, _ in items if text.startswith("-[")]
        items = [item for item in items if not item[1].startswith("-[")]
        if outside:
            if negated:
                raise _Untranslatable
            rest = [self._body(items)] if items else []
            return "(?:" + "|".join([f"[{body}]" for body in rest] + outside) + ")"
        if not items:
            return "[\\x{0}-\\x{10FFFF}]" if negated else "[^\\x{0}-\\x{10FFFF}]"
        return f"[{'^' if negated else ''}{self._body(items)}]"

    @staticmethod
    def _body(items: list[tuple[int | None, str, bool]]) -> str:
        body: list[str] = []
        index = 0
        while index < len(items):
            code, text, _ = items[index]
            if (
                index + 2 < len(items)
                and items[index + 1][2]
                and code is not None
                and items[index + 2][0] is not None
            ):
                body.append(f"{text}-{items[index + 2][1]}")
                index += 3
            else:
                body.append(text)
                index += 1
        return "".join(body)


def _single(text: str) -> int | None:
    """The code point ``text`` (from ``_char``) stands for; None for a set of them."""
    if len(text) == 1:
        return ord(text)
    if text.startswith("\\x{") and text.endswith("}") and text.count("{") == 1:
        return int(text[3:-1], 16)
    return None
