"""Unwrapping exception groups raised by task groups that are an implementation detail.

When the only child that can fail is the caller's own code (the body of an ``async
with``, the engine of a run), the caller should see the exception it raised, not an
``ExceptionGroup`` wrapping it.
"""

from __future__ import annotations

__all__ = ["sole_exception"]


def sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The only leaf exception of ``group`` (through nested groups), else ``None``."""
    exceptions = group.exceptions
    if len(exceptions) != 1:
        return None
    inner = exceptions[0]
    if isinstance(inner, BaseExceptionGroup):
        return sole_exception(inner)
    return inner
