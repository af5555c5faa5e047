"""Regular expressions of JSON Schema (``pattern``, ``patternProperties``, ``format:
regex``) as ECMAScript defines them, which is what the original runs, in bounded time.

With the ``ecma`` extra (`regress`, an ECMAScript regex engine, and `google-re2`) a
pattern means what it means in JavaScript with the ``u`` flag, or without it when the
pattern is only valid without it: ``$`` ends the text (Python's also matches before a
final newline), ``\\d`` and ``\\w`` are ASCII, ``\\p{L}`` and ``(?<name>...)`` work and
``(?i)`` is an error. Without the extra, Python's `re` stands in: the same for the plain
patterns tool schemas use, and a pattern that `re` cannot compile is not checked (logged
once on the ``pi_trio.ai`` logger).

`regress` and `re` backtrack: a pattern like ``^(a+)+$`` takes exponential time on a
26-character value, in C, holding the interpreter lock, where nothing can stop it. So
matching never runs them in this process. A pattern valid with the ``u`` flag is rewritten
for RE2 (``_re2``), whose time is linear in the text; every other pattern
(lookarounds, back-references, patterns valid only without ``u``, everything without the
extra) is matched in a child process (``_regex_child``) that is killed after
``REGEX_TIME_BUDGET_S`` or when the validation is cancelled.
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from collections.abc import Callable
from typing import Any, Final

from ._re2 import to_re2

__all__ = ["is_ecma_regex", "is_linear", "regex_search"]

_logger = logging.getLogger("pi_trio.ai")

_CACHE_SIZE: Final = 1024
"""Compiled patterns kept: tool schemas repeat a few patterns many times."""

Search = Callable[[str], bool]


@functools.cache
def _regress() -> Any:
    """The `regress` module of the ``ecma`` extra, imported on first use; None without it."""
    try:
        import regress
    except ImportError:
        return None
    return regress


@functools.cache
def _re2() -> Any:
    """`re2` (``google-re2``, in the ``ecma`` extra) and its quiet options; None without."""
    try:
        import re2
    except ImportError:
        return None
    options = re2.Options()
    options.log_errors = False  # a pattern RE2 refuses goes to the child, silently
    return re2, options


def _linear(pattern: str) -> Search | None:
    """The RE2 search of ``pattern`` when it is valid with the ``u`` flag and RE2 can
    take its rewriting; else None."""
    regress, engines = _regress(), _re2()
    if regress is None or engines is None:
        return None
    try:
        regress.Regex(pattern, "u")
    except regress.RegressError:
        return None
    rewritten = to_re2(pattern)
    if rewritten is None:
        return None
    re2, options = engines
    try:
        compiled = re2.compile(rewritten, options)
    except re2.error:
        return None

    def search(text: str) -> bool:
        try:
            return compiled.search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate in the text: no UTF-8 holds it
            return _child_search(pattern, text)

    return search


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compiled(pattern: str) -> Search | None:
    """The search function of ``pattern``, or None when no engine can compile it."""
    linear = _linear(pattern)
    if linear is not None:
        return linear
    if not _compiles(pattern):
        if _regress() is None:
            _logger.warning(
                "The schema pattern %r is not a Python regular expression and is not "
                "checked; install pi-trio[ecma] to check it as JavaScript does",
                pattern,
            )
        return None
    return functools.partial(_child_search, pattern)


def _child_search(pattern: str, text: str) -> bool:
    from ._regex_child import child_search

    return child_search(pattern, text)


def _compiles(pattern: str) -> bool:
    regress = _regress()
    if regress is not None:
        for flags in ("u", ""):
            try:
                regress.Regex(pattern, flags)
            except regress.RegressError:
                continue
            return True
        return False
    try:
        _python_regex(pattern)
    except (re.error, OverflowError, RecursionError):
        return False
    return True


def regex_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``. A pattern that cannot be compiled
    matches everything: the schema author's mistake never rejects the model's value."""
    search = _compiled(pattern)
    return True if search is None else search(text)


def is_linear(pattern: str) -> bool:
    """Whether ``pattern`` is matched in this process, in time linear in the text (a
    pattern that cannot be compiled matches everything, at once)."""
    search = _compiled(pattern)
    return not isinstance(search, functools.partial)


def is_ecma_regex(text: str) -> bool:
    """``format: regex``: whether ``text`` compiles with the ``u`` flag."""
    regress = _regress()
    if regress is not None:
        try:
            regress.Regex(text, "u")
        except regress.RegressError:
            return False
        return True
    try:
        _python_regex(text)
    except (re.error, OverflowError, RecursionError):
        return False
    return True


def _python_regex(pattern: str) -> re.Pattern[str]:
    """``re.compile`` without its warnings about what future Pythons may read differently
    (``[[`` a nested set): the pattern is JavaScript's, which has no such sets."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern)
