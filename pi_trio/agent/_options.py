"""The Agent's flat keywords: the compatibility spelling of its four groups.

``Agent(...)`` is configured with groups: ``hooks=AgentHooks(...)``,
``stream_options=StreamOptions(...)``, ``policy=RunPolicy(...)`` and
``output=OutputSettings(...)``. Each option of the original ``AgentOptions`` (and each
run setting of earlier pi_trio versions) is also accepted as a keyword of its own
(``before_tool_call=``, ``session_id=``, ``tool_execution=``, ``output_type=``…) and lands
in its group, by the table ``FLAT_KEYWORDS``: one place, read only when such a keyword is
given. On the Agent each lives at ``agent.<group>.<field>``; the old attribute names
(``agent.tool_execution``) raise an error that says so. A setting that came with the
groups (``RunPolicy(compaction=...)``) has only the grouped spelling: given as a keyword
of its own, the error names its group.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

import msgspec

from ..ai import RetryPolicy, StreamOptions, ThinkingBudgets
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
from ._fallback import FallbackPolicy
from ._limits import RunLimits
from ._output import OutputMode
from ._queue import QueueMode
from ._settings import OutputSettings, RunPolicy

__all__ = [
    "FLAT_KEYWORDS",
    "REMOVED_KEYWORDS",
    "AgentFlatKeywords",
    "check_group",
    "group_flat_keywords",
    "install_moved_attributes",
]


class AgentFlatKeywords(TypedDict, total=False):
    """The options ``Agent(...)`` also accepts as keywords of their own (compatibility)."""

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
    max_retry_delay_ms: int | None
    on_payload: OnPayload | None
    on_response: OnResponse | None
    on_provider_stream_event: OnProviderStreamEvent | None
    tool_execution: Literal["sequential", "parallel"]
    max_concurrent_tools: int | None
    close_timeout: float
    retry: RetryPolicy | None
    fallback: FallbackPolicy | None
    limits: RunLimits | None
    steering_mode: QueueMode
    follow_up_mode: QueueMode
    output_type: Any
    output_mode: OutputMode
    max_output_retries: int


_GROUPS: Final[dict[str, type[msgspec.Struct]]] = {
    "hooks": AgentHooks,
    "stream_options": StreamOptions,
    "policy": RunPolicy,
    "output": OutputSettings,
}
_REQUEST_KEYWORDS: Final = (
    "session_id",
    "thinking_budgets",
    "max_retry_delay_ms",
    "on_payload",
    "on_response",
    "on_provider_stream_event",
)
_POLICY_KEYWORDS: Final = (
    "tool_execution",
    "max_concurrent_tools",
    "close_timeout",
    "retry",
    "fallback",
    "limits",
    "steering_mode",
    "follow_up_mode",
)
FLAT_KEYWORDS: Final[dict[str, tuple[str, str]]] = {
    **{name: ("hooks", name) for name in AgentHooks.__struct_fields__},
    **{name: ("stream_options", name) for name in _REQUEST_KEYWORDS},
    **{name: ("policy", name) for name in _POLICY_KEYWORDS},
    "output_type": ("output", "type"),
    "output_mode": ("output", "mode"),
    "max_output_retries": ("output", "max_retries"),
}
"""Each flat keyword: the group it lands in and its field there."""

REMOVED_KEYWORDS: Final = {
    "transport": "it was removed: no provider read it (pi_trio streams over HTTP with "
    "Server-Sent Events); drop the argument",
}
_AGENT_KEYWORDS: Final = (
    "model",
    "system_prompt",
    "tools",
    "messages",
    "thinking_level",
    "stream_fn",
    "registry",
    *_GROUPS,
    *FLAT_KEYWORDS,
)


def _unexpected(name: str) -> TypeError:
    if name in REMOVED_KEYWORDS:
        return TypeError(f"Agent({name}=...): {REMOVED_KEYWORDS[name]}")
    for group, kind in _GROUPS.items():
        if name in kind.__struct_fields__:  # a setting with the grouped spelling only
            return TypeError(
                f"Agent({name}=...): {name} is a setting of {group}=; give it as "
                f"Agent({group}={kind.__name__}({name}=...))"
            )
    close = difflib.get_close_matches(name, _AGENT_KEYWORDS, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return TypeError(f"Agent() got an unexpected keyword argument {name!r}{hint}")


Groups = tuple[AgentHooks | None, StreamOptions | None, RunPolicy | None, OutputSettings | None]


def group_flat_keywords(given: Groups, keywords: Mapping[str, Any]) -> Groups:
    """Fold the flat ``keywords`` into the groups given as ``Agent(hooks=,
    stream_options=, policy=, output=)`` (each ``None`` when not given): the changed
    groups are new objects, the given ones are not changed. A setting given both ways,
    or an unknown keyword, is a ``TypeError`` that says which; a wrong value is the
    group's own error."""
    groups: dict[str, Any] = dict(zip(_GROUPS, given, strict=True))
    changes: dict[str, dict[str, Any]] = {}
    for name, value in keywords.items():
        home = FLAT_KEYWORDS.get(name)
        if home is None:
            raise _unexpected(name)
        group, field = home
        if group == "stream_options" and value is None:
            continue  # a request option left unset
        struct = groups[group]
        if struct is not None and getattr(struct, field) != getattr(_GROUPS[group](), field):
            raise TypeError(
                f"Agent() got {name!r} twice: as a keyword and in {group}=; give it once "
                f"(in {group}=, the documented place)"
            )
        changes.setdefault(group, {})[field] = value
    for group, values in changes.items():
        struct = groups[group]
        groups[group] = msgspec.structs.replace(
            struct if struct is not None else _GROUPS[group](), **values
        )
    return groups["hooks"], groups["stream_options"], groups["policy"], groups["output"]


def check_group(group: str, value: object) -> None:
    """``value``, given as ``Agent(<group>=...)`` or assigned to ``agent.<group>``, is
    that group's type."""
    kind = _GROUPS[group]
    if not isinstance(value, kind):
        raise TypeError(f"Agent({group}=...) takes {_EXAMPLES[group]}, got {value!r}")


_EXAMPLES: Final = {
    "hooks": "an AgentHooks, such as AgentHooks(before_tool_call=check)",
    "stream_options": "a StreamOptions, such as StreamOptions(temperature=0.2)",
    "policy": "a RunPolicy, such as RunPolicy(tool_execution='sequential')",
    "output": "an OutputSettings, such as OutputSettings(type=Weather)",
}


class _Moved:
    """An Agent attribute of an earlier spelling: reading or writing it says where the
    setting lives now. Only these names reach it; the Agent's own attributes are slots."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __get__(self, agent: object, owner: object = None) -> Any:
        if agent is None:
            return self
        raise AttributeError(self.text)

    def __set__(self, agent: object, value: object) -> None:
        raise AttributeError(self.text)

    def __repr__(self) -> str:
        return f"<{self.text}>"


def install_moved_attributes(cls: type) -> None:
    """Give ``cls`` (the Agent) an attribute per flat keyword and removed option that
    says where it lives now (``agent.tool_execution``: ``agent.policy.tool_execution``)."""
    for name, (group, field) in FLAT_KEYWORDS.items():
        setattr(cls, name, _Moved(f"Agent.{name} moved: use agent.{group}.{field}"))
    for name, why in REMOVED_KEYWORDS.items():
        setattr(cls, name, _Moved(f"Agent.{name}: {why}"))
