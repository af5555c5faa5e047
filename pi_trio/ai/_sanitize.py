"""Removing unpaired UTF-16 surrogates from outgoing text.

A Python ``str`` holds code points, so a valid emoji is one code point and never a
surrogate. Surrogate code points appear only from lone ``\\ud83d`` JSON escapes or
``surrogatepass`` decoding, and make UTF-8 encoding of a request body fail.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["sanitize_surrogates"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
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
