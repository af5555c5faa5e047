"""Hooks called with each new object of a class: what ``on_agent_created`` keeps.

Instrumentation that covers every agent (``pi_trio.otel.instrument()`` without an
agent) registers a hook; ``Agent.__init__`` hands each new agent to the registered hooks
as its last step, when the agent is fully set up. The ``Agent`` class itself is never
changed. With nothing registered, construction pays one loop over an empty tuple.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["CreatedHooks"]

T = TypeVar("T")


class _Registration(Generic[T]):
    """One registration: removing it removes exactly this one, even when the same hook
    was registered twice."""

    __slots__ = ("hook",)

    def __init__(self, hook: Callable[[T], None]) -> None:
        self.hook = hook


class CreatedHooks(Generic[T]):
    """The hooks to call with each new ``T``, in the order they were added."""

    __slots__ = ("_registered",)

    def __init__(self) -> None:
        # Replaced whole on every change, never mutated: a construction in another thread
        # reads a consistent tuple without a lock.
        self._registered: tuple[_Registration[T], ...] = ()

    def add(self, hook: Callable[[T], None], where: str) -> Callable[[], None]:
        """Register ``hook``; returns the function that removes it (calling that twice is
        harmless). ``where`` names the public function in the error for a non-callable."""
        if not callable(hook):
            raise TypeError(f"{where} takes a function called with each new object, got {hook!r}")
        registration = _Registration(hook)
        self._registered = (*self._registered, registration)

        def remove() -> None:
            self._registered = tuple(r for r in self._registered if r is not registration)

        return remove

    def notify(self, created: T) -> None:
        """Hand ``created`` to every registered hook; what a hook raises propagates."""
        for registration in self._registered:
            registration.hook(created)
