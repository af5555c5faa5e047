"""Pending-message queues (steering and follow-up) with reservation.

A drain hands messages to a run and *reserves* them; the run accepts each one when its
``message_end`` is delivered. Whatever is still reserved when the run ends (an abort, a
failure) goes back to the front of its queue in FIFO order, so nothing queued is ever lost
or delivered twice. All methods are synchronous and safe to call from any thread.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any, Literal

__all__ = ["PendingMessageQueue", "QueueMode"]

QueueMode = Literal["all", "one-at-a-time"]


_CREATING = threading.Lock()  # guards the first use of a queue's own lock


class PendingMessageQueue:
    """The queue's deque, reservation list and lock are made on first use: most agents
    never steer, and a thousand of them in flight would each carry ~1 KiB of empty
    containers."""

    __slots__ = ("_items", "_lock", "_reserved", "enqueued", "mode")

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        _check_mode(mode)
        self.mode: QueueMode = mode
        self._items: deque[Any] | None = None
        self._reserved: list[Any] | None = None
        self._lock: threading.Lock | None = None
        self.enqueued = 0  # how many messages were ever enqueued

    def _guard(self) -> threading.Lock:
        lock = self._lock
        if lock is None:
            with _CREATING:
                lock = self._lock
                if lock is None:
                    lock = self._lock = threading.Lock()
        return lock

    def enqueue(self, message: Any) -> None:
        with self._guard():
            if self._items is None:
                self._items = deque()
            self._items.append(message)
            self.enqueued += 1

    def has_items(self) -> bool:
        return bool(self._items)

    def peek(self) -> list[Any]:
        if not self._items:
            return []
        with self._guard():
            items = self._items
            if self.mode == "all":
                return list(items)
            return [items[0]] if items else []

    def drain(self) -> list[Any]:
        """Take the next batch (everything, or the oldest one) and reserve it."""
        if not self._items:
            return []
        with self._guard():
            items = self._items
            if self.mode == "all":
                batch = list(items)
                items.clear()
            else:
                batch = [items.popleft()] if items else []
            if self._reserved is None:
                self._reserved = []
            self._reserved.extend(batch)
            return batch

    def accept(self, message: Any) -> None:
        """A reserved message was delivered (its ``message_end`` reached the listeners)."""
        reserved = self._reserved
        if not reserved:
            return
        with self._guard():
            for i, m in enumerate(reserved):
                if m is message:
                    del reserved[i]
                    return

    def restore(self) -> None:
        """Put every still-reserved message back at the front, in FIFO order."""
        if not self._reserved:  # only the run's own thread reserves and accepts
            return
        with self._guard():
            reserved, self._reserved = self._reserved, []
            if self._items is None:
                self._items = deque()
            self._items.extendleft(reversed(reserved))

    def clear(self) -> None:
        if self._items is None and self._reserved is None:
            return
        with self._guard():
            if self._items is not None:
                self._items.clear()
            if self._reserved is not None:
                self._reserved.clear()

    def take(self, predicate: Any) -> list[Any]:
        """Remove and return the queued messages (not reserved ones) matching
        ``predicate``, in queue order."""
        if not self._items:
            return []
        with self._guard():
            items = self._items
            taken = [m for m in items if predicate(m)]
            if taken:
                ids = {id(m) for m in taken}
                self._items = deque(m for m in items if id(m) not in ids)
            return taken

    def __len__(self) -> int:
        return len(self._items) if self._items is not None else 0


def _check_mode(mode: str) -> None:
    if mode not in ("all", "one-at-a-time"):
        raise ValueError(f"queue mode must be 'all' or 'one-at-a-time', got {mode!r}")
