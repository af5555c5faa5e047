"""Context compaction during a run: when, the summary request, and telling the listeners.

The loop asks a ``Compactor`` before each request (``before_request``: is the estimated
context over the threshold?) and after a response that overflowed the context window
(``recover``: compact, then the loop asks once more). A compaction is announced as
``compaction_start``, then ``compaction_end``, which carries the transcript after it (the
Agent's reducer adopts it); the run's lifecycle owns both events and the transcript.

The summary is written by ``Compaction.summarize`` when given, else by a model call
(``Compaction.model``, the run's model by default) given the older messages as plain text:
no thinking block and no signature of the run's model ever reaches the summarizer. A
summary request that fails (an error, an answer cut at the output limit, a tool call)
leaves the transcript as it was (``compaction_end.error_message`` says why); an overflow
is then reported as it came. An abort stops the summary request like any other: the
lifecycle closes the compaction (``compaction_end.aborted``) before the rest of the run.

A run with ``RunLimits`` counts each summary request and what it spent like any request
(``RunCounters.count_response``); the limits are held at their usual points, so a
compaction that starts is finished, and an overflow is recovered only while the limits
allow another request (a ``summarize`` hook's own spend is not known, so not counted).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..ai import (
    AssistantMessage,
    Context,
    Model,
    SystemMessage,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from ..ai.failures import is_context_overflow
from ..ai.providers import now_ms
from ._checks import check_model
from ._compaction import (
    Compaction,
    CompactionPlan,
    CompactionReason,
    CompactionRequest,
    TokenEstimate,
    compacted_transcript,
    plan_compaction,
)
from ._lifecycle import RunLifecycle
from ._summaries import NO_EARLIER_HISTORY, SPLIT_TURN_SEPARATOR, summary_message, summary_prompt
from ._types import CompactionEndEvent, CompactionStartEvent
from ._usage import add_usage

__all__ = ["Compactor", "SummaryRequest"]

SummaryRequest = Callable[[Model, Context, str], Awaitable[AssistantMessage]]
"""``request(model, context, thinking_level)``: one summary request with the run's
options (keys, registry, signal); the loop provides it."""

_RECOVERY_FAILED = "Context overflow recovery failed: "


class _SummaryFailed(Exception):
    """The summarizer's answer cannot be a summary (internal: becomes compaction_end's
    ``error_message``)."""


class Compactor:
    """One run's compaction: the settings, the running size estimate, and the usage of
    the summary requests made so far (``usage``)."""

    __slots__ = (
        "_call",
        "_estimate",
        "_life",
        "_request",
        "_settle",
        "_spent",
        "settings",
        "usage",
    )

    def __init__(
        self,
        settings: Compaction,
        life: RunLifecycle,
        call: Callable[..., Awaitable[Any]],
        settle: Callable[[], Awaitable[None]],
        request: SummaryRequest,
    ) -> None:
        self.settings = settings
        self._life = life
        self._call = call
        self._settle = settle
        self._request = request
        self._estimate = TokenEstimate()
        self.usage: Usage | None = None  # every summary request of the run
        self._spent: Usage | None = None  # the summary requests of this compaction

    async def before_request(self, model: Model) -> None:
        """Compact when the context is over the threshold for ``model``."""
        messages = self._life.context.messages
        tokens = self._estimate.tokens(messages)
        if self.settings.should_compact(tokens, model.context_window):
            await self._compact("threshold", model, messages, tokens, None)

    def overflowed(self, message: AssistantMessage, model: Model) -> bool:
        """Whether ``message`` failed because the prompt did not fit the window (and the
        settings ask to recover from that)."""
        return (
            self.settings.on_overflow
            and message.stop_reason in ("error", "length")
            and is_context_overflow(message, model.context_window)
        )

    async def recover(self, failed: AssistantMessage, model: Model) -> bool:
        """Compact after the overflowed response ``failed`` (the newest message); true
        when the transcript was compacted and the request should be asked again."""
        messages = self._life.context.messages
        before = messages[:-1] if messages and messages[-1] is failed else list(messages)
        tokens = TokenEstimate().tokens(before)
        return await self._compact("overflow", model, before, tokens, failed)

    async def _compact(
        self,
        reason: CompactionReason,
        model: Model,
        messages: list[Any],
        tokens: int,
        failed: AssistantMessage | None,
    ) -> bool:
        plan = plan_compaction(messages, self.settings.keep_recent_tokens)
        if plan is None:
            return False
        life = self._life
        retry = failed is not None
        self._spent = None
        await self._settle()
        await life.begin_compaction(
            CompactionStartEvent(reason=reason, tokens_before=tokens, will_retry=retry)
        )
        try:
            summary = await self._summary(plan, reason, model, tokens)
        except _SummaryFailed as exc:
            text = str(exc)
            await life.end_compaction(
                CompactionEndEvent(
                    reason=reason,
                    tokens_before=tokens,
                    usage=self._spent,
                    error_message=_RECOVERY_FAILED + text if retry else text,
                ),
                None,
                None,
            )
            return False
        if summary is None:  # the hook declined
            await life.end_compaction(
                CompactionEndEvent(reason=reason, tokens_before=tokens), None, None
            )
            return False
        compacted = compacted_transcript(messages, plan, summary_message(summary, now_ms()))
        after = TokenEstimate().tokens(compacted)
        await life.end_compaction(
            CompactionEndEvent(
                reason=reason,
                summary=summary,
                tokens_before=tokens,
                tokens_after=after,
                usage=self._spent,
                messages=list(compacted),
                will_retry=retry,
            ),
            compacted,
            failed,
        )
        return True

    # ------------------------------------------------------------------ the summary

    async def _summary(
        self, plan: CompactionPlan, reason: CompactionReason, model: Model, tokens: int
    ) -> str | None:
        settings = self.settings
        summarizer = (
            model
            if settings.model is None
            else check_model(settings.model, "Compaction(model=...)")
        )
        if settings.summarize is not None:
            request = CompactionRequest(
                messages=plan.summarized,
                turn_prefix=plan.turn_prefix,
                previous_summary=plan.previous_summary,
                tokens_before=tokens,
                reason=reason,
                model=summarizer,
            )
            text = await self._call(settings.summarize, request, self._life.signal)
            if text is not None and not isinstance(text, str):
                raise TypeError(
                    "Compaction(summarize=...) must return the summary's text (a str) or "
                    f"None to not compact; it returned {text!r}"
                )
            return text
        history = plan.previous_summary or NO_EARLIER_HISTORY
        if plan.summarized:
            instructions = (
                settings.prompt if plan.previous_summary is None else settings.update_prompt
            )
            history = await self._ask(
                summarizer, summary_prompt(plan.summarized, instructions, plan.previous_summary)
            )
        if not plan.turn_prefix:
            return history
        prefix = await self._ask(
            summarizer, summary_prompt(plan.turn_prefix, settings.turn_prefix_prompt)
        )
        return history + SPLIT_TURN_SEPARATOR + prefix

    async def _ask(self, model: Model, prompt: str) -> str:
        context = Context(
            messages=[
                SystemMessage(content=self.settings.system_prompt, timestamp=0),
                UserMessage(content=[TextContent(text=prompt)], timestamp=now_ms()),
            ]
        )
        answer = await self._request(model, context, self.settings.thinking_level)
        counters = self._life.counters
        if counters is not None:  # the run's limits count it like any request
            counters.count_response(answer)
        self.usage = add_usage(self.usage, answer.usage)
        self._spent = add_usage(self._spent, answer.usage)
        if answer.stop_reason == "error" or answer.stop_reason == "aborted":
            raise _SummaryFailed(f"the summary request failed: {answer.error_message}")
        if answer.stop_reason == "length":
            raise _SummaryFailed(
                "the summary was cut at the model's output limit, so it is incomplete"
            )
        if any(isinstance(block, ToolCall) for block in answer.content):
            raise _SummaryFailed("the summarizer called a tool instead of writing a summary")
        text = "".join(b.text for b in answer.content if isinstance(b, TextContent)).strip()
        if not text:
            raise _SummaryFailed("the summarizer answered with no text")
        return text
