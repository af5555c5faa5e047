"""Calling user hooks: sync or async, with the arguments they accept, and checking what
they return."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

__all__ = ["call_hook", "coerce_result", "next_turn_arguments", "positional_arity"]

T = TypeVar("T")

_VARARGS = inspect.CO_VARARGS


def positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` accepts (a large number for ``*args``), as
    ``inspect.signature`` sees them: a ``functools.wraps`` decorator's ``*args`` wrapper
    accepts what the function it wraps accepts. Whatever calls a hook or a tool's
    ``execute`` on the agent's behalf (a wrapper around a tool, say) passes the first
    that many of the agent's arguments, as the agent does."""
    wrapped = getattr(fn, "__wrapped__", None) is not None
    code = None if wrapped else getattr(fn, "__code__", None)
    bound = inspect.ismethod(fn)
    if code is None and not wrapped and not inspect.isroutine(fn):
        # a callable object: its class's __call__, minus self
        code = getattr(getattr(type(fn), "__call__", None), "__code__", None)  # noqa: B004
        bound = True
    if code is not None:
        if code.co_flags & _VARARGS:
            return 99
        arity: int = code.co_argcount
        return arity - 1 if bound else arity
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 99
    arity = 0
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            return 99
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            arity += 1
    return arity


async def call_hook(fn: Callable[..., Any], *args: Any) -> Any:
    """Call ``fn`` (sync or async) with as many of ``args`` as it accepts
    (``positional_arity``); await the result if needed."""
    result = fn(*args[: positional_arity(fn)])
    if inspect.isawaitable(result):
        result = await result
    return result


def coerce_result(value: Any, cls: type[T], hook: str) -> T | None:
    """Accept ``None``, an instance of ``cls`` or a mapping with its fields; anything
    else is a bug in the hook, reported with what was expected."""
    if value is None or isinstance(value, cls):
        return value
    if isinstance(value, dict):
        try:
            return msgspec.convert(value, cls, from_attributes=True)
        except msgspec.ValidationError as exc:
            raise TypeError(
                f"{hook} returned {value!r}, which is not a valid {cls.__name__}: {exc}"
            ) from exc
    raise TypeError(
        f"{hook} returned {value!r}; expected a {cls.__name__}, a dict of its fields, or None"
    )


def next_turn_arguments(hook: Callable[..., Any], turn: Any, signal: Any) -> tuple[Any, ...]:
    """What ``prepare_next_turn`` is called with: ``(turn, signal)``, or in its older form
    (no parameter, or a first one named ``signal``) the signal alone."""
    if positional_arity(hook) == 0 or _first_parameter_name(hook) == "signal":
        return (signal,)
    return (turn, signal)


def _first_parameter_name(fn: Callable[..., Any]) -> str | None:
    try:
        for p in inspect.signature(fn).parameters.values():
            return p.name
    except (TypeError, ValueError):
        return None
    return None
