"""The compiled-schema half of tool-argument validation (see ``_validate``): each tool
schema compiled once (in the original's dialect, with its fast path) and cached, and
`check`, which runs the fast path, coercion, validation and the explanation of failures
under a budget (``_budget``), and `check_fast`, the fast path alone.

Imported by ``_validate`` on the first validation, not with ``pi_trio``: jsonschema
and its dependencies take tens of milliseconds to import, which a program that never
validates arguments (or not yet) should not pay.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
from collections import OrderedDict
from typing import Any, Final

import msgspec

from .._arguments._partial import copy_json
from ._budget import (
    MAX_SCHEMA_NODES,
    Budget,
    BudgetExceeded,
    count_nodes,
    running,
)
from ._coerce import coerce
from ._dialect import accepts_of, compile_validator
from ._explain import explain
from ._fast import DECLINED, compile_fast_path
from ._refs import resolver_of

__all__ = ["CACHE_SIZE", "DECLINED", "check", "check_fast"]

_logger = logging.getLogger("pi_trio.ai")

_MISSING: Final[Any] = object()
CACHE_SIZE: Final = 256
"""Compiled validators kept (least recently used dropped first): more distinct tool schemas
than one process normally declares, few enough that a schema generator cannot grow memory."""


def check_fast(parameters: Any, arguments: Any) -> Any:
    """A validated copy of ``arguments`` when the schema's fast path surely accepts them
    (microseconds, no pattern that could backtrack); else ``DECLINED``: ask `check`."""
    checker = _checker(parameters)
    if not isinstance(checker, _Checker) or checker.fast is None:
        return DECLINED
    return checker.fast(arguments)


def check(
    tool_name: str, parameters: Any, arguments: Any, budget: Budget | None = None
) -> tuple[Any, list[tuple[str, str]] | None]:
    """``(value, None)``: a validated, coerced copy of ``arguments``; or ``(value,
    details)``: the coerced copy that failed, with ``(path, message)`` per problem.
    Arguments of a schema that cannot be used are passed through (copied), with a
    warning on the ``pi_trio.ai`` logger naming the tool. A schema past
    ``MAX_SCHEMA_NODES``, or a check past the budget's limits, fails with one detail
    naming the limit; a cancelled ``budget`` raises ``ValidationCancelled``."""
    checker = _checker(parameters)
    if isinstance(checker, _TooLarge):
        return copy_json(arguments), [("root", checker.reason)]
    if checker is None:
        _warn_unvalidated(tool_name, "the parameters are not a valid JSON Schema")
        return copy_json(arguments), None
    with running(budget or Budget()):
        try:
            return _check(checker, arguments)
        except BudgetExceeded as exc:
            return copy_json(arguments), [("root", str(exc))]
        except RecursionError:
            _warn_unvalidated(
                tool_name,
                "checking recursed without end ($refs in a circle, or arguments nested too deep)",
            )
            return copy_json(arguments), None


def _check(checker: _Checker, arguments: Any) -> tuple[Any, list[tuple[str, str]] | None]:
    fast = checker.fast
    if fast is not None:
        # a copy of arguments the schema surely accepts: nothing to drop or coerce (both
        # only touch invalid values)
        copied = fast(arguments)
        if copied is not DECLINED:
            return copied, None
    value = copy_json(arguments)
    value, valid = coerce(value, checker.schema, checker.accepts, checker.resolve)
    if valid:
        return value, None
    details = explain(checker.schema, value, checker.accepts, checker.resolve)
    return value, details


@functools.lru_cache(maxsize=256)
def _warn_unvalidated(tool_name: str, reason: str) -> None:
    """Log once per tool and reason, not on every call of that tool."""
    _logger.warning(
        'Schema compilation failed for tool "%s": %s; its arguments are passed through unvalidated',
        tool_name,
        reason,
    )


# -- compiled schemas


class _Checker:
    """A compiled schema plus the schema-guided passes that run before validation."""

    def __init__(self, schema: Any, validator: Any) -> None:
        self.schema = schema
        self.validator = validator
        self.fast = compile_fast_path(schema, validator)
        self._accepts = accepts_of(validator)
        self._resolve = resolver_of(schema)

    def accepts(self, schema: Any, value: Any) -> bool:
        return self._accepts(schema, value)

    def resolve(self, schema: Any) -> Any:
        return self._resolve(schema)


class _TooLarge:
    """A schema past ``MAX_SCHEMA_NODES``: never compiled; every call fails naming it."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.reason = (
            f"the tool's parameter schema holds more than {MAX_SCHEMA_NODES} JSON values "
            "(MAX_SCHEMA_NODES), too many to check arguments against in bounded time; "
            "give the tool a smaller schema (an enum of that size is better a string "
            "checked by the tool)"
        )


_Compiled = _Checker | _TooLarge | None
_cache: OrderedDict[bytes | str, _Compiled] = OrderedDict()
_cache_lock = threading.Lock()
# The schema objects seen last, with their checkers: a schema asked for again is found by
# identity and a deep comparison with the checker's copy (cheaper than encoding it for the
# content key), so one changed in place since is compiled anew, as before.
_seen: dict[int, tuple[Any, _Checker | _TooLarge]] = {}


def _checker(schema: Any) -> _Compiled:
    seen = _seen.get(id(schema))
    if seen is not None and seen[0] is schema and seen[1].schema == schema:
        return seen[1]
    try:
        # insertion-ordered keys: the same schema reordered is only a second cache entry
        key: bytes | str = msgspec.json.encode(schema)
    except (TypeError, msgspec.EncodeError):
        try:
            key = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):  # not JSON: compile it, but not for the cache
            return _compile(schema)
    # a hit needs no lock: ``get`` and ``move_to_end`` are each atomic
    checker = _cache.get(key, _MISSING)
    if checker is not _MISSING:
        with contextlib.suppress(KeyError):  # evicted by another thread meanwhile
            _cache.move_to_end(key)
    else:
        checker = _compile(copy_json(schema))
        with _cache_lock:
            _cache[key] = checker
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    if checker is not None:
        with _cache_lock:
            _seen[id(schema)] = (schema, checker)
            while len(_seen) > CACHE_SIZE:
                del _seen[next(iter(_seen))]
    return checker  # type: ignore[no-any-return]


def _compile(schema: Any) -> _Compiled:
    if count_nodes(schema, MAX_SCHEMA_NODES) > MAX_SCHEMA_NODES:
        return _TooLarge(schema)
    validator = compile_validator(schema)
    return None if validator is None else _Checker(validator.schema, validator)
