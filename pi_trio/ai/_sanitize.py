"""Removing unpaired UTF-16 surrogates from outgoing text.

A Python ``str`` holds code points, so a valid emoji is one code point and never a
surrogate. Surrogate code points appear only from lone ``\\ud83d`` JSON escapes or
``surrogatepass`` decoding, and make UTF-8 encoding of a request body fail.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["replace_lone_surrogate_escapes", "sanitize_surrogates"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# An escaped backslash (skipped, so ``\\ud83d`` is not read as an escape), a paired
# surrogate escape (kept), or a lone one (group 1: replaced).
_SURROGATE_ESCAPE: Final = re.compile(
    rb"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)
_PAIR: Final = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def _join_pair(match: re.Match[str]) -> str:
    high, low = (ord(unit) for unit in match.groups())
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def sanitize_surrogates(text: str) -> str:
    """``text`` with each adjacent high+low surrogate pair joined into the character it
    encodes (as JavaScript would read it) and every other surrogate code point removed."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("", _PAIR.sub(_join_pair, text))


def _replace_escape(match: re.Match[bytes]) -> bytes:
    return b"\\ufffd" if match.group(1) else match.group(0)


def replace_lone_surrogate_escapes(data: bytes) -> bytes:
    """JSON text with every unpaired surrogate escape (``\\ud83d`` without its low half)
    replaced by ``\\ufffd``, as a UTF-16 decoder reads it; paired escapes are kept."""
    return _SURROGATE_ESCAPE.sub(_replace_escape, data)
