"""Numbers as JavaScript writes them.

JSON has one number type and the TypeScript runtime writes every number with
``Number.prototype.toString``. msgspec writes the same digits for almost every float, but
not the same spelling in two ranges: ``3e-6`` where JavaScript writes ``0.000003``
(magnitudes in [1e-6, 1e-5)), and ``1e21`` where JavaScript writes ``1e+21`` (1e21 and
up); and a whole float such as ``2.0`` is ``2`` in JavaScript.

`js_number` is the value to store for a computed amount (an ``int`` when whole, so it is
written without a fraction); `needs_js_spelling` tells when the encoder has to write a
float itself, with `js_number_text`.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = ["js_number", "js_number_text", "needs_js_spelling"]

_WHOLE_LIMIT: Final = 1e21  # from here on JavaScript writes whole numbers with an exponent


def needs_js_spelling(value: float) -> bool:
    """Whether msgspec writes the float ``value`` differently from JavaScript."""
    magnitude = abs(value)
    return 1e-6 <= magnitude < 1e-5 or (magnitude >= _WHOLE_LIMIT and math.isfinite(value))


def js_number(value: float) -> int | float:
    """``value`` as pi_trio stores a computed JSON number: an ``int`` when it is whole
    (below 1e21, where JavaScript starts writing an exponent), else the float."""
    if value.is_integer() and abs(value) < _WHOLE_LIMIT:
        return int(value)
    return value


def js_number_text(number: float) -> str:
    """JavaScript's ``String(number)``."""
    if isinstance(number, int):
        return str(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    mantissa, _, exponent = float.__repr__(abs(number)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    if fraction == "0":
        fraction = ""
    digits = whole + fraction
    point = len(whole) + int(exponent or 0) - (len(digits) - len(digits.lstrip("0")))
    digits = digits.strip("0")
    if len(digits) <= point <= 21:
        text = digits + "0" * (point - len(digits))
    elif 0 < point <= 21:
        text = f"{digits[:point]}.{digits[point:]}"
    elif -6 < point <= 0:
        text = f"0.{'0' * -point}{digits}"
    else:
        tail = f".{digits[1:]}" if len(digits) > 1 else ""
        text = f"{digits[0]}{tail}e{'+' if point > 0 else '-'}{abs(point - 1)}"
    return f"-{text}" if number < 0 else text
