"""Keeping credentials out of a cassette (sans-IO): which headers and query parameters
carry them, and every form a known secret can take in recorded bytes.

``Redactor`` starts from the secrets it is given and the keys configured in the
environment (each provider's key variables, the AWS credentials), and learns every value
it blanks out of a credential header or query parameter, so that an echo of it elsewhere
(an error body quoting the key, a request body) is removed too. A secret is removed as
given, URL-encoded, JSON-escaped and base64-encoded at each of the three alignments a
base64 text can have (standard and URL-safe alphabets). Secrets shorter than
``MIN_SECRET`` characters are not looked for: they would blank out ordinary text.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import parse_qsl, quote, quote_plus, urlencode

from pi_trio.ai import get_providers
from pi_trio.ai.providers import env_api_key_names

__all__ = ["MIN_SECRET", "REDACTED", "SECRET_HEADERS", "SECRET_PARAMS", "Redactor"]

REDACTED: Final = "[redacted]"
MIN_SECRET: Final = 8

# Headers whose values are credentials (lower case): the providers' key headers, AWS
# SigV4's, cookies, and the ChatGPT account a Codex token names.
SECRET_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cf-aig-authorization",
        "x-amz-security-token",
        "x-amz-credential",
        "x-amz-signature",
        "cookie",
        "set-cookie",
        "chatgpt-account-id",
    }
)
# Query parameters that carry credentials (compared in lower case): Gemini's ``key=``,
# other keys and tokens, and the parts of a presigned AWS URL.
SECRET_PARAMS: Final = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "sig",
        "signature",
        "x-amz-security-token",
        "x-amz-credential",
        "x-amz-signature",
    }
)
# An authorization scheme (``Bearer``, ``Basic``, ``AWS4-HMAC-SHA256``): kept, as it says
# what kind of credential was sent.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
# Credentials of the clouds that sign requests, not named by a provider's key variables.
_CLOUD_VARIABLES: Final = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_CLOUD_API_KEY",
)


def configured_keys(env: Mapping[str, str] | None = None) -> set[str]:
    """The values of every provider's key variables and the cloud credentials set in
    ``env`` (the process environment by default)."""
    env = os.environ if env is None else env
    names = {name for provider in get_providers() for name in env_api_key_names(provider)}
    names.update(_CLOUD_VARIABLES)
    return {value for name in names if (value := env.get(name, "").strip())}


def _base64_cores(secret: bytes) -> set[bytes]:
    """The part of the base64 text of any bytes holding ``secret`` that depends on the
    secret alone, for each of the three offsets it can start at: without its first and
    last group of four characters, which may mix in the bytes around the secret."""
    cores: set[bytes] = set()
    for offset in range(3):
        core = base64.b64encode(bytes(offset) + secret)[4:-4]
        cores.add(core)
        cores.add(core.translate(bytes.maketrans(b"+/", b"-_")))
    return cores


def secret_forms(secret: str) -> set[bytes]:
    """``secret`` as it may appear in recorded bytes."""
    secret = secret.strip()
    texts = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]}
    forms = {text.encode() for text in texts}
    forms |= _base64_cores(secret.encode())
    return {form for form in forms if len(form) >= MIN_SECRET}


class Redactor:
    """Removes credentials from headers, URLs and bytes (see the module docstring)."""

    def __init__(self, secrets: Iterable[str] = (), *, env: Mapping[str, str] | None = None):
        self._forms: list[bytes] = []
        self._known: set[str] = set()
        for secret in [*secrets, *configured_keys(env)]:
            self.learn(secret)

    def learn(self, secret: str) -> None:
        """Look for ``secret`` from now on (and the credential after a scheme such as
        ``Bearer``)."""
        candidates = {secret.strip(), secret.strip().partition(" ")[2].strip()}
        for candidate in candidates:
            if len(candidate) >= MIN_SECRET and candidate not in self._known:
                self._known.add(candidate)
                self._forms.extend(secret_forms(candidate))
        self._forms.sort(key=len, reverse=True)

    def clean(self, data: bytes) -> bytes:
        """``data`` with every form of every known secret replaced."""
        for form in self._forms:
            if form in data:
                data = data.replace(form, REDACTED.encode())
        return data

    def contains_secret(self, data: bytes) -> bool:
        return any(form in data for form in self._forms)

    def headers(self, headers: Iterable[tuple[str, str]]) -> dict[str, str]:
        """Header names in lower case; credential values blanked (keeping a scheme such as
        ``Bearer``) and learnt, every other value cleaned of known secrets."""
        items = [(name.lower(), value) for name, value in headers]
        for name, value in items:
            if name in SECRET_HEADERS:
                self.learn(value)
        shown: dict[str, str] = {}
        for name, value in items:
            if name in SECRET_HEADERS:
                scheme, space, _ = value.strip().partition(" ")
                text = f"{scheme} {REDACTED}" if space and _SCHEME.fullmatch(scheme) else REDACTED
            else:
                text = self.clean(value.encode()).decode("utf-8", "replace")
            shown[name] = f"{shown[name]}, {text}" if name in shown else text
        return shown

    def url(self, url: str) -> str:
        """``url`` with the values of credential query parameters blanked (and learnt)."""
        base, mark, query = url.partition("?")
        if not mark:
            return self.clean(url.encode()).decode("utf-8", "replace")
        pairs = parse_qsl(query, keep_blank_values=True)
        for name, value in pairs:
            if name.lower() in SECRET_PARAMS:
                self.learn(value)
        kept = [
            (name, REDACTED if name.lower() in SECRET_PARAMS else value) for name, value in pairs
        ]
        shown = f"{base}?{urlencode(kept, safe='[]')}"
        return self.clean(shown.encode()).decode("utf-8", "replace")
