"""Run limits: ``Agent(policy=RunPolicy(limits=RunLimits(...)))``.

A run counts what it spends (``RunCounters``): every request it makes (retried and
fallback attempts and a compaction's summary requests included), the tokens and cost of every response as the provider
reported them (pi's ``usage`` and ``calculate_cost``), the tool calls it ran, and what a
tool spent itself (a tool result's ``usage``, such as a sub-agent's). ``LimitGate`` holds
the counters to the limits at two points:

- **before each request**: once a counter has reached its limit (``max_requests``
  requests made, ``max_input_tokens`` tokens spent, ...) no request is made: the run ends;
- **after each response**, before its tool calls run: a response that took a token or
  cost counter past its limit, or whose calls would take ``max_tool_calls`` past it, has
  none of its calls run: each gets an error result naming the limit, and the run ends.

A run that a limit ends closes like an abort: its last turn holds an assistant message
with ``stop_reason="aborted"``, an ``error_message`` naming the limit and a
``run_limit_exceeded`` diagnostic (``RunResult.raise_for_error()`` raises
``RunLimitExceeded`` from it). The decisions read only the counters, which come from the
recorded responses and results, so a durable run that replays them decides the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Literal

import msgspec

from ..ai import AssistantMessage, Model, ToolResultMessage, Usage
from ..ai._seam import empty_message
from ..ai.providers import now_ms

RUN_LIMIT_DIAGNOSTIC: Final = "run_limit_exceeded"
"""The diagnostic of the assistant message that ends a run stopped by a ``RunLimits``."""


def run_limit_details(message: Any) -> dict[str, Any] | None:
    """The details (``limit``, ``maximum``, ``spent``) of the ``run_limit_exceeded``
    diagnostic of the assistant message that ends a run a ``RunLimits`` stopped;
    ``None`` for any other message."""
    for diagnostic in getattr(message, "diagnostics", None) or ():
        if isinstance(diagnostic, dict) and diagnostic.get("type") == RUN_LIMIT_DIAGNOSTIC:
            details = diagnostic.get("details")
            return details if isinstance(details, dict) else {}
    return None


__all__ = [
    "RUN_LIMIT_DIAGNOSTIC",
    "LimitGate",
    "LimitHit",
    "RunCounters",
    "RunLimits",
    "run_limit_details",
]

_LIMITS: Final = (
    "max_requests",
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_cost",
    "max_tool_calls",
)
# each limit's counter, and how a count of it reads
_COUNTERS: Final = {
    "max_requests": ("requests", "requests made"),
    "max_input_tokens": ("input_tokens", "input tokens spent"),
    "max_output_tokens": ("output_tokens", "output tokens spent"),
    "max_total_tokens": ("total_tokens", "tokens spent"),
    "max_cost": ("cost", "spent"),
    "max_tool_calls": ("tool_calls", "tool calls run"),
}


class RunLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Ceilings on what a run spends; each ``None`` (the default) is no limit.

    - ``max_requests``: model requests, retried and fallback attempts and compaction
      summaries included;
    - ``max_input_tokens``: prompt tokens, cached ones included (``input + cache_read +
      cache_write``);
    - ``max_output_tokens``: output tokens (thinking included);
    - ``max_total_tokens``: ``total_tokens`` as each response reports it;
    - ``max_cost``: dollars, the sum of each response's ``usage.cost.total``;
    - ``max_tool_calls``: tool calls run (refused ones do not count);
    - ``per``: ``"run"`` (the default) counts each run from zero; ``"agent"`` counts
      across the Agent's runs, in ``agent.limit_counters``.

    Tokens and cost also count what tools report as their result's ``usage`` (a
    sub-agent's spend). See the module docstring for when each is checked.
    """

    max_requests: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_cost: float | None = None
    max_tool_calls: int | None = None
    per: Literal["run", "agent"] = "run"

    def __post_init__(self) -> None:
        for name in _LIMITS:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "max_cost":
                valid = isinstance(value, (int, float)) and not isinstance(value, bool)
                expected = "dollars, more than 0"
            else:
                valid = isinstance(value, int) and not isinstance(value, bool)
                expected = "a whole number of at least 1"
            if not valid or not value > 0:
                raise ValueError(
                    f"RunLimits({name}=...) must be {expected} (or None); got {value!r}"
                )
        if self.per not in ("run", "agent"):
            raise ValueError(f"RunLimits(per=...) must be 'run' or 'agent'; got {self.per!r}")

    def __bool__(self) -> bool:
        return any(getattr(self, name) is not None for name in _LIMITS)


class RunCounters(msgspec.Struct, kw_only=True):
    """What runs have spent, as ``RunLimits`` counts it (see its fields for what each
    counter holds)."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0
    tool_calls: int = 0

    def add_usage(self, usage: Usage) -> None:
        self.input_tokens += usage.input + usage.cache_read + usage.cache_write
        self.output_tokens += usage.output
        self.total_tokens += usage.total_tokens
        self.cost += usage.cost.total

    def count_response(self, message: AssistantMessage) -> None:
        """One request made, and what its response spent."""
        self.requests += 1
        self.add_usage(message.usage)

    def count_results(self, results: Iterable[ToolResultMessage]) -> None:
        """What the tools spent themselves (their results' ``usage``)."""
        for result in results:
            if result.usage is not None:
                self.add_usage(result.usage)


class LimitHit(msgspec.Struct, frozen=True):
    """A limit that stopped a run: its name, its value, and the counter's value."""

    limit: str
    maximum: int | float
    spent: int | float
    asked: int = 0  # max_tool_calls: the calls the response asked for

    @property
    def text(self) -> str:
        """``Run limit exceeded: RunLimits(max_output_tokens=1000); 1523 output tokens
        spent``: the error message and the refused tool calls' result."""
        counter, reads = _COUNTERS[self.limit]
        spent = f"${self.spent:.4f} {reads}" if counter == "cost" else f"{self.spent} {reads}"
        maximum = self.maximum
        more = f", {self.asked} more asked for" if self.asked else ""
        return f"Run limit exceeded: RunLimits({self.limit}={maximum}); {spent}{more}"

    def message(self, model: Model) -> AssistantMessage:
        """The assistant message that ends the run: no content, ``aborted``, the text,
        and the ``run_limit_exceeded`` diagnostic."""
        text = self.text
        message = empty_message(model, "aborted", error_message=text)
        details: dict[str, Any] = {"limit": self.limit, "maximum": self.maximum}
        details["spent"] = self.spent
        if self.asked:
            details["asked"] = self.asked
        message.diagnostics = [
            {
                "type": RUN_LIMIT_DIAGNOSTIC,
                "timestamp": now_ms(),
                "error": {"message": text},
                "details": details,
            }
        ]
        return message


class LimitGate:
    """One run's limits over its counters (see the module docstring). ``hit`` is the
    limit that stopped the run, once one did."""

    __slots__ = ("counters", "hit", "limits")

    def __init__(self, limits: RunLimits, counters: RunCounters) -> None:
        self.limits = limits
        self.counters = counters
        self.hit: LimitHit | None = None

    def _over(self, *, strictly: bool) -> LimitHit | None:
        """The first token, cost or request limit the counters reached (``strictly``:
        went past)."""
        limits = self.limits
        counters = self.counters
        for name in _LIMITS[:5]:
            maximum = getattr(limits, name)
            if maximum is None:
                continue
            spent = getattr(counters, _COUNTERS[name][0])
            if spent > maximum or (not strictly and spent >= maximum):
                return LimitHit(name, maximum, spent)
        return None

    def before_request(self) -> LimitHit | None:
        """The limit that forbids another request, if one does (and from now on)."""
        if self.hit is None:
            self.hit = self._over(strictly=False)
        return self.hit

    def allows_request(self) -> bool:
        """Whether a retried or fallback request may be made (nothing is recorded: a
        failed response that may not be asked again ends the run as it is)."""
        return self.hit is None and self._over(strictly=False) is None

    def before_tools(self, calls: int) -> LimitHit | None:
        """Whether the ``calls`` tool calls of a response may run: the limit that forbids
        it (and ends the run), else ``None``, the calls counted."""
        if self.hit is not None:
            return self.hit
        hit = self._over(strictly=True)
        if hit is None:
            maximum = self.limits.max_tool_calls
            made = self.counters.tool_calls
            if maximum is not None and made + calls > maximum:
                hit = LimitHit("max_tool_calls", maximum, made, calls)
        if hit is not None:
            self.hit = hit
            return hit
        self.counters.tool_calls += calls
        return None
