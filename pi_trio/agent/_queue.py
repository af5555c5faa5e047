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


class PendingMessageQueue:
    __slots__ = ("_items", "_lock", "_reserved", "enqueued", "mode")

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        _check_mode(mode)
        self.mode: QueueMode = mode
        self._items: deque[Any] = deque()
        self._reserved: list[Any] = []
        self._lock = threading.Lock()
        self.enqueued = 0  # how many messages were ever enqueued

    def enqueue(self, message: Any) -> None:
        with self._lock:
            self._items.append(message)
            self.enqueued += 1

    def has_items(self) -> bool:
        return bool(self._items)

    def peek(self) -> list[Any]:
        with self._lock:
            if self.mode == "all":
                return list(self._items)
            return [self._items[0]] if self._items else []

    def drain(self) -> list[Any]:
        """Take the next batch (everything, or the oldest one) and reserve it."""
        if not self._items:
            return []
        with self._lock:
            if self.mode == "all":
                batch = list(self._items)
                self._items.clear()
            else:
                batch = [self._items.popleft()] if self._items else []
            self._reserved.extend(batch)
            return batch

    def accept(self, message: Any) -> None:
        """A reserved message was delivered (its ``message_end`` reached the listeners)."""
        reserved = self._reserved
        if not reserved:
            return
        with self._lock:
            for i, m in enumerate(reserved):
                if m is message:
                    del reserved[i]
                    return

    def restore(self) -> None:
        """Put every still-reserved message back at the front, in FIFO order."""
        if not self._reserved:  # only the run's own thread reserves and accepts
            return
        with self._lock:
            reserved, self._reserved = self._reserved, []
            self._items.extendleft(reversed(reserved))

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._reserved.clear()

    def take(self, predicate: Any) -> list[Any]:
        """Remove and return the queued messages (not reserved ones) matching
        ``predicate``, in queue order."""
        with self._lock:
            taken = [m for m in self._items if predicate(m)]
            if taken:
                ids = {id(m) for m in taken}
                self._items = deque(m for m in self._items if id(m) not in ids)
            return taken

    def __len__(self) -> int:
        return len(self._items)


def _check_mode(mode: str) -> None:
    if mode not in ("all", "one-at-a-time"):
        raise ValueError(f"queue mode must be 'all' or 'one-at-a-time', got {mode!r}")
