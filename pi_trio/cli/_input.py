"""Where ``chat`` reads its lines: a terminal with line editing, or a pipe.

A line source is ``await next_line(idle)`` → the next line without its newline, ``None``
at the end of the input; ``idle`` says whether the agent waits for a prompt (else it is
working and a line steers it). A source whose ``steers`` is false is read only while
the agent is idle: each line is a turn. ``InvalidLine`` reports a line that is not UTF-8 text. A
source whose ``restarts_at_idle`` is true may be cancelled while it waits for a steering
line (the caller then asks again with ``idle=True``); others are never cancelled, as a
cancelled read in a worker thread would lose the line it reads.

- ``terminal_lines``: at the idle prompt, the standard library's ``readline`` edits the
  line (arrow keys, history of this session) through ``input(PROMPT)`` in a worker
  thread; while the agent works, the terminal stays in its ordinary line mode and a
  typed line is read once the terminal has one (a wait that a finished run cancels, so
  the prompt comes back at once). The terminal's settings are put back on exit.
- ``stdin_lines``: any other input (a pipe, a file), read in a worker thread with
  ``os.read``, which holds no buffer lock, so an abandoned read never blocks the exit.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final

import anyio

__all__ = [
    "PROMPT",
    "READ_CHUNK",
    "InvalidLine",
    "LineSource",
    "readline_available",
    "stdin_lines",
    "terminal_lines",
    "terminal_settings_kept",
]

LineSource = Callable[[bool], Awaitable[str | None]]
"""``await next_line(idle)`` → the next line without its newline, ``None`` at the end."""

PROMPT: Final = "you > "
READ_CHUNK: Final = 4096  # one read of piped input; lines may span reads


class InvalidLine(ValueError):
    """A line of the input that is not UTF-8 text; the message says where."""


def _decode(line: bytes, number: int) -> str:
    try:
        return line.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise InvalidLine(
            f"line {number} of the input is not UTF-8 text (byte 0x{line[exc.start]:02x} at "
            f"offset {exc.start}); it was not sent"
        ) from None


class stdin_lines:
    """Lines from file descriptor ``fd``, each read in a worker thread. Each line is a
    turn of its own (``steers`` false: the chat reads the next line once the run it
    started has finished)."""

    restarts_at_idle: Final = False
    steers: Final = False

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.number = 0
        self._pending: list[bytes] = []
        self._buffer = b""
        self._eof = False

    async def __call__(self, idle: bool) -> str | None:
        pending = self._pending
        while not pending:
            if self._eof:
                return None
            chunk = await anyio.to_thread.run_sync(
                os.read, self.fd, READ_CHUNK, abandon_on_cancel=True
            )
            data = self._buffer + chunk
            if not chunk:
                self._eof = True
                if data:
                    pending.append(data)
                self._buffer = b""
                continue
            *lines, self._buffer = data.split(b"\n")
            pending.extend(lines)
        self.number += 1
        return _decode(pending.pop(0), self.number)


def readline_available() -> bool:
    try:
        import readline  # noqa: F401  (importing it makes input() edit lines)
    except ImportError:
        return False
    return True


class terminal_lines:
    """Lines typed on the terminal ``fd`` (see the module docstring)."""

    restarts_at_idle: Final = True
    steers: Final = True

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.number = 0
        readline_available()

    async def __call__(self, idle: bool) -> str | None:
        self.number += 1
        if idle:
            try:
                return await anyio.to_thread.run_sync(_input, abandon_on_cancel=True)
            except EOFError:  # Ctrl-D at the prompt: end its line, as a shell does
                sys.stdout.write("\n")
                sys.stdout.flush()
                return None
        await anyio.wait_readable(self.fd)  # cancellable: no thread holds a read
        data = os.read(self.fd, READ_CHUNK)
        if not data:
            return None
        return _decode(data.rstrip(b"\n"), self.number)


def _input() -> str:
    try:
        return input(PROMPT)
    except UnicodeDecodeError as exc:
        raise InvalidLine(f"that line is not UTF-8 text ({exc.reason}); it was not sent") from None


@contextlib.contextmanager
def terminal_settings_kept(fd: int = 0) -> Iterator[None]:
    """Put the terminal's settings back on exit: an ``input()`` left waiting in its
    thread when the chat ends keeps the terminal in readline's character mode."""
    termios: Any
    try:
        import termios
    except ImportError:  # not a POSIX terminal: nothing to restore
        yield
        return
    try:
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError):
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        sys.stdout.flush()
