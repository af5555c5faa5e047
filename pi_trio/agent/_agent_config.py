"""What an Agent hands to the loop for one run: its ``AgentLoopConfig`` and the request
options, both read from the Agent's public attributes at the start of the run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..ai import AbortSignal, StreamOptions
from ._config import AgentLoopConfig
from ._hooks import call_hook

if TYPE_CHECKING:
    from ._agent import Agent

__all__ = ["RequestOptions", "build_loop_config"]

# Agent attributes that become request options (``StreamOptions`` fields of the same name).
_REQUEST_OPTION_FIELDS = (
    "session_id",
    "thinking_budgets",
    "transport",
    "max_retry_delay_ms",
    "on_payload",
    "on_response",
)


class RequestOptions:
    """``stream_options`` with the Agent's request options applied, made again only when
    one of them changed."""

    __slots__ = ("_cached",)

    def __init__(self) -> None:
        self._cached: tuple[tuple[Any, ...], StreamOptions | None] | None = None

    def of(self, agent: Agent) -> StreamOptions | None:
        values = (agent.stream_options, *(getattr(agent, f) for f in _REQUEST_OPTION_FIELDS))
        cached = self._cached
        if cached is not None and all(a is b for a, b in zip(cached[0], values, strict=True)):
            return cached[1]
        options: StreamOptions | None = agent.stream_options
        overrides = {
            field: value
            for field, value in zip(_REQUEST_OPTION_FIELDS, values[1:], strict=True)
            if value is not None
        }
        if overrides:
            options = msgspec.structs.replace(options or StreamOptions(), **overrides)
        self._cached = (values, options)
        return options


def build_loop_config(agent: Agent, options: RequestOptions) -> AgentLoopConfig:
    """The loop configuration of one run of ``agent``. Messages steered while the
    ``prepare_request`` hook runs join that same request."""
    steering = agent._steering
    prepare_request = agent.prepare_request
    get_request_steering_messages = None
    if prepare_request is not None:
        user_hook = prepare_request
        request_mark = [steering.enqueued]

        async def prepare_request(request: Any, signal: AbortSignal) -> Any:
            request_mark[0] = steering.enqueued
            return await call_hook(user_hook, request, signal)

        def get_request_steering_messages() -> list[Any]:
            if steering.enqueued == request_mark[0]:
                return []
            request_mark[0] = steering.enqueued
            return steering.drain()

    state = agent.state
    return AgentLoopConfig(
        model=state.model,
        thinking_level=state.thinking_level,
        stream_options=options.of(agent),
        registry=agent.registry,
        convert_to_llm=agent.convert_to_llm,
        transform_context=agent.transform_context,
        get_api_key=agent.get_api_key,
        get_steering_messages=agent._poll_steering,
        get_follow_up_messages=agent._follow_up.drain,
        tool_execution=agent.tool_execution,
        max_concurrent_tools=agent.max_concurrent_tools,
        before_tool_call=agent.before_tool_call,
        after_tool_call=agent.after_tool_call,
        prepare_next_turn=agent.prepare_next_turn,
        prepare_request=prepare_request,
        get_request_steering_messages=get_request_steering_messages,
        finish_turn=agent.finish_turn,
        should_stop_after_turn=agent.should_stop_after_turn,
        close_timeout=agent.close_timeout,
    )
