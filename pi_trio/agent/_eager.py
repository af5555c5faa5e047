"""Awaiting a coroutine while learning whether it suspends.

``await Eager(coro, on_suspend)`` is ``await coro``, except that ``on_suspend()`` is called
once, synchronously, the first time ``coro`` yields to the event loop (before the event
loop sees that yield). A parallel tool batch uses it to run its calls one after another in
the engine's task for as long as each finishes without waiting, and to start the remaining
calls as tasks the moment one has to wait: they still run concurrently with it, and calls
that never wait cost no task. It relies only on the coroutine protocol, so it works the
same on every anyio backend.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["Eager"]

T = TypeVar("T")


class Eager(Generic[T]):
    __slots__ = ("_coro", "_on_suspend")

    def __init__(self, coro: Coroutine[Any, Any, T], on_suspend: Callable[[], object]) -> None:
        self._coro = coro
        self._on_suspend = on_suspend

    def __await__(self) -> Generator[Any, Any, T]:
        coro = self._coro
        try:
            request = coro.send(None)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            self._on_suspend()
        except BaseException:
            coro.close()
            raise
        # From here on this is ``yield from coro`` resumed after its first yield.
        while True:
            try:
                reply = yield request
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    request = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
            else:
                try:
                    request = coro.send(reply)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
