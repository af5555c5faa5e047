"""The request of the Google Generative AI api, built from a normalized context (sans-IO).

The original's ``buildParams`` (``src/api/google-generative-ai.ts``) with ``convertMessages``,
``convertTools``, ``mapToolChoice`` and the thinking configs of ``src/api/google-shared.ts``.
Provider-native options come from ``options.extra``: ``thinking_enabled``,
``thinking_budget_tokens``, ``thinking_level`` (``MINIMAL``/``LOW``/``MEDIUM``/``HIGH``)
and ``tool_choice`` (``auto``/``none``/``any``; the unified ``options.tool_choice`` is
used when ``extra`` has none). ``options.output_format`` becomes
``responseMimeType: application/json`` with the schema as ``responseJsonSchema``. Tool
declarations and the function-calling mode come from ``_google_tools``. The unified
``reasoning`` of the ``*_simple`` stream functions (Gemini's and Vertex's) becomes these
native options in ``google_simple_options``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

import msgspec

from .._catalog._models import clamp_thinking_level
from .._sanitize import sanitize_surrogates
from .._stream._options import StreamOptions, ThinkingBudgets
from .._transcript._system import (
    collapse_system_messages,
    get_current_tools,
)
from .._transcript._transform import transform_messages
from .._types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ._common import replace_unsafe_id_chars
from ._google_tools import google_calling_mode, google_function_declarations
from ._simple import build_base_options

__all__ = [
    "build_google_body",
    "convert_google_contents",
    "google_disabled_thinking_config",
    "google_simple_options",
    "google_thinking_config",
    "is_valid_thought_signature",
]

SEE_ATTACHED_IMAGE: Final = "(see attached image)"
TOOL_RESULT_IMAGE: Final = "Tool result image:"

_GEMINI3_PRO: Final = re.compile(r"gemini-3(\.\d+)?-pro")
_GEMINI3_FLASH: Final = re.compile(r"gemini-3(\.\d+)?-flash")
_GEMINI_MAJOR: Final = re.compile(r"gemini-(\d+)")
_FLASH_ALIASES: Final = frozenset({"gemini-flash-latest", "gemini-flash-lite-latest"})
_GEMMA4: Final = re.compile(r"gemma-?4")
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]+={0,2}")

# Thinking budgets per level by model family (ids containing the key; first match wins).
_BUDGETS: Final = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
DYNAMIC_BUDGET: Final = -1


# --------------------------------------------------------------------------- model families


def _is_gemini3_pro(model: Model) -> bool:
    return _GEMINI3_PRO.search(model.id) is not None


def _is_gemini3_flash(model: Model) -> bool:
    return _GEMINI3_FLASH.search(model.id) is not None or model.id in _FLASH_ALIASES


def _is_gemma4(model: Model) -> bool:
    return _GEMMA4.search(model.id) is not None


def _uses_call_ids(model: Model) -> bool:
    return model.id.startswith(("claude-", "gpt-oss-"))


def _nested_result_images(model: Model) -> bool:
    """Gemini 3 and later, and non-Gemini models, take images inside a function response."""
    match = _GEMINI_MAJOR.search(model.id)
    return match is None or int(match.group(1)) >= 3


def is_valid_thought_signature(signature: str | None) -> bool:
    return (
        bool(signature)
        and len(signature) % 4 == 0  # type: ignore[arg-type]
        and _BASE64.fullmatch(signature) is not None  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- thinking


def google_disabled_thinking_config(model: Model) -> dict[str, Any]:
    """The explicit "thinking off" config: the lowest level on Gemini 3 / Gemma 4, a zero
    budget elsewhere."""
    if _is_gemini3_pro(model):
        return {"thinkingLevel": "LOW"}
    if _is_gemini3_flash(model) or _is_gemma4(model):
        return {"thinkingLevel": "MINIMAL"}
    return {"thinkingBudget": 0}


def google_thinking_config(
    model: Model, level: str, budgets: ThinkingBudgets | None = None
) -> dict[str, Any]:
    """``thinkingConfig`` for a thinking level (``xhigh``/``max``/``off`` count as high)."""
    if level not in ("minimal", "low", "medium", "high"):
        level = "high"
    config: dict[str, Any] = {"includeThoughts": True}
    if _is_gemini3_pro(model):
        config["thinkingLevel"] = "LOW" if level in ("minimal", "low") else "HIGH"
    elif _is_gemini3_flash(model):
        config["thinkingLevel"] = level.upper()
    elif _is_gemma4(model):
        config["thinkingLevel"] = "MINIMAL" if level in ("minimal", "low") else "HIGH"
    else:
        custom = getattr(budgets, level) if budgets is not None else None
        if custom is not None:
            config["thinkingBudget"] = custom
        else:
            table = next((t for key, t in _BUDGETS if key in model.id), None)
            config["thinkingBudget"] = table[level] if table is not None else DYNAMIC_BUDGET
    return config


def google_simple_options(model: Model, context: Context, options: StreamOptions) -> StreamOptions:
    """The native options for the unified ``reasoning``: a thinking level on Gemini 3 and
    Gemma 4, a token budget elsewhere; without a level, thinking is switched off
    explicitly on reasoning models."""
    base = build_base_options(model, context, options)
    extra: dict[str, Any] = dict(options.extra or {})
    for key in ("thinking_level", "thinking_budget_tokens"):
        extra.pop(key, None)
    if not options.reasoning:
        extra["thinking_enabled"] = False
        return msgspec.structs.replace(base, extra=extra)
    level = clamp_thinking_level(model, options.reasoning)
    config = google_thinking_config(model, level, options.thinking_budgets)
    extra["thinking_enabled"] = True
    if "thinkingLevel" in config:
        extra["thinking_level"] = config["thinkingLevel"]
    else:
        extra["thinking_budget_tokens"] = config["thinkingBudget"]
    return msgspec.structs.replace(base, extra=extra)


def _raw_thinking_config(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    if not model.reasoning:
        return None
    extra = options.extra or {}
    enabled = extra.get("thinking_enabled")
    if enabled:
        config: dict[str, Any] = {"includeThoughts": True}
        if extra.get("thinking_level") is not None:
            config["thinkingLevel"] = extra["thinking_level"]
        elif extra.get("thinking_budget_tokens") is not None:
            config["thinkingBudget"] = extra["thinking_budget_tokens"]
        return config
    if enabled is False:
        return google_disabled_thinking_config(model)
    return None


# --------------------------------------------------------------------------- contents


def _normalize_call_id(tool_call_id: str, model: Model, source: Any) -> str:
    return replace_unsafe_id_chars(tool_call_id)[:64]


def _inline(block: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": sanitize_surrogates(message.content)}]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"text": sanitize_surrogates(block.text)})
        elif isinstance(block, ImageContent):
            parts.append(_inline(block))
    return parts


def _model_parts(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    same_model = message.provider == model.provider and message.model == model.id

    def signature(value: str | None) -> str | None:
        return value if same_model and is_valid_thought_signature(value) else None

    parts: list[dict[str, Any]] = []
    for block in message.content:
        part: dict[str, Any]
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part = {"text": sanitize_surrogates(block.text)}
            sig = signature(block.text_signature)
        elif isinstance(block, ThinkingContent):
            if not block.thinking.strip():
                continue
            if not same_model:
                parts.append({"text": sanitize_surrogates(block.thinking)})
                continue
            part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
            sig = signature(block.thinking_signature)
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
            if _uses_call_ids(model):
                call["id"] = block.id
            part = {"functionCall": call}
            sig = signature(block.thought_signature)
        else:
            continue
        if sig is not None:
            part["thoughtSignature"] = sig
        parts.append(part)
    return parts


def _function_response(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    images = [b for b in message.content if isinstance(b, ImageContent)]
    text = "\n".join(texts)
    if not text and images:
        text = SEE_ATTACHED_IMAGE
    text = sanitize_surrogates(text)
    response: dict[str, Any] = {
        "name": message.tool_name,
        "response": {"error": text} if message.is_error else {"output": text},
    }
    if images and _nested_result_images(model):
        response["parts"] = [_inline(b) for b in images]
    if _uses_call_ids(model):
        response["id"] = message.tool_call_id
    return {"functionResponse": response}


def convert_google_contents(
    messages: Sequence[Message], model: Model
) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction text and ``contents`` of a normalized transcript.

    Consecutive tool results share one user turn of ``functionResponse`` parts; for
    models that cannot nest images in a function response, the images follow that turn in
    a user turn of their own. Every system message folds into the instruction text, later
    ones appended (pi 1.6's ``collapseSystemMessages``)."""
    prompt, rest = collapse_system_messages(messages)
    normalizer = _normalize_call_id if _uses_call_ids(model) else None
    contents: list[dict[str, Any]] = []
    result_turn: list[dict[str, Any]] | None = None  # parts of the open tool-result turn
    late_images: list[dict[str, Any]] = []

    def close_result_turn() -> None:
        nonlocal result_turn
        if late_images:
            contents.append({"role": "user", "parts": [{"text": TOOL_RESULT_IMAGE}, *late_images]})
            late_images.clear()
        result_turn = None

    for message in transform_messages(rest, model, normalizer):
        if isinstance(message, ToolResultMessage):
            if result_turn is None:
                result_turn = []
                contents.append({"role": "user", "parts": result_turn})
            result_turn.append(_function_response(message, model))
            if not _nested_result_images(model):
                late_images.extend(
                    _inline(b) for b in message.content if isinstance(b, ImageContent)
                )
            continue
        close_result_turn()
        if isinstance(message, UserMessage):
            parts = _user_parts(message)
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif isinstance(message, AssistantMessage):
            parts = _model_parts(message, model)
            if parts:
                contents.append({"role": "model", "parts": parts})
    close_result_turn()
    return prompt, contents


# --------------------------------------------------------------------------- the body


def build_google_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The ``streamGenerateContent`` body for ``context`` (already normalized)."""
    messages = context.messages
    prompt, contents = convert_google_contents(messages, model)
    body: dict[str, Any] = {"contents": contents}
    if prompt:
        body["systemInstruction"] = {"parts": [{"text": sanitize_surrogates(prompt)}]}
    tools = get_current_tools(messages)
    if tools:
        body["tools"] = [{"functionDeclarations": google_function_declarations(model, tools)}]
        choice = (options.extra or {}).get("tool_choice")
        if choice is None:
            choice = options.tool_choice
        mode = google_calling_mode(model, tools, choice)
        if mode is not None:
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: dict[str, Any] = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    if options.max_tokens is not None:
        generation["maxOutputTokens"] = options.max_tokens
    if options.output_format is not None:
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = options.output_format.schema
    config = _raw_thinking_config(model, options)
    if config is not None:
        generation["thinkingConfig"] = config
    if generation:
        body["generationConfig"] = generation
    return body
