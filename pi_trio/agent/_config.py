"""What one loop invocation is given: ``AgentLoopConfig`` and the default converter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec

from ..ai import (
    AssistantMessage,
    Model,
    ProviderRegistry,
    StreamOptions,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from ._hooks import coerce_result
from ._types import AgentMessage, AgentTurnDecision

__all__ = ["AgentLoopConfig", "default_convert_to_llm", "turn_decision"]

_LLM_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)
_LLM_TYPE_SET = frozenset(_LLM_TYPES)


def default_convert_to_llm(messages: list[AgentMessage]) -> list[Any]:
    """Keep the messages a model understands (system, user, assistant, toolResult)."""
    types = _LLM_TYPE_SET
    return [m for m in messages if type(m) in types or isinstance(m, _LLM_TYPES)]


class AgentLoopConfig(msgspec.Struct, kw_only=True):
    """Everything one loop invocation needs besides the context.

    Hooks may be sync or async; they receive the arguments listed in their docs (and the
    run's ``AbortSignal`` as the last argument when they accept it).
    ``stream_options`` are the per-request options (``api_key``, ``session_id``,
    ``thinking_budgets``, ``temperature``…); ``thinking_level`` becomes ``reasoning``.
    """

    model: Model
    thinking_level: str = "off"
    stream_options: StreamOptions | None = None
    registry: ProviderRegistry | None = None
    convert_to_llm: Callable[..., Any] | None = None
    transform_context: Callable[..., Any] | None = None
    get_api_key: Callable[..., Any] | None = None
    get_steering_messages: Callable[..., Any] | None = None
    get_follow_up_messages: Callable[..., Any] | None = None
    tool_execution: Literal["sequential", "parallel"] = "parallel"
    max_concurrent_tools: int | None = None
    before_tool_call: Callable[..., Any] | None = None
    after_tool_call: Callable[..., Any] | None = None
    prepare_next_turn: Callable[..., Any] | None = None
    prepare_request: Callable[..., Any] | None = None
    finish_turn: Callable[..., Any] | None = None
    should_stop_after_turn: Callable[..., Any] | None = None
    get_request_steering_messages: Callable[..., Any] | None = None
    """Polled right after ``prepare_request``; what it returns joins the same request
    (the Agent uses it for messages steered while ``prepare_request`` ran)."""
    close_timeout: float = 5.0


def turn_decision(value: Any) -> str | None:
    """``finish_turn``'s answer as ``"continue"``, ``"end"`` or ``None``."""
    if value is None:
        return None
    if isinstance(value, str) and value in ("continue", "end"):
        return value
    decision = coerce_result(value, AgentTurnDecision, "finish_turn")
    return decision.action if decision is not None else None
