"""Unwrapping exception groups raised by task groups that are an implementation detail.

When the only child that can fail is the caller's own code (the body of an ``async
with``, the engine of a run), the caller should see the exception it raised, not an
``ExceptionGroup`` wrapping it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["raising_sole_exception", "sole_exception"]


def sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The only leaf exception of ``group`` (through nested groups), else ``None``."""
    exceptions = group.exceptions
    if len(exceptions) != 1:
        return None
    inner = exceptions[0]
    if isinstance(inner, BaseExceptionGroup):
        return sole_exception(inner)
    return inner


@contextmanager
def raising_sole_exception() -> Iterator[None]:
    """Around a task group whose other tasks never fail: a group holding one exception
    is raised as that exception (its cause kept)."""
    try:
        yield
    except BaseExceptionGroup as group:
        sole = sole_exception(group)
        if sole is None:
            raise
        raise sole from sole.__cause__
