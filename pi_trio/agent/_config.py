"""What one loop invocation is given: the hook types, ``AgentHooks``, ``AgentLoopConfig``
and the default converter.

Every hook may be a plain or an ``async`` function. Hooks that take a context take the
run's ``AbortSignal`` as an optional last parameter (``SignalHook``); what a hook returns
may also be a dict of its result type's fields, or ``None`` for "no change".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    Message,
    Model,
    RetryPolicy,
    StreamOptions,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from ..ai.providers import ProviderRegistry
from ._compaction import Compaction
from ._fallback import FallbackPolicy
from ._hooks import coerce_result
from ._limits import RunCounters, RunLimits
from ._types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentEvent,
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentRequestUpdate,
    AgentTurnContext,
    AgentTurnDecision,
    BeforeToolCallContext,
    BeforeToolCallResult,
    PrepareRequestContext,
)

__all__ = [
    "AfterToolCallHook",
    "AgentHooks",
    "AgentListener",
    "AgentLoopConfig",
    "BeforeToolCallHook",
    "ConvertToLlmHook",
    "FinishTurnHook",
    "GetApiKeyHook",
    "MessagePoll",
    "PrepareNextTurnHook",
    "PrepareRequestHook",
    "ShouldStopAfterTurnHook",
    "SignalHook",
    "TransformContextHook",
    "default_convert_to_llm",
    "turn_decision",
]

_A = TypeVar("_A")
_R = TypeVar("_R")

SignalHook: TypeAlias = (
    Callable[[_A], _R | Awaitable[_R]] | Callable[[_A, AbortSignal], _R | Awaitable[_R]]
)
"""A hook called with a context and, if it takes a second parameter, the run's signal."""

ConvertToLlmHook: TypeAlias = Callable[
    [list[AgentMessage]], Sequence[Message] | Awaitable[Sequence[Message]]
]
"""The transcript (after ``transform_context``) -> the messages the model sees."""
TransformContextHook: TypeAlias = SignalHook[list[AgentMessage], list[AgentMessage]]
"""The transcript -> the transcript this request uses (prune, summarize, inject)."""
GetApiKeyHook: TypeAlias = Callable[[str], str | Awaitable[str | None] | None]
"""The provider name -> its API key for this request (``None``: the usual lookup)."""
BeforeToolCallHook: TypeAlias = SignalHook[
    BeforeToolCallContext, BeforeToolCallResult | dict[str, Any] | None
]
AfterToolCallHook: TypeAlias = SignalHook[
    AfterToolCallContext, AfterToolCallResult | dict[str, Any] | None
]
FinishTurnHook: TypeAlias = SignalHook[
    AgentTurnContext, AgentTurnDecision | Literal["continue", "end"] | dict[str, Any] | None
]
PrepareRequestHook: TypeAlias = SignalHook[
    PrepareRequestContext, AgentRequestUpdate | dict[str, Any] | None
]
PrepareNextTurnHook: TypeAlias = (
    SignalHook[AgentTurnContext, AgentLoopTurnUpdate | dict[str, Any] | None]
    | Callable[[], AgentLoopTurnUpdate | dict[str, Any] | Awaitable[Any] | None]
)
"""Called with the finished turn (and the signal), or, in the older form, with the signal
alone or nothing."""
ShouldStopAfterTurnHook: TypeAlias = SignalHook[AgentTurnContext, bool]
AgentListener: TypeAlias = SignalHook[AgentEvent, object]
"""``Agent.subscribe``'s listener: called with each event (and, if it takes a second
parameter, the run's signal); sync or async, its result is ignored."""
MessagePoll: TypeAlias = Callable[[], Sequence[AgentMessage] | Awaitable[Sequence[AgentMessage]]]
"""Returns the messages queued for the run (steering, follow-up), or nothing."""

_LLM_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)
_LLM_TYPE_SET = frozenset(_LLM_TYPES)


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Any]:
    """Keep the messages a model understands (system, user, assistant, toolResult)."""
    types = _LLM_TYPE_SET
    return [m for m in messages if type(m) in types or isinstance(m, _LLM_TYPES)]


class AgentHooks(msgspec.Struct, kw_only=True):
    """An Agent's hooks (``agent.hooks``), read at the start of each run. Each is
    optional; see the hook types for what each is called with and may return."""

    convert_to_llm: ConvertToLlmHook | None = None
    transform_context: TransformContextHook | None = None
    get_api_key: GetApiKeyHook | None = None
    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None
    finish_turn: FinishTurnHook | None = None
    prepare_request: PrepareRequestHook | None = None
    prepare_next_turn: PrepareNextTurnHook | None = None
    should_stop_after_turn: ShouldStopAfterTurnHook | None = None

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(
                    f"AgentHooks({name}=...) takes a function (sync or async), got {value!r}"
                )


class AgentLoopConfig(msgspec.Struct, kw_only=True):
    """Everything one loop invocation needs besides the context: the hooks of
    ``AgentHooks``, the queue polls, and the request settings. ``stream_options`` are the
    per-request options (``api_key``, ``session_id``, ``thinking_budgets``,
    ``temperature``…); ``thinking_level`` becomes ``reasoning``.
    """

    model: Model
    thinking_level: str = "off"
    stream_options: StreamOptions | None = None
    registry: ProviderRegistry | None = None
    convert_to_llm: ConvertToLlmHook | None = None
    transform_context: TransformContextHook | None = None
    get_api_key: GetApiKeyHook | None = None
    get_steering_messages: MessagePoll | None = None
    get_follow_up_messages: MessagePoll | None = None
    tool_execution: Literal["sequential", "parallel"] = "parallel"
    max_concurrent_tools: int | None = None
    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None
    prepare_next_turn: PrepareNextTurnHook | None = None
    prepare_request: PrepareRequestHook | None = None
    finish_turn: FinishTurnHook | None = None
    should_stop_after_turn: ShouldStopAfterTurnHook | None = None
    get_request_steering_messages: MessagePoll | None = None
    """Polled right after ``prepare_request``; what it returns joins the same request
    (the Agent uses it for messages steered while ``prepare_request`` ran)."""
    retry: RetryPolicy | None = None
    """Retry a response that failed with a transient error (``auto_retry_start`` /
    ``auto_retry_end`` tell the listeners); ``None`` never retries."""
    compaction: Compaction | None = None
    """Condense the older transcript when the context grows too big for the model
    (``compaction_start`` / ``compaction_end`` tell the listeners); ``None``: never."""
    close_timeout: float = 5.0
    fallback: FallbackPolicy | None = None
    """The models a failed response goes on to (``model_fallback`` tells the listeners);
    ``None``: none."""
    limits: RunLimits | None = None
    """Ceilings on the run's requests, tokens, cost and tool calls; ``None``: none."""
    limit_counters: RunCounters | None = None
    """The counters ``limits`` are held to, added to in place (counters shared by
    several runs make the limits cumulative); ``None``: the run counts from zero."""


def turn_decision(value: Any) -> str | None:
    """``finish_turn``'s answer as ``"continue"``, ``"end"`` or ``None``."""
    if value is None:
        return None
    if isinstance(value, str) and value in ("continue", "end"):
        return value
    decision = coerce_result(value, AgentTurnDecision, "finish_turn")
    return decision.action if decision is not None else None
