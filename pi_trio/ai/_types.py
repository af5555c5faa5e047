"""The message model: content blocks, messages, usage, models, context and tools.

Every type is a msgspec Struct whose JSON is the original runtime's JSON: camelCase keys,
absent optional fields omitted (never ``null``), the discriminator under ``type`` (blocks)
or ``role`` (messages). Python attributes are snake_case; the discriminator is also
readable as a plain attribute (``block.type == "toolCall"``, ``message.role == "toolResult"``).

Optional fields default to ``None`` and are omitted from JSON while ``None``. Fields the
original always writes (``content``, ``usage``, ``stopReason``, ``isError``, ``timestamp``…)
have no default that could make them disappear from the JSON.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec

__all__ = [
    "AssistantContent",
    "AssistantMessage",
    "CacheRetention",
    "Context",
    "Cost",
    "CostTier",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "ModelImageInputLimits",
    "ModelImageResizeOptions",
    "ModelInputLimits",
    "ModelPromptCache",
    "ModelThinkingLevel",
    "Number",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ThinkingLevel",
    "Tool",
    "ToolCall",
    "ToolRef",
    "ToolResultContent",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "now_ms",
]

StopReason: TypeAlias = Literal[
    "stop", "length", "toolUse", "error", "aborted", "pending", "deferred"
]
ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
ModelThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
CacheRetention: TypeAlias = Literal["none", "short", "long"]


def now_ms() -> int:
    """Wall-clock time in integer Unix milliseconds, the timestamp unit of every message."""
    return time.time_ns() // 1_000_000


class _Wire(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    kw_only=True,
    repr_omit_defaults=True,
):
    """Base of every wire type: camelCase JSON, omitted defaults, strict decoding."""


# --------------------------------------------------------------------------- blocks


class TextContent(_Wire, tag_field="type", tag="text", kw_only=True):
    type: ClassVar[Literal["text"]] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(_Wire, tag_field="type", tag="thinking", kw_only=True):
    type: ClassVar[Literal["thinking"]] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(_Wire, tag_field="type", tag="image", kw_only=True):
    type: ClassVar[Literal["image"]] = "image"
    data: str
    mime_type: str


class ToolCall(_Wire, tag_field="type", tag="toolCall", kw_only=True):
    type: ClassVar[Literal["toolCall"]] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]
    thought_signature: str | None = None
    namespace: str | None = None


UserContent: TypeAlias = TextContent | ImageContent
ToolResultContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


# --------------------------------------------------------------------------- usage


# JSON numbers: ``float`` fields are annotated ``int | float`` where the original writes
# whole numbers as ``0``, so a decoded ``0`` re-encodes as ``0`` and not ``0.0``.
Number: TypeAlias = int | float


class Cost(msgspec.Struct, rename="camel", kw_only=True, forbid_unknown_fields=True):
    """Dollar cost of one response, per component; every field is always written."""

    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total: Number = 0


class Usage(
    msgspec.Struct,
    rename={
        "cache_write_1h": "cacheWrite1h",
        "cache_read": "cacheRead",
        "cache_write": "cacheWrite",
        "total_tokens": "totalTokens",
    },
    kw_only=True,
    forbid_unknown_fields=True,
):
    """Token counts of one response. ``input`` never includes cached prompt tokens;
    ``reasoning`` is a subset of ``output``; ``cache_write_1h`` a subset of ``cache_write``.
    The two optional counts are omitted from JSON while unset."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int | msgspec.UnsetType = msgspec.UNSET
    reasoning: int | msgspec.UnsetType = msgspec.UNSET
    total_tokens: int = 0
    cost: Cost = msgspec.field(default_factory=Cost)


# --------------------------------------------------------------------------- tools


class Tool(_Wire, kw_only=True):
    """A tool declaration as the model sees it: a name, a description and a JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    constrained_sampling: Any = None


class ToolRef(_Wire, kw_only=True):
    """A removed tool, named only."""

    name: str


# --------------------------------------------------------------------------- messages


class SystemMessage(_Wire, tag_field="role", tag="system", kw_only=True):
    """Prompt text and tool declarations inside the transcript. A leading system message is
    the initial prompt and tool set; later ones append text, patch ``sections`` (``None``
    deletes one) and declare tool changes."""

    role: ClassVar[Literal["system"]] = "system"
    content: str | list[TextContent]
    sections: dict[str, str | None] | None = None
    tools_added: list[Tool] | None = None
    tools_removed: list[ToolRef] | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)


class UserMessage(_Wire, tag_field="role", tag="user", kw_only=True):
    role: ClassVar[Literal["user"]] = "user"
    content: str | list[TextContent | ImageContent]
    timestamp: int = msgspec.field(default_factory=now_ms)


class AssistantMessage(_Wire, tag_field="role", tag="assistant", kw_only=True):
    """One model response. ``model`` is the requested model id; ``timestamp`` is taken
    when the request starts. ``error_message`` is present iff the response ended in
    ``error`` or ``aborted``. ``stop_reason == "pending"`` only on partials."""

    role: ClassVar[Literal["assistant"]] = "assistant"
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    response_model: str | None = None
    response_id: str | None = None
    provider_thinking_level: str | None = None
    thinking_level: str | None = None
    diagnostics: list[Any] | None = None
    usage: Usage
    stop_reason: StopReason
    error_message: str | None = None
    raw_stop_reason: str | None = None
    end_turn: bool | None = None
    deferred: dict[str, Any] | None = None
    timestamp: int


class ToolResultMessage(_Wire, tag_field="role", tag="toolResult", kw_only=True):
    """The result of one tool call. ``details`` is for UIs and logs, never sent to a model;
    ``duration_ms`` is present only when the tool actually executed."""

    role: ClassVar[Literal["toolResult"]] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[TextContent | ImageContent]
    details: Any = None
    usage: Usage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool
    duration_ms: int | None = None
    timestamp: int = msgspec.field(default_factory=now_ms)


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class Context(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """What one LLM call sees. ``system_prompt`` and ``tools`` are a shorthand that
    ``normalize_context`` folds into a leading system message; providers read only
    ``messages``."""

    messages: list[Message] = msgspec.field(default_factory=list)
    system_prompt: str | None = None
    tools: list[Tool] | None = None


# --------------------------------------------------------------------------- models


class CostTier(_Wire, kw_only=True, forbid_unknown_fields=False):
    """Request-wide prices that apply when the prompt is above ``input_tokens_above``."""

    input_tokens_above: int
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number


class ModelCost(_Wire, kw_only=True, forbid_unknown_fields=False):
    """Dollars per million tokens."""

    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    tiers: list[CostTier] | None = None


class ModelPromptCache(_Wire, kw_only=True, forbid_unknown_fields=False):
    """How long the provider keeps a cached prompt, in seconds, per retention tier."""

    short: int | None = None
    long: int | None = None


class ModelImageResizeOptions(_Wire, kw_only=True, forbid_unknown_fields=False):
    """The size an image is brought down to before it is sent (pixels, bytes, 1-100)."""

    max_width: int | None = None
    max_height: int | None = None
    max_bytes: int | None = None
    jpeg_quality: int | None = None


class ModelImageInputLimits(_Wire, kw_only=True, forbid_unknown_fields=False):
    """How many images a message or request may carry, and how they are resized."""

    resize: ModelImageResizeOptions | None = None
    max_per_message: int | None = None
    max_per_request: int | None = None


class ModelInputLimits(_Wire, kw_only=True, forbid_unknown_fields=False):
    """What the provider accepts in one request: its size in bytes, and images."""

    max_request_bytes: int | None = None
    images: ModelImageInputLimits | None = None


class Model(_Wire, kw_only=True, forbid_unknown_fields=False):
    """A chat model of a provider, with what the runtime needs to call and bill it.

    ``max_tokens`` is the maximum *output* tokens. ``thinking_level_map`` maps a level to
    the provider-native value (``None``: level unsupported; missing: provider default).
    ``compat`` holds the api-specific quirks table with the original's camelCase keys
    (``forceAdaptiveThinking``, ``supportsStrictMode``, ``thinkingFormat``...); its shape
    depends on ``api``, so it stays a plain dict and keeps every key, known or not.
    ``prompt_cache`` and ``input_limits`` describe the provider's cache lifetimes and
    request limits; ``type`` is ``"chat"`` in the catalog and may be left out.

    Decoding ignores fields this version does not know (a newer catalog still loads).
    """

    id: str
    name: str
    api: str
    provider: str
    base_url: str
    reasoning: bool
    input: list[Literal["text", "image"]]
    cost: ModelCost
    context_window: int
    max_tokens: int
    thinking_level_map: dict[str, str | None] | None = None
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None
    sampling_params: dict[str, Any] | None = None
    sampling_params_by_thinking_level: dict[str, dict[str, Any]] | None = None
    prompt_cache: ModelPromptCache | None = None
    input_limits: ModelInputLimits | None = None
    type: Literal["chat"] | None = None
