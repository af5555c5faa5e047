"""API keys on their way into headers and out of error texts: ``clean_api_key``,
``check_header_values`` and ``redact`` (sans-IO)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, quote_plus

import h11
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_trio.ai import ProviderError
from pi_trio.ai._keys._secrets import (
    REDACT_MIN_PREFIX,
    check_header_values,
    clean_api_key,
    redact,
)

KEY = "sk-test-secret-123"


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize("raw", [f"{KEY}\n", f"  {KEY}\r\n", f"\t{KEY} "])
def test_surrounding_whitespace_of_a_key_is_stripped(raw: str) -> None:
    assert clean_api_key(raw, "openai") == KEY


@pytest.mark.parametrize(
    ("raw", "described"),
    [
        ("sk-test\n-secret-123", "whitespace (U+000A) at position 7"),
        ("sk-test secret-123", "a space at position 7"),
        ("sk-test\x00secret-123", "a control character (U+0000) at position 7"),
        ("sk-test\x7fsecret-123", "a control character (U+007F) at position 7"),
        ("sk-testésecret-123", "a non-ASCII character (U+00E9) at position 7"),
    ],
)
def test_a_key_with_other_characters_is_refused_naming_the_provider_not_the_key(
    raw: str, described: str
) -> None:
    with pytest.raises(ProviderError) as info:
        clean_api_key(raw, "anthropic")
    text = str(info.value)
    assert text.startswith(f"The API key for provider 'anthropic' contains {described}; ")
    assert "ANTHROPIC_API_KEY" in text
    assert "secret" not in text
    assert "sk-test" not in text


def test_a_blank_key_is_refused() -> None:
    with pytest.raises(ProviderError, match=r"^The API key for provider 'openai' is blank"):
        clean_api_key(" \n", "openai")


def test_a_header_value_with_a_line_break_is_refused_naming_only_the_header() -> None:
    check_header_values({"x-ok": "a value\twith tab"}, "openai")
    with pytest.raises(ProviderError) as info:
        check_header_values({"x-portkey-api-key": "pk-secret\r\nInjected: 1"}, "openai")
    assert str(info.value).startswith(
        "The header 'x-portkey-api-key' of a request to provider 'openai' contains "
        "whitespace (U+000D) at position 9"
    )
    assert "pk-secret" not in str(info.value)


# --------------------------------------------------------------------------- redaction


def _forms(key: str) -> dict[str, str]:
    """The ways an exception text shows a key."""
    header_error: Any = None
    try:
        h11.Request(method="GET", target="/", headers=[("Host", "x"), ("x-api-key", key)])
    except h11.LocalProtocolError as exc:
        header_error = str(exc)
    return {
        "raw": key,
        "stripped": key.strip(),
        "repr": repr(key),
        "bytes repr": repr(key.encode()),
        "bearer bytes repr": repr(f"Bearer {key}".encode()),
        "json": json.dumps(key),
        "json in json": json.dumps(json.dumps(key)),
        "repr in repr": repr(repr(key)),
        "url": quote(key, safe=""),
        "url plus": quote_plus(key),
        "cut off": key.strip()[:12],
        "h11 error": header_error or key,
    }


@pytest.mark.parametrize(
    "key",
    [f"{KEY}\n", "sk-ant-api03-ab/cd+ef==\r\n", "AIza'Sy\"Dq\\x", "pass phrase with spaces"],
)
def test_every_form_of_a_key_is_redacted(key: str) -> None:
    for name, form in _forms(key).items():
        text = redact(f"Network error: Illegal header value {form} (after 3 tries)", {key})
        assert key.strip()[:REDACT_MIN_PREFIX] not in text, name
        assert "[redacted]" in text, name
        assert text.startswith("Network error: Illegal header value "), name
        assert text.endswith(" (after 3 tries)"), name


def test_whitespace_around_a_key_is_kept_in_the_text() -> None:
    # a key read from a file keeps its newline; the line break after it is not secret
    assert redact(f"bad key {KEY}\nnext line", {f"{KEY}\n"}) == "bad key [redacted]\nnext line"
    assert redact(f"bad key  {KEY} \tend", {f" {KEY} "}) == "bad key  [redacted] \tend"


def test_short_secrets_and_short_prefixes_are_left_alone() -> None:
    assert redact("the key abc is short", {"abc"}) == "the key abc is short"
    # seven leading characters of a key say nothing: they are kept
    assert redact("sk-test... expired", {KEY}) == "sk-test... expired"
    assert redact(f"key {KEY[:8]}… expired", {KEY}) == "key [redacted]… expired"


_FILLER = st.text(alphabet="éß —→", max_size=20)
_KEYS = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=8)


@given(
    key=_KEYS,
    ending=st.sampled_from(["", "\n", "\r\n", " ", "\t\n"]),
    form=st.sampled_from(list(_forms("x" * 8))),
    before=_FILLER,
    after=_FILLER,
)
def test_no_form_of_any_key_survives_redaction(
    key: str, ending: str, form: str, before: str, after: str
) -> None:
    secret = key + ending
    text = redact(before + _forms(secret)[form] + after, {secret})
    assert key[:REDACT_MIN_PREFIX] not in text
    assert text.startswith(before)
    assert text.endswith(after)
