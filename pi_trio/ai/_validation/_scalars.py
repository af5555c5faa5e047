"""Scalar conversions as JavaScript and TypeBox's ``Value.Convert`` make them, for
``_coerce``: ``Number(text)``, ``String(number)``, the ``Try*`` rules of each
JSON type, and ``===`` / ``Object.is`` on JSON values. Every ``try_*`` returns `NO` when
no conversion applies.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from .._json._jsnum import js_number, js_number_text

__all__ = [
    "NO",
    "coerce_primitive",
    "convert_literal",
    "identical",
    "is_finite",
    "is_number",
    "is_whole",
    "matches_type",
    "or_value",
    "same",
    "to_number",
    "try_boolean",
    "try_null",
    "try_number",
    "try_string",
]

_JS_WHITESPACE: Final = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
_RADIX: Final = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")
_BIGINT: Final = re.compile(r"-?(?:0|[1-9][0-9]*)n")
_MAX_SAFE: Final = 2**53 - 1
NO: Final[Any] = object()  # "no conversion applies"


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_finite(value: Any) -> bool:
    return is_number(value) and (isinstance(value, int) or math.isfinite(value))


def is_whole(number: float) -> bool:
    return isinstance(number, int) or number.is_integer()


def same(a: Any, b: Any) -> bool:
    """JavaScript's ``a === b``: primitives by value, objects and arrays by identity."""
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return a is b
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if is_number(a) and is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def to_number(text: str) -> int | float | None:
    """JavaScript's ``Number(text)`` when it is finite, else None; whole results are ints."""
    text = text.strip(_JS_WHITESPACE)
    if not text:
        return 0
    if _RADIX.fullmatch(text):
        return int(text, 0)
    if not _DECIMAL.fullmatch(text):
        return None
    if _INTEGER.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # beyond int()'s digit limit
            pass
    number = float(text)
    return js_number(number) if math.isfinite(number) else None


def try_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if is_finite(value):
        return js_number_text(value)
    if value is None:
        return "null"
    return value if isinstance(value, str) else NO


def try_number(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if is_finite(value):
        return value
    if value is None:
        return 0
    if not isinstance(value, str):
        return NO
    number = to_number(value)
    if number is not None:
        return number
    lower = value.lower()
    if lower in ("true", "false"):
        return int(lower == "true")
    if _BIGINT.fullmatch(value):
        big = int(value[:-1])
        return big if -_MAX_SAFE <= big <= _MAX_SAFE else NO
    return NO


def try_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if is_finite(value):
        return value == 1 if value in (0, 1) else NO
    if value is None:
        return False
    if not isinstance(value, str):
        return NO
    lower = value.lower()
    if lower == "false" or value == "0":
        return False
    if lower == "true" or value == "1":
        return True
    return NO


def try_null(value: Any) -> Any:
    if value is None or value is False or (is_finite(value) and value == 0):
        return None
    if isinstance(value, str) and (value.lower() in ("null", "undefined") or value in ("", "0")):
        return None
    return NO


def or_value(result: Any, value: Any) -> Any:
    return value if result is NO else result


def convert_literal(literal: Any, value: Any) -> Any:
    """A ``const`` or ``enum`` member taken from a value that converts to exactly it."""
    if same(literal, value):
        return value
    if isinstance(literal, bool):
        result = try_boolean(value)
    elif isinstance(literal, str):
        result = try_string(value)
    elif is_number(literal):
        result = try_number(value)
    else:
        return value
    return result if result is not NO and same(result, literal) else value


def coerce_primitive(value: Any, kind: str) -> Any:
    """Pass 3's conversion of ``value`` to the type named ``kind`` (``value`` when none)."""
    if kind in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, str) and value.strip(_JS_WHITESPACE):
            number = to_number(value)
            if number is not None and (kind == "number" or is_whole(number)):
                return number
        if isinstance(value, bool):
            return int(value)
    elif kind == "boolean":
        if value is None:
            return False
        if value == "true" or (is_number(value) and value == 1):
            return True
        if value == "false" or (is_number(value) and value == 0):
            return False
    elif kind == "string":
        if value is None:
            return ""
        if isinstance(value, bool) or is_number(value):
            return or_value(try_string(value), value)
    elif kind == "null" and (value == "" or value is False or (is_number(value) and value == 0)):
        return None
    return value


def matches_type(value: Any, kind: str) -> bool:
    if kind == "number":
        return is_finite(value)
    if kind == "integer":
        return is_finite(value) and is_whole(value)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return False


def identical(a: Any, b: Any) -> bool:
    """JavaScript's ``Object.is`` for JSON values (objects by identity)."""
    if isinstance(a, dict | list) or isinstance(b, dict | list):
        return a is b
    return type(a) is type(b) and bool(a == b)
