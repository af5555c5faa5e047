"""The Agent's hook and request keywords, grouped.

``Agent(...)`` takes its hooks as ``hooks=AgentHooks(...)`` and its request options as
``stream_options=StreamOptions(...)``; each hook and each request option of the original
``AgentOptions`` is also accepted as a keyword of its own (``before_tool_call=``,
``session_id=``, …) and lands in the same place. On the Agent they live at
``agent.hooks.<hook>`` and ``agent.stream_options.<option>``; the old attribute spellings
raise an error that says so.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

import msgspec

from ..ai import StreamOptions, ThinkingBudgets
from ..ai._seam import OnPayload, OnProviderStreamEvent, OnResponse
from ._config import (
    AfterToolCallHook,
    AgentHooks,
    BeforeToolCallHook,
    ConvertToLlmHook,
    FinishTurnHook,
    GetApiKeyHook,
    PrepareNextTurnHook,
    PrepareRequestHook,
    ShouldStopAfterTurnHook,
    TransformContextHook,
)

__all__ = ["AgentOptionKeywords", "moved_option_text", "split_option_keywords"]


class AgentOptionKeywords(TypedDict, total=False):
    """The hooks and request options ``Agent(...)`` accepts as keywords of their own."""

    convert_to_llm: ConvertToLlmHook | None
    transform_context: TransformContextHook | None
    get_api_key: GetApiKeyHook | None
    before_tool_call: BeforeToolCallHook | None
    after_tool_call: AfterToolCallHook | None
    finish_turn: FinishTurnHook | None
    prepare_request: PrepareRequestHook | None
    prepare_next_turn: PrepareNextTurnHook | None
    should_stop_after_turn: ShouldStopAfterTurnHook | None
    session_id: str | None
    thinking_budgets: ThinkingBudgets | None
    transport: Literal["sse", "websocket", "auto"] | None
    max_retry_delay_ms: int | None
    on_payload: OnPayload | None
    on_response: OnResponse | None
    on_provider_stream_event: OnProviderStreamEvent | None


_HOOKS = frozenset(AgentHooks.__struct_fields__)
_REQUEST = frozenset(
    {
        "session_id",
        "thinking_budgets",
        "transport",
        "max_retry_delay_ms",
        "on_payload",
        "on_response",
        "on_provider_stream_event",
    }
)
_AGENT_KEYWORDS = (
    "model",
    "system_prompt",
    "tools",
    "messages",
    "thinking_level",
    "stream_fn",
    "registry",
    "hooks",
    "stream_options",
    "steering_mode",
    "follow_up_mode",
    "tool_execution",
    "max_concurrent_tools",
    "close_timeout",
    "retry",
    "compaction",
    "fallback",
    "limits",
    "output_type",
    "output_mode",
    "max_output_retries",
    *sorted(_HOOKS | _REQUEST),
)


def split_option_keywords(
    hooks: AgentHooks, stream_options: StreamOptions | None, keywords: Mapping[str, Any]
) -> tuple[AgentHooks, StreamOptions]:
    """Fold the hook and request keywords into ``hooks`` and ``stream_options`` (new
    objects; the given ones are not changed). A hook given both ways, or an unknown
    keyword, is a ``TypeError`` that says which."""
    hook_values: dict[str, Any] = {}
    request_values: dict[str, Any] = {}
    for name, value in keywords.items():
        if name in _HOOKS:
            if getattr(hooks, name) is not None and value is not None:
                raise TypeError(
                    f"Agent() got the hook {name!r} twice: as a keyword and in hooks=; give it once"
                )
            hook_values[name] = value
        elif name in _REQUEST:
            if value is not None:
                request_values[name] = value
        else:
            close = difflib.get_close_matches(name, _AGENT_KEYWORDS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"Agent() got an unexpected keyword argument {name!r}{hint}")
    hooks = msgspec.structs.replace(hooks, **hook_values)
    for name in _HOOKS:
        value = getattr(hooks, name)
        if value is not None and not callable(value):
            raise TypeError(f"Agent({name}=...) takes a function (sync or async), got {value!r}")
    options = stream_options if stream_options is not None else StreamOptions()
    if request_values:
        options = msgspec.structs.replace(options, **request_values)
    elif stream_options is not None:
        options = msgspec.structs.replace(options)
    return hooks, options


def moved_option_text(name: str) -> str | None:
    """For an Agent attribute spelled as an option keyword: where it lives now."""
    if name in _HOOKS:
        return f"Agent.{name} is a hook: use agent.hooks.{name}"
    if name in _REQUEST:
        return f"Agent.{name} is a request option: use agent.stream_options.{name}"
    return None
