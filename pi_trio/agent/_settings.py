"""An Agent's run policy and output settings: ``policy=RunPolicy(...)``,
``output=OutputSettings(...)``.

Both are frozen msgspec Structs, checked when they are made, so an Agent holds only valid
settings and many agents share one object (the defaults are shared). Change one with
``agent.policy = msgspec.structs.replace(agent.policy, tool_execution="sequential")``;
the next run reads it.

A new setting is a field and a line of ``__post_init__``: a check that names the
argument, the value and what is expected.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from ..ai import RetryPolicy
from ._compaction import Compaction
from ._fallback import FallbackPolicy
from ._limits import RunLimits
from ._output import DEFAULT_MAX_OUTPUT_RETRIES, OutputMode
from ._output_schema import output_schema
from ._queue import QueueMode

__all__ = ["DEFAULT_OUTPUT", "DEFAULT_POLICY", "OutputSettings", "RunPolicy"]


def _one_of(where: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        *rest, last = [repr(c) for c in choices]
        expected = f"{', '.join(rest)} or {last}"
        raise ValueError(f"{where} must be {expected}; got {value!r}")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RunPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How an Agent runs: ``Agent(policy=RunPolicy(...))``, ``agent.policy``.

    - ``tool_execution``: the tool calls of one response run ``"parallel"`` (the default)
      or ``"sequential"``;
    - ``max_concurrent_tools``: at most this many parallel calls at once (``None``: no
      limit);
    - ``close_timeout``: seconds the closing events may take to reach the listeners after
      the caller cancelled the run (default 5);
    - ``retry``: a ``RetryPolicy`` asks again for a response that failed with a transient
      error (``None``, the default: never);
    - ``compaction``: a ``Compaction`` condenses the older transcript into a summary
      when the context grows too big for the model (``None``, the default: never);
    - ``fallback``: a ``FallbackPolicy`` goes on with other models when a response fails
      (``None``, the default: the Agent's model only; ``Agent(model=[primary, ...])`` is
      the short form);
    - ``limits``: ``RunLimits`` caps the requests, tokens, cost and tool calls of a run
      (or, with ``per="agent"``, of all the Agent's runs; ``None``, the default: none);
    - ``steering_mode`` / ``follow_up_mode``: a queue delivers ``"one-at-a-time"`` (the
      default) or ``"all"`` of its messages at once.
    """

    tool_execution: Literal["sequential", "parallel"] = "parallel"
    max_concurrent_tools: int | None = None
    close_timeout: float = 5.0
    retry: RetryPolicy | None = None
    compaction: Compaction | None = None
    fallback: FallbackPolicy | None = None
    limits: RunLimits | None = None
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"

    def __post_init__(self) -> None:
        _one_of("RunPolicy(tool_execution=...)", self.tool_execution, ("sequential", "parallel"))
        limit = self.max_concurrent_tools
        if limit is not None and not (_whole(limit) and limit >= 1):
            raise ValueError(
                "RunPolicy(max_concurrent_tools=...) must be a whole number of at least 1 "
                f"(or None: no limit); got {limit!r}"
            )
        timeout = self.close_timeout
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
            raise TypeError(f"RunPolicy(close_timeout=...) must be seconds, got {timeout!r}")
        if not timeout >= 0:
            raise ValueError(
                f"RunPolicy(close_timeout=...) must be seconds, 0 or more; got {timeout!r}"
            )
        if self.retry is not None and not isinstance(self.retry, RetryPolicy):
            raise TypeError(
                "RunPolicy(retry=...) takes a RetryPolicy (from pi_trio.ai), such as "
                f"RetryPolicy(max_retries=3), or None; got {self.retry!r}"
            )
        if self.compaction is not None and not isinstance(self.compaction, Compaction):
            raise TypeError(
                "RunPolicy(compaction=...) takes a Compaction, such as "
                f"Compaction(reserve_tokens=16384), or None; got {self.compaction!r}"
            )
        if self.fallback is not None and not isinstance(self.fallback, FallbackPolicy):
            raise TypeError(
                "RunPolicy(fallback=...) takes a FallbackPolicy, such as "
                f"FallbackPolicy(models=['openai/gpt-4o-mini']), or None; got {self.fallback!r}"
            )
        if self.limits is not None and not isinstance(self.limits, RunLimits):
            raise TypeError(
                "RunPolicy(limits=...) takes RunLimits, such as RunLimits(max_requests=20), "
                f"or None; got {self.limits!r}"
            )
        _one_of("RunPolicy(steering_mode=...)", self.steering_mode, ("one-at-a-time", "all"))
        _one_of("RunPolicy(follow_up_mode=...)", self.follow_up_mode, ("one-at-a-time", "all"))


class OutputSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What every run of an Agent answers with: ``Agent(output=OutputSettings(...))``,
    ``agent.output``.

    - ``type``: the typed answer every run asks for (``result.output``): a msgspec Struct,
      a dataclass, a TypedDict or another type msgspec describes; ``None`` (the default):
      none. ``prompt(..., output_type=T)`` asks one run for another.
    - ``mode``: ``"native"`` (the provider's JSON-schema output), ``"tool"`` (a
      ``final_result`` tool) or ``"auto"`` (the default: native where the model takes it);
    - ``max_retries``: how often a wrong answer goes back to the model (default 2).
    """

    type: Any = None
    mode: OutputMode = "auto"
    max_retries: int = DEFAULT_MAX_OUTPUT_RETRIES

    def __post_init__(self) -> None:
        _one_of("OutputSettings(mode=...)", self.mode, ("auto", "native", "tool"))
        if not (_whole(self.max_retries) and self.max_retries >= 0):
            raise ValueError(
                f"OutputSettings(max_retries=...) must be a whole number, 0 or more; "
                f"got {self.max_retries!r}"
            )
        if self.type is not None:
            output_schema(self.type)  # a type msgspec cannot describe fails here


DEFAULT_POLICY: Final = RunPolicy()
DEFAULT_OUTPUT: Final = OutputSettings()
