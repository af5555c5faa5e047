"""The request of the Anthropic Messages API, built from a normalized context (sans-IO).

The original's ``buildParams``, ``convertMessages``, ``getCacheControl`` and
``getBetaFeatures`` (``src/api/anthropic-messages.ts``): body, messages, tools, cache
control, beta headers and thinking. Provider-native options come from ``options.extra``:
``thinking_enabled``, ``thinking_budget_tokens``, ``effort``, ``thinking_display``,
``interleaved_thinking`` and ``tool_choice`` (the unified ``options.tool_choice`` is used
when ``extra`` has none). ``options.output_format`` becomes ``output_config.format``
(Anthropic's structured outputs; the schema in its strict subset where it fits). Tool
declarations, strict ones included, come from ``_anthropic_tools``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._sanitize import sanitize_surrogates
from .._stream._options import StreamOptions
from .._transcript._history import (
    get_initial_system_message,
    resolve_transcript,
    without_initial_system_message,
)
from .._transcript._system import get_current_tools, get_system_message_text
from .._transcript._transform import transform_messages
from .._types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._anthropic_system import (
    BETA_INLINE_TOOLS,
    DEFERRED_TOOL_PLACEHOLDER,
    ToolDefinitions,
    native_tool_changes,
    supports_mid_convo_system_messages,
    system_update_blocks,
)
from ._anthropic_tools import (
    canonical_tool_name,
    convert_anthropic_tools,
    sends_preferred_strict_tools,
)
from ._common import cache_retention, replace_unsafe_id_chars
from ._output import anthropic_strict_unsupported, fit_output_schema

__all__ = [
    "AnthropicRequest",
    "BETA_FINE_GRAINED_TOOL_STREAMING",
    "BETA_INTERLEAVED_THINKING",
    "BETA_MESSAGE_THREADS",
    "CLAUDE_CODE_IDENTITY",
    "build_anthropic_request",
    "cache_retention",
    "canonical_tool_name",
    "is_oauth_token",
    "normalize_anthropic_tool_call_id",
]

CLAUDE_CODE_IDENTITY: Final = "You are Claude Code, Anthropic's official CLI for Claude."
BETA_INTERLEAVED_THINKING: Final = "interleaved-thinking-2025-05-14"
BETA_FINE_GRAINED_TOOL_STREAMING: Final = "fine-grained-tool-streaming-2025-05-14"
BETAS_OAUTH: Final = ("claude-code-20250219", "oauth-2025-04-20")
BETA_MESSAGE_THREADS: Final = "message-threads-2026-08-12"
SEE_ATTACHED_IMAGE: Final = "(see attached image)"
DEFAULT_BUDGET_TOKENS: Final = 1024

_EMPTY_ID_PLACEHOLDER: Final = "tool_call"


class AnthropicRequest(msgspec.Struct, kw_only=True):
    """The JSON body and the ``anthropic-beta`` flags of one request;
    ``preferred_strict``: a tool that only prefers strict sampling is sent strict."""

    body: dict[str, Any]
    betas: list[str]
    preferred_strict: bool = False


# --------------------------------------------------------------------------- helpers


def _compat(model: Model, key: str, default: Any = None) -> Any:
    return (model.compat or {}).get(key, default)


def _extra(options: StreamOptions, key: str) -> Any:
    return (options.extra or {}).get(key)


def is_oauth_token(api_key: str | None) -> bool:
    """Anthropic OAuth access tokens (``sk-ant-oat…``) authenticate as a bearer token."""
    return api_key is not None and "sk-ant-oat" in api_key


def normalize_anthropic_tool_call_id(tool_call_id: str, model: Model, source: Any) -> str:
    """Tool-call ids from other providers, made acceptable: ``[a-zA-Z0-9_-]``, 1 to 64
    characters (an empty id, e.g. of a failed call, becomes ``tool_call``)."""
    return replace_unsafe_id_chars(tool_call_id)[:64] or _EMPTY_ID_PLACEHOLDER


def _cache_control(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    retention = cache_retention(options)
    if retention == "none":
        return None
    control: dict[str, Any] = {"type": "ephemeral"}
    if retention == "long" and _compat(model, "supportsLongCacheRetention", True) is not False:
        control["ttl"] = "1h"
    return control


def _is_adaptive(model: Model) -> bool:
    return _compat(model, "forceAdaptiveThinking") is True


# --------------------------------------------------------------------------- messages


def _user_blocks(content: Sequence[TextContent | ImageContent]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block))
    return blocks


def _image(block: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.mime_type, "data": block.data},
    }


def _assistant_blocks(message: AssistantMessage, model: Model, oauth: bool) -> list[Any]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            signature = block.thinking_signature
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": signature or ""})
            elif signature and signature.strip():
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": sanitize_surrogates(block.thinking),
                        "signature": signature,
                    }
                )
            elif not block.thinking.strip():
                continue
            elif _compat(model, "allowEmptySignature") is True:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": sanitize_surrogates(block.thinking),
                        "signature": "",
                    }
                )
            else:
                blocks.append({"type": "text", "text": sanitize_surrogates(block.thinking)})
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": canonical_tool_name(block.name) if oauth else block.name,
                    "input": block.arguments or {},
                }
            )
    return blocks


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    images = [b for b in message.content if isinstance(b, ImageContent)]
    content: str | list[dict[str, Any]]
    if not images:
        content = sanitize_surrogates("\n".join(texts))
    else:
        content = []
        if not any(text.strip() for text in texts):
            content.append({"type": "text", "text": SEE_ATTACHED_IMAGE})
        for block in message.content:
            if isinstance(block, TextContent):
                if block.text.strip():
                    content.append({"type": "text", "text": sanitize_surrogates(block.text)})
            else:
                content.append(_image(block))
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": content,
        "is_error": message.is_error,
    }


def convert_anthropic_messages(
    messages: Sequence[Message],
    model: Model,
    *,
    oauth: bool = False,
    definitions: ToolDefinitions | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the wire messages of a normalized transcript.

    The leading system message is the prompt. A later one (the model takes them, or the
    transcript was collapsed before) is a ``system`` message held back until just before
    the next assistant message or the end (``_anthropic_system``); ``definitions``
    converts the tools it declares when tool changes are native. Consecutive tool results
    share one user turn.
    """
    initial = get_initial_system_message(messages)
    prompt = get_system_message_text(initial) if initial is not None else ""
    rest = without_initial_system_message(messages)
    wire: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []  # later system messages, waiting for an assistant one
    tool_turn: list[dict[str, Any]] | None = None  # the open user turn of tool results
    for message in transform_messages(rest, model, normalize_anthropic_tool_call_id):
        if isinstance(message, ToolResultMessage):
            if tool_turn is None:
                tool_turn = []
                wire.append({"role": "user", "content": tool_turn})
            tool_turn.append(_tool_result_block(message))
            continue
        tool_turn = None
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                if message.content.strip():
                    wire.append({"role": "user", "content": sanitize_surrogates(message.content)})
            else:
                blocks = _user_blocks(message.content)
                if blocks:
                    wire.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, model, oauth)
            if blocks:
                wire.extend(held)
                held.clear()
                wire.append({"role": "assistant", "content": blocks})
        elif isinstance(message, SystemMessage):
            update = system_update_blocks(message, oauth=oauth, definitions=definitions)
            if update:
                held.append({"role": "system", "content": update})
    wire.extend(held)
    return prompt, wire


_CACHED_BLOCKS: Final = frozenset({"text", "image", "tool_result", "tool_addition", "tool_removal"})


def _mark_last_block(wire: list[dict[str, Any]], control: dict[str, Any]) -> None:
    """The cache breakpoint on the last block of the last message, if it is a user or a
    system message."""
    if not wire or wire[-1]["role"] not in ("user", "system"):
        return
    last = wire[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"], "cache_control": control}]
        return
    block = last["content"][-1]
    if block.get("type") in _CACHED_BLOCKS:
        block["cache_control"] = control


# --------------------------------------------------------------------------- tools


def _tool_choice(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return {"type": value}
    return value


# --------------------------------------------------------------------------- thinking


def _thinking(model: Model, options: StreamOptions) -> tuple[dict[str, Any] | None, Any, bool]:
    """``(thinking, output_config, enabled)`` for the request."""
    if not model.reasoning:
        return None, None, False
    enabled = _extra(options, "thinking_enabled")
    display = _extra(options, "thinking_display")
    if enabled:
        thinking: dict[str, Any]
        output_config = None
        if _is_adaptive(model):
            thinking = {"type": "adaptive"}
            effort = _extra(options, "effort")
            if effort:
                output_config = {"effort": effort}
        else:
            budget = _extra(options, "thinking_budget_tokens")
            thinking = {
                "type": "enabled",
                "budget_tokens": DEFAULT_BUDGET_TOKENS if budget is None else budget,
            }
        if display:
            thinking["display"] = display
        return thinking, output_config, True
    level_map = model.thinking_level_map or {}
    if enabled is False and ("off" not in level_map or level_map["off"] is not None):
        return {"type": "disabled"}, None, False
    return None, None, False


# --------------------------------------------------------------------------- the request


def build_anthropic_request(
    model: Model,
    context: Context,
    options: StreamOptions,
    *,
    oauth: bool = False,
    relax_preferred_strict: bool = False,
    message_threads: bool = False,
) -> AnthropicRequest:
    """The body and beta flags for ``context`` (already normalized: messages only);
    ``relax_preferred_strict`` as in ``_anthropic_tools``; ``message_threads`` adds the
    threads beta (``_anthropic_thread``)."""
    # as pi 1.6: later system messages fold into the leading prompt unless the model takes
    # them mid-conversation (``_anthropic_system``)
    messages = resolve_transcript(context, supports_mid_convo_system_messages(model)).messages
    control = _cache_control(model, options)
    eager = _compat(model, "supportsEagerToolInputStreaming", True) is not False
    tool_control = (
        control if _compat(model, "supportsCacheControlOnTools", True) is not False else None
    )
    sent_tools: list[Tool] = []  # every tool declared in the request, for strict fallback

    def definitions(
        tools: Sequence[Tool], cache_control: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        sent_tools.extend(tools)
        return convert_anthropic_tools(
            tools,
            model,
            eager_input_streaming=eager,
            cache_control=cache_control,
            oauth=oauth,
            relax_preferred_strict=relax_preferred_strict,
        )

    initial_tools = native_tool_changes(model, messages)
    prompt, wire = convert_anthropic_messages(
        messages, model, oauth=oauth, definitions=definitions if initial_tools else None
    )
    if control is not None:
        _mark_last_block(wire, control)

    body: dict[str, Any] = {
        "model": model.id,
        "messages": wire,
        "max_tokens": model.max_tokens if options.max_tokens is None else options.max_tokens,
        "stream": True,
    }
    system: list[dict[str, Any]] = []
    if oauth:
        system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
    if prompt:
        system.append({"type": "text", "text": sanitize_surrogates(prompt)})
    if system:
        if control is not None:
            for block in system:
                block["cache_control"] = control
        body["system"] = system

    thinking, output_config, thinking_on = _thinking(model, options)
    if (
        options.temperature is not None
        and not thinking_on
        and _compat(model, "supportsTemperature", True) is not False
    ):
        body["temperature"] = options.temperature

    tools = get_current_tools(messages)
    if initial_tools:
        # the list never changes: later tools come in tool_addition blocks
        body["tools"] = [*definitions(initial_tools, tool_control), DEFERRED_TOOL_PLACEHOLDER]
    elif tools:
        body["tools"] = definitions(tools, tool_control)
    if thinking is not None:
        body["thinking"] = thinking
    if options.output_format is not None:
        schema, _ = fit_output_schema(
            options.output_format, strict_mode=True, unsupported=anthropic_strict_unsupported
        )
        output_config = {
            **(output_config or {}),
            "format": {"type": "json_schema", "schema": schema},
        }
    if output_config is not None:
        body["output_config"] = output_config

    metadata = options.metadata or {}
    if isinstance(metadata.get("user_id"), str):
        body["metadata"] = {"user_id": metadata["user_id"]}

    choice = _extra(options, "tool_choice")
    choice = _tool_choice(options.tool_choice if choice is None else choice)
    if choice is not None:
        body["tool_choice"] = choice

    betas: list[str] = list(BETAS_OAUTH) if oauth else []
    if tools and not eager:
        betas.append(BETA_FINE_GRAINED_TOOL_STREAMING)
    if (
        thinking_on
        and not _is_adaptive(model)
        and _extra(options, "interleaved_thinking") is not False
    ):
        betas.append(BETA_INTERLEAVED_THINKING)
    if initial_tools:
        betas.append(BETA_INLINE_TOOLS)
    if message_threads:
        betas.append(BETA_MESSAGE_THREADS)
    preferred = bool(sent_tools) and not relax_preferred_strict
    return AnthropicRequest(
        body=body,
        betas=betas,
        preferred_strict=preferred and sends_preferred_strict_tools(model, sent_tools),
    )
