"""API keys on their way into request headers and out of error texts (sans-IO).

Every key passes ``clean_api_key`` once, where it enters a request (the HTTP providers in
``ProviderRun.api_key``, the proxy client for its token): surrounding whitespace is
stripped, because a key read from a file or a Kubernetes secret often ends in a newline;
any other character that is not visible ASCII (a space, a control character, a non-ASCII
letter) is refused with a ``ProviderError`` that names the provider and the position of
the character, never the key. ``check_header_values`` does the same for every header value
of a request, naming the header and never its value.

``redact`` removes secrets from a text in every form they take in exception texts: as
given, stripped, backslash-escaped (``repr`` of a ``str`` or of ``bytes``, as h11 and httpx2
print an illegal header value; JSON), URL-encoded, and cut off: any run of at least
``REDACT_MIN_PREFIX`` leading characters of such a form.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import quote, quote_plus

from .._errors import ProviderError
from ._env import env_api_key_names

__all__ = [
    "REDACTED",
    "REDACT_MIN_PREFIX",
    "check_header_values",
    "clean_api_key",
    "redact",
    "secret_forms",
]

REDACTED: Final = "[redacted]"
# Secrets shorter than this are not redacted (they would blank out ordinary words), and a
# cut-off secret is redacted once this many of its leading characters appear.
REDACT_MIN_PREFIX: Final = 8

# Visible ASCII: the characters of every provider's keys and of RFC 6750 bearer tokens.
_KEY_CHARS: Final = frozenset(chr(c) for c in range(0x21, 0x7F))
# What a header value may hold (RFC 9110 field-value, ASCII only as httpx2 encodes it).
_HEADER_CHARS: Final = _KEY_CHARS | {" ", "\t"}


def _describe(char: str) -> str:
    if char == " ":
        return "a space"
    if char.isspace():
        return f"whitespace (U+{ord(char):04X})"
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"a control character (U+{ord(char):04X})"
    return f"a non-ASCII character (U+{ord(char):04X})"


def clean_api_key(
    key: str,
    provider: str,
    *,
    what: str = "API key",
    owner: str | None = None,
    sources: list[str] | None = None,
) -> str:
    """``key`` without surrounding whitespace; ``ProviderError`` naming the provider (or
    ``owner``) and where keys come from (or ``sources``), never the key, when it is blank
    or holds any character other than visible ASCII."""
    cleaned = key.strip()
    owner = owner or f"provider {provider!r}"
    if sources is None:
        sources = ["the request options", "get_api_key", *env_api_key_names(provider)]
    where = ", ".join(sources)
    if not cleaned:
        raise ProviderError(
            f"The {what} for {owner} is blank (only whitespace); set one in: {where}"
        )
    for index, char in enumerate(cleaned):
        if char not in _KEY_CHARS:
            raise ProviderError(
                f"The {what} for {owner} contains {_describe(char)} at position {index}; "
                "a key is visible ASCII without spaces (surrounding whitespace is "
                f"stripped). Check the value given in: {where}"
            )
    return cleaned


def check_header_values(headers: Mapping[str, str], provider: str) -> None:
    """``ProviderError`` naming the header (never its value) when a value holds a
    character no HTTP header may carry (a line break, another control character,
    non-ASCII)."""
    for name, value in headers.items():
        for index, char in enumerate(value):
            if char not in _HEADER_CHARS:
                raise ProviderError(
                    f"The header {name!r} of a request to provider {provider!r} contains "
                    f"{_describe(char)} at position {index}; header values are visible "
                    "ASCII, spaces and tabs. Check the model's and the options' headers"
                )


def _escaped(text: str) -> set[str]:
    """The forms of ``text`` after one escaping step."""
    return {
        repr(text)[1:-1],
        repr(text.encode("utf-8", "backslashreplace"))[2:-1],
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        quote(text, safe=""),
        quote(text),
        quote_plus(text),
    }


@functools.lru_cache(maxsize=256)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Every form of ``secret`` that ``redact`` removes, longest first: as given,
    stripped, and each of those escaped once or twice (a ``repr`` inside a ``repr``)."""
    forms = {secret, secret.strip()}
    for _ in range(2):
        forms |= {escaped for form in forms for escaped in _escaped(form)}
    # Whitespace around a form is not secret (a key file's trailing newline, kept raw by
    # repr or JSON): removing it keeps the text next to a key, and the rest of the form
    # is still redacted.
    usable = {form.strip() for form in forms}
    usable = {form for form in usable if len(form) >= REDACT_MIN_PREFIX}
    return tuple(sorted(usable, key=lambda form: (-len(form), form)))


def _redact_form(text: str, form: str) -> str:
    """``text`` with every run of at least ``REDACT_MIN_PREFIX`` leading characters of
    ``form`` (up to all of it) replaced."""
    head = form[:REDACT_MIN_PREFIX]
    start = text.find(head)
    if start < 0:
        return text
    parts: list[str] = []
    done = 0
    while start >= 0:
        end = start + len(head)
        limit = min(len(text), start + len(form))
        while end < limit and text[end] == form[end - start]:
            end += 1
        parts.append(text[done:start])
        parts.append(REDACTED)
        done = end
        start = text.find(head, end)
    parts.append(text[done:])
    return "".join(parts)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret (see ``secret_forms``) replaced by
    ``[redacted]``."""
    forms = sorted(
        {form for secret in secrets for form in secret_forms(secret)},
        key=lambda form: (-len(form), form),
    )
    for form in forms:
        text = _redact_form(text, form)
    return text
