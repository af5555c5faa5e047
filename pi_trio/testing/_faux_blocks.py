"""Builders for scripted faux responses: blocks and assistant messages."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any, get_args

from pi_trio.ai import AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, Usage
from pi_trio.ai.deferred import DeferredHandle
from pi_trio.ai.providers import now_ms

__all__ = [
    "FAUX_API",
    "FAUX_MODEL_ID",
    "FAUX_PROVIDER",
    "faux_assistant_message",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "random_id",
]

FAUX_API = "faux"
FAUX_PROVIDER = "faux"
FAUX_MODEL_ID = "faux-1"

_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))

AssistantBlock = TextContent | ThinkingContent | ToolCall


def _base36(number: int) -> str:
    digits: list[str] = []
    while True:
        number, digit = divmod(number, 36)
        digits.append(_DIGITS[digit])
        if not number:
            return "".join(reversed(digits))


def random_id(prefix: str) -> str:
    """``<prefix>:<unix ms>:<random base36>``, unique per call."""
    return f"{prefix}:{now_ms()}:{_base36(secrets.randbits(56))}"


def _require_str(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {value!r}")


def faux_text(text: str) -> TextContent:
    """A text block."""
    _require_str(text, "faux_text(text)")
    return TextContent(text=text)


def faux_thinking(thinking: str) -> ThinkingContent:
    """A thinking block without a signature."""
    _require_str(thinking, "faux_thinking(thinking)")
    return ThinkingContent(thinking=thinking)


def faux_tool_call(name: str, arguments: dict[str, Any], *, id: str | None = None) -> ToolCall:
    """A tool call; ``id`` defaults to a fresh ``tool:<ms>:<random>``."""
    _require_str(name, "faux_tool_call(name)")
    if not isinstance(arguments, dict):
        raise TypeError(
            f"faux_tool_call({name!r}, arguments) needs the arguments as a dict, got {arguments!r}"
        )
    if id is not None:
        _require_str(id, "faux_tool_call(id=)")
    return ToolCall(id=random_id("tool") if id is None else id, name=name, arguments=arguments)


def _content(content: str | AssistantBlock | Sequence[AssistantBlock]) -> list[AssistantBlock]:
    if isinstance(content, str):
        return [TextContent(text=content)]
    if isinstance(content, (TextContent, ThinkingContent, ToolCall)):
        return [content]
    if isinstance(content, Sequence):
        blocks: list[AssistantBlock] = []
        for block in content:
            if not isinstance(block, (TextContent, ThinkingContent, ToolCall)):
                raise TypeError(
                    f"assistant content holds text, thinking and tool-call blocks "
                    f"(faux_text, faux_thinking, faux_tool_call), got {block!r}"
                )
            blocks.append(block)
        return blocks
    raise TypeError(
        f"faux_assistant_message(content) takes a str, one block or a list of blocks, "
        f"got {content!r}"
    )


def faux_assistant_message(
    content: str | AssistantBlock | Sequence[AssistantBlock],
    *,
    stop_reason: StopReason = "stop",
    deferred: DeferredHandle | None = None,
    error_message: str | None = None,
    response_id: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    """A scripted response. ``content`` is a str (one text block), a block or a list of
    blocks. ``api``/``provider``/``model`` are placeholders (``faux``/``faux``/``faux-1``)
    that the provider rewrites; usage is zero (the provider estimates it)."""
    if stop_reason not in _STOP_REASONS:
        raise ValueError(f"stop_reason must be one of {sorted(_STOP_REASONS)}, got {stop_reason!r}")
    return AssistantMessage(
        content=_content(content),
        api=FAUX_API,
        provider=FAUX_PROVIDER,
        model=FAUX_MODEL_ID,
        usage=Usage(),
        stop_reason=stop_reason,
        deferred=deferred,
        error_message=error_message,
        response_id=response_id,
        timestamp=now_ms() if timestamp is None else timestamp,
    )
