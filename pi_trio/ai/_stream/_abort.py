"""``AbortController`` / ``AbortSignal``: the abort request, readable from any thread.

Aborting does not rely on anyone polling: the runtime registers the cancel scope of the
work being aborted, and ``abort()`` cancels it (from the event loop's thread directly, from
any other thread through the loop's token). Code that wants to look — sync code in a
worker thread, a loop that checkpoints early — reads ``signal.aborted`` or awaits
``signal.wait()``.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["AbortController", "AbortSignal"]

# One lock for every signal: it guards a flag and a list for a few instructions and never
# runs a callback, so sharing it costs nothing, and a thousand runs in flight do not each
# carry a lock.
_LOCK = threading.Lock()


class _Registration:
    __slots__ = ("callback", "signal", "thread", "token")

    def __init__(
        self, signal: AbortSignal, callback: Callable[[], object], thread: int, token: Any
    ) -> None:
        self.signal = signal
        self.callback = callback
        self.thread = thread
        self.token = token

    def unregister(self) -> None:
        signal = self.signal
        with _LOCK:
            with contextlib.suppress(ValueError):
                signal._registrations.remove(self)
            if signal._pending is not None:
                with contextlib.suppress(ValueError):
                    signal._pending.remove(self)


class AbortSignal:
    """The read side of an ``AbortController``. Safe to read from any thread."""

    __slots__ = ("__weakref__", "_aborted", "_pending", "_reason", "_registrations")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._registrations: list[_Registration] = []
        # callbacks of other threads an abort has not run yet (None until one is aborted)
        self._pending: list[_Registration] | None = None

    if TYPE_CHECKING:

        @property
        def aborted(self) -> bool: ...

    else:
        # a getter in C: providers read it once per chunk
        aborted = property(operator.attrgetter("_aborted"), doc="Whether abort() was called.")

    @property
    def reason(self) -> object:
        """What ``abort(reason)`` was given (``None`` when not aborted or no reason)."""
        return self._reason

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self._aborted else "not aborted"
        return f"<AbortSignal {state}>"

    async def wait(self) -> None:
        """Return once the signal is aborted (immediately, after a checkpoint, if it is)."""
        if self._aborted:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        unregister = self.on_abort(event.set)
        try:
            await event.wait()
        finally:
            unregister()

    def on_abort(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run the sync ``callback`` in the calling event loop's thread when the signal is
        aborted (right away if it already is). Returns a function that unregisters it.
        Must be called from inside an event loop."""
        registration = _Registration(
            self, callback, threading.get_ident(), anyio.lowlevel.current_token()
        )
        with _LOCK:
            already = self._aborted
            if not already:
                self._registrations.append(registration)
        if already:
            self.run_pending_callbacks()  # an abort's earlier callbacks run first
            callback()
            return _noop
        return registration.unregister

    def _abort(self, reason: object) -> None:
        with _LOCK:
            if self._aborted:
                return
            self._aborted = True
            self._reason = reason
            registrations, self._registrations = self._registrations, []
            here = threading.get_ident()
            self._pending = [r for r in registrations if r.thread != here]
            loops = {r.thread: r.token for r in self._pending}
        for registration in registrations:
            if registration.thread == here:
                registration.callback()
        for token in loops.values():
            # RuntimeError: that event loop has finished, so there is nothing left to cancel.
            with contextlib.suppress(RuntimeError):
                anyio.from_thread.run_sync(self.run_pending_callbacks, token=token)

    def run_pending_callbacks(self) -> None:
        """Run now the callbacks registered from this thread that an abort from another
        thread has not run yet (it runs them through the loop's token, later). Code of the
        event loop that sees ``aborted`` before they ran calls this first, so the callbacks
        of one abort run together, in order, before anything else in this loop."""
        if not self._pending:
            return
        here = threading.get_ident()
        with _LOCK:
            pending = self._pending or []
            mine = [r for r in pending if r.thread == here]
            self._pending = [r for r in pending if r.thread != here]
        for registration in mine:
            registration.callback()


def _noop() -> None:
    return None


class AbortController:
    """Owns an ``AbortSignal``; ``abort()`` is sync, idempotent and thread-safe."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = None) -> None:
        self.signal._abort(reason)

    def __repr__(self) -> str:
        return f"<AbortController {self.signal!r}>"
