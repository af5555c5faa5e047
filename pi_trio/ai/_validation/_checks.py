"""The value side of the validation fast path (``_fast``): checks that return a
copy of the value they accept (dicts and lists copied, everything else shared, as
``copy_json`` copies) or `DECLINED`, which means "ask jsonschema", never "invalid".

The scalar checks are known to a parent by the exact types they accept (`LEAVES`), so an
object or an array tests those inline instead of calling them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

__all__ = [
    "CONTAINERS",
    "DECLINED",
    "JSON_TYPES",
    "LEAVES",
    "NONE",
    "SINGLE",
    "FastPath",
    "accept",
    "all_of",
    "any_json",
    "copy_value",
    "decline",
    "distinct",
    "array_check",
    "enum_check",
    "is_integer",
    "is_null",
    "number_check",
    "object_check",
    "string_check",
]

FastPath = Callable[[Any], Any]

NONE: Final = type(None)
CONTAINERS: Final = (dict, list)
JSON_TYPES: Final = frozenset({dict, list, str, int, float, bool, NONE})


class _Declined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DECLINED"


DECLINED: Final[Any] = _Declined()
"""What a fast path returns for a value it does not decide."""

# -- copying what no keyword constrains


def copy_value(value: Any) -> Any:
    """``copy_json``'s copy (dicts and lists copied, other values shared), recursively."""
    if isinstance(value, dict):
        return {
            key: copy_value(item) if isinstance(item, CONTAINERS) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [copy_value(item) if isinstance(item, CONTAINERS) else item for item in value]
    return value


def any_json(value: Any) -> Any:
    """A value no keyword here applies to: copied, or declined when it is not of a JSON
    type (a keyword might see it as one of its types)."""
    kind = type(value)
    if kind is dict or kind is list:
        return copy_value(value)
    return value if kind in JSON_TYPES else DECLINED


# -- the checks of scalar types (tested inline by a parent: see `LEAVES`)


def is_str(value: Any) -> Any:
    return value if type(value) is str else DECLINED


def is_bool(value: Any) -> Any:
    return value if type(value) is bool else DECLINED


def is_null(value: Any) -> Any:
    return None if value is None else DECLINED


def is_number(value: Any) -> Any:
    kind = type(value)
    return value if kind is int or kind is float else DECLINED


def is_integer(value: Any) -> Any:
    kind = type(value)
    return value if kind is int or (kind is float and value.is_integer()) else DECLINED


# The exact types each accepts (an integral float, which ``integer`` accepts too, is
# left to the check itself).
LEAVES: Final[dict[FastPath, frozenset[type]]] = {
    is_str: frozenset({str}),
    is_bool: frozenset({bool}),
    is_null: frozenset({NONE}),
    is_number: frozenset({int, float}),
    is_integer: frozenset({int}),
}
SINGLE: Final = {
    "string": is_str,
    "boolean": is_bool,
    "null": is_null,
    "number": is_number,
    "integer": is_integer,
}


def accept(value: Any) -> Any:
    return copy_value(value)


def decline(value: Any) -> Any:
    return DECLINED


def all_of(checks: list[FastPath]) -> FastPath:
    """Every check accepts; each returns its own copy, the last one is kept."""
    if not checks:
        return accept
    if len(checks) == 1:
        return checks[0]
    members = tuple(checks)

    def check_all(value: Any) -> Any:
        result = DECLINED
        for check in members:
            result = check(value)
            if result is DECLINED:
                return DECLINED
        return result

    return check_all


def enum_check(members: list[Any]) -> FastPath:
    """Membership as jsonschema decides it for scalar values (``1 == 1.0``, ``True !=
    1``); values that are arrays or objects are declined."""
    strings = frozenset(m for m in members if type(m) is str)
    numbers = frozenset(m for m in members if type(m) is int or type(m) is float)
    true = any(m is True for m in members)
    false = any(m is False for m in members)
    null = any(m is None for m in members)
    if not numbers and not true and not false and not null:
        return lambda value: value if type(value) is str and value in strings else DECLINED

    def check_enum(value: Any) -> Any:
        kind = type(value)
        if kind is str:
            found = value in strings
        elif kind is int or kind is float:
            found = value in numbers
        elif kind is bool:
            found = true if value else false
        else:
            found = value is None and null
        return value if found else DECLINED

    return check_enum


def distinct(items: list[Any]) -> bool:
    """Whether no two items are equal as jsonschema compares them (scalars only: a list
    holding an array or an object is declined)."""
    seen = set()
    for item in items:
        kind = type(item)
        if kind is bool:
            key: Any = (bool, item)
        elif kind is str or kind is int or kind is float or item is None:
            key = item
        else:
            return False
        if key in seen:
            return False
        seen.add(key)
    return True


# -- the keywords of one type; ``only``: the schema's type is that one type alone


def object_check(
    leaves: dict[str, frozenset[type]],
    checks: dict[str, FastPath],
    required_names: frozenset[str],
    extra_check: FastPath | None,
    names_check: FastPath | None,
    low: int,
    high: int | None,
    *,
    only: bool,
) -> FastPath:
    """``leaves``: the properties whose check is a type test, by the types it accepts;
    ``extra_check``: ``additionalProperties`` (``None``: anything)."""
    sized = low > 0 or high is not None
    leaf = leaves.get
    get = checks.get

    def check_object(value: Any) -> Any:
        if type(value) is not dict:
            return DECLINED if only else any_json(value)
        if required_names and not value.keys() >= required_names:
            return DECLINED
        if sized and not (low <= len(value) and (high is None or len(value) <= high)):
            return DECLINED
        copy = dict(value)
        for key, item in value.items():
            kinds = leaf(key)
            if kinds is not None:
                if type(item) not in kinds:
                    return DECLINED
                continue
            check = get(key, extra_check)
            if check is None:
                if isinstance(item, CONTAINERS):
                    copy[key] = copy_value(item)
                continue
            result = check(item)
            if result is DECLINED:
                return DECLINED
            if result is not item:
                copy[key] = result
        if names_check is not None:
            for key in value:
                if names_check(key) is DECLINED:
                    return DECLINED
        return copy

    return check_object


def array_check(
    prefix_checks: tuple[FastPath, ...],
    item_check: FastPath,
    kinds: frozenset[type] | None,
    low: int,
    high: int | None,
    unique: bool,
    *,
    only: bool,
) -> FastPath:
    """``kinds``: the types ``item_check`` accepts when it is a type test."""
    checks = len(prefix_checks)

    def check_array(value: Any) -> Any:
        if type(value) is not list:
            return DECLINED if only else any_json(value)
        size = len(value)
        if size < low or (high is not None and size > high):
            return DECLINED
        if unique and not distinct(value):
            return DECLINED
        if kinds is not None and not checks:
            for item in value:
                if type(item) not in kinds:
                    return DECLINED
            return list(value)
        copy: list[Any] = []
        append = copy.append
        for index, item in enumerate(value):
            result = (prefix_checks[index] if index < checks else item_check)(item)
            if result is DECLINED:
                return DECLINED
            append(result)
        return copy

    return check_array


def string_check(
    low: int, high: int | None, search: Callable[[str], bool] | None, *, only: bool
) -> FastPath:
    def check_string(value: Any) -> Any:
        if type(value) is not str:
            return DECLINED if only else any_json(value)
        size = len(value)
        if size < low or (high is not None and size > high):
            return DECLINED
        if search is not None and not search(value):
            return DECLINED
        return value

    return check_string


def number_check(bounds: Sequence[tuple[str, Any]]) -> FastPath:
    """``bounds``: ``(keyword, limit)`` for the number keywords the schema has."""

    def check_number(value: Any) -> Any:
        kind = type(value)
        if kind is not int and kind is not float:
            return any_json(value)  # bool and the rest: not a number here
        for keyword, limit in bounds:
            if keyword == "minimum":
                if value < limit:
                    return DECLINED
            elif keyword == "maximum":
                if value > limit:
                    return DECLINED
            elif keyword == "exclusiveMinimum":
                if value <= limit:
                    return DECLINED
            elif keyword == "exclusiveMaximum":
                if value >= limit:
                    return DECLINED
            # multipleOf: decided here only for an integer value and divisor
            elif kind is not int or type(limit) is not int or value % limit:
                return DECLINED
        return value

    return check_number
