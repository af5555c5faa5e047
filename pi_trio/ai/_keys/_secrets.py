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
print an illegal header value; JSON, with ``/`` escaped or not and with HTML characters as
``\\u003c`` as Go writes it), URL-encoded (upper- or lower-case hex), each of those
escaped once more, inside base64 (at any of the three alignments, as in a ``Basic``
credential), and cut off: any run of at least ``REDACT_MIN_PREFIX`` leading characters of
such a form. Every match is found in the text as given, and the union of their spans is
replaced, so one form's match cannot hide the rest of another's.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
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
    "credential_secrets",
    "is_secret_name",
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


# What the name of a header or an option says when its value is a credential.
_SECRET_NAME: Final = re.compile(r"auth|key|token|secret|password|credential|cookie", re.I)


def is_secret_name(name: str) -> bool:
    """Whether a header or option called ``name`` carries a credential (``Authorization``,
    ``x-api-key``, ``bearer_token``, ``aws_secret_access_key``, ``Cookie``...): its value
    is never shown in a ``repr``."""
    return _SECRET_NAME.search(name) is not None


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


_GO_HTML: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_PERCENT: Final = re.compile(r"%[0-9A-F]{2}")


def _escaped(text: str) -> set[str]:
    """The forms of ``text`` after one escaping step."""
    as_json = json.dumps(text)[1:-1]
    quoted = quote(text, safe="")
    return {
        repr(text)[1:-1],
        repr(text.encode("utf-8", "backslashreplace"))[2:-1],
        as_json,
        as_json.replace("/", "\\/"),
        "".join(_GO_HTML.get(char, char) for char in as_json),
        json.dumps(text, ensure_ascii=False)[1:-1],
        quoted,
        _PERCENT.sub(lambda match: match.group().lower(), quoted),
        quote(text),
        quote_plus(text),
    }


def _base64_cores(text: str) -> set[str]:
    """What stays the same of ``text``'s base64 wherever it sits in a longer value: for
    each of the three byte alignments, the characters made only of ``text``'s bits (the
    standard and the URL-safe alphabet)."""
    data = text.encode("utf-8", "backslashreplace")
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        core = encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


@functools.lru_cache(maxsize=256)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Every form of ``secret`` that ``redact`` removes, longest first: as given,
    stripped, each of those escaped once or twice (a ``repr`` inside a ``repr``), and
    their base64 (each alignment, URL-encoded too)."""
    forms = {secret, secret.strip()}
    for _ in range(2):
        forms |= {escaped for form in forms for escaped in _escaped(form)}
    for core in _base64_cores(secret.strip()):
        forms |= {core, quote(core, safe="")}
    # Whitespace around a form is not secret (a key file's trailing newline, kept raw by
    # repr or JSON): removing it keeps the text next to a key, and the rest of the form
    # is still redacted.
    usable = {form.strip() for form in forms}
    usable = {form for form in usable if len(form) >= REDACT_MIN_PREFIX}
    return tuple(sorted(usable, key=lambda form: (-len(form), form)))


def credential_secrets(value: str) -> set[str]:
    """The secrets of an authorization header's ``value``: the credential after a scheme
    such as ``Bearer `` (whose own 8-character prefix would redact ordinary words), or the
    whole value; for ``Basic``, also the decoded ``user:password`` and the password."""
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    if not credential:
        return {value}
    secrets = {credential}
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return secrets
        secrets |= {decoded, decoded.partition(":")[2]} - {""}
    return secrets


def _spans(text: str, form: str) -> list[tuple[int, int]]:
    """Where ``text`` holds ``form`` or a run of at least ``REDACT_MIN_PREFIX`` of its
    leading characters, each run as long as it goes (runs may overlap: a periodic key's
    whole form can start inside a shorter run)."""
    head = form[:REDACT_MIN_PREFIX]
    spans = []
    start = text.find(head)
    while start >= 0:
        spans.append((start, start + _run_length(text, start, form)))
        start = text.find(head, start + 1)
    return spans


def _run_length(text: str, start: int, form: str) -> int:
    """How many leading characters of ``form`` ``text`` holds at ``start`` (its head is
    known to be there); compared in C, halving the length, not character by character."""
    matched, longest = REDACT_MIN_PREFIX, min(len(form), len(text) - start)
    if text.startswith(form[:longest], start):
        return longest
    while longest - matched > 1:  # form[:matched] is there, form[:longest] is not
        middle = (matched + longest) // 2
        if text.startswith(form[:middle], start):
            matched = middle
        else:
            longest = middle
    return matched


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret (see ``secret_forms``) replaced by
    ``[redacted]``: all matches are found first, and each stretch of text they cover
    together becomes one ``[redacted]``."""
    forms = {form for secret in secrets for form in secret_forms(secret)}
    spans = sorted(span for form in forms for span in _spans(text, form))
    if not spans:
        return text
    parts: list[str] = []
    done = 0
    cover_start, cover_end = spans[0]
    for start, end in spans[1:]:
        if start <= cover_end:
            cover_end = max(cover_end, end)
            continue
        parts += [text[done:cover_start], REDACTED]
        done = cover_end
        cover_start, cover_end = start, end
    parts += [text[done:cover_start], REDACTED, text[cover_end:]]
    return "".join(parts)
