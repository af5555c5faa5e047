"""The ``openai-completions`` provider: OpenAI Chat Completions and every server that speaks
it (reference/ai.md §6.3, §7.3), over httpx2 without a vendor SDK.

The wire mapping is sans-IO: ``CompletionsStreamMapper`` turns decoded SSE chunks into
assistant-message events. Text, thinking and each tool call keep one open block each (tool
calls keyed by the chunk's ``index``, then by id), and every ``*_end`` event is sent after
the wire stream ends, in content order, as the original runtime does.
"""

from __future__ import annotations

from typing import Any, Final

import anyio.abc
import msgspec

from .._builder import MessageBuilder
from .._errors import ProviderError
from .._events import AssistantMessageEvent
from .._models import clamp_thinking_level
from .._options import StreamOptions
from .._registry import ApiProvider
from .._transcript import normalize_context
from .._types import Context, Model
from ._http import ProviderRun, SSEEvent, run_provider
from ._openai_compat import CompletionsCompat, resolve_compat
from ._openai_request import build_body
from ._openai_usage import apply_openrouter_cost as apply_openrouter_cost
from ._openai_usage import parse_usage as parse_usage
from ._simple import build_base_options

__all__ = [
    "API_PROVIDER",
    "CompletionsStreamMapper",
    "apply_openrouter_cost",
    "map_finish_reason",
    "parse_usage",
    "stream_openai_completions",
    "stream_simple_openai_completions",
]

_REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "reasoning_text")
NO_FINISH_REASON_TEXT: Final = "Stream ended without finish_reason"
ERROR_STOP_TEXT: Final = "Provider returned an error stop reason"

_decode = msgspec.json.decode


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    """``(stop_reason, error_message)`` for a ``finish_reason``."""
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("tool_calls", "function_call"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def _valid_detail(detail: Any) -> bool:
    if not isinstance(detail, dict):
        return False
    if detail.get("id") is not None and not isinstance(detail.get("id"), str):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False
    if "index" in detail and not isinstance(detail["index"], int):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        signature = detail.get("signature")
        return isinstance(detail.get("text"), str) and (
            signature is None or isinstance(signature, str)
        )
    return False


def _merge_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
    """Append an OpenRouter reasoning detail; consecutive text/summary deltas merge."""
    last = details[-1] if details else None
    kind = detail["type"]
    if (
        last is not None
        and last["type"] == kind
        and kind in ("reasoning.text", "reasoning.summary")
    ):
        key = "text" if kind == "reasoning.text" else "summary"
        last[key] += detail[key]
        if kind == "reasoning.text" and not last.get("signature") and detail.get("signature"):
            last["signature"] = detail["signature"]
        for field in ("id", "index"):
            if last.get(field) is None and detail.get(field) is not None:
                last[field] = detail[field]
        if not last.get("format") and detail.get("format"):
            last["format"] = detail["format"]
        return
    details.append(dict(detail))


class CompletionsStreamMapper:
    """Chat Completions chunks → assistant-message events (sans-IO).

    ``feed(event)`` takes one SSE event and returns the events it produced; ``finish()``
    ends the open blocks in content order and returns them plus the terminal event.
    Errors the server reports inside the stream raise ``ProviderError``.
    """

    __slots__ = (
        "_builder",
        "_compat",
        "_details",
        "_finished",
        "_model",
        "_text",
        "_thinking",
        "_tools_by_id",
        "_tools_by_index",
        "done_marker",
    )

    def __init__(self, builder: MessageBuilder, model: Model, compat: CompletionsCompat) -> None:
        self._builder = builder
        self._model = model
        self._compat = compat
        self._text: int | None = None
        self._thinking: int | None = None
        self._tools_by_index: dict[int, int] = {}
        self._tools_by_id: dict[str, int] = {}
        self._details: list[dict[str, Any]] | None = None
        self._finished = False
        self.done_marker = False

    def feed(self, event: SSEEvent) -> list[AssistantMessageEvent]:
        data = event.data
        if self.done_marker or not data.strip():
            return []
        if data.startswith("[DONE]"):
            self.done_marker = True
            return []
        try:
            chunk = _decode(data)
        except msgspec.DecodeError as exc:
            raise ProviderError(
                f"Could not parse the chat completions stream: {exc}; data={data[:200]!r}"
            ) from exc
        if event.event == "error" or (isinstance(chunk, dict) and chunk.get("error")):
            raise ProviderError(_stream_error_text(chunk))
        if not isinstance(chunk, dict):
            return []  # null and non-object chunks are skipped
        return self.chunk(chunk)

    def chunk(self, chunk: dict[str, Any]) -> list[AssistantMessageEvent]:
        builder = self._builder
        message = builder.message
        model = self._model
        out: list[AssistantMessageEvent] = []
        chunk_id = chunk.get("id")
        if not message.response_id and isinstance(chunk_id, str) and chunk_id:
            message.response_id = chunk_id
        chunk_model = chunk.get("model")
        if (
            not message.response_model
            and isinstance(chunk_model, str)
            and chunk_model
            and chunk_model != model.id
        ):
            message.response_model = chunk_model
        usage = chunk.get("usage")
        if isinstance(usage, dict) and usage:
            message.usage = parse_usage(usage, model)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return out
        choice = choices[0]
        if not usage and isinstance(choice.get("usage"), dict):
            message.usage = parse_usage(choice["usage"], model)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            message.raw_stop_reason = finish
            stop_reason, error_message = map_finish_reason(finish)
            message.stop_reason = stop_reason  # type: ignore[assignment]
            if error_message:
                message.error_message = error_message
            self._finished = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return out
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self._text is None:
                start = builder.text_start()
                self._text = start.content_index
                out.append(start)
            out.append(builder.text_delta(self._text, content))
        for field in _REASONING_FIELDS:
            reasoning = delta.get(field)
            if isinstance(reasoning, str) and reasoning:
                if model.provider == "opencode-go" and field == "reasoning":
                    field = "reasoning_content"
                out.append(builder.thinking_delta(self._thinking_index(field, out), reasoning))
                break
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for call in tool_calls:
                if isinstance(call, dict):
                    self._tool_call(call, out)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            for detail in details:
                if _valid_detail(detail):
                    self._thinking_index("", out)
                    if self._details is None:
                        self._details = []
                    _merge_detail(self._details, detail)
        return out

    def _thinking_index(self, signature: str, out: list[AssistantMessageEvent]) -> int:
        if self._thinking is None:
            start = self._builder.thinking_start(thinking_signature=signature)
            self._thinking = start.content_index
            out.append(start)
        return self._thinking

    def _tool_call(self, call: dict[str, Any], out: list[AssistantMessageEvent]) -> None:
        builder = self._builder
        stream_index = call.get("index")
        if not isinstance(stream_index, int) or isinstance(stream_index, bool):
            stream_index = None
        raw_id = call.get("id")
        call_id: str = raw_id if isinstance(raw_id, str) else ""
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        raw_name = function.get("name")
        name: str = raw_name if isinstance(raw_name, str) else ""
        index = self._tools_by_index.get(stream_index) if stream_index is not None else None
        if index is None and call_id:
            index = self._tools_by_id.get(call_id)
        if index is None:
            start = builder.toolcall_start(call_id, name)
            index = start.content_index
            out.append(start)
        if stream_index is not None:
            self._tools_by_index.setdefault(stream_index, index)
        block = builder.tool_call(index)
        if call_id:
            self._tools_by_id[call_id] = index
            if not block.id:
                block.id = call_id
        if name and not block.name:
            block.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            out.append(builder.toolcall_delta(index, arguments))
        else:
            out.append(builder.toolcall_delta(index, ""))

    def finish(self) -> list[AssistantMessageEvent]:
        """The end of the wire stream: every open block ends, then ``done`` or ``error``."""
        builder = self._builder
        message = builder.message
        if self._thinking is not None and self._details is not None:
            block: Any = builder.started_block(self._thinking)
            block.thinking_signature = msgspec.json.encode(self._details).decode()
        out = builder.end_open_blocks()
        compat = self._compat
        if not self._finished and not compat.supports_finish_reason:
            message.stop_reason = "toolUse" if builder.tool_call_count else "stop"
        if message.stop_reason == "error":
            out.append(builder.error(message.error_message or ERROR_STOP_TEXT))
        elif (compat.supports_finish_reason and not self._finished) or (
            message.stop_reason == "pending"
        ):
            out.append(builder.error(NO_FINISH_REASON_TEXT))
        else:
            out.append(builder.done())
        return out


def _stream_error_text(chunk: Any) -> str:
    error = chunk.get("error") if isinstance(chunk, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        text = (
            message if isinstance(message, str) and message else msgspec.json.encode(error).decode()
        )
        metadata = error.get("metadata")
        raw = metadata.get("raw") if isinstance(metadata, dict) else None
        if isinstance(raw, str) and raw and raw not in text:
            text = f"{text}\n{raw}"
        return text
    if isinstance(error, str) and error:
        return error
    if isinstance(chunk, dict) and isinstance(chunk.get("message"), str):
        return str(chunk["message"])
    return msgspec.json.encode(chunk).decode()


# --------------------------------------------------------------------------- the provider


class _Native(msgspec.Struct, kw_only=True):
    """The provider-native options of one request."""

    reasoning_effort: str | None = None
    tool_choice: Any = None


def _native(options: StreamOptions) -> _Native:
    extra = options.extra or {}
    effort = extra.get("reasoning_effort", extra.get("reasoningEffort"))
    # the provider-native option wins over the unified one, as in the other providers
    choice = extra.get("tool_choice", extra.get("toolChoice"))
    if choice is None:
        choice = options.tool_choice
    return _Native(reasoning_effort=effort, tool_choice=choice)


async def _stream(run: ProviderRun, context: Context, native: _Native) -> None:
    model = run.model
    options = run.options
    compat = resolve_compat(model)
    api_key = run.api_key()
    messages = normalize_context(context).messages
    body = build_body(
        model,
        messages,
        options,
        compat,
        reasoning_effort=native.reasoning_effort,
        thinking_budgets=options.thinking_budgets,
        tool_choice=native.tool_choice,
    )
    payload = await run.on_payload(body)
    defaults: dict[str, str | None] = {}
    if api_key is not None:
        defaults["Authorization"] = f"Bearer {api_key}"
    session_id = options.session_id
    if session_id and compat.send_session_affinity_headers and (options.cache_retention != "none"):
        if compat.session_affinity_format == "openrouter":
            defaults["x-session-id"] = session_id
        else:
            defaults["session_id"] = session_id
            defaults["x-client-request-id"] = session_id
            defaults["x-session-affinity"] = session_id
    url = f"{model.base_url.rstrip('/')}/chat/completions"
    mapper = CompletionsStreamMapper(run.builder, model, compat)
    async with run.open_sse(url, run.headers(defaults), payload) as sse:
        await run.emit(run.builder.start())
        async for batch in sse:
            for event in batch:
                events = mapper.feed(event)
                if events:
                    await run.emit_all(events)
    await run.emit_all(mapper.finish())


async def stream_openai_completions(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """Stream one Chat Completions request. Native options: ``options.extra``
    ``reasoning_effort`` (a level), ``tool_choice`` (or ``options.tool_choice``)."""
    await run_provider(model, options, send, _stream, context, _native(options))


async def stream_simple_openai_completions(
    model: Model,
    context: Context,
    options: StreamOptions,
    send: anyio.abc.ObjectSendStream[AssistantMessageEvent],
) -> None:
    """Stream with the unified options: ``reasoning`` is clamped to the model's levels
    (``off`` sends none), ``max_tokens`` defaults to the model's and fits the context."""

    async def body(run: ProviderRun) -> None:
        run.api_key()  # a missing key fails before anything else is computed
        base = build_base_options(model, context, options)
        run.options = base
        effort = clamp_thinking_level(model, options.reasoning) if options.reasoning else None
        native = _Native(
            reasoning_effort=None if effort == "off" else effort, tool_choice=options.tool_choice
        )
        await _stream(run, context, native)

    await run_provider(model, options, send, body)


API_PROVIDER = ApiProvider(
    api="openai-completions",
    stream=stream_openai_completions,
    stream_simple=stream_simple_openai_completions,
)
