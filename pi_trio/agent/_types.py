"""Agent-level types: tools and their results, the ten agent events, hook contexts and
hook results.

Events are msgspec Structs tagged by ``type`` with the original runtime's JSON (camelCase
keys). Messages inside them may be any agent message: the four pi-ai messages or an
application's own message objects (anything with a ``role``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

from ..ai import (
    AssistantMessage,
    AssistantMessageEvent,
    ImageContent,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentLoopTurnUpdate",
    "AgentMessage",
    "AgentRequestUpdate",
    "AgentStartEvent",
    "AgentToolResult",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "AgentTurnContext",
    "AgentTurnDecision",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelFallbackEvent",
    "PrepareRequestContext",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolUpdateCallback",
    "TurnEndEvent",
    "TurnStartEvent",
]

AgentMessage: TypeAlias = Any
"""A transcript entry: a pi-ai message (system, user, assistant, toolResult) or an
application-defined message object with a ``role`` attribute."""


class AgentToolResult(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """What a tool returns.

    ``content`` goes to the model; ``details`` is for UIs and logs; ``is_error`` reports a
    failure without raising; ``terminate`` asks to end the run after this batch (honoured
    only when every call of the batch asks for it).
    """

    content: list[TextContent | ImageContent] = msgspec.field(default_factory=list)
    details: Any = None
    structured_content: Any = None
    usage: Usage | None = None
    is_error: bool | None = None
    terminate: bool | None = None


ToolUpdateCallback: TypeAlias = Callable[[AgentToolResult], None]


class AgentContext(msgspec.Struct, kw_only=True):
    """The engine's working context: the transcript and the executable tools."""

    messages: list[AgentMessage] = msgspec.field(default_factory=list)
    tools: list[Any] = msgspec.field(default_factory=list)


# --------------------------------------------------------------------------- events


class _AgentEvent(
    msgspec.Struct, tag_field="type", rename="camel", kw_only=True, omit_defaults=True, gc=False
):
    """Events never form reference cycles: untracked by the garbage collector."""


class AgentStartEvent(_AgentEvent, tag="agent_start", kw_only=True):
    """A run started (once per ``prompt()`` / ``continue_()``)."""

    type: ClassVar[Literal["agent_start"]] = "agent_start"


class AgentEndEvent(_AgentEvent, tag="agent_end", kw_only=True):
    """The run ended, whatever the way (also after an abort or a failure): ``messages`` are
    the messages it added to the transcript. Always the run's last event."""

    type: ClassVar[Literal["agent_end"]] = "agent_end"
    messages: list[AgentMessage]


class TurnStartEvent(_AgentEvent, tag="turn_start", kw_only=True):
    """A turn started: one request to the model and the tool calls of its answer."""

    type: ClassVar[Literal["turn_start"]] = "turn_start"


class TurnEndEvent(_AgentEvent, tag="turn_end", kw_only=True):
    """A turn ended: ``message`` is its assistant message, ``tool_results`` the results of
    its tool calls (in source order; empty when the answer called none)."""

    type: ClassVar[Literal["turn_end"]] = "turn_end"
    message: AgentMessage
    tool_results: list[ToolResultMessage]


class MessageStartEvent(_AgentEvent, tag="message_start", kw_only=True):
    """A message enters the transcript (user, assistant, tool result or a system message
    the run adds); for an assistant message, its stream has begun."""

    type: ClassVar[Literal["message_start"]] = "message_start"
    message: AgentMessage


class MessageUpdateEvent(_AgentEvent, tag="message_update", kw_only=True):
    """The assistant message streams: ``assistant_message_event`` is the provider's event
    (``text_delta``, ``toolcall_delta``, ...) and ``message`` the message so far."""

    type: ClassVar[Literal["message_update"]] = "message_update"
    message: AgentMessage
    assistant_message_event: AssistantMessageEvent


class MessageEndEvent(_AgentEvent, tag="message_end", kw_only=True):
    """``message`` is complete and now in ``agent.state.messages``."""

    type: ClassVar[Literal["message_end"]] = "message_end"
    message: AgentMessage


class ToolExecutionStartEvent(_AgentEvent, tag="tool_execution_start", kw_only=True):
    """A tool call starts with its validated ``args``."""

    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    args: Any


class ToolExecutionUpdateEvent(_AgentEvent, tag="tool_execution_update", kw_only=True):
    """A running tool reported progress (``on_update``); ``partial_result`` is what it sent."""

    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: AgentToolResult


class ToolExecutionEndEvent(_AgentEvent, tag="tool_execution_end", kw_only=True):
    """A tool call finished: its ``result``, whether it ``is_error`` (raised, refused, timed
    out, aborted) and how long it ran (``duration_ms``)."""

    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None


class AutoRetryStartEvent(_AgentEvent, tag="auto_retry_start", kw_only=True):
    """An Agent with a ``RetryPolicy`` retries a failed response: the response (already
    ended with ``message_end``) leaves the transcript, and after ``delay_ms`` the request
    is made again. ``attempt`` counts retries from 1. (Named as pi's coding agent names
    its retry events.)"""

    type: ClassVar[Literal["auto_retry_start"]] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


class AutoRetryEndEvent(_AgentEvent, tag="auto_retry_end", kw_only=True):
    """Retrying ended: ``success`` when a retried request completed; otherwise the
    retries ran out, the error was not retryable, or the run was aborted."""

    type: ClassVar[Literal["auto_retry_end"]] = "auto_retry_end"
    success: bool
    attempt: int
    final_error: str | None = None


class CompactionStartEvent(_AgentEvent, tag="compaction_start", kw_only=True):
    """An Agent with ``RunPolicy(compaction=...)`` condenses the older part of its
    transcript: the estimated context (``tokens_before``) passed the threshold
    (``reason="threshold"``), or the last response overflowed the context window
    (``"overflow"``; ``will_retry``: the response leaves the transcript and is asked again
    once compacted). (Named as pi's coding agent names its compaction events.)"""

    type: ClassVar[Literal["compaction_start"]] = "compaction_start"
    reason: str
    tokens_before: int
    will_retry: bool = False


class CompactionEndEvent(_AgentEvent, tag="compaction_end", kw_only=True):
    """The compaction ended. When it compacted, ``messages`` is the whole transcript
    after it (the Agent's ``state.messages`` is now a copy of it: the system head, the
    user message holding ``summary``, the kept messages) and ``tokens_after`` its
    estimated size; otherwise ``messages`` is ``None`` and ``error_message`` says why
    (``aborted``: by an abort). ``usage`` is what the summary requests cost."""

    type: ClassVar[Literal["compaction_end"]] = "compaction_end"
    reason: str
    tokens_before: int
    tokens_after: int | None = None
    summary: str | None = None
    messages: list[AgentMessage] | None = None
    usage: Usage | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


class ModelFallbackEvent(_AgentEvent, tag="model_fallback", kw_only=True):
    """An Agent with a ``FallbackPolicy`` goes on with the next model of its chain: the
    response that failed (already ended with ``message_end``) leaves the transcript, as
    with ``auto_retry_start``, and the same turn asks ``to_model`` at once. Models are
    named ``"provider/model-id"``; ``kind`` is the failure's ``failure_kind``
    (``"transient"``, ``"quota"``, ``"overflow"`` or ``"other"``); ``position`` counts the
    models fallen back to in this run, from 1."""

    type: ClassVar[Literal["model_fallback"]] = "model_fallback"
    from_model: str
    to_model: str
    kind: str
    error_message: str
    position: int


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | ModelFallbackEvent
)


# --------------------------------------------------------------------------- hooks


class _Hook(msgspec.Struct, kw_only=True):
    pass


class BeforeToolCallContext(_Hook):
    """``before_tool_call`` sees the raw tool-call block and the validated arguments
    (mutating ``args`` changes what ``execute`` receives, without re-validation)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    context: AgentContext


class BeforeToolCallResult(_Hook):
    """``block=True`` refuses the call (``reason`` becomes the error text);
    ``terminate`` counts toward ending the run only when blocking."""

    block: bool = False
    reason: str | None = None
    terminate: bool | None = None


class AfterToolCallContext(_Hook):
    """``after_tool_call`` sees the call, its arguments and the executed ``result`` (with
    ``is_error``), and may override fields with an ``AfterToolCallResult``."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    is_error: bool
    context: AgentContext


class AfterToolCallResult(_Hook):
    """Field-by-field overrides of the executed result; ``None`` keeps a field."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    structured_content: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


class AgentTurnContext(_Hook):
    """A completed turn: its assistant message, its tool results, the context after
    them, and what the run would return if it ended now."""

    message: AgentMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


class AgentTurnDecision(_Hook):
    """What ``finish_turn`` answers: ``"continue"`` the run or ``"end"`` it after this turn."""

    action: Literal["continue", "end"]


class AgentLoopTurnUpdate(_Hook):
    """What ``prepare_next_turn`` may change; ``messages`` are appended (with their
    lifecycle events) before pending steering/follow-up messages."""

    context: AgentContext | None = None
    messages: list[AgentMessage] | None = None
    model: Model | None = None
    thinking_level: str | None = None


class AgentRequestUpdate(_Hook):
    """What ``prepare_request`` may change for this and later requests of the run."""

    context: AgentContext | None = None
    model: Model | None = None
    thinking_level: str | None = None


class PrepareRequestContext(_Hook):
    """``prepare_request`` sees the context, model and thinking level of the next request
    and may change them with an ``AgentRequestUpdate``."""

    context: AgentContext
    model: Model
    thinking_level: str
