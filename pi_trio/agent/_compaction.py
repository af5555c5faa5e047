"""Context compaction, the sans-IO half: how big a transcript is, where to cut it, what
the summarizing model is asked, and the transcript after the cut.

A long conversation outgrows the model's context window. Compaction replaces the older
part of the transcript with one summary, as pi's coding agent does: the system head
stays (every system message of the summarized part folded into one, so the model is
told the same prompt and tools), then a user message holding the summary, then the
recent messages exactly as they were. A cut falls only before a user or an assistant
message, never before a tool result, so every tool call keeps its result.

Sizes are estimates in tokens: a response's own usage where the provider reported one
(the prompt it was given plus what it wrote), and about four characters per token for
the messages after it. ``TokenEstimate`` keeps a running sum over a growing transcript, so
checking the size before every request costs time for the new messages only.

``Compaction`` (the settings) is here, the prompts and the summary message are
``_summaries``; running the summary request and announcing it is ``_compactor``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Literal, TypeAlias

import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    ImageContent,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ..ai.transcript import get_current_system_message
from ._checks import check_model
from ._summaries import (
    SUMMARIZER_SYSTEM_PROMPT,
    SUMMARY_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    leading_summary,
    previous_summary,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "Compaction",
    "CompactionPlan",
    "CompactionReason",
    "CompactionRequest",
    "SummarizeHook",
    "TokenEstimate",
    "compacted_transcript",
    "estimate_tokens",
    "plan_compaction",
]

CompactionReason: TypeAlias = Literal["threshold", "overflow"]

# About four characters per token (an overestimate for English text and code), and what
# one image costs in characters.
CHARS_PER_TOKEN: Final = 4
IMAGE_CHARS: Final = 4800


# --------------------------------------------------------------------------- settings


class CompactionRequest(msgspec.Struct, kw_only=True):
    """What a summary is made of, given to ``Compaction.summarize``.

    ``messages`` are the older messages to condense (system messages left out: the
    system head keeps them), ``turn_prefix`` the start of a turn the cut splits (the
    kept messages continue it; empty when the cut falls between turns),
    ``previous_summary`` the text of the summary this transcript already starts with,
    ``tokens_before`` the estimated size of the transcript, ``reason`` why it is
    compacted, ``model`` the model the summary is asked of."""

    messages: list[Any]
    turn_prefix: list[Any]
    previous_summary: str | None
    tokens_before: int
    reason: CompactionReason
    model: Model


SummarizeHook: TypeAlias = Callable[
    [CompactionRequest, AbortSignal], str | Awaitable[str | None] | None
]
"""``summarize(request, signal)``: the summary's text (the transcript keeps it between
``SUMMARY_PREFIX`` and ``SUMMARY_SUFFIX``), or ``None`` to not compact this time."""


class Compaction(msgspec.Struct, frozen=True, kw_only=True):
    """When and how an Agent compacts its transcript:
    ``Agent(policy=RunPolicy(compaction=Compaction()))``.

    - ``reserve_tokens``: compact before a request once the estimated context is above
      the model's ``context_window`` minus this (room for the answer);
    - ``keep_recent_tokens``: about this many tokens of the newest messages stay as they
      are;
    - ``model``: the model that writes the summary (a ``Model`` or a catalog name;
      ``None``: the run's model); ``thinking_level`` its reasoning (default ``"off"``);
    - ``prompt`` / ``update_prompt`` / ``turn_prefix_prompt`` / ``system_prompt``: what
      the summarizer is told (a first summary, one that updates the previous summary,
      the start of a turn the cut splits, and its system prompt);
    - ``on_overflow``: a request the provider refused as too long for the context window
      is compacted and asked once more (a second overflow ends the run with the error);
    - ``summarize``: the hook that writes the summary instead of the model call (see
      ``SummarizeHook``).
    """

    reserve_tokens: int = 16_384
    keep_recent_tokens: int = 20_000
    model: Model | str | None = None
    thinking_level: str = "off"
    prompt: str = SUMMARY_PROMPT
    update_prompt: str = UPDATE_PROMPT
    turn_prefix_prompt: str = TURN_PREFIX_PROMPT
    system_prompt: str = SUMMARIZER_SYSTEM_PROMPT
    on_overflow: bool = True
    summarize: SummarizeHook | None = None

    def __post_init__(self) -> None:
        for name in ("reserve_tokens", "keep_recent_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(
                    f"Compaction({name}=...) must be a whole number of tokens, 0 or more; "
                    f"got {value!r}"
                )
        if self.model is not None:
            check_model(self.model, "Compaction(model=...)")  # a wrong name fails here
        if self.summarize is not None and not callable(self.summarize):
            raise TypeError(
                "Compaction(summarize=...) takes a function called as "
                f"summarize(request, signal), got {self.summarize!r}"
            )

    def should_compact(self, tokens: int, context_window: int) -> bool:
        """Whether a context of ``tokens`` is too big for ``context_window``."""
        return context_window > 0 and tokens > context_window - self.reserve_tokens


# --------------------------------------------------------------------------- sizes


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content or ():
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ImageContent):
            chars += IMAGE_CHARS
    return chars


def _chars(message: Any) -> int:
    if isinstance(message, (UserMessage, ToolResultMessage)):
        return _content_chars(message.content)
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextContent):
                chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                chars += len(block.thinking)
            elif isinstance(block, ToolCall):
                chars += len(block.name) + len(msgspec.json.encode(block.arguments))
        return chars
    if isinstance(message, SystemMessage):
        chars = _content_chars(message.content)
        chars += sum(len(text) for text in (message.sections or {}).values() if text)
        if message.tools_added:
            chars += len(msgspec.json.encode(message.tools_added))
        return chars
    return 0  # an application's own message: the model does not see it


def estimate_tokens(message: Any) -> int:
    """The estimated size of one message in tokens (about four characters each)."""
    return math.ceil(_chars(message) / CHARS_PER_TOKEN)


def _usage_tokens(usage: Usage) -> int:
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


def _reported(message: Any, stale_until: int) -> int:
    """The context size a response reports (0: none, or one written before the last
    compaction, which measured the transcript before it)."""
    if (
        isinstance(message, AssistantMessage)
        and message.stop_reason not in ("error", "aborted")
        and message.timestamp > stale_until
    ):
        return _usage_tokens(message.usage)
    return 0


class TokenEstimate:
    """The estimated size of a transcript, kept up to date as it grows.

    The newest response that reports usage gives the size up to it; each message after
    it adds its own estimate. Reading only what was appended since the last call, it
    starts over when the list was replaced or edited (a ``Transcript``'s ``edits``).
    """

    __slots__ = ("_edits", "_last_reported", "_prefix", "_source", "_stale_until")

    def __init__(self) -> None:
        self._source: list[Any] | None = None
        self._edits = -1
        self._prefix: list[int] = [0]  # estimate of messages[:i]
        self._last_reported: tuple[int, int] | None = None  # (index, tokens)
        self._stale_until = 0

    def tokens(self, messages: list[Any]) -> int:
        edits = getattr(messages, "edits", None)
        prefix = self._prefix
        if (
            messages is not self._source
            or edits is None
            or edits != self._edits
            or len(messages) < len(prefix) - 1
        ):
            self._source = messages
            self._edits = -1 if edits is None else edits
            prefix = self._prefix = [0]
            self._last_reported = None
            summary = leading_summary(messages)
            self._stale_until = summary[1].timestamp if summary is not None else 0
        total = prefix[-1]
        stale = self._stale_until
        for index in range(len(prefix) - 1, len(messages)):
            message = messages[index]
            total += estimate_tokens(message)
            prefix.append(total)
            reported = _reported(message, stale)
            if reported:
                self._last_reported = (index, reported)
        last = self._last_reported
        if last is None:
            return total
        index, reported = last
        return reported + total - prefix[index + 1]


# --------------------------------------------------------------------------- the cut


class CompactionPlan(msgspec.Struct, kw_only=True):
    """Where a transcript is cut: ``messages[:first_kept]`` are condensed (``summarized``
    and ``turn_prefix``), ``messages[first_kept:]`` stay."""

    first_kept: int
    summarized: list[Any]
    turn_prefix: list[Any]
    previous_summary: str | None


def _is_cut_point(message: Any) -> bool:
    return isinstance(message, (UserMessage, AssistantMessage))


def _starts_turn(message: Any) -> bool:
    return isinstance(message, UserMessage)


def plan_compaction(messages: Sequence[Any], keep_recent_tokens: int) -> CompactionPlan | None:
    """Where to cut ``messages`` to keep about ``keep_recent_tokens`` of the newest ones,
    or ``None`` when nothing before the cut is left to condense.

    Walking back from the newest message, the cut falls at the first user or assistant
    message at or after the point where the kept messages reach the budget (at the last
    such message when the newest ones alone are over it). A cut at an assistant message
    splits its turn: the turn's start is condensed on its own (``turn_prefix``).
    """
    found = leading_summary(messages)
    start = 0 if found is None else found[0] + 1
    previous = None if found is None else previous_summary(found[1])
    cut_points = [i for i in range(start, len(messages)) if _is_cut_point(messages[i])]
    if not cut_points:
        return None
    cut = cut_points[0]
    kept = 0
    for index in range(len(messages) - 1, start - 1, -1):
        size = estimate_tokens(messages[index])
        if size == 0:
            continue
        kept += size
        if kept >= keep_recent_tokens:
            cut = next((c for c in cut_points if c >= index), cut_points[-1])
            break
    turn_start = -1
    if not _starts_turn(messages[cut]):
        turn_start = next((i for i in range(cut, start - 1, -1) if _starts_turn(messages[i])), -1)
    history_end = turn_start if turn_start >= 0 else cut
    summarized = _conversation(messages[start:history_end])
    turn_prefix = _conversation(messages[turn_start:cut]) if turn_start >= 0 else []
    if not summarized and not turn_prefix:
        return None
    return CompactionPlan(
        first_kept=cut, summarized=summarized, turn_prefix=turn_prefix, previous_summary=previous
    )


def _conversation(messages: Sequence[Any]) -> list[Any]:
    return [m for m in messages if not isinstance(m, SystemMessage)]


def compacted_transcript(
    messages: Sequence[Any], plan: CompactionPlan, summary: UserMessage
) -> list[Any]:
    """The transcript after the cut: one system message replaying every system message
    before it (when there was one), the summary, then the kept messages."""
    head = get_current_system_message(messages[: plan.first_kept])
    kept = list(messages[plan.first_kept :])
    return ([head] if head is not None else []) + [summary] + kept
