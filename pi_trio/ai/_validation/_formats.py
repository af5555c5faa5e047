"""The ``format`` checks of JSON Schema 2020-12 as the original checks them.

Every format 2020-12 defines, plus ``url`` and ``json-pointer-uri-fragment``; any other
``format`` is an annotation. A check applies to strings only. The rules are TypeBox
1.3.27's (MIT License, Copyright (c) 2017-2026 Haydn Paterson), which
``@earendil-works/pi-schema`` ships: the regular expressions below are TypeBox's,
anchored to the whole string.

``url``, ``iri`` and ``iri-reference`` ask a WHATWG URL parser, as JavaScript's
``URL.canParse`` does: `ada_url` with the ``ecma`` extra (the parser Node.js uses), else
`urllib.parse` with the same character rules, which accepts a little more. ``hostname``
and ``idn-hostname`` check labels with `idna` (IDNA 2008); ``regex`` compiles the text as
an ECMAScript pattern (see ``_regex``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from ._regex import is_ecma_regex

__all__ = ["FORMATS"]


@functools.cache
def _ada_url() -> Any:
    """`ada_url.URL` of the ``ecma`` extra, imported on first use; None without it."""
    try:
        from ada_url import URL
    except ImportError:
        return None
    return URL


def _lazy(pattern: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    """``re.compile(pattern, flags)`` on first use: most processes check no format at all."""
    return functools.cache(lambda: re.compile(pattern, flags))


def _pattern(body: str, flags: int = re.IGNORECASE) -> Callable[[str], bool]:
    """A check that ``body`` matches the whole value."""
    compiled = _lazy(body, flags | re.ASCII)
    return lambda value: compiled().fullmatch(value) is not None


_EMAIL: Final = _pattern(
    r"""(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*|"(?:[^"\\]|\\[\x20-\x7e])*")@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[(?:IPv6:[a-f0-9:]+|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})\])"""
)
_IPV6: Final = _pattern(
    r"""(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:)?[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)"""
)
_URI: Final = _pattern(
    r"""[a-z][a-z0-9+\-.]*:(?:\/\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:[\da-f]{1,4}:){6}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|::(?:[\da-f]{1,4}:){5}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:[\da-f]{1,4})?::(?:[\da-f]{1,4}:){4}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,1}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){3}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,2}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){2}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,3}[\da-f]{1,4})?::[\da-f]{1,4}:(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,4}[\da-f]{1,4})?::(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,5}[\da-f]{1,4})?::[\da-f]{1,4}|(?:(?:[\da-f]{1,4}:){0,6}[\da-f]{1,4})?::)|v[0-9a-f]+\.[-a-z0-9._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?"""
)
_URI_REFERENCE: Final = _pattern(
    r"""(?:[a-z][a-z0-9+\-.]*:(?:\/\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:[\da-f]{1,4}:){6}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|::(?:[\da-f]{1,4}:){5}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:[\da-f]{1,4})?::(?:[\da-f]{1,4}:){4}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,1}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){3}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,2}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){2}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,3}[\da-f]{1,4})?::[\da-f]{1,4}:(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,4}[\da-f]{1,4})?::(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,5}[\da-f]{1,4})?::[\da-f]{1,4}|(?:(?:[\da-f]{1,4}:){0,6}[\da-f]{1,4})?::)|v[0-9a-f]+\.[-a-z0-9._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:\/\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:[\da-f]{1,4}:){6}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|::(?:[\da-f]{1,4}:){5}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:[\da-f]{1,4})?::(?:[\da-f]{1,4}:){4}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,1}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){3}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,2}[\da-f]{1,4})?::(?:[\da-f]{1,4}:){2}(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,3}[\da-f]{1,4})?::[\da-f]{1,4}:(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,4}[\da-f]{1,4})?::(?:[\da-f]{1,4}:[\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))|(?:(?:[\da-f]{1,4}:){0,5}[\da-f]{1,4})?::[\da-f]{1,4}|(?:(?:[\da-f]{1,4}:){0,6}[\da-f]{1,4})?::)|v[0-9a-f]+\.[-a-z0-9._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=@]|%[0-9a-f]{2})+(?:\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?)(?:\?(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?"""
)
_URI_TEMPLATE: Final = _pattern(
    r"""(?:(?:[^\x00-\x20"<>%\\^`{|}\x7f]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\d{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\d{0,3}|\*)?)*\})*"""
)
_DURATION: Final = _pattern(
    r"""P((\d+Y(\d+M(\d+D)?)?|\d+M(\d+D)?|\d+D)(T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S))?|T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S)|\d+W)""",
    0,
)

_DATE: Final = _lazy(r"(\d\d\d\d)-(\d\d)-(\d\d)", re.ASCII)
_DAYS: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_TIME: Final = _lazy(r"(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))?", re.ASCII)
_MINUTES_PER_DAY: Final = 1440
_IPV4: Final = _pattern(
    r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)", 0
)
_UUID: Final = _pattern(r"[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}")
_JSON_POINTER: Final = _pattern(r"(?:/(?:[^~/]|~0|~1)*)*", re.DOTALL)
_JSON_POINTER_FRAGMENT: Final = _pattern(
    r"#(?:/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*"
)
_RELATIVE_JSON_POINTER: Final = _pattern(
    r"(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)", re.DOTALL
)
# \p{L}\p{N} is [^\W_] in Python; ``.`` of a JavaScript /u pattern stops at line terminators
_IDN_EMAIL: Final = _lazy(
    r"(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010FFFF-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010FFFF-]+)*"
    r'|"(?:[^"\\]|\\[^\n\r\u2028\u2029])*")'
    r"@[^\W_](?:[^\W_]|-){0,62}(?<!-)(?:\.[^\W_](?:[^\W_]|-){0,62}(?<!-))*",
    re.IGNORECASE,
)
_LDH_LABEL: Final = _lazy(r"[a-zA-Z0-9-]*", re.ASCII)
_MAX_HOSTNAME: Final = 253
_MAX_LABEL: Final = 63
_FULLWIDTH: Final = _lazy("[\uff01-\uff5e]")
_IGNORED: Final = _lazy("[\u00ad\u034f\u180b-\u180d\u200b\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_FULL_STOPS: Final = _lazy("[\u3002\uff0e\uff61]")
_INVALID_IRI: Final = _lazy(r"[\x00-\x20<>^`{|}\\]")
_INVALID_IRI_REFERENCE: Final = _lazy(r"[\x00-\x20\x7f\\]|%(?![0-9a-fA-F]{2})")
_INVALID_PERCENT: Final = _lazy(r"%(?![0-9a-fA-F]{2})")
_SCHEME_WITHOUT_COLON: Final = _lazy(r"[a-zA-Z][a-zA-Z0-9+\-.]*//")
_IP_FUTURE: Final = _lazy(r"\[[vV][0-9a-fA-F]+\.[^\]]+\]")
_IP_FUTURE_LIMIT: Final = 2048  # longer values are not searched for an IPvFuture host
_SCHEME: Final = _lazy(r"[a-zA-Z][a-zA-Z0-9+\-.]*:")


def _is_date(value: str) -> bool:
    match = _DATE().fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(value: str) -> bool:
    """A time with a zone (``Z`` or an offset); a leap second only at 23:59:60 UTC."""
    match = _TIME().fullmatch(value)
    if match is None:
        return False
    hour, minute, second = (int(part) for part in match.group(1, 2, 3))
    zulu, sign, zone_hours, zone_minutes = match.group(4, 5, 6, 7)
    if not zulu and not sign:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if sign and (int(zone_hours) > 23 or int(zone_minutes) > 59):
        return False
    if second < 60:
        return True
    offset = int(zone_hours or 0) * 60 + int(zone_minutes or 0)
    utc = hour * 60 + minute - (-offset if sign == "-" else offset)
    return utc % _MINUTES_PER_DAY == _MINUTES_PER_DAY - 1


def _is_date_time(value: str) -> bool:
    parts = re.split("[Tt]", value)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


def _is_idn_email(value: str) -> bool:
    return _IDN_EMAIL().fullmatch(unicodedata.normalize("NFC", value)) is not None


def _is_ascii_label(label: str) -> bool:
    return (
        _LDH_LABEL().fullmatch(label) is not None
        and not label.startswith("-")
        and not label.endswith("-")
        and label[2:4] != "--"
    )


def _is_unicode_label(label: str) -> bool:
    """An IDNA 2008 U-label (case aside) whose A-label fits 63 octets."""
    import idna  # its tables load on the first hostname checked

    try:
        idna.alabel(label.lower())
    except (idna.IDNAError, UnicodeError, ValueError):
        return False
    return True


def _is_puny_label(label: str) -> bool:
    if label[:4].lower() != "xn--":
        return False
    body = label[4:].lower()
    if body.rfind("-") == 0:
        return False
    try:
        decoded = body.encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return False
    return not decoded.isascii() and _is_unicode_label(decoded)


def _is_hostname(value: str) -> bool:
    if not value or len(value) > _MAX_HOSTNAME or value.endswith("."):
        return False
    return all(
        0 < len(label) <= _MAX_LABEL and (_is_puny_label(label) or _is_ascii_label(label))
        for label in value.split(".")
    )


def _is_idn_hostname(value: str) -> bool:
    if not value or " " in value:
        return False
    value = _FULLWIDTH().sub(lambda m: chr(ord(m.group()) - 0xFEE0), value)
    value = _FULL_STOPS().sub(".", _IGNORED().sub("", unicodedata.normalize("NFC", value)))
    if len(value.encode("utf-16-le")) // 2 > _MAX_HOSTNAME:
        return False
    return all(
        0 < len(label.encode("utf-16-le")) // 2 <= _MAX_LABEL
        and (_is_puny_label(label) or _is_unicode_label(label))
        for label in value.split(".")
    )


def _can_parse_url(value: str, base: str | None = None) -> bool:
    """JavaScript's ``URL.canParse(value, base)``."""
    url = _ada_url()
    if url is not None:
        return bool(url.can_parse(value, base) if base else url.can_parse(value))
    if any(ord(c) <= 0x20 for c in value.strip("\x00\x20")) or "\t" in value or "\n" in value:
        return False
    if base is None and _SCHEME().match(value) is None:
        return False
    try:
        parts = urlsplit(value)
        _ = parts.port
    except ValueError:
        return False
    return True


def _is_iri(value: str) -> bool:
    if _INVALID_IRI().search(value) or _INVALID_PERCENT().search(value):
        return False
    if len(value) < _IP_FUTURE_LIMIT:
        value = _IP_FUTURE().sub("[::1]", value, count=1)
    return _can_parse_url(value)


def _is_iri_reference(value: str) -> bool:
    return (
        _INVALID_IRI_REFERENCE().search(value) is None
        and _SCHEME_WITHOUT_COLON().match(value) is None
        and _can_parse_url(value, "http://example.com")
    )


FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date": _is_date,
    "date-time": _is_date_time,
    "duration": _DURATION,
    "email": _EMAIL,
    "hostname": _is_hostname,
    "idn-email": _is_idn_email,
    "idn-hostname": _is_idn_hostname,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "iri": _is_iri,
    "iri-reference": _is_iri_reference,
    "json-pointer": _JSON_POINTER,
    "json-pointer-uri-fragment": _JSON_POINTER_FRAGMENT,
    "regex": is_ecma_regex,
    "relative-json-pointer": _RELATIVE_JSON_POINTER,
    "time": _is_time,
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "uri-template": _URI_TEMPLATE,
    "url": _can_parse_url,
    "uuid": _UUID,
}
"""The check of each format by name: true when a string has the format."""
