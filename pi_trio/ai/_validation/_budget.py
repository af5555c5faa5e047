"""What one validation of tool arguments may cost, and stopping it.

The arguments are written by a model, and a schema may come from an MCP server: either
could make checking them unbounded (a million-value ``enum``, tens of thousands of
missing properties, a pattern that backtracks without end). So:

- a schema of more than `MAX_SCHEMA_NODES` JSON values is not compiled (the call fails,
  naming the limit);
- every keyword that jsonschema evaluates is a step, and a validation that takes more
  than `MAX_VALIDATION_STEPS` fails, naming the limit;
- a pattern that cannot go through the linear-time engine (see ``_regex``)
  runs in a child process, killed after `REGEX_TIME_BUDGET_S`;
- at most `MAX_ERROR_DETAILS` problems are listed, and the arguments echoed in the error
  text are cut at `MAX_ERROR_ARGUMENTS_CHARS`.

A `Budget` counts the steps of one validation and can be cancelled from another thread
(``Budget.cancel``: the validation stops at its next step, and a pattern's child process
is killed at once). The budget of the running validation is per thread (``current``), so
the keyword functions, called by jsonschema, find it without an argument.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

__all__ = [
    "MAX_ERROR_ARGUMENTS_CHARS",
    "MAX_ERROR_DETAILS",
    "MAX_SCHEMA_NODES",
    "MAX_VALIDATION_STEPS",
    "REGEX_TIME_BUDGET_S",
    "Budget",
    "BudgetExceeded",
    "ValidationCancelled",
    "count_nodes",
    "current",
    "running",
    "running_budgets",
    "step",
]

MAX_SCHEMA_NODES: Final = 20_000
"""JSON values (objects, arrays, scalars) in a tool's parameter schema. Large real schemas
(an MCP server's, a generated one) hold a few thousand; a million-value ``enum`` took
14-18 s per check."""

MAX_VALIDATION_STEPS: Final = 200_000
"""Steps of one validation: a keyword evaluated (plus one per entry of the keyword's
value or of the array it checks, so a long ``enum`` or ``uniqueItems`` over a long array
costs what it takes), a node coerced, a node explained. At 5-20 µs a step, at most a few
seconds, in a worker thread that an abort stops; arguments whose check needs more fail
naming the limit."""

REGEX_TIME_BUDGET_S: Final = 1.0
"""Seconds one ``pattern`` check may take in the child process (only patterns the
linear-time engine cannot take go there: lookarounds, back-references)."""

MAX_ERROR_DETAILS: Final = 20
"""Problems listed in a validation error; the rest are counted (60 000 missing properties
made a 1.2 MB error text for the model)."""

MAX_ERROR_ARGUMENTS_CHARS: Final = 4_000
"""Characters of the received arguments echoed in a validation error."""


class BudgetExceeded(Exception):
    """A validation ran past one of the limits; the message names it."""


class ValidationCancelled(Exception):
    """The validation was cancelled (``Budget.cancel``), e.g. by an abort."""


class Budget:
    """The steps of one validation, its limit, and whether it was cancelled."""

    __slots__ = ("_lock", "_stoppers", "cancelled", "child", "limit", "steps")

    def __init__(self, limit: int | None = None) -> None:
        self.steps = 0
        self.limit = MAX_VALIDATION_STEPS if limit is None else limit
        self.cancelled = False
        self._lock = threading.Lock()
        self._stoppers: list[Any] = []  # what ``cancel`` must stop (a pattern's child)
        self.child: Any = None  # the child process matching patterns, once one is needed

    def step(self, count: int = 1) -> None:
        self.steps += count
        if self.cancelled:
            raise ValidationCancelled("the validation was cancelled")
        if self.steps > self.limit:
            raise BudgetExceeded(
                f"checking the arguments took more than {self.limit} steps "
                "(MAX_VALIDATION_STEPS); the schema is too costly for arguments this large"
            )

    def cancel(self) -> None:
        """Stop the validation at its next step (any thread); kill a pattern's child."""
        with self._lock:
            self.cancelled = True
            stoppers = list(self._stoppers)
        for stop in stoppers:
            stop()

    def close_child(self) -> None:
        """Stop the child process of this validation's patterns, if one was started."""
        child, self.child = self.child, None
        if child is not None:
            child.close()

    @contextmanager
    def stoppable(self, stop: Any) -> Iterator[None]:
        """``stop()`` is called if the budget is cancelled inside the block."""
        with self._lock:
            if self.cancelled:
                raise ValidationCancelled("the validation was cancelled")
            self._stoppers.append(stop)
        try:
            yield
        finally:
            with self._lock:
                self._stoppers.remove(stop)


_local = threading.local()
_running: set[Budget] = set()
_running_lock = threading.Lock()


def current() -> Budget | None:
    """The budget of the validation running in this thread, if any."""
    budget: Budget | None = getattr(_local, "budget", None)
    return budget


def step(count: int = 1) -> None:
    """``count`` steps of the validation running in this thread (none: not counted)."""
    budget: Budget | None = getattr(_local, "budget", None)
    if budget is not None:
        budget.step(count)


@contextmanager
def running(budget: Budget) -> Iterator[Budget]:
    """``budget`` is this thread's for the block (and counted by ``running_budgets``);
    its pattern child, if any, is stopped when the block ends."""
    outer = getattr(_local, "budget", None)
    _local.budget = budget
    with _running_lock:
        _running.add(budget)
    try:
        yield budget
    finally:
        _local.budget = outer
        budget.close_child()
        with _running_lock:
            _running.discard(budget)


def running_budgets() -> int:
    """How many validations are running now, in any thread."""
    with _running_lock:
        return len(_running)


def count_nodes(value: Any, limit: int) -> int:
    """The JSON values in ``value``, counting stops past ``limit``."""
    count = 0
    pending = [value]
    while pending and count <= limit:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item.values())
            count += len(item)  # the keys
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return count
