"""The short texts the renderers show: argument and result previews, durations, a
message's text, the usage line and the stop line of a failed response."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "args_preview",
    "format_duration",
    "message_text",
    "result_preview",
    "stop_line",
    "usage_summary",
]

ARGS_PREVIEW_CHARS = 80
RESULT_PREVIEW_CHARS = 100


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def args_preview(args: Any, limit: int = ARGS_PREVIEW_CHARS) -> str:
    """Tool arguments as compact JSON, clipped to ``limit`` characters."""
    try:
        text = msgspec.json.encode(args).decode()
    except (TypeError, msgspec.EncodeError):
        text = repr(args)
    return _clip(text, limit)


def result_preview(result: Any, limit: int = RESULT_PREVIEW_CHARS) -> str:
    """The text of a tool result (or partial result), clipped to ``limit`` characters."""
    parts = [block.text for block in getattr(result, "content", None) or () if block.type == "text"]
    images = sum(1 for block in getattr(result, "content", None) or () if block.type == "image")
    text = " ".join(parts) or (f"[{images} image(s)]" if images else "")
    return _clip(text, limit)


def format_duration(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if block.type == "text")


def usage_summary(messages: list[Any]) -> str:
    """Tokens and cost of the assistant messages in ``messages``, one line."""
    assistants = [m for m in messages if getattr(m, "role", None) == "assistant"]
    tokens_in = sum(m.usage.input + m.usage.cache_read for m in assistants)
    tokens_out = sum(m.usage.output for m in assistants)
    cost = sum(m.usage.cost.total for m in assistants)
    requests = len(assistants)
    return (
        f"{requests} request{'s' if requests != 1 else ''}, {tokens_in} tokens in, "
        f"{tokens_out} out, ${cost:.4f}"
    )


def stop_line(message: Any) -> str | None:
    """``[aborted] …`` / ``[error] …`` for a failed assistant message, else ``None``."""
    reason = getattr(message, "stop_reason", None)
    if reason in ("aborted", "error"):
        return f"[{reason}] {message.error_message or ''}".rstrip()
    return None
