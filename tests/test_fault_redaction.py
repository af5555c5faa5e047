"""The fault suite, redaction: a key drawn from the whole printable range, embedded in a
text in every form an error text shows it (raw, escaped, URL-encoded, inside base64), is
removed completely, every occurrence, and nothing around it is touched. Then the same
end to end: a server that echoes a key full of ``/ + = % "`` back in its error, against
every HTTP provider."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pi_trio.ai._keys._secrets import REDACT_MIN_PREFIX, REDACTED, credential_secrets, redact

from .fault_providers_support import KEY, PROVIDERS, Provider
from .fault_server import head, serve_faults
from .test_fault_providers import stream


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def _repr(s: str) -> str:
    return repr(s)[1:-1]


def _json(s: str) -> str:
    return json.dumps(s)[1:-1]


# Every way an error text shows a secret, without the quotes around it (which are not
# secret and stay): what a provider, an HTTP library or a logger does to it (Python's
# repr of str and bytes, JSON as Python, JavaScript and Go write it, URL-encoding as
# browsers and servers write it, one escaping inside another).
FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "repr": _repr,
    "bytes repr": lambda s: repr(s.encode("utf-8", "backslashreplace"))[2:-1],
    "json": _json,
    "json unicode": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "json escaped slash": lambda s: _json(s).replace("/", "\\/"),
    "go json": lambda s: (
        _json(s).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    ),
    "url": lambda s: quote(s, safe=""),
    "url path": quote,
    "url plus": quote_plus,
    "url lower hex": lambda s: _lower_hex(quote(s, safe="")),
    "json in json": lambda s: _json(_json(s)),
    "repr in repr": lambda s: _repr(_repr(s)),
    "json in url": lambda s: quote(_json(s), safe=""),
    "url in json": lambda s: _json(quote(s, safe="")),
    "cut off": lambda s: s.strip()[: max(REDACT_MIN_PREFIX, len(s.strip()) // 2)],
}

# Keys: any printable character (letters, marks, digits, punctuation, symbols, spaces),
# at least REDACT_MIN_PREFIX of them once stripped; ASCII punctuation weighted up, since
# base64 tokens and AWS secrets are made of it.
_PRINTABLE = st.characters(categories=("L", "M", "N", "P", "S", "Zs"))
_KEY_CHAR = st.one_of(
    _PRINTABLE,
    st.sampled_from("/+=%\"\\&<>'~"),
    st.characters(min_codepoint=0x21, max_codepoint=0x7E),
)
KEYS = st.text(_KEY_CHAR, min_size=REDACT_MIN_PREFIX, max_size=48).filter(
    lambda k: len(k.strip()) >= REDACT_MIN_PREFIX
)
# Around the key: control characters, which no key and no form of one holds, so that
# what is left of the text can be compared exactly.
FILLER = st.text(st.sampled_from("\n\t\r\x0b\x0c\x1f"), max_size=6)


@given(
    key=KEYS,
    ending=st.sampled_from(["", "\n", "\r\n", " "]),
    form=st.sampled_from(sorted(FORMS)),
    before=FILLER,
    between=FILLER.filter(bool),
    after=FILLER,
)
@example(
    key="AKIAfoo/Zm9vYmFy+YmF6cXV4==",
    ending="",
    form="raw",
    before="",
    between="\n",
    after="",
)
def test_every_occurrence_of_every_form_is_redacted_whole(
    key: str, ending: str, form: str, before: str, between: str, after: str
) -> None:
    secret = key + ending
    shown = FORMS[form](secret)
    # the form's own surrounding whitespace (a key file's newline, kept raw) is not secret
    core = shown.strip()
    lead, trail = shown[: len(shown) - len(shown.lstrip())], shown[len(shown.rstrip()) :]
    text = before + shown + between + shown + after
    middle = trail + between + lead
    expected = before + lead + REDACTED + middle + REDACTED + trail + after
    assert redact(text, {secret}) == expected, (core, text)


@given(
    key=KEYS.filter(lambda k: k == k.strip()),
    prefix=st.binary(max_size=7),
    suffix=st.binary(max_size=7),
    urlsafe=st.booleans(),
)
def test_a_key_inside_base64_is_redacted_but_for_the_bits_it_shares(
    key: str, prefix: bytes, suffix: bytes, urlsafe: bool
) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    data = key.encode("utf-8", "backslashreplace")
    blob = encode(prefix + data + suffix).decode()
    text = f"header Authorization: Basic {blob}\n"
    redacted = redact(text, {key})
    assert redacted.startswith("header Authorization: Basic "), redacted
    assert redacted.endswith("\n")
    left, marker, right = redacted[len("header Authorization: Basic ") : -1].partition(REDACTED)
    assert marker, redacted
    # what is left is the base64 of the bytes around the key, and at most the one
    # character at each end that mixes their bits with the key's
    assert blob.startswith(left), redacted
    assert len(left) <= -(-8 * len(prefix) // 6), redacted
    assert blob.endswith(right), redacted
    assert len(blob) - len(right) >= 8 * (len(prefix) + len(data)) // 6, redacted
    assert REDACTED not in right


def test_a_basic_credential_is_redacted_decoded_and_by_its_password() -> None:
    password = "s3cr3t/pass+word=="
    value = "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()
    secrets = credential_secrets(value)
    assert secrets == {value[6:], f"alice:{password}", password}
    text = f"denied {value} for alice:{password} ({password})"
    assert redact(text, secrets) == "denied Basic [redacted] for [redacted] ([redacted])"


def test_a_bearer_credential_is_its_token_alone() -> None:
    assert credential_secrets("Bearer abc/def+ghi==") == {"abc/def+ghi=="}
    assert credential_secrets("token-without-scheme") == {"token-without-scheme"}


# --------------------------------------------------------------------------- end to end

SPECIAL = 'sk-fault/Zm9vYmFy+YmF6cXV4==%2F"q\\tail-0123456789'


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_key_full_of_url_and_json_characters_echoed_back_is_redacted_whole(
    provider: Provider,
) -> None:
    key = provider.key.replace(KEY, SPECIAL)
    echoed = " | ".join(
        [key, json.dumps(key), quote(key, safe=""), quote_plus(key), repr(key.encode())]
    )
    body = json.dumps({"error": {"message": f"invalid key: {echoed}"}}).encode()

    async def script(conn):  # type: ignore[no-untyped-def]
        headers = {"content-type": "application/json", "content-length": str(len(body))}
        await conn.send(head(401, headers) + body)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url, key=key)
    text = outcome.text
    assert outcome.message.stop_reason == "error", text
    assert "invalid key: [redacted]" in text, text
    for piece in ("Zm9vYmFy", "YmF6cXV4", "tail-0123456789", "0123456789"):
        assert piece not in text, (piece, text)
