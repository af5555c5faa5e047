"""Matching a backtracking pattern in a child process that can be killed.

A pattern the linear-time engine cannot take (see ``_regex``) is matched by
`regress` (or `re` without the ``ecma`` extra) in a child Python process: one per
validation, started on its first such pattern and stopped when the validation ends
(``Budget.close_child``). Each search waits at most ``REGEX_TIME_BUDGET_S``; past it the
child is killed and the validation fails naming the pattern and the limit. Cancelling the
validation's budget kills the child at once.

The protocol, over the child's standard input and output: a line ``<pattern bytes> <text
bytes>``, then both as UTF-8 (lone surrogates passed through); the answer is one line,
``1`` (matches), ``0`` (does not) or ``x`` (does not compile).
"""

from __future__ import annotations

import contextlib
import select
import subprocess
import sys
import time
from typing import Final

from . import _budget as budgets
from ._budget import Budget, BudgetExceeded, ValidationCancelled

__all__ = ["RegexChild", "child_search"]

_CHILD: Final = """
import re, sys, warnings
try:
    import regress
except ImportError:
    regress = None
compiled = {}
def search_of(pattern):
    if regress is not None:
        for flags in ("u", ""):
            try:
                found = regress.Regex(pattern, flags)
            except regress.RegressError:
                continue
            return lambda text: found.find(text) is not None
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return None
    return lambda text: found.search(text) is not None
read, write = sys.stdin.buffer, sys.stdout.buffer
write.write(b"ready\\n")
write.flush()
while True:
    head = read.readline()
    if not head:
        break
    sizes = [int(size) for size in head.split()]
    pattern, text = (read.read(size).decode("utf-8", "surrogatepass") for size in sizes)
    if pattern not in compiled:
        compiled[pattern] = search_of(pattern)
    search = compiled[pattern]
    try:
        answer = b"x" if search is None else b"1" if search(text) else b"0"
    except Exception:
        answer = b"x"
    write.write(answer + b"\\n")
    write.flush()
"""

_START_TIMEOUT_S: Final = 30.0
"""Seconds a child may take to start (importing `regress` on a loaded machine), before
its first search's time counts."""


class RegexChild:
    """One child process answering searches; ``kill`` may be called from any thread."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.ready = False

    def search(self, pattern: str, text: str, budget: Budget) -> bool:
        """Whether ``pattern`` matches in ``text`` (a pattern the child cannot compile
        matches everything); ``BudgetExceeded`` past the time budget."""
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None
        assert stdout is not None
        data = [part.encode("utf-8", "surrogatepass") for part in (pattern, text)]
        with budget.stoppable(self.kill):
            if not self.ready:
                self.ready = self._answer(_START_TIMEOUT_S) == b"ready\n"
            try:
                stdin.write(b"%d %d\n" % (len(data[0]), len(data[1])) + data[0] + data[1])
                stdin.flush()
            except OSError:
                pass  # killed: the answer below says why
            answer = self._answer(budgets.REGEX_TIME_BUDGET_S)
        if budget.cancelled:
            self.kill()
            raise ValidationCancelled("the validation was cancelled")
        if not answer:
            self.kill()
            preview = text if len(text) <= 40 else text[:40] + "..."
            raise BudgetExceeded(
                f"checking {preview!r} against the pattern {pattern!r} took longer than "
                f"{budgets.REGEX_TIME_BUDGET_S:g} s (REGEX_TIME_BUDGET_S): the pattern "
                "backtracks without end on this value"
            )
        return answer != b"0\n"

    def _answer(self, seconds: float) -> bytes:
        """The child's next line, or ``b""`` when none came within ``seconds`` (or the
        child is gone)."""
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([stdout], [], [], max(0.0, left))
            if ready:
                return stdout.readline()
            if left <= 0:
                return b""

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()

    def close(self) -> None:
        self.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def child_search(pattern: str, text: str) -> bool:
    """``pattern`` searched in ``text`` by the child of the running validation (a child
    of its own when no validation runs in this thread)."""
    budget = budgets.current()
    if budget is None:
        child = RegexChild()
        try:
            return child.search(pattern, text, Budget())
        finally:
            child.close()
    child = budget.child
    if child is None or child.process.poll() is not None:
        child = budget.child = RegexChild()
    return child.search(pattern, text, budget)
