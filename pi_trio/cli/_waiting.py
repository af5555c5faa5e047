"""Showing that a request waits: the elapsed time on stderr, on a terminal only.

A model request can be silent for a long time (a slow first token, a server that accepts
and never answers). ``WaitingIndicator`` is an agent listener plus a ticker task: from a
turn's start until its assistant message starts (or the run ends) it keeps one line on
stderr up to date, ``waiting for openai/gpt-5-mini · 12 s (times out after 300 s;
Ctrl-C aborts)``, and erases it when the answer starts. It draws nothing when stderr is
not a terminal, and nothing for an answer that starts within ``SHOW_AFTER_S``.
"""

from __future__ import annotations

import math
from typing import Any, Final, TextIO

import anyio

__all__ = ["SHOW_AFTER_S", "WaitingIndicator"]

SHOW_AFTER_S: Final = 1.0  # a quick answer shows no indicator (no flicker)
TICK_S: Final = 1.0  # the elapsed time is shown in whole seconds
_ERASE_LINE: Final = "\r\x1b[2K"


class WaitingIndicator:
    """See the module docstring. ``event`` is the listener; ``run`` the ticker, started
    in the command's task group (it returns at once when stderr is not a terminal)."""

    def __init__(self, err: TextIO, model_name: str, timeout_s: float) -> None:
        self.err = err
        self.model_name = model_name
        self.timeout_s = timeout_s
        self.enabled = _is_terminal(err)
        self._since: float | None = None
        self._shown = False
        self._waiting = anyio.Event()

    def event(self, event: Any) -> None:
        kind = event.type
        if kind == "turn_start":
            self._since = anyio.current_time()
            self._waiting.set()
        elif kind == "agent_end" or (
            kind == "message_start" and getattr(event.message, "role", None) == "assistant"
        ):
            self._since = None
            self.erase()

    def text(self, elapsed_s: float) -> str:
        return (
            f"waiting for {self.model_name} · {math.floor(elapsed_s)} s "
            f"(times out after {self.timeout_s:g} s; Ctrl-C aborts)"
        )

    def erase(self) -> None:
        if self._shown:
            self._shown = False
            self._write(_ERASE_LINE)

    async def run(self) -> None:
        if not self.enabled:
            return
        try:
            while True:
                await self._waiting.wait()
                self._waiting = anyio.Event()
                since = self._since
                while since is not None and since == self._since:
                    elapsed = anyio.current_time() - since
                    if elapsed >= SHOW_AFTER_S:
                        self._shown = True
                        self._write(_ERASE_LINE + self.text(elapsed))
                    await anyio.sleep(TICK_S - (elapsed % TICK_S))
        finally:
            self.erase()

    def _write(self, text: str) -> None:
        try:
            self.err.write(text)
            self.err.flush()
        except OSError:
            self.enabled = False  # the terminal went away; nothing left to show


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
