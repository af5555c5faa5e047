"""A safe arithmetic evaluator for the calculator tool.

The expression is parsed with ``ast`` and walked node by node; only numbers, the
arithmetic operators, parentheses and a short list of math functions and constants are
accepted. Nothing is ever passed to ``eval``. Sizes are bounded before any arithmetic
runs: the expression length, the bit length of every integer operand and intermediate
(so ``9**9**9`` is refused instead of eating the machine), and the digits ``round`` may
round to (``round(5, -999999999)`` would build a power of ten of a billion digits). Big
integer arithmetic runs in C holding the interpreter lock, where no Ctrl-C reaches it:
these bounds are what keeps the CLI responsive while the calculator runs.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Final, TypeAlias

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "MAX_INT_BITS",
    "MAX_ROUND_DIGITS",
    "CalculatorError",
    "evaluate",
    "format_number",
]

Number: TypeAlias = int | float

# Long enough for any arithmetic a person types; short enough that parsing stays cheap and
# the nesting cannot reach the parser's recursion limit.
MAX_EXPRESSION_CHARS: Final = 500
# About 3000 decimal digits: far beyond useful answers, far below slow big-int arithmetic.
MAX_INT_BITS: Final = 10_000
# ``round``'s digits either way: past the ~3011 decimal digits of MAX_INT_BITS (and the 324
# of a float) rounding changes nothing, and Python computes 10**abs(digits) to find that out.
MAX_ROUND_DIGITS: Final = 4_000

_BINARY: Final[dict[type[ast.operator], Callable[[Number, Number], Number]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: Final[dict[type[ast.unaryop], Callable[[Number], Number]]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def _round(value: Number, digits: Number | None = None) -> Number:
    if digits is None:
        return round(value)
    if not isinstance(digits, int):
        raise CalculatorError(f"round's digits must be a whole number, got {digits!r}")
    if abs(digits) > MAX_ROUND_DIGITS:
        raise CalculatorError(
            f"round({value!r}, {digits}) rounds to too many digits (the limit is "
            f"{MAX_ROUND_DIGITS} either way; past it rounding changes nothing)"
        )
    return round(value, digits)


_FUNCTIONS: Final[dict[str, Callable[..., Number]]] = {
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS: Final[dict[str, float]] = {"pi": math.pi, "e": math.e, "tau": math.tau}

_ACCEPTS = (
    "numbers, + - * / // % **, parentheses, the constants "
    + ", ".join(_CONSTANTS)
    + " and the functions "
    + ", ".join(_FUNCTIONS)
)


class CalculatorError(ValueError):
    """The expression is not plain arithmetic, or it has no finite value."""


def _refuse(what: str) -> CalculatorError:
    return CalculatorError(f"{what} is not allowed; the calculator accepts {_ACCEPTS}")


def _checked(value: Number) -> Number:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculatorError(
            f"the result is too large (more than {MAX_INT_BITS} bits); "
            "use floats (e.g. 2.0**5000) for an approximate value"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError(f"the result is not a finite number ({value!r})")
    return value


def _power(base: Number, exponent: Number) -> Number:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and abs(base) > 1
        and exponent * (abs(base).bit_length() - 1) > MAX_INT_BITS
    ):
        raise CalculatorError(
            f"{base}**{exponent} is too large (more than {MAX_INT_BITS} bits); "
            "use floats (e.g. 2.0**5000) for an approximate value"
        )
    result = base**exponent
    if isinstance(result, complex):
        raise CalculatorError(f"({base}) ** {exponent} has no real value")
    return result


def _eval(node: ast.AST) -> Number:
    match node:
        case ast.Expression(body=body):
            return _eval(body)
        case ast.Constant(value=value):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _refuse(f"the literal {value!r}")
            return value
        case ast.BinOp(left=left, op=op, right=right):
            apply = _BINARY.get(type(op))
            if apply is None:
                raise _refuse(f"the operator {type(op).__name__}")
            a, b = _eval(left), _eval(right)
            if isinstance(op, ast.Pow):
                return _checked(_power(a, b))
            return _checked(apply(a, b))
        case ast.UnaryOp(op=op, operand=operand):
            apply_unary = _UNARY.get(type(op))
            if apply_unary is None:
                raise _refuse(f"the operator {type(op).__name__}")
            return _checked(apply_unary(_eval(operand)))
        case ast.Name(id=name):
            if name in _CONSTANTS:
                return _CONSTANTS[name]
            raise _refuse(f"the name {name!r}")
        case ast.Call(func=ast.Name(id=name), args=args, keywords=[]) if name in _FUNCTIONS:
            values = [_eval(arg) for arg in args]
            return _checked(_FUNCTIONS[name](*values))
        case ast.Call():
            raise _refuse("this function call")
        case ast.Attribute():
            raise _refuse("attribute access")
        case _:
            raise _refuse(f"{type(node).__name__} syntax")


def evaluate(expression: str) -> Number:
    """The value of an arithmetic ``expression``; ``CalculatorError`` explains a refusal."""
    if not isinstance(expression, str):
        raise CalculatorError(f"the expression must be a string, got {expression!r}")
    text = expression.strip()
    if not text:
        raise CalculatorError("the expression is empty; give arithmetic like '(2 + 3) * 4'")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(
            f"the expression has {len(text)} characters; the limit is {MAX_EXPRESSION_CHARS}"
        )
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"{expression!r} is not a valid expression ({exc.msg})") from exc
    try:
        return _eval(tree)
    except ZeroDivisionError as exc:
        raise CalculatorError(f"{expression!r} divides by zero") from exc
    except (OverflowError, ValueError, TypeError) as exc:
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(f"{expression!r} has no value: {exc}") from exc


def format_number(value: Number) -> str:
    """Integers exactly; floats with 15 significant digits (so 0.1 + 0.2 shows 0.3)."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".15g")
