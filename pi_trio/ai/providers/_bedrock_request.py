"""The body of a Bedrock ``ConverseStream`` request, built from a normalized context
(sans-IO). The model id travels in the URL, not in the body.

Reference behaviour: the original's ``bedrock-converse-stream`` request mapping. System
messages fold into the leading ``system`` blocks; consecutive tool results share one user
turn; blank text becomes ``<empty>`` where Bedrock needs content; Claude gets prompt-cache
points (``cachePoint``, ``ttl: 1h`` for long retention) on the system prompt and the last
user turn, signed reasoning replayed as ``reasoningText`` and the images of failed tool
results after the results of the turn. Reasoning goes into
``additionalModelRequestFields`` (``_bedrock_models.thinking_fields``).

Provider-native options (``options.extra``): ``tool_choice`` (``auto``, ``any``,
``none`` or ``{"type": "tool", "name": ...}``; the unified ``options.tool_choice`` when
absent), ``thinking_display``, ``interleaved_thinking``, ``request_metadata``.
``options.reasoning`` and ``options.thinking_budgets`` are read here too, as the original
reads them. ``options.output_format`` becomes ``outputConfig.textFormat`` (a JSON schema,
in the strict subset where it fits). With ``relax_preferred_strict`` tools that only
prefer strict sampling are sent without it (``_strict_limits``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from .._sanitize import sanitize_surrogates
from .._stream._options import StreamOptions
from .._transcript._system import collapse_system_messages, get_current_tools
from .._transcript._transform import transform_messages
from .._types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._bedrock_models import is_claude, supports_prompt_caching, thinking_fields
from ._common import cache_retention, option_env, replace_unsafe_id_chars
from ._constrained import prefers_strict_sampling, strict_tool_schema
from ._output import fit_output_schema

__all__ = [
    "EMPTY_TEXT",
    "ERROR_TOOL_IMAGE_TEXT",
    "build_bedrock_body",
    "convert_bedrock_messages",
    "sends_preferred_strict_tools",
]

EMPTY_TEXT: Final = "<empty>"
ERROR_TOOL_IMAGE_TEXT: Final = "(image attached after the tool results)"
_IMAGE_FORMATS: Final = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_TOOL_CHOICES: Final = ("auto", "any", "none")


# --------------------------------------------------------------------------- blocks


def _text(text: str) -> dict[str, Any] | None:
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _image(block: ImageContent) -> dict[str, Any]:
    fmt = _IMAGE_FORMATS.get(block.mime_type)
    if fmt is None:
        raise ValueError(
            f"Bedrock takes jpeg, png, gif and webp images, not {block.mime_type!r}; "
            "convert the image before sending it"
        )
    return {"image": {"format": fmt, "source": {"bytes": block.data}}}


def _document(value: Any) -> Any:
    """A JSON document without empty keys (Bedrock refuses them)."""
    if isinstance(value, list):
        return [_document(v) for v in value]
    if isinstance(value, dict):
        return {k: _document(v) for k, v in value.items() if k}
    return value


def _user_content(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [_text(message.content) or {"text": EMPTY_TEXT}]
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            text = _text(block.text)
            if text is not None:
                content.append(text)
        elif isinstance(block, ImageContent):
            content.append(_image(block))
    return content or [{"text": EMPTY_TEXT}]


def _redacted_payload(signature: str | None) -> str | None:
    """The stored base64 payload of encrypted reasoning, checked; ``None`` drops it."""
    if not signature:
        return None
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None
    return base64.b64encode(raw).decode("ascii") if raw else None


def _assistant_content(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            text = _text(block.text)
            if text is not None:
                blocks.append(text)
        elif isinstance(block, ToolCall):
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": block.id,
                        "name": block.name,
                        "input": _document(block.arguments),
                    }
                }
            )
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                payload = _redacted_payload(block.thinking_signature)
                if payload is not None:
                    blocks.append({"reasoningContent": {"redactedContent": payload}})
                continue
            thinking = sanitize_surrogates(block.thinking)
            if not thinking.strip():
                continue
            signature = block.thinking_signature
            if not is_claude(model):
                # only Claude takes a signature; others refuse the field
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif signature and signature.strip():
                reasoning = {"text": thinking, "signature": signature}
                blocks.append({"reasoningContent": {"reasoningText": reasoning}})
            else:
                # unsigned reasoning would be refused on replay: send it as text
                blocks.append({"text": thinking})
    return blocks


def _result_content(content: Sequence[TextContent | ImageContent]) -> list[dict[str, Any]]:
    converted: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, ImageContent):
            converted.append(_image(block))
        else:
            text = _text(block.text)
            if text is not None:
                converted.append(text)
    return converted or [{"text": EMPTY_TEXT}]


def _split_error_images(
    message: ToolResultMessage,
) -> tuple[list[TextContent | ImageContent], list[dict[str, Any]]]:
    """Claude refuses images in a failed tool result: each run of them becomes a
    placeholder, and the images follow the turn's results under a caption."""
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if not message.is_error or not images:
        return list(message.content), []
    content: list[TextContent | ImageContent] = []
    for block in message.content:
        if isinstance(block, ImageContent):
            if not content or content[-1] != TextContent(text=ERROR_TOOL_IMAGE_TEXT):
                content.append(TextContent(text=ERROR_TOOL_IMAGE_TEXT))
        else:
            content.append(block)
    caption = (
        f"Images from the error result of tool call {message.tool_call_id} ({message.tool_name}):"
    )
    return content, [{"text": caption}, *(_image(b) for b in images)]


def _normalize_call_id(tool_call_id: str, model: Model, source: Any) -> str:
    return replace_unsafe_id_chars(tool_call_id)[:64]


def _cache_point(retention: str) -> dict[str, Any]:
    point: dict[str, Any] = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def convert_bedrock_messages(
    messages: Sequence[Any], model: Model, options: StreamOptions
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt (every system message, collapsed) and ``messages`` of the body."""
    prompt, rest = collapse_system_messages(messages)
    claude = is_claude(model)
    result: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the open tool-result turn
    trailing: list[dict[str, Any]] = []  # images of failed results, after the turn
    for message in transform_messages(rest, model, _normalize_call_id):
        if isinstance(message, ToolResultMessage):
            if results is None:
                results = []
                result.append({"role": "user", "content": results})
            content, images = (
                _split_error_images(message) if claude else (list(message.content), [])
            )
            results.append(
                {
                    "toolResult": {
                        "toolUseId": message.tool_call_id,
                        "content": _result_content(content),
                        "status": "error" if message.is_error else "success",
                    }
                }
            )
            trailing.extend(images)
            continue
        if results is not None:
            results.extend(trailing)
            results, trailing = None, []
        if isinstance(message, UserMessage):
            result.append({"role": "user", "content": _user_content(message)})
        elif isinstance(message, AssistantMessage) and message.content:
            blocks = _assistant_content(message, model)
            if blocks:
                result.append({"role": "assistant", "content": blocks})
    if results is not None:
        results.extend(trailing)
    retention = cache_retention(options)
    caching = retention != "none" and supports_prompt_caching(
        model, option_env(options, "AWS_BEDROCK_FORCE_CACHE") == "1"
    )
    if caching and result and result[-1]["role"] == "user":
        result[-1]["content"].append(_cache_point(retention))
    return prompt, result


# --------------------------------------------------------------------------- tools


def _strict_parameters(tool: Tool, strict_mode: bool) -> tuple[dict[str, Any], bool]:
    """``(inputSchema.json, strict)`` of a tool (``_constrained``)."""
    strict = strict_tool_schema(tool, strict_mode)
    return (tool.parameters, False) if strict is None else (strict, True)


def _tool_choice(choice: Any) -> dict[str, Any] | None:
    if choice is None:
        return None
    if choice in ("auto", "any"):
        return {choice: {}}
    if isinstance(choice, Mapping) and choice.get("type") == "tool":
        return {"tool": {"name": choice.get("name")}}
    raise ValueError(
        f"unknown Bedrock tool_choice {choice!r}; expected 'auto', 'any', 'none' or "
        "{'type': 'tool', 'name': ...}"
    )


def _tool_choice_of(options: StreamOptions) -> Any:
    choice = (options.extra or {}).get("tool_choice")
    return options.tool_choice if choice is None else choice


def sends_preferred_strict_tools(model: Model, context: Context, options: StreamOptions) -> bool:
    """Whether the body (without ``relax_preferred_strict``) sends a tool strict that only
    prefers it: such a request may be sent again without strict tools."""
    tools = get_current_tools(context.messages)
    if not tools or _tool_choice_of(options) == "none":
        return False
    strict_mode = (model.compat or {}).get("supportsStrictMode") is True
    return any(
        prefers_strict_sampling(tool) and _strict_parameters(tool, strict_mode)[1] for tool in tools
    )


def _tool_config(
    model: Model, tools: Sequence[Tool], choice: Any, relax_preferred: bool
) -> dict[str, Any] | None:
    if not tools or choice == "none":
        return None
    strict_mode = (model.compat or {}).get("supportsStrictMode") is True
    specs = []
    for tool in tools:
        if relax_preferred and prefers_strict_sampling(tool):
            schema, strict = tool.parameters, False
        else:
            schema, strict = _strict_parameters(tool, strict_mode)
        spec: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": {"json": schema},
        }
        if strict:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": specs}
    wire_choice = _tool_choice(choice)
    if wire_choice is not None:
        config["toolChoice"] = wire_choice
    return config


# --------------------------------------------------------------------------- the body


def build_bedrock_body(
    model: Model, context: Context, options: StreamOptions, *, relax_preferred_strict: bool = False
) -> dict[str, Any]:
    """The ``converse-stream`` body for ``context`` (already normalized)."""
    extra = options.extra or {}
    prompt, messages = convert_bedrock_messages(context.messages, model, options)
    body: dict[str, Any] = {"messages": messages}
    if prompt:
        system: list[dict[str, Any]] = [{"text": sanitize_surrogates(prompt)}]
        retention = cache_retention(options)
        force = option_env(options, "AWS_BEDROCK_FORCE_CACHE") == "1"
        if retention != "none" and supports_prompt_caching(model, force):
            system.append(_cache_point(retention))
        body["system"] = system
    inference: dict[str, Any] = {}
    max_tokens = options.max_tokens
    if max_tokens is None and is_claude(model):
        max_tokens = model.max_tokens
    if max_tokens is not None:
        inference["maxTokens"] = max_tokens
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    body["inferenceConfig"] = inference
    choice = _tool_choice_of(options)
    if choice is not None and not isinstance(choice, Mapping) and choice not in _TOOL_CHOICES:
        _tool_choice(choice)  # raises, naming the choices
    tool_config = _tool_config(
        model, get_current_tools(context.messages), choice, relax_preferred_strict
    )
    if tool_config is not None:
        body["toolConfig"] = tool_config
    fields = thinking_fields(model, options)
    if fields is not None:
        body["additionalModelRequestFields"] = fields
    if extra.get("request_metadata") is not None:
        body["requestMetadata"] = extra["request_metadata"]
    if options.output_format is not None:
        output = options.output_format
        schema, _ = fit_output_schema(output, strict_mode=True)
        definition: dict[str, Any] = {
            "schema": msgspec.json.encode(schema).decode(),
            "name": output.name,
        }
        if output.description:
            definition["description"] = output.description
        body["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}
        }
    return body
