"""Small pieces several providers' requests need: a variable of ``options.env`` or the
process environment, the prompt-cache retention preference, the original runtime's short
id hash, tool-call id cleaning and a model id as a URL path."""

from __future__ import annotations

import os
import re
from typing import Final
from urllib.parse import quote, unquote

from .._errors import ProviderError
from .._stream._options import StreamOptions

__all__ = [
    "cache_retention",
    "model_id_path",
    "option_env",
    "replace_unsafe_id_chars",
    "short_hash",
]

_UNSAFE_ID_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")


def replace_unsafe_id_chars(value: str) -> str:
    """``value`` with every character other than letters, digits, ``_`` and ``-``
    replaced by ``_`` (what the providers accept in tool-call ids)."""
    return _UNSAFE_ID_CHARS.sub("_", value)


def model_id_path(model_id: str, api: str) -> str:
    """``model_id`` as the path segments of a request URL: each ``/``-separated part
    percent-encoded (``?``, ``#``, ``%`` and spaces cannot end the path or start a query),
    and ``ProviderError`` for an empty, ``.`` or ``..`` part, which would move the request
    to another path of the server that receives the key."""
    parts = model_id.split("/")
    for part in parts:
        if unquote(part) in ("", ".", ".."):
            raise ProviderError(
                f"The model id {model_id!r} cannot be sent to the {api} API: it has an "
                "empty, '.' or '..' path segment, which would send the request (and its "
                "key) to another address; use the model id the provider lists"
            )
    return "/".join(quote(part, safe="@-._~") for part in parts)


def option_env(options: StreamOptions, name: str) -> str | None:
    """The variable ``name`` of ``options.env``, else of the process environment; an empty
    value counts as absent (``None``)."""
    return (options.env or {}).get(name) or os.environ.get(name) or None


def cache_retention(options: StreamOptions) -> str:
    """``options.cache_retention``; unset means ``"long"`` when ``PI_CACHE_RETENTION`` is
    ``long`` (``options.env`` first, then the process environment), else ``"short"``."""
    if options.cache_retention is not None:
        return options.cache_retention
    return "long" if option_env(options, "PI_CACHE_RETENTION") == "long" else "short"


def _imul(a: int, b: int) -> int:
    """JavaScript's ``Math.imul``: 32-bit multiplication, unsigned result."""
    return (a * b) & 0xFFFFFFFF


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(value: int) -> str:
    if value == 0:
        return "0"
    out = []
    while value:
        value, rest = divmod(value, 36)
        out.append(_DIGITS[rest])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """A short, stable base-36 hash of ``text``: the original runtime's 53-bit double hash
    over UTF-16 code units, so ids derived from the same input match across runtimes."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)
