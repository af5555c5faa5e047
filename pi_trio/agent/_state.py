"""``AgentState``: what a host reads (and partly writes) on ``agent.state``.

Runtime fields change in exactly one place, ``StateReducer``, which the Agent owns: its
``reduce`` is applied to every event before any listener sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ai import Model
from ..ai.transcript import get_current_system_prompt
from ._checks import check_model, check_thinking_level

__all__ = ["AgentState", "StateReducer"]

_NONE_PENDING: frozenset[str] = frozenset()  # shared: an empty frozenset costs 216 bytes


class AgentState:
    """``model``, ``thinking_level``, ``tools`` and ``messages`` are writable (assigning
    ``tools``/``messages`` stores a copy; the getters return the live list; ``model``
    takes a ``Model`` or a catalog name, ``thinking_level`` one of ``THINKING_LEVELS``,
    checked on assignment).
    ``system_prompt`` is replayed from the transcript's system messages. ``is_streaming``,
    ``streaming_message``, ``pending_tool_calls`` (a new frozenset on each change) and
    ``error_message`` are maintained by the runtime."""

    __slots__ = (
        "_error_message",
        "_is_streaming",
        "_messages",
        "_model",
        "_pending_tool_calls",
        "_streaming_message",
        "_thinking_level",
        "_tools",
    )

    def __init__(
        self,
        *,
        model: Model | str | None,
        thinking_level: str,
        tools: list[Any],
        messages: list[Any],
        where: str = "AgentState",
    ) -> None:
        self._model = check_model(model, f"{where}(model=...)")
        self._thinking_level = check_thinking_level(thinking_level, f"{where}(thinking_level=...)")
        self._tools = tools
        self._messages = messages
        self._is_streaming = False
        self._streaming_message: Any = None
        self._pending_tool_calls: frozenset[str] = _NONE_PENDING
        self._error_message: str | None = None

    @property
    def model(self) -> Model:
        return self._model

    @model.setter
    def model(self, model: Model | str) -> None:
        self._model = check_model(model, "agent.state.model")

    @property
    def thinking_level(self) -> str:
        return self._thinking_level

    @thinking_level.setter
    def thinking_level(self, level: str) -> None:
        self._thinking_level = check_thinking_level(level, "agent.state.thinking_level")

    @property
    def tools(self) -> list[Any]:
        return self._tools

    @tools.setter
    def tools(self, tools: Sequence[Any]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[Any]:
        return self._messages

    @messages.setter
    def messages(self, messages: Sequence[Any]) -> None:
        self._messages = list(messages)

    @property
    def system_prompt(self) -> str:
        return get_current_system_prompt(self._messages)

    @property
    def is_streaming(self) -> bool:
        return self._is_streaming

    @property
    def streaming_message(self) -> Any:
        return self._streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        return self._pending_tool_calls

    @property
    def error_message(self) -> str | None:
        return self._error_message

    def __repr__(self) -> str:
        return (
            f"<AgentState model={self.model.id!r} messages={len(self._messages)} "
            f"streaming={self._is_streaming}>"
        )


class StateReducer:
    """The one writer of an ``AgentState``'s runtime fields. ``on_message_end`` is told of
    every message that reached its ``message_end`` (the Agent's queues accept it)."""

    __slots__ = ("_on_message_end", "state")

    def __init__(self, state: AgentState, on_message_end: Callable[[Any], None]) -> None:
        self.state = state
        self._on_message_end = on_message_end

    def start_run(self) -> None:
        state = self.state
        state._is_streaming = True
        state._streaming_message = None
        state._error_message = None

    def finish_run(self) -> None:
        state = self.state
        state._is_streaming = False
        state._streaming_message = None
        state._pending_tool_calls = _NONE_PENDING

    def reset(self, messages: list[Any]) -> None:
        state = self.state
        state._messages = messages
        state._is_streaming = False
        state._streaming_message = None
        state._pending_tool_calls = _NONE_PENDING
        state._error_message = None

    def resuming(self, slots: dict[str, int]) -> Callable[[Any], None]:
        """``reduce`` for a resumed run: the result of a call in ``slots`` (call id ->
        index of its placeholder in the transcript) takes the placeholder's place."""
        slots = dict(slots)
        reduce = self.reduce
        state = self.state

        def reduce_resumed(event: Any) -> None:
            if event.type == "message_end" and slots:
                message = event.message
                if getattr(message, "role", None) == "toolResult":
                    index = slots.pop(message.tool_call_id, None)
                    if index is not None:
                        state._streaming_message = None
                        state._messages[index] = message
                        self._on_message_end(message)
                        return
            reduce(event)

        return reduce_resumed

    def reduce(self, event: Any) -> None:
        state = self.state
        kind = event.type
        if kind == "message_update" or kind == "message_start":
            state._streaming_message = event.message
        elif kind == "message_end":
            state._streaming_message = None
            state._messages.append(event.message)
            self._on_message_end(event.message)
        elif kind == "tool_execution_start":
            state._pending_tool_calls = state._pending_tool_calls | {event.tool_call_id}
        elif kind == "tool_execution_end":
            pending = state._pending_tool_calls - {event.tool_call_id}
            state._pending_tool_calls = pending if pending else _NONE_PENDING
        elif kind == "turn_end":
            message = event.message
            if getattr(message, "role", None) == "assistant" and message.error_message:
                state._error_message = message.error_message
        elif kind == "agent_end":
            state._streaming_message = None
        elif kind == "compaction_end":
            # the transcript after a compaction (None: it did not compact)
            if event.messages is not None:
                state._messages = list(event.messages)
        elif kind == "auto_retry_start" or kind == "model_fallback":
            # the failed response that is asked for again leaves the transcript
            messages = state._messages
            if messages and getattr(messages[-1], "stop_reason", None) == "error":
                messages.pop()
