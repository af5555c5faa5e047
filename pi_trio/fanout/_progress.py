"""The harness's progress line: ``[#####.....] 512/1000  stop 480  error 12  aborted 20``,
redrawn in place on a terminal and written once per tenth otherwise."""

from __future__ import annotations

from typing import TextIO

__all__ = ["Progress"]


class Progress:
    WIDTH = 30

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.done = 0
        self.counts: dict[str, int] = {}
        self.stream = stream
        self.tty = stream.isatty()
        self._last_tenth = -1

    def advance(self, status: str) -> None:
        self.done += 1
        self.counts[status] = self.counts.get(status, 0) + 1
        self.draw()

    def line(self) -> str:
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        counts = "  ".join(f"{status} {n}" for status, n in sorted(self.counts.items()))
        return f"[{bar}] {self.done}/{self.total}  {counts}".rstrip()

    def draw(self) -> None:
        tenth = 10 * self.done // max(self.total, 1)
        if self.tty:
            self.stream.write("\r" + self.line())
        elif tenth != self._last_tenth:
            self.stream.write(self.line() + "\n")
        self._last_tenth = tenth
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
