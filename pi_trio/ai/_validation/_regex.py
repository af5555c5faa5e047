"""Regular expressions of JSON Schema (``pattern``, ``patternProperties``, ``format:
regex``) as ECMAScript defines them, which is what the original runs.

With the ``ecma`` extra (`regress`, an ECMAScript regex engine) a pattern means what it means
in JavaScript with the ``u`` flag, or without it when the pattern is only valid without it:
``$`` ends the text (Python's also matches before a final newline), ``\\d`` and ``\\w`` are
ASCII, ``\\p{L}`` and ``(?<name>...)`` work and ``(?i)`` is an error. Without the extra,
Python's `re` stands in: the same for the plain patterns tool schemas use, and a pattern
that `re` cannot compile is not checked (logged once on the ``pi_trio.ai`` logger).
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from collections.abc import Callable
from typing import Any, Final

__all__ = ["is_ecma_regex", "regex_search"]

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


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compiled(pattern: str) -> Search | None:
    """The search function of ``pattern``, or None when no engine can compile it."""
    regress = _regress()
    if regress is not None:
        for flags in ("u", ""):
            try:
                compiled = regress.Regex(pattern, flags)
            except regress.RegressError:
                continue
            return lambda text: compiled.find(text) is not None
        return None
    try:
        python = _python_regex(pattern)
    except (re.error, OverflowError, RecursionError):
        _logger.warning(
            "The schema pattern %r is not a Python regular expression and is not checked; "
            "install pi-trio[ecma] to check it as JavaScript does",
            pattern,
        )
        return None
    return lambda text: python.search(text) is not None


def regex_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``. A pattern that cannot be compiled
    matches everything: the schema author's mistake never rejects the model's value."""
    search = _compiled(pattern)
    return True if search is None else search(text)


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
