"""Options of one LLM call and the stream-function contract."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import msgspec

from .._events import AssistantMessageEvent
from .._identity import ClientIdentity
from .._keys._secrets import is_secret_name
from .._types import CacheRetention, Context, DeferredHandle, Model, ThinkingLevel
from ._abort import AbortSignal
from ._stall import DEFAULT_FIRST_EVENT_TIMEOUT_S, DEFAULT_IDLE_TIMEOUT_S, check_timeout

if TYPE_CHECKING:
    from anyio.abc import ObjectSendStream

__all__ = [
    "DeferredCancelFn",
    "DeferredFetchFn",
    "DeferredFetchOptions",
    "DeferredOptions",
    "DeferredWindow",
    "EventSender",
    "OnPayload",
    "OnProviderStreamEvent",
    "OnResponse",
    "OutputFormat",
    "ResponseInfo",
    "StreamFn",
    "StreamOptions",
    "ThinkingBudgets",
]

EventSender: TypeAlias = "ObjectSendStream[AssistantMessageEvent]"


class ResponseInfo(msgspec.Struct, frozen=True):
    """What ``on_response`` sees: the HTTP status and headers, before the body is read."""

    status: int
    headers: Mapping[str, str]


OnPayload: TypeAlias = Callable[[Any, Model], Any]
"""``on_payload(body, model)``: inspect or replace the request body (returning ``None``
keeps it); sync or async."""

OnResponse: TypeAlias = Callable[[ResponseInfo, Model], Any]
"""``on_response(info, model)``: called once the response headers arrived; sync or async."""

OnProviderStreamEvent: TypeAlias = Callable[[Any, Model], Any]
"""``on_provider_stream_event(event, model)``: called with each event of the provider's
stream as the provider sent it (the parsed JSON of an SSE event's data; for Bedrock,
``{event name: payload}``), before it is mapped; sync or async. An exception from it
ends the request with an ``error`` event naming it."""


class ThinkingBudgets(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Thinking-token budgets per level for budget-based providers."""

    minimal: int | None = None
    low: int | None = None
    medium: int | None = None
    high: int | None = None


class OutputFormat(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Ask for the answer's text as JSON matching ``schema`` (an object schema).

    Each provider maps it to its native parameter: Chat Completions ``response_format``,
    Responses ``text.format``, Anthropic ``output_config.format``, Gemini
    ``responseMimeType`` + ``responseJsonSchema``. ``name`` (letters, digits, ``_``,
    ``-``; at most 64) and ``description`` tell the model what the answer is. ``strict``:
    ``None`` lets the provider use constrained decoding when the server offers it and the
    schema fits its subset (then the schema is sent in that subset: every property
    required, no additional properties); ``True`` requires it (a schema that does not
    fit fails the request, naming why); ``False`` never asks for it.
    ``supports_json_schema_output(model, schema)`` says whether a model takes it.
    """

    schema: dict[str, Any]
    name: str = "output"
    description: str | None = None
    strict: bool | None = None


DeferredWindow: TypeAlias = Literal["15m", "1h", "24h"]


class DeferredOptions(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``StreamOptions.deferred`` with a completion window (pi 1.6's
    ``deferred: {window}``): how long the provider may take, ``None`` for its default."""

    window: DeferredWindow | None = None


class StreamOptions(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Options of one LLM call. Every field is optional.

    The generic fields apply to every provider. ``reasoning``, ``thinking_budgets`` and
    ``tool_choice`` are read by the ``*_simple`` entry points, which map them to each
    provider's native parameters; ``extra`` carries provider-native options for the raw
    entry points (e.g. ``{"thinking_enabled": True}`` for Anthropic,
    ``{"reasoning_effort": "high"}`` for OpenAI). ``output_format`` asks for a JSON
    answer matching a schema; every provider maps it natively (see ``OutputFormat``).

    ``first_event_timeout`` and ``idle_timeout`` (seconds, 300 by default; ``None``: no
    limit) bound the wait for the provider's first event after sending the request and
    for each event after it; keep-alives (SSE comments and pings, empty chunks) do not
    count as events. Past either, the request ends with an ``error`` event (``No
    response event for <n> s``), which ``is_retryable_assistant_error`` takes for
    transient. ``timeout_ms`` is the HTTP client's: between two network reads.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    api_key: str | None = None
    cache_retention: CacheRetention | None = None
    session_id: str | None = None
    # use and record no server-side continuation state (Anthropic's message threads):
    # for replays such as cache warming, which must not replace the real conversation's
    disable_continuation: bool = False
    headers: dict[str, str | None] | None = None
    metadata: dict[str, Any] | None = None
    timeout_ms: int | None = None
    first_event_timeout: float | None = DEFAULT_FIRST_EVENT_TIMEOUT_S
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT_S
    max_retries: int = 0
    max_retry_delay_ms: int = 60_000
    env: dict[str, str] | None = None
    sampling_params: dict[str, Any] | None = None
    on_payload: OnPayload | None = None
    on_response: OnResponse | None = None
    on_provider_stream_event: OnProviderStreamEvent | None = None
    signal: AbortSignal | None = None
    identity: ClientIdentity | None = None
    # simple (unified) options
    reasoning: ThinkingLevel | None = None
    thinking_budgets: ThinkingBudgets | None = None
    tool_choice: Any = None
    output_format: OutputFormat | None = None
    # ask a capable provider for a durable handle instead of the answer (pi 1.6's
    # ``deferred: true | {window}``); providers without a background mode ignore it
    deferred: bool | DeferredOptions | None = None
    # provider-native options for the raw entry points
    extra: dict[str, Any] | None = None
    # the registry that dispatched the call; providers take its shared HTTP client
    # (``registry.http_client()``). Set by the entry points.
    registry: Any = None

    def __post_init__(self) -> None:
        check_timeout("first_event_timeout", self.first_event_timeout)
        check_timeout("idle_timeout", self.idle_timeout)

    def __repr__(self) -> str:
        """The fields that differ from their defaults, with secrets hidden: the API key,
        header values, environment values and the credentials among ``extra``
        (``bearer_token``, AWS keys) never reach a log line or a test diff."""
        shown = []
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value == _DEFAULTS.get(name, 0):  # 0: DeferredFetchOptions.wait_ms
                continue
            if name == "api_key":
                value = _HIDDEN
            elif name in ("headers", "env"):
                value = {key: _HIDDEN for key in value}
            elif name == "extra" and isinstance(value, dict):
                value = {k: _HIDDEN if is_secret_name(str(k)) else v for k, v in value.items()}
            shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


class DeferredFetchOptions(StreamOptions, kw_only=True, omit_defaults=True):
    """Options of one fetch of a deferred response: the request options, and
    ``wait_ms``, how long the provider may hold the fetch open waiting for the answer
    (a long poll; 0, the default, is one status check)."""

    wait_ms: int = 0


class _Hidden:
    def __repr__(self) -> str:
        return "<hidden>"


_HIDDEN = _Hidden()
_DEFAULTS = {name: getattr(StreamOptions(), name) for name in StreamOptions.__struct_fields__}


class StreamFn(Protocol):
    """``async def stream_fn(model, context, options, send) -> None``.

    Sends zero or more ``AssistantMessageEvent``s on ``send`` and then exactly one
    terminal ``done`` or ``error``, last. Request failures (HTTP status, transport
    errors, malformed payloads) become an ``error`` event, never an exception;
    cancellation propagates. The runtime owns ``send``: ``open_stream`` runs the
    function as a child task feeding a bounded channel; the engine of an agent run
    awaits it in its own task and takes each event as it is sent (``InlineStream``).
    Either way the consumer applies each event to the message as it accepts it.
    """

    def __call__(
        self,
        model: Model,
        context: Context,
        options: StreamOptions,
        send: ObjectSendStream[AssistantMessageEvent],
        /,
    ) -> Awaitable[None]: ...


class DeferredFetchFn(Protocol):
    """``async def fetch_deferred(model, handle, options, send) -> None``: one fetch of a
    deferred response, under the stream-function contract (``StreamFn``). A response
    that is not ready yet ends with ``done`` of reason ``"deferred"`` and a message
    carrying the (possibly updated) handle; a ready one is streamed as the answer."""

    def __call__(
        self,
        model: Model,
        handle: DeferredHandle,
        options: DeferredFetchOptions,
        send: ObjectSendStream[AssistantMessageEvent],
        /,
    ) -> Awaitable[None]: ...


class DeferredCancelFn(Protocol):
    """``async def cancel_deferred(model, handle, options) -> None``: ask the provider
    to stop working on a deferred response (best effort); a refusal raises."""

    def __call__(
        self, model: Model, handle: DeferredHandle, options: StreamOptions, /
    ) -> Awaitable[None]: ...
