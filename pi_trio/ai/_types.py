"""The message model: content blocks, messages, usage, models, context and tools.

Every type is a msgspec Struct whose JSON is the original runtime's JSON: camelCase keys,
absent optional fields omitted (never ``null``), the discriminator under ``type`` (blocks)
or ``role`` (messages). Python attributes are snake_case; the discriminator is also
readable as a plain attribute (``block.type == "toolCall"``, ``message.role == "toolResult"``).

Optional fields default to ``None`` and are omitted from JSON while ``None``. Fields the
original always writes (``content``, ``usage``, ``stopReason``, ``isError``, ``timestamp``…)
have no default that could make them disappear from the JSON. Where the original tells an
absent field from an explicit ``null`` (``details``) or from a zero (``cacheWrite1h``), the
default is ``msgspec.UNSET``.

``timestamp`` defaults to the current time when a message is built in Python, but is
required in JSON: decoding (``from_json``) refuses a message without one instead of
inventing a time.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any, ClassVar, Final, Literal, TypeAlias

import msgspec

from ._keys._secrets import is_secret_name

__all__ = [
    "AssistantContent",
    "AssistantMessage",
    "CacheRetention",
    "Context",
    "Cost",
    "CostTier",
    "DECODING",
    "DeferredHandle",
    "ImageContent",
    "MissingTimestampError",
    "Message",
    "Model",
    "ModelCost",
    "ModelImageInputLimits",
    "ModelImageResizeOptions",
    "ModelInputLimits",
    "ModelPromptCache",
    "ModelThinkingLevel",
    "NestedToolCallRecord",
    "NestedToolCalls",
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


DECODING: Final[ContextVar[bool]] = ContextVar("pi_trio_decoding", default=False)
"""True while ``from_json`` decodes: a missing ``timestamp`` is then an error, not now."""


class MissingTimestampError(msgspec.ValidationError):
    """A message in JSON has no ``timestamp`` (raised while decoding, before its path is known)."""


def _default_timestamp() -> int:
    if DECODING.get():
        raise MissingTimestampError("Object missing required field `timestamp`")
    return now_ms()


class _Wire(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    kw_only=True,
    repr_omit_defaults=True,
    gc=False,
):
    """Base of every wire type: camelCase JSON, omitted defaults, strict decoding.

    ``gc=False``: messages, blocks and models never form reference cycles, so the garbage
    collector need not track them (with thousands of runs in flight it would otherwise
    spend a large part of the time walking them); the lists and dicts inside them are
    still tracked as usual."""


# --------------------------------------------------------------------------- blocks


class TextContent(_Wire, tag_field="type", tag="text", kw_only=True):
    """A block of text. ``text_signature`` is an opaque provider id of the block (OpenAI
    Responses), sent back with it in later requests."""

    type: ClassVar[Literal["text"]] = "text"
    text: str
    text_signature: str | None = None


class ThinkingContent(_Wire, tag_field="type", tag="thinking", kw_only=True):
    """A block of the model's reasoning. ``thinking_signature`` is the provider's opaque
    proof of it, sent back in later requests; ``redacted`` marks reasoning a safety filter
    withheld (its encrypted form is then in ``thinking_signature``)."""

    type: ClassVar[Literal["thinking"]] = "thinking"
    thinking: str
    thinking_signature: str | None = None
    redacted: bool | None = None


class ImageContent(_Wire, tag_field="type", tag="image", kw_only=True):
    """An image: base64 ``data`` and its ``mime_type`` (``"image/png"``)."""

    type: ClassVar[Literal["image"]] = "image"
    data: str
    mime_type: str


class ToolCall(_Wire, tag_field="type", tag="toolCall", kw_only=True):
    """A call the model made. ``arguments_error`` is set when the model's complete argument
    text was not a JSON object: ``arguments`` is then ``{}`` and the error text (which
    quotes what the model sent) is what validation reports back to the model."""

    type: ClassVar[Literal["toolCall"]] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any]
    thought_signature: str | None = None
    namespace: str | None = None
    arguments_error: str | None = None


UserContent: TypeAlias = TextContent | ImageContent
ToolResultContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall


# --------------------------------------------------------------------------- usage


# JSON numbers: ``float`` fields are annotated ``int | float`` where the original writes
# whole numbers as ``0``, so a decoded ``0`` re-encodes as ``0`` and not ``0.0``.
Number: TypeAlias = int | float


class Cost(msgspec.Struct, rename="camel", kw_only=True, forbid_unknown_fields=True):
    """Dollar cost of one response, per component; the five amounts are always written.

    ``total`` is the best total known: the provider's billed amount when it reports one
    (``total_from_provider`` is then true), else the sum of the catalog-priced parts.
    ``total_from_provider`` is written by every `calculate_cost` and omitted while unset
    (absent means false)."""

    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    total: Number = 0
    total_from_provider: bool | msgspec.UnsetType = msgspec.UNSET


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
    gc=False,
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
    timestamp: int = msgspec.field(default_factory=_default_timestamp)


class UserMessage(_Wire, tag_field="role", tag="user", kw_only=True):
    """What the user says: a string, or text and image blocks. ``timestamp`` is in
    milliseconds since the epoch (now, when not given)."""

    role: ClassVar[Literal["user"]] = "user"
    content: str | list[TextContent | ImageContent]
    timestamp: int = msgspec.field(default_factory=_default_timestamp)


class DeferredHandle(_Wire, kw_only=True):
    """A durable handle to a response that a provider finishes asynchronously."""

    provider: str
    model_id: str
    api: str
    id: str
    expires_at: int | None = None
    poll_after_ms: int | None = None
    data: Any = msgspec.UNSET


class AssistantMessage(_Wire, tag_field="role", tag="assistant", kw_only=True):
    """One model response. ``model`` is the requested model id; ``timestamp`` is taken
    when the request starts and ``duration_ms`` measures from there to the end of the
    response (monotonic clock). ``error_message`` is present iff the response ended in
    ``error`` or ``aborted``. ``stop_reason == "pending"`` only on partials. ``diagnostics``
    are JSON objects (``type``, ``timestamp``, optional ``error`` and ``details``)."""

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
    deferred: DeferredHandle | None = None
    error_message: str | None = None
    raw_stop_reason: str | None = None
    end_turn: bool | None = None
    timestamp: int
    duration_ms: int | None = None


class NestedToolCallRecord(_Wire, kw_only=True):
    """One call a tool made to another tool. ``arguments`` is omitted when it was too large
    to record (``arguments_bytes`` then gives its UTF-8 JSON size); ``unfinished`` means the
    call still ran when the calling tool finished; ``error`` is truncated."""

    id: str
    name: str
    arguments: dict[str, Any] | None = None
    arguments_bytes: int | None = None
    status: Literal["ok", "error", "unfinished"]
    duration_ms: int | None = None
    error: str | None = None


class NestedToolCalls(_Wire, kw_only=True):
    """The bounded record of the calls a tool made; ``complete`` is false when calls were
    dropped, arguments omitted or calls had not finished. Results are not recorded."""

    calls: list[NestedToolCallRecord]
    complete: bool


class _ToolResultMeta(msgspec.StructMeta):
    """``details=None`` when building a result in Python means "no details" (omitted from
    JSON), as an undefined ``details`` does in the original; decoding does not go through
    here, so an explicit ``"details": null`` read from JSON is kept and written back."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "details" in kwargs and kwargs["details"] is None:
            kwargs["details"] = msgspec.UNSET
        return super().__call__(*args, **kwargs)


class ToolResultMessage(
    _Wire, tag_field="role", tag="toolResult", kw_only=True, metaclass=_ToolResultMeta
):
    """The result of one tool call. ``details`` is for UIs and logs, never sent to a model
    (``msgspec.UNSET`` when absent; ``None`` only for an explicit JSON ``null``);
    ``nested_calls`` records the calls the tool made to other tools, for the session record
    only; ``duration_ms`` is present only when the tool actually executed."""

    role: ClassVar[Literal["toolResult"]] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[TextContent | ImageContent]
    details: Any = msgspec.UNSET
    usage: Usage | None = None
    nested_calls: NestedToolCalls | None = None
    added_tool_names: list[str] | None = None
    is_error: bool
    duration_ms: int | None = None
    timestamp: int = msgspec.field(default_factory=_default_timestamp)


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class Context(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """What one LLM call sees. ``system_prompt`` and ``tools`` are a shorthand that
    ``normalize_context`` folds into a leading system message; providers read only
    ``messages``."""

    messages: list[Message] = msgspec.field(default_factory=list)
    system_prompt: str | None = None
    tools: list[Tool] | None = None


# --------------------------------------------------------------------------- models


class CostTier(_Wire, kw_only=True):
    """Request-wide prices that apply when the prompt is above ``input_tokens_above``."""

    input_tokens_above: int
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number


class ModelCost(_Wire, kw_only=True):
    """Dollars per million tokens."""

    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    tiers: list[CostTier] | None = None


class ModelPromptCache(_Wire, kw_only=True):
    """How long the provider keeps a cached prompt, in seconds, per retention tier."""

    short: int | None = None
    long: int | None = None


class ModelImageResizeOptions(_Wire, kw_only=True):
    """The size an image is brought down to before it is sent (pixels, bytes, 1-100)."""

    max_width: int | None = None
    max_height: int | None = None
    max_bytes: int | None = None
    jpeg_quality: int | None = None


class ModelImageInputLimits(_Wire, kw_only=True):
    """How many images a message or request may carry, and how they are resized."""

    resize: ModelImageResizeOptions | None = None
    max_per_message: int | None = None
    max_per_request: int | None = None


class ModelInputLimits(_Wire, kw_only=True):
    """What the provider accepts in one request: its size in bytes, and images."""

    max_request_bytes: int | None = None
    images: ModelImageInputLimits | None = None


class Model(_Wire, kw_only=True):
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

    def __repr__(self) -> str:
        """The fields, with the values of credential headers (``Authorization``,
        ``x-api-key``...) shown as ``<hidden>``."""
        headers = self.headers
        if headers and any(is_secret_name(name) for name in headers):
            hidden = {k: "<hidden>" if is_secret_name(k) else v for k, v in headers.items()}
            return msgspec.Struct.__repr__(msgspec.structs.replace(self, headers=hidden))
        return msgspec.Struct.__repr__(self)
