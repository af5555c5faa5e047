"""What a run spent: the usage of its responses, of its tools, of its summary requests.

Each response carries its own usage and cost. A tool that spends tokens itself (a
sub-agent) reports them as its result's ``usage`` (pi 1.6's field of a tool result: "usage
from the tool execution itself", not counted as context), so they are in the transcript
too. A compaction's summary requests are no message of the transcript; a run counts them
apart (``compaction_end.usage``, ``RunResult.usage``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..ai import AssistantMessage, ToolResultMessage, Usage

__all__ = ["add_usage", "usage_of"]


def add_usage(total: Usage | None, usage: Usage) -> Usage:
    """``total`` plus ``usage``: tokens and costs added up, in a new ``Usage``."""
    if total is None:
        total = Usage()
    result = Usage(
        input=total.input + usage.input,
        output=total.output + usage.output,
        cache_read=total.cache_read + usage.cache_read,
        cache_write=total.cache_write + usage.cache_write,
        total_tokens=total.total_tokens + usage.total_tokens,
    )
    cost, added = result.cost, usage.cost
    cost.input = total.cost.input + added.input
    cost.output = total.cost.output + added.output
    cost.cache_read = total.cost.cache_read + added.cache_read
    cost.cache_write = total.cost.cache_write + added.cache_write
    cost.total = total.cost.total + added.total
    return result


def usage_of(messages: Iterable[Any], spent: Usage | None = None) -> Usage:
    """The usage of ``messages``' responses and tool results, plus ``spent`` (what was
    spent outside the transcript)."""
    total = spent if spent is not None else Usage()
    for message in messages:
        if isinstance(message, AssistantMessage) or (
            isinstance(message, ToolResultMessage) and message.usage is not None
        ):
            total = add_usage(total, message.usage)  # type: ignore[arg-type]
    return total
