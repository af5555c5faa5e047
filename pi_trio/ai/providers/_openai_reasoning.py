"""Chat Completions reasoning parameters per ``compat.thinking_format`` (the original's
``buildParams`` and ``streamSimple`` in ``src/api/openai-completions.ts``): where the
requested effort goes, how the model's ``thinking_level_map`` renames it, and what an
explicit "off" looks like."""

from __future__ import annotations

from typing import Any

from .._types import Model
from ._openai_compat import CompletionsCompat

__all__ = ["apply_reasoning"]


def _mapped(model: Model, level: str | None) -> Any:
    """The model's native value for ``level`` (``"off"`` when ``None``): a string, ``None``
    when the level is unsupported, or ``...`` when the model has no mapping for it."""
    level_map = model.thinking_level_map or {}
    key = level or "off"
    return level_map.get(key, ...)


def _template_values(
    model: Model, effort: str | None, values: dict[str, Any], budget: int | None
) -> dict[str, Any] | None:
    resolved: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            resolved[key] = value
            continue
        if not effort and value.get("omitWhenOff"):
            continue
        var = value.get("$var")
        if var == "thinking.enabled":
            resolved[key] = bool(effort)
        elif var == "thinking.budget":
            if budget is not None:
                resolved[key] = budget
        else:
            mapped = _mapped(model, effort)
            result = effort if mapped is ... else mapped if isinstance(mapped, str) else None
            if result is not None:
                resolved[key] = result
    return resolved or None


def apply_reasoning(
    body: dict[str, Any],
    model: Model,
    compat: CompletionsCompat,
    effort: str | None,
    budget: int | None,
) -> None:
    """Add the reasoning fields for ``effort`` (``None``: thinking off) to ``body``;
    ``budget`` is the clamped thinking-token budget for templates that name one."""
    fmt = compat.thinking_format

    def mapped_effort() -> Any:
        value = _mapped(model, effort)
        return effort if value is ... or value is None else value

    off = _mapped(model, None)
    if fmt == "zai":
        body["thinking"] = (
            {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        )
        if effort and compat.supports_reasoning_effort:
            value = _mapped(model, effort)
            value = effort if value is ... else value
            if isinstance(value, str):
                body["reasoning_effort"] = value
    elif fmt == "qwen":
        body["enable_thinking"] = bool(effort)
        if effort and compat.supports_reasoning_effort:
            body["reasoning_effort"] = mapped_effort()
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "chat-template":
        values = _template_values(model, effort, compat.chat_template_kwargs or {}, budget)
        if values:
            body["chat_template_kwargs"] = values
    elif fmt == "deepseek":
        if effort:
            body["thinking"] = {"type": "enabled"}
        elif off is not None:
            body["thinking"] = {"type": "disabled"}
        if effort and compat.supports_reasoning_effort:
            body["reasoning_effort"] = mapped_effort()
    elif fmt == "openrouter":
        if effort:
            body["reasoning"] = {"effort": mapped_effort()}
        elif off is not None:
            body["reasoning"] = {"effort": "none" if off is ... else off}
    elif fmt == "ant-ling":
        if effort and isinstance(value := _mapped(model, effort), str):
            body["reasoning"] = {"effort": value}
    elif fmt == "together":
        body["reasoning"] = {"enabled": bool(effort)}
        if effort and compat.supports_reasoning_effort:
            body["reasoning_effort"] = mapped_effort()
    elif fmt == "string-thinking":
        if effort:
            body["thinking"] = mapped_effort()
        elif off is not None:
            body["thinking"] = "none" if off is ... else off
    elif compat.supports_reasoning_effort:
        if effort:
            body["reasoning_effort"] = mapped_effort()
        elif isinstance(off, str):
            body["reasoning_effort"] = off
