"""Sans-IO parts of the faux provider: the prompt text its usage estimate counts, token
estimates and token-size chunking (the estimate itself, kept incremental, is
``_faux_prompt``).

Lengths are counted in UTF-16 code units, as the original runtime's string lengths are, so
token estimates match it for text outside the Basic Multilingual Plane too (one emoji is
two units). Chunking slices Python characters: a chunk never splits a character.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from pi_trio.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_trio.ai.transcript import (
    create_initial_system_message,
    get_system_message_text,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "SEPARATOR",
    "assistant_text",
    "common_prefix_units",
    "compact_json",
    "estimate_tokens",
    "head_block",
    "message_block",
    "serialize_prompt",
    "split_by_token_size",
    "utf16_len",
]

CHARS_PER_TOKEN = 4

SEPARATOR = "\n\n"  # between two messages' blocks in the prompt


def utf16_len(text: str) -> int:
    """The length of ``text`` in UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def estimate_tokens(text: str) -> int:
    """``ceil(len(text) / 4)`` with ``len`` in UTF-16 code units."""
    return -(-utf16_len(text) // CHARS_PER_TOKEN)


def compact_json(value: Any) -> str:
    """Compact JSON as the original runtime writes it (no spaces, non-ASCII kept)."""
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    elif isinstance(value, list):
        value = [msgspec.to_builtins(v) if isinstance(v, msgspec.Struct) else v for v in value]
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------- rendering


def _user_content_text(content: str | Sequence[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_user_block_text(block) for block in content)


def _user_block_text(block: TextContent | ImageContent) -> str:
    if isinstance(block, TextContent):
        return block.text
    return f"[image:{block.mime_type}:{utf16_len(block.data)}]"


def assistant_text(content: Iterable[TextContent | ThinkingContent | ToolCall]) -> str:
    """Assistant blocks as the estimate sees them: text, thinking, ``<name>:<json args>``."""
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.thinking)
        else:
            parts.append(f"{block.name}:{compact_json(block.arguments)}")
    return "\n".join(parts)


def _system_update_text(message: SystemMessage) -> str:
    parts = [get_system_message_text(message)]
    parts += [f"tool-:{compact_json(ref)}" for ref in message.tools_removed or ()]
    parts += [f"tool+:{compact_json(tool)}" for tool in message.tools_added or ()]
    return "\n".join(part for part in parts if part)


def _message_text(message: object) -> str:
    if isinstance(message, UserMessage):
        return _user_content_text(message.content)
    if isinstance(message, AssistantMessage):
        return assistant_text(message.content)
    if isinstance(message, ToolResultMessage):
        return "\n".join(
            [message.tool_name, *(_user_block_text(block) for block in message.content)]
        )
    if isinstance(message, SystemMessage):
        return _system_update_text(message)
    raise TypeError(
        f"cannot estimate the tokens of {message!r}: a context holds SystemMessage, "
        "UserMessage, AssistantMessage and ToolResultMessage objects"
    )


def message_block(message: Message) -> str:
    """One message as the prompt shows it: ``<role>:<text>``."""
    return f"{message.role}:{_message_text(message)}"


def head_block(context: Context) -> str | None:
    """The block of the system prompt and tools given beside the messages (the shorthand
    ``normalize_context`` folds into a leading system message), or ``None``."""
    initial = create_initial_system_message(context.system_prompt, context.tools)
    return None if initial is None else message_block(initial)


def serialize_prompt(context: Context) -> str:
    """The prompt text the estimate counts: one ``<role>:<text>`` block per message
    (a system message as its text plus one ``tool-:<json>`` / ``tool+:<json>`` line per
    declared change), joined by a blank line, as pi-ai 1.6's faux provider counts it.
    ``PromptMeasure`` (``_faux_prompt``) measures the same text without rendering it
    whole on every request."""
    head = head_block(context)
    blocks = [message_block(message) for message in context.messages]
    return SEPARATOR.join(blocks if head is None else [head, *blocks])


# --------------------------------------------------------------------------- usage


def _common_prefix_chars(a: str, b: str) -> int:
    high = min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    low = 0  # invariant: a[:low] == b[:low] and a[:high + 1] != b[:high + 1]
    high -= 1
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _high_surrogate(char: str) -> int | None:
    code = ord(char)
    return 0xD800 + ((code - 0x10000) >> 10) if code > 0xFFFF else None


def common_prefix_units(a: str, b: str) -> int:
    """The length, in UTF-16 code units, of the longest common prefix of ``a`` and ``b``
    (two different astral characters with the same high surrogate share one unit)."""
    chars = _common_prefix_chars(a, b)
    units = utf16_len(a[:chars])
    if chars < len(a) and chars < len(b):
        high = _high_surrogate(a[chars])
        if high is not None and high == _high_surrogate(b[chars]):
            units += 1
    return units


# --------------------------------------------------------------------------- chunking


def split_by_token_size(
    text: str, min_tokens: int, max_tokens: int, rng: random.Random
) -> list[str]:
    """Cut ``text`` into chunks of ``4 * n`` characters, ``n`` drawn uniformly from
    ``[min_tokens, max_tokens]`` for every chunk; the empty string is one empty chunk."""
    if not text:
        return [""]
    span = max_tokens - min_tokens + 1
    chunks: list[str] = []
    index = 0
    while index < len(text):
        size = max(1, (min_tokens + int(rng.random() * span)) * CHARS_PER_TOKEN)
        chunks.append(text[index : index + size])
        index += size
    return chunks
