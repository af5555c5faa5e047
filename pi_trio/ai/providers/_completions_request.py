"""The Chat Completions request body: messages, tools and parameters (the original's
``buildParams``, ``convertMessages`` and ``convertTools``, ``src/api/openai-completions.ts``).
Pure functions of the model, the transcript, the options and the resolved compat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._json._depth import decode_json
from .._sanitize import sanitize_surrogates
from .._stream._options import StreamOptions, ThinkingBudgets
from .._transcript._history import resolve_transcript
from .._transcript._system import (
    get_current_tools,
    get_system_message_text,
    render_system_message_update,
)
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
from ._common import cache_retention
from ._constrained import strict_tool_schema
from ._openai_compat import CompletionsCompat, tool_call_id_normalizer
from ._openai_reasoning import apply_reasoning
from ._output import fit_output_schema, openai_strict_unsupported
from ._simple import (
    COMPLETIONS_OWNED_KEYS,
    add_sampling_params,
    clamp_thinking_budget_to_answer_room,
    thinking_budget_for_level,
)

__all__ = [
    "BRIDGE_TEXT",
    "TOOL_IMAGES_TEXT",
    "build_body",
    "convert_messages",
    "convert_tools",
]

BRIDGE_TEXT: Final = "I have processed the tool results."
TOOL_IMAGES_TEXT: Final = "Attached image(s) from tool result:"
_REASONING_FIELDS: Final = ("reasoning_content", "reasoning", "reasoning_text")
_PROMPT_CACHE_KEY_MAX: Final = 64

_json = msgspec.json.encode


def _image_part(block: ImageContent) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"},
    }


def _reasoning_details(signature: str | None) -> list[Any] | None:
    """A thinking signature holding OpenRouter ``reasoning_details`` (a JSON array)."""
    if not signature or not signature.startswith("["):
        return None
    try:
        details = decode_json(signature)
    except msgspec.DecodeError:
        return None
    if isinstance(details, list) and details and all(isinstance(d, dict) for d in details):
        return details
    return None


def _legacy_encrypted_detail(signature: str | None) -> dict[str, Any] | None:
    if not signature or not signature.startswith("{"):
        return None
    try:
        detail = decode_json(signature)
    except msgspec.DecodeError:
        return None
    if (
        isinstance(detail, dict)
        and detail.get("type") == "reasoning.encrypted"
        and isinstance(detail.get("id"), str)
        and detail["id"]
        and isinstance(detail.get("data"), str)
        and detail["data"]
    ):
        return detail
    return None


def _assistant(
    message: AssistantMessage, model: Model, compat: CompletionsCompat
) -> dict[str, Any] | None:
    texts = [
        sanitize_surrogates(b.text)
        for b in message.content
        if isinstance(b, TextContent) and b.text.strip()
    ]
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat.requires_assistant_after_tool_result else None,
    }
    details: list[Any] | None = next(
        (d for b in thinking if (d := _reasoning_details(b.thinking_signature))), None
    )
    if details is None:
        legacy = [e for c in calls if (e := _legacy_encrypted_detail(c.thought_signature))]
        details = list(legacy) or None
    visible = [b for b in thinking if b.thinking.strip()]
    joined = "".join(texts)
    if visible and compat.requires_thinking_as_text:
        thought = "\n\n".join(sanitize_surrogates(b.thinking) for b in visible)
        out["content"] = [
            {"type": "text", "text": thought},
            *({"type": "text", "text": t} for t in texts),
        ]
    else:
        if joined:
            out["content"] = joined
        if visible and details is None:
            field = visible[0].thinking_signature
            if model.provider == "opencode-go" and field == "reasoning":
                field = "reasoning_content"
            if field in _REASONING_FIELDS:
                out[field] = "\n".join(b.thinking for b in visible)
    if calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _json(c.arguments).decode()},
            }
            for c in calls
        ]
    if details is not None:
        out["reasoning_details"] = details
    if (
        compat.requires_reasoning_content_on_assistant_messages
        and model.reasoning
        and "reasoning_content" not in out
    ):
        out["reasoning_content"] = ""
    if not out["content"] and "tool_calls" not in out:
        return None  # servers reject assistant turns with neither content nor tool calls
    return out


def convert_messages(
    model: Model, messages: Sequence[Message], compat: CompletionsCompat
) -> list[dict[str, Any]]:
    """The ``messages`` array for a (normalized, transcript-only) message list. Later system
    messages stay in place for servers that take them mid-conversation; otherwise they fold
    into the leading instruction (pi 1.6's ``resolveTranscript``)."""
    if not compat.supports_mid_convo_system_messages:
        messages = resolve_transcript(Context(messages=list(messages)), False).messages
    transformed = transform_messages(messages, model, tool_call_id_normalizer(model, compat))
    instruction_role = (
        "developer" if model.reasoning and compat.supports_developer_role else "system"
    )
    out: list[dict[str, Any]] = []
    last_role: str | None = None
    leading = True
    i = 0
    while i < len(transformed):
        message = transformed[i]
        i += 1
        if isinstance(message, SystemMessage):
            text = (
                get_system_message_text(message)
                if leading
                else render_system_message_update(message)
            )
            if text:
                out.append({"role": instruction_role, "content": sanitize_surrogates(text)})
                last_role = "system"
            continue
        leading = False
        if (
            compat.requires_assistant_after_tool_result
            and last_role == "toolResult"
            and (isinstance(message, UserMessage))
        ):
            out.append({"role": "assistant", "content": BRIDGE_TEXT})
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                out.append({"role": "user", "content": sanitize_surrogates(content)})
            else:
                parts = [
                    {"type": "text", "text": sanitize_surrogates(b.text)}
                    if isinstance(b, TextContent)
                    else _image_part(b)
                    for b in content
                ]
                if not parts:
                    continue
                out.append({"role": "user", "content": parts})
            last_role = "user"
        elif isinstance(message, AssistantMessage):
            converted = _assistant(message, model, compat)
            if converted is not None:
                out.append(converted)
            last_role = "assistant"
        elif isinstance(message, ToolResultMessage):
            images: list[dict[str, Any]] = []
            run = [message]
            while i < len(transformed) and isinstance(transformed[i], ToolResultMessage):
                run.append(transformed[i])  # type: ignore[arg-type]
                i += 1
            for result in run:
                text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
                has_images = any(isinstance(b, ImageContent) for b in result.content)
                if not text:
                    text = "(see attached image)" if has_images else "(no tool output)"
                tool_message = {
                    "role": "tool",
                    "content": sanitize_surrogates(text),
                    "tool_call_id": result.tool_call_id,
                }
                if compat.requires_tool_result_name and result.tool_name:
                    tool_message["name"] = result.tool_name
                out.append(tool_message)
                if has_images and "image" in model.input:
                    images.extend(
                        _image_part(b) for b in result.content if isinstance(b, ImageContent)
                    )
            if images:
                if compat.requires_assistant_after_tool_result:
                    out.append({"role": "assistant", "content": BRIDGE_TEXT})
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
    return out


def convert_tools(tools: Sequence[Tool], compat: CompletionsCompat) -> list[dict[str, Any]]:
    """Function tools; ``strict`` is sent only where the server accepts it, and is true
    for tools that ask for JSON-schema constrained sampling and whose schema fits the
    strict subset (sent in it); a tool that requires it and cannot have it is refused."""
    converted = []
    for tool in tools:
        strict = strict_tool_schema(tool, compat.supports_strict_mode)
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if strict is None else strict,
        }
        if compat.supports_strict_mode:
            function["strict"] = strict is not None
        converted.append({"type": "function", "function": function})
    return converted


def _has_tool_history(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(m, ToolResultMessage)
        or (isinstance(m, AssistantMessage) and any(isinstance(b, ToolCall) for b in m.content))
        for m in messages
    )


def _cache_control(compat: CompletionsCompat, retention: str) -> dict[str, str] | None:
    if compat.cache_control_format != "anthropic" or retention == "none":
        return None
    if retention == "long" and compat.supports_long_cache_retention:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _mark_text(message: dict[str, Any], control: dict[str, str]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": control}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "text":
                part["cache_control"] = control
                return True
    return False


def _apply_cache_control(body: dict[str, Any], control: dict[str, str]) -> None:
    messages = body["messages"]
    for message in messages:
        if message["role"] in ("system", "developer"):
            _mark_text(message, control)
            break
    tools = body.get("tools")
    if tools:
        tools[-1]["cache_control"] = control
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, control):
            break


def build_body(
    model: Model,
    messages: Sequence[Message],
    options: StreamOptions,
    compat: CompletionsCompat,
    *,
    reasoning_effort: str | None = None,
    thinking_budgets: ThinkingBudgets | None = None,
    tool_choice: Any = None,
) -> dict[str, Any]:
    """The request body for a normalized transcript (the original's ``buildParams``)."""
    retention = cache_retention(options)
    body: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(model, messages, compat),
        "stream": True,
    }
    prompt_cache_key = compat.supports_prompt_cache_key
    if prompt_cache_key is None:
        prompt_cache_key = "api.openai.com" in model.base_url or (
            retention == "long" and compat.supports_long_cache_retention
        )
    if retention != "none" and prompt_cache_key and options.session_id:
        body["prompt_cache_key"] = options.session_id[:_PROMPT_CACHE_KEY_MAX]
    if retention == "long" and compat.supports_long_cache_retention:
        body["prompt_cache_retention"] = "24h"
    if compat.supports_usage_in_streaming:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    if options.max_tokens:
        body[compat.max_tokens_field] = options.max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    tools = get_current_tools(messages)
    if tools:
        body["tools"] = convert_tools(tools, compat)
        if compat.zai_tool_stream:
            body["tool_stream"] = True
    elif _has_tool_history(messages):
        body["tools"] = []  # LiteLLM / Anthropic proxies need it with tool history
    control = _cache_control(compat, retention)
    if control is not None:
        _apply_cache_control(body, control)
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    output = options.output_format
    if output is not None:
        schema, strict = fit_output_schema(
            output, strict_mode=compat.supports_strict_output, unsupported=openai_strict_unsupported
        )
        spec: dict[str, Any] = {"name": output.name, "schema": schema, "strict": strict}
        if output.description:
            spec["description"] = output.description
        body["response_format"] = {"type": "json_schema", "json_schema": spec}
    if compat.vllm_priority is not None:
        body["priority"] = compat.vllm_priority
    budget: int | None = None
    if reasoning_effort and model.reasoning:
        ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
        room = clamp_thinking_budget_to_answer_room(
            thinking_budget_for_level(reasoning_effort, thinking_budgets), ceiling
        )
        budget = room if room > 0 else None
    if model.reasoning:
        apply_reasoning(body, model, compat, reasoning_effort, budget)
    if compat.thinking_token_budget_field and budget is not None:
        body[compat.thinking_token_budget_field] = budget
    if compat.open_router_routing:
        body["provider"] = compat.open_router_routing
    routing = compat.vercel_gateway_routing
    if routing and (routing.get("only") or routing.get("order")):
        gateway = {k: routing[k] for k in ("only", "order") if routing.get(k)}
        body["providerOptions"] = {"gateway": gateway}
    add_sampling_params(body, options.sampling_params, COMPLETIONS_OWNED_KEYS, "openai-completions")
    return body
