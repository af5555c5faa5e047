"""Unpaired UTF-16 surrogates are removed from outgoing text; real characters survive."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from pi_trio.ai.json import sanitize_surrogates

GRINNING = "\U0001f600"


def test_text_without_surrogates_is_returned_unchanged() -> None:
    text = f"plain ascii, accents é, CJK 漢字, emoji {GRINNING} 🙈👍🏽"
    assert sanitize_surrogates(text) is text


def test_lone_high_surrogate_is_removed() -> None:
    assert sanitize_surrogates("before \ud83d after") == "before  after"


def test_lone_low_surrogate_is_removed() -> None:
    assert sanitize_surrogates("x\ude00y") == "xy"


def test_high_surrogate_followed_by_a_normal_character_keeps_the_character() -> None:
    assert sanitize_surrogates("\ud83dA") == "A"


def test_low_before_high_is_not_a_pair_and_both_go() -> None:
    assert sanitize_surrogates("a\ude00\ud83db") == "ab"


def test_adjacent_surrogate_code_points_are_joined_into_the_character() -> None:
    assert sanitize_surrogates("smile \ud83d\ude00!") == f"smile {GRINNING}!"


def test_valid_emoji_next_to_a_lone_surrogate_survive() -> None:
    text = f"{GRINNING}\ud83d{GRINNING}\udc00"
    assert sanitize_surrogates(text) == GRINNING * 2


def test_lone_escape_from_json_becomes_encodable() -> None:
    decoded = json.loads('"tool said \\ud83d then stopped"')
    cleaned = sanitize_surrogates(decoded)
    assert cleaned == "tool said  then stopped"
    assert json.dumps(cleaned, ensure_ascii=False).encode("utf-8")


def test_escaped_pair_from_json_keeps_its_emoji() -> None:
    decoded = json.loads('"result: \\ud83d\\ude00"')
    assert sanitize_surrogates(decoded) == f"result: {GRINNING}"


def test_empty_text_stays_empty() -> None:
    assert sanitize_surrogates("") == ""


SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
TEXT_WITH_SURROGATES = st.lists(st.one_of(st.characters(), SURROGATES)).map("".join)


@given(TEXT_WITH_SURROGATES)
def test_result_never_holds_a_surrogate_and_always_encodes_as_utf8(text: str) -> None:
    cleaned = sanitize_surrogates(text)
    assert not any(0xD800 <= ord(char) <= 0xDFFF for char in cleaned)
    cleaned.encode("utf-8")


@given(st.text())
def test_text_that_already_encodes_is_kept_as_is(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert sanitize_surrogates(text) == text


def _as_code_units(text: str) -> str:
    """``text`` with every astral character split into its two surrogate code points."""
    units = []
    for char in text:
        point = ord(char)
        if point > 0xFFFF:
            point -= 0x10000
            units += [chr(0xD800 + (point >> 10)), chr(0xDC00 + (point & 0x3FF))]
        else:
            units.append(char)
    return "".join(units)


@given(st.text())
def test_text_split_into_utf16_code_units_is_joined_back(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert sanitize_surrogates(_as_code_units(text)) == text
