"""Agent events into AG-UI events (sans-IO): ``EventTranslator``.

One translator follows one run. ``translate(event)`` returns the AG-UI events an agent
event stands for, in order; ``finish(result)`` the closing one. What maps:

- an assistant message's text blocks: ``TEXT_MESSAGE_START`` / ``_CONTENT`` / ``_END``
  (the first text block takes the message's id, later ones ``<id>-<index>``);
- its thinking blocks: ``REASONING_START``, ``REASONING_MESSAGE_START`` / ``_CONTENT`` /
  ``_END``, ``REASONING_END`` (AG-UI 1.0's reasoning events, which replaced the custom
  ``THINKING_*`` ones);
- its tool calls: ``TOOL_CALL_START`` / ``_ARGS`` / ``_END`` with the message as parent;
- each tool result message: ``TOOL_CALL_RESULT``, with ``metadata={"pi": {"isError":
  true}}`` for an error result (the event has no field of its own for it);
- a tool's progress (``tool_execution_update``), a retry of a failed request
  (``auto_retry_start``) and a fallback to the next model (``model_fallback``):
  ``CUSTOM`` events named ``pi.tool_update``, ``pi.retry`` and ``pi.fallback``.

A block the stream left open (an abort mid-answer sends no ``*_end``) is closed when its
message ends, so every START has its END. User and system messages a run emits are not
repeated: the client sent them. Calls to the client's own tools (``client_tools``) are
streamed like any other, but their placeholder results are not sent: they are the
``pendingToolCallIds`` of the run's success outcome, for the client to answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ..agent import AgentEvent, RunResult

__all__ = ["RUN_ERROR_CODE", "EventTranslator"]

# ``RUN_ERROR.code`` of a run whose model request failed (the message says why).
RUN_ERROR_CODE = "model_error"


def _new_id() -> str:
    return str(uuid.uuid4())


class _Block:
    """An open block of the streaming message: what kind, its AG-UI id, and (for a tool
    call whose id or name is not known yet) the argument text held back."""

    __slots__ = ("held", "id", "kind", "started")

    def __init__(self, kind: str, id: str, started: bool = True) -> None:
        self.kind = kind
        self.id = id
        self.started = started
        self.held: list[str] = []


class EventTranslator:
    """Translate one run's agent events. ``new_id`` makes the ids of the messages the run
    writes (UUIDs unless given); ``client_tools`` names the tools the client executes."""

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        *,
        client_tools: Collection[str] = (),
        new_id: Callable[[], str] = _new_id,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.client_tools = frozenset(client_tools)
        self._new_id = new_id
        self._message_id: str | None = None  # the streaming assistant message
        self._texts = 0  # text blocks seen in it
        self._blocks: dict[int, _Block] = {}  # open blocks by content index
        self.pending_tool_calls: list[str] = []  # client tool calls left to the client

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        match event.type:
            case "message_start" if event.message.role == "assistant":
                self._message_id = self._new_id()
                self._texts = 0
                self._blocks = {}
                return []
            case "message_update":
                return self._update(event.assistant_message_event)
            case "message_end":
                return self._message_end(event.message)
            case "tool_execution_update":
                update: dict[str, Any] = {
                    "toolCallId": event.tool_call_id,
                    "toolName": event.tool_name,
                    "text": _text(event.partial_result.content),
                }
                return [CustomEvent(name="pi.tool_update", value=update)]
            case "auto_retry_start":
                value: dict[str, Any] = {
                    "attempt": event.attempt,
                    "maxAttempts": event.max_attempts,
                    "delayMs": event.delay_ms,
                    "errorMessage": event.error_message,
                }
                return [CustomEvent(name="pi.retry", value=value)]
            case "model_fallback":
                fallback: dict[str, Any] = {
                    "fromModel": event.from_model,
                    "toModel": event.to_model,
                    "kind": event.kind,
                    "errorMessage": event.error_message,
                    "position": event.position,
                }
                return [CustomEvent(name="pi.fallback", value=fallback)]
        return []

    def finish(self, result: RunResult[Any]) -> BaseEvent:
        """``RUN_FINISHED`` (``cancelled`` after an abort, ``success`` otherwise, naming
        the client's pending calls) or ``RUN_ERROR`` for a run whose model failed."""
        usage = _usage(result.messages)
        if result.stop_reason == "error":
            return RunErrorEvent(
                message=result.error_message or "The model request failed",
                code=RUN_ERROR_CODE,
                usage=usage,
            )
        outcome: RunFinishedSuccessOutcome | RunFinishedCancelledOutcome
        if result.stop_reason == "aborted":
            outcome = RunFinishedCancelledOutcome()
        else:
            outcome = RunFinishedSuccessOutcome(
                pending_tool_call_ids=list(self.pending_tool_calls) or None
            )
        return RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            result=result.text if result.final is not None else None,
            outcome=outcome,
            usage=usage,
        )

    # ------------------------------------------------------------------ the message

    def _update(self, event: Any) -> list[BaseEvent]:
        parent = self._message_id
        if parent is None:  # an update before its message_start: not an agent stream
            return []
        index: int = getattr(event, "content_index", -1)
        match event.type:
            case "text_start":
                self._texts += 1
                block_id = parent if self._texts == 1 else f"{parent}-{index}"
                self._blocks[index] = _Block("text", block_id)
                return [TextMessageStartEvent(message_id=block_id, role="assistant")]
            case "text_delta" if event.delta and index in self._blocks:
                block_id = self._blocks[index].id
                return [TextMessageContentEvent(message_id=block_id, delta=event.delta)]
            case "thinking_start":
                block_id = f"{parent}-reasoning-{index}"
                self._blocks[index] = _Block("reasoning", block_id)
                return [
                    ReasoningStartEvent(message_id=block_id),
                    ReasoningMessageStartEvent(message_id=block_id),
                ]
            case "thinking_delta" if event.delta and index in self._blocks:
                block_id = self._blocks[index].id
                return [ReasoningMessageContentEvent(message_id=block_id, delta=event.delta)]
            case "toolcall_start":
                call = event.partial.content[index]
                block = self._blocks[index] = _Block("tool", call.id, bool(call.id and call.name))
                if not block.started:
                    return []
                return [ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name,
                                           parent_message_id=parent)]  # fmt: skip
            case "toolcall_delta" if event.delta and index in self._blocks:
                block = self._blocks[index]
                if not block.started:
                    block.held.append(event.delta)
                    return []
                return [ToolCallArgsEvent(tool_call_id=block.id, delta=event.delta)]
            case "toolcall_end" if index in self._blocks:
                return self._end_tool_call(self._blocks.pop(index), event.tool_call)
            case "text_end" | "thinking_end" if index in self._blocks:
                return _close(self._blocks.pop(index))
        return []

    def _end_tool_call(self, block: _Block, call: Any) -> list[BaseEvent]:
        """The end of a tool call; one whose id or name came late starts here, with the
        argument text it held back."""
        if block.started:
            return [ToolCallEndEvent(tool_call_id=block.id)]
        events: list[BaseEvent] = [
            ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name,
                               parent_message_id=self._message_id),
        ]  # fmt: skip
        if block.held:
            events.append(ToolCallArgsEvent(tool_call_id=call.id, delta="".join(block.held)))
        events.append(ToolCallEndEvent(tool_call_id=call.id))
        return events

    def _message_end(self, message: Any) -> list[BaseEvent]:
        if message.role == "assistant":
            events: list[BaseEvent] = []
            for index in sorted(self._blocks):  # left open by an abort or an error
                events.extend(_close(self._blocks[index]))
            self._blocks = {}
            self._message_id = None
            return events
        if message.role != "toolResult":
            return []
        if message.tool_name in self.client_tools:
            self.pending_tool_calls.append(message.tool_call_id)
            return []
        return [
            ToolCallResultEvent(
                message_id=self._new_id(),
                tool_call_id=message.tool_call_id,
                content=_text(message.content),
                role="tool",
                metadata={"pi": {"isError": True}} if message.is_error else None,
            )
        ]


def _close(block: _Block) -> list[BaseEvent]:
    if block.kind == "text":
        return [TextMessageEndEvent(message_id=block.id)]
    if block.kind == "reasoning":
        return [
            ReasoningMessageEndEvent(message_id=block.id),
            ReasoningEndEvent(message_id=block.id),
        ]
    if block.started:
        return [ToolCallEndEvent(tool_call_id=block.id)]
    return []  # a tool call that never had its id: nothing of it was sent


def _text(content: Any) -> str:
    """The text of a result's blocks (images are named, not sent)."""
    parts = [
        block.text if block.type == "text" else f"[image {block.mime_type}]" for block in content
    ]
    return "\n".join(parts)


def _usage(messages: list[Any]) -> list[TokenUsage] | None:
    """The tokens of the run's responses, one entry per provider and model."""
    totals: dict[tuple[str, str], list[int]] = {}
    for message in messages:
        if getattr(message, "role", None) != "assistant":
            continue
        usage = message.usage
        counts = totals.setdefault((message.provider, message.model), [0, 0, 0, 0])
        counts[0] += usage.input + usage.cache_read + usage.cache_write
        counts[1] += usage.output
        counts[2] += usage.cache_read
        counts[3] += usage.cache_write
    if not totals:
        return None
    return [
        TokenUsage(
            provider=provider,
            model=model,
            input_tokens=inputs,
            output_tokens=outputs,
            total_tokens=inputs + outputs,
            cached_input_tokens=cached,
            cache_write_input_tokens=written,
        )
        for (provider, model), (inputs, outputs, cached, written) in totals.items()
    ]
