"""A command on a pseudo-terminal, for the CLI tests that need a real one: what is shown,
what is typed (arrow keys included), and the terminal's settings afterwards."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from typing import Any

# Long enough for a slow, shared machine; a test that waits this long has failed.
WAIT_S = 30.0


# The child makes the pty its controlling terminal, so Ctrl-C typed on it is a SIGINT.
_RUN_ON_TERMINAL = (
    "import fcntl, runpy, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "sys.argv[0] = 'pi-trio'\n"
    "runpy.run_module('pi_trio', run_name='__main__')\n"
)


class Terminal:
    """``python -m pi_trio ARGS`` with stdin, stdout and stderr on one pty, which is its
    controlling terminal (in a session of its own)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: Any = None) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.settings_before = termios.tcgetattr(slave)
        self._slave = slave
        self.process = subprocess.Popen(
            [sys.executable, "-c", _RUN_ON_TERMINAL, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.shown = b""

    def _read(self, deadline: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the process ended and closed the terminal
            return False
        self.shown += data
        return bool(data)

    def wait_for(self, text: str, count: int = 1) -> None:
        """Read until ``text`` was shown ``count`` times."""
        token = text.encode()
        deadline = time.monotonic() + WAIT_S
        while self.shown.count(token) < count:
            if not self._read(deadline):
                raise AssertionError(f"{text!r} not shown (x{count}); the screen: {self.text()!r}")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self) -> int:
        """Wait for the exit; read what is left; return the exit code."""
        code = self.process.wait(timeout=WAIT_S)
        while self._read(time.monotonic() + 0.2):
            pass
        return code

    def settings_kept(self) -> bool:
        return termios.tcgetattr(self._slave) == self.settings_before

    def text(self) -> str:
        return self.shown.decode("utf-8", "replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for fd in (self.master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)
