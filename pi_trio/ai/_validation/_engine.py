"""The compiled-schema half of tool-argument validation (see ``_validate``): each tool
schema compiled once (in the original's dialect, with its fast path) and cached, and
`check`, which runs the fast path, coercion, validation and the explanation of failures.

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
from ._coerce import coerce
from ._dialect import accepts_of, compile_validator
from ._explain import explain
from ._fast import DECLINED, compile_fast_path
from ._refs import resolver_of

__all__ = ["CACHE_SIZE", "check"]

_logger = logging.getLogger("pi_trio.ai")

_MISSING: Final[Any] = object()
CACHE_SIZE: Final = 256
"""Compiled validators kept (least recently used dropped first): more distinct tool schemas
than one process normally declares, few enough that a schema generator cannot grow memory."""


def check(
    tool_name: str, parameters: Any, arguments: Any
) -> tuple[Any, list[tuple[str, str]] | None]:
    """``(value, None)``: a validated, coerced copy of ``arguments``; or ``(value,
    details)``: the coerced copy that failed, with ``(path, message)`` per problem.
    Arguments of a schema that cannot be used are passed through (copied), with a
    warning on the ``pi_trio.ai`` logger naming the tool."""
    checker = _checker(parameters)
    if checker is None:
        _warn_unvalidated(tool_name, "the parameters are not a valid JSON Schema")
        return copy_json(arguments), None
    fast = checker.fast
    if fast is not None:
        # a copy of arguments the schema surely accepts: nothing to drop or coerce (both
        # only touch invalid values)
        copied = fast(arguments)
        if copied is not DECLINED:
            return copied, None
    value = copy_json(arguments)
    try:
        value, valid = coerce(value, checker.schema, checker.accepts, checker.resolve)
        if valid:
            return value, None
    except RecursionError:
        _warn_unvalidated(
            tool_name,
            "checking recursed without end ($refs in a circle, or arguments nested too deep)",
        )
        return copy_json(arguments), None
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


_cache: OrderedDict[bytes | str, _Checker | None] = OrderedDict()
_cache_lock = threading.Lock()
# The schema objects seen last, with their checkers: a schema asked for again is found by
# identity and a deep comparison with the checker's copy (cheaper than encoding it for the
# content key), so one changed in place since is compiled anew, as before.
_seen: dict[int, tuple[Any, _Checker]] = {}


def _checker(schema: Any) -> _Checker | None:
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


def _compile(schema: Any) -> _Checker | None:
    validator = compile_validator(schema)
    return None if validator is None else _Checker(validator.schema, validator)
