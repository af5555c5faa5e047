"""The proxy protocol, sans-IO: the request body and the partial-less events.

A proxy client POSTs ``{model, context: {messages}, options}`` to ``<proxy_url>/api/stream``;
the server answers with Server-Sent Events whose ``data: `` payloads are assistant events
without ``partial``. This module holds the shapes (``ProxyRequest``, ``ProxyEvent``) and the
server's encoder (``encode_event``); ``_rebuild`` holds the client's decoder.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeAlias, TypeVar

import msgspec

from ..ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    DoneEvent,
    ErrorEvent,
    MessageValidationError,
    Model,
    StartEvent,
    StreamOptions,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingBudgets,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingLevel,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    Usage,
    from_json,
)
from ..ai._seam import CacheRetention, check_json_depth
from ..ai.transcript import normalize_context

__all__ = [
    "KNOWN_EVENT_TYPES",
    "ProxyEvent",
    "ProxyRequest",
    "ProxyRequestOptions",
    "decode_json",
    "decode_request",
    "encode_event",
    "encode_request",
    "proxy_options",
    "request_options",
]

# The default of ``StreamOptions.max_retry_delay_ms``; a request at the default leaves the
# field out, as the original does for an unset option.
_DEFAULT_MAX_RETRY_DELAY_MS: int = StreamOptions.__struct_defaults__[
    StreamOptions.__struct_fields__.index("max_retry_delay_ms")
]


# --------------------------------------------------------------------------- request


class ProxyRequestOptions(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """The serializable subset of the stream options that travels to the proxy. Callbacks,
    the abort signal and the API key never do. Unknown keys are ignored when decoding
    (clients of other versions send a different subset)."""

    temperature: float | None = None
    max_tokens: int | None = None
    reasoning: ThinkingLevel | None = None
    cache_retention: CacheRetention | None = None
    session_id: str | None = None
    headers: dict[str, str | None] | None = None
    metadata: dict[str, Any] | None = None
    thinking_budgets: ThinkingBudgets | None = None
    max_retry_delay_ms: int | None = None
    sampling_params: dict[str, Any] | None = None


class ProxyRequest(msgspec.Struct, kw_only=True):
    """The body of ``POST /api/stream``."""

    model: Model
    context: Context
    options: ProxyRequestOptions = msgspec.field(default_factory=ProxyRequestOptions)


class _RequestBody(msgspec.Struct, kw_only=True):
    """``ProxyRequest`` with the model still JSON: it is decoded on its own, leniently."""

    model: msgspec.Raw
    context: Context
    options: ProxyRequestOptions = msgspec.field(default_factory=ProxyRequestOptions)


def request_options(options: StreamOptions) -> ProxyRequestOptions:
    """The part of ``options`` a proxy request carries."""
    delay = options.max_retry_delay_ms
    return ProxyRequestOptions(
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        reasoning=options.reasoning,
        cache_retention=options.cache_retention,
        session_id=options.session_id,
        headers=options.headers,
        metadata=options.metadata,
        thinking_budgets=options.thinking_budgets,
        max_retry_delay_ms=None if delay == _DEFAULT_MAX_RETRY_DELAY_MS else delay,
        sampling_params=options.sampling_params,
    )


def proxy_options(wire: ProxyRequestOptions) -> StreamOptions:
    """The stream options a proxy server runs a request with."""
    options = StreamOptions(
        temperature=wire.temperature,
        max_tokens=wire.max_tokens,
        reasoning=wire.reasoning,
        cache_retention=wire.cache_retention,
        session_id=wire.session_id,
        headers=wire.headers,
        metadata=wire.metadata,
        thinking_budgets=wire.thinking_budgets,
        sampling_params=wire.sampling_params,
    )
    if wire.max_retry_delay_ms is not None:
        options.max_retry_delay_ms = wire.max_retry_delay_ms
    return options


def encode_request(model: Model, context: Context, options: StreamOptions) -> bytes:
    """The JSON body of a proxy request: ``{model, context: {messages}, options}``."""
    body = {
        "model": model,
        "context": {"messages": normalize_context(context).messages},
        "options": request_options(options),
    }
    return _encode(body)


# --------------------------------------------------------------------------- JSON


_encoder = msgspec.json.Encoder()
_T = TypeVar("_T")


def _encode(value: Any) -> bytes:
    try:
        return _encoder.encode(value)
    except UnicodeEncodeError:
        # A lone surrogate cannot be written as UTF-8; escape it as \\udXXX the way
        # JSON.stringify does, so nothing is lost on the way.
        builtins = msgspec.to_builtins(value)
        return json.dumps(builtins, separators=(",", ":"), ensure_ascii=True).encode()


def decode_json(data: bytes | str, type: Any) -> Any:
    """Decode ``data`` as ``type``; also accepts lone-surrogate escapes (``"\\ud800"``),
    which JSON.stringify writes and msgspec refuses. Raises ``msgspec.DecodeError`` (also
    for nesting deeper than ``MAX_JSON_DEPTH``) or ``msgspec.ValidationError``."""
    check_json_depth(data)
    decoder = _DECODERS.get(type)
    try:
        if decoder is None:
            return msgspec.json.decode(data, type=type)
        return decoder.decode(data)
    except msgspec.DecodeError as exc:
        try:
            builtins = json.loads(data)
        except ValueError:
            raise exc from None
    return msgspec.convert(builtins, type=type)


def decode_request(data: bytes) -> ProxyRequest:
    """The body of ``POST /api/stream``, as ``decode_json(data, ProxyRequest)`` but with
    ``model`` decoded as ``from_json`` does: fields this version does not know are kept,
    not refused (the original's catalog gives some models more: Radius models carry
    ``lab``, ``enabled``, ``providers``, ``free``), and the path of a wrong field starts at
    ``$.model``. Raises ``msgspec.DecodeError`` or ``msgspec.ValidationError``."""
    check_json_depth(data)
    try:
        body = _DECODERS[_RequestBody].decode(data)
    except msgspec.DecodeError as exc:
        try:
            builtins = json.loads(data)
        except ValueError:
            raise exc from None
        if isinstance(builtins, dict) and "model" in builtins:
            # lone-surrogate escapes written back as escapes, which from_json reads
            raw = json.dumps(builtins["model"], ensure_ascii=True).encode()
            builtins["model"] = msgspec.Raw(raw)
        body = msgspec.convert(builtins, _RequestBody)
    try:
        model = from_json(bytes(body.model), Model)
    except MessageValidationError as exc:
        path = exc.path or "$"
        text = str(exc).removesuffix(f" - at `{path}`")
        raise msgspec.ValidationError(f"{text} - at `$.model{path[1:]}`") from None
    return ProxyRequest(model=model, context=body.context, options=body.options)


# --------------------------------------------------------------------------- events


class _Wire(msgspec.Struct, tag_field="type", rename="camel", kw_only=True, omit_defaults=True):
    pass


class ProxyStart(_Wire, tag="start"):
    pass


class ProxyTextStart(_Wire, tag="text_start"):
    content_index: int


class ProxyTextDelta(_Wire, tag="text_delta"):
    content_index: int
    delta: str


class ProxyTextEnd(_Wire, tag="text_end"):
    content_index: int
    content_signature: str | None = None


class ProxyThinkingStart(_Wire, tag="thinking_start"):
    content_index: int


class ProxyThinkingDelta(_Wire, tag="thinking_delta"):
    content_index: int
    delta: str


class ProxyThinkingEnd(_Wire, tag="thinking_end"):
    content_index: int
    content_signature: str | None = None
    # pi_trio's addition: the original's client ignores it; pi_trio's restores a redacted
    # block (Anthropic's encrypted reasoning), which must go back to Anthropic as one
    redacted: bool | None = None


class ProxyToolCallStart(_Wire, tag="toolcall_start"):
    content_index: int
    id: str
    tool_name: str


class ProxyToolCallDelta(_Wire, tag="toolcall_delta"):
    content_index: int
    delta: str


class ProxyToolCallEnd(_Wire, tag="toolcall_end"):
    content_index: int
    tool_call: ToolCall | None = None


class ProxyDone(_Wire, tag="done"):
    reason: Literal["stop", "length", "toolUse", "deferred"]
    usage: Usage | None = None
    provider_thinking_level: str | None = None
    diagnostics: list[Any] | None = None


class ProxyError(_Wire, tag="error"):
    reason: Literal["error", "aborted"]
    error_message: str | None = None
    usage: Usage | None = None
    provider_thinking_level: str | None = None
    diagnostics: list[Any] | None = None


ProxyEvent: TypeAlias = (
    ProxyStart
    | ProxyTextStart
    | ProxyTextDelta
    | ProxyTextEnd
    | ProxyThinkingStart
    | ProxyThinkingDelta
    | ProxyThinkingEnd
    | ProxyToolCallStart
    | ProxyToolCallDelta
    | ProxyToolCallEnd
    | ProxyDone
    | ProxyError
)

KNOWN_EVENT_TYPES = frozenset(cls.__struct_config__.tag for cls in ProxyEvent.__args__)

# ``msgspec.json.decode(data, type=ProxyEvent)`` prepares the union anew on every call
# (about 9 us, against 0.15 us for the decode itself); the client decodes one per event.
_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {
    ProxyEvent: msgspec.json.Decoder(ProxyEvent),
    _RequestBody: msgspec.json.Decoder(_RequestBody),
}


def _block(partial: AssistantMessage, index: int, kind: type[_T]) -> _T | None:
    content = partial.content
    if 0 <= index < len(content):
        block = content[index]
        if isinstance(block, kind):
            return block
    return None


def to_wire(event: AssistantMessageEvent) -> ProxyEvent:
    """``event`` without ``partial``, in the proxy protocol's shape."""
    match event:
        case StartEvent():
            return ProxyStart()
        case TextStartEvent(content_index=index):
            return ProxyTextStart(content_index=index)
        case TextDeltaEvent(content_index=index, delta=delta):
            return ProxyTextDelta(content_index=index, delta=delta)
        case TextEndEvent(content_index=index, partial=partial):
            text = _block(partial, index, TextContent)
            signature = None if text is None else text.text_signature
            return ProxyTextEnd(content_index=index, content_signature=signature)
        case ThinkingStartEvent(content_index=index):
            return ProxyThinkingStart(content_index=index)
        case ThinkingDeltaEvent(content_index=index, delta=delta):
            return ProxyThinkingDelta(content_index=index, delta=delta)
        case ThinkingEndEvent(content_index=index, partial=partial):
            thinking = _block(partial, index, ThinkingContent)
            signature = None if thinking is None else thinking.thinking_signature
            redacted = True if thinking is not None and thinking.redacted else None
            return ProxyThinkingEnd(
                content_index=index, content_signature=signature, redacted=redacted
            )
        case ToolCallStartEvent(content_index=index, partial=partial):
            call = _block(partial, index, ToolCall)
            return ProxyToolCallStart(
                content_index=index,
                id="" if call is None else call.id,
                tool_name="" if call is None else call.name,
            )
        case ToolCallDeltaEvent(content_index=index, delta=delta):
            return ProxyToolCallDelta(content_index=index, delta=delta)
        case ToolCallEndEvent(content_index=index, tool_call=call):
            return ProxyToolCallEnd(content_index=index, tool_call=call)
        case DoneEvent(reason=reason, message=message):
            return ProxyDone(
                reason=reason,
                usage=message.usage,
                provider_thinking_level=message.provider_thinking_level,
                diagnostics=message.diagnostics,
            )
        case ErrorEvent(reason=reason, error=message):
            return ProxyError(
                reason=reason,
                error_message=message.error_message,
                usage=message.usage,
                provider_thinking_level=message.provider_thinking_level,
                diagnostics=message.diagnostics,
            )
    raise TypeError(f"not an assistant-message event: {event!r}")


def encode_event(event: AssistantMessageEvent) -> bytes:
    """One SSE frame: ``data: <event JSON without partial>\\n\\n``.

    A redacted thinking block starts with its placeholder text and gets no delta (as in pi
    1.6's providers); the protocol's thinking_end carries no text, so the frame of its
    thinking_start is followed by a thinking_delta with the placeholder: a client (1.6's
    included) rebuilds the text. Redacted blocks get no other delta, so nothing repeats."""
    frame = b"data: " + _encode(to_wire(event)) + b"\n\n"
    if isinstance(event, ThinkingStartEvent):
        block = _block(event.partial, event.content_index, ThinkingContent)
        if block is not None and block.redacted and block.thinking:
            delta = ProxyThinkingDelta(content_index=event.content_index, delta=block.thinking)
            frame += b"data: " + _encode(delta) + b"\n\n"
    return frame
