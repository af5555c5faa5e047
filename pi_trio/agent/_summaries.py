"""What the summarizer is asked and what a summary becomes: the prompts, the conversation
as the text the summarizer reads, and the user message that holds a summary in a
compacted transcript (``summary_message``; ``is_summary_message`` and ``leading_summary``
find it again, also in a transcript read back from JSON).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from ..ai import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

__all__ = [
    "NO_EARLIER_HISTORY",
    "SPLIT_TURN_SEPARATOR",
    "SUMMARIZER_SYSTEM_PROMPT",
    "SUMMARY_PREFIX",
    "SUMMARY_PROMPT",
    "SUMMARY_SUFFIX",
    "TOOL_RESULT_SUMMARY_CHARS",
    "TURN_PREFIX_PROMPT",
    "UPDATE_PROMPT",
    "is_summary_message",
    "leading_summary",
    "previous_summary",
    "serialize_conversation",
    "summary_message",
    "summary_prompt",
    "summary_text",
]

# A tool result is cut to this many characters in the text the summarizer reads: the
# summary needs what happened, not every byte a tool returned.
TOOL_RESULT_SUMMARY_CHARS: Final = 2000
SUMMARY_PREFIX: Final = (
    "Earlier turns of this conversation were condensed into the summary below; "
    "continue from it.\n\n<summary>\n"
)
SUMMARY_SUFFIX: Final = "\n</summary>"

SUMMARIZER_SYSTEM_PROMPT: Final = (
    "You condense conversations between a user and an AI assistant into checkpoint "
    "summaries. Another model will continue the work from your summary alone. Write only "
    "the summary: do not answer questions from the conversation and do not continue it."
)

_SECTIONS: Final = """Structure it in these sections:

## Goal
What the user wants done (several goals if the conversation moved between tasks).

## Constraints and preferences
Requirements and preferences the user stated, or "(none)".

## Progress
- Done: what was completed.
- In progress: what was being worked on.
- Blocked: what stands in the way, if anything.

## Decisions
Each decision taken, with its reason in a few words.

## Next steps
A numbered list of what comes next.

## Context to keep
Names, paths, values, error texts and other details the work depends on, or "(none)".

Be brief in every section, but copy identifiers, file paths and error messages exactly."""

SUMMARY_PROMPT: Final = (
    "The conversation above, between <conversation> tags, is to be condensed into a "
    "checkpoint summary.\n\n" + _SECTIONS
)

UPDATE_PROMPT: Final = (
    "The conversation above, between <conversation> tags, continues the work described "
    "by the summary between <previous-summary> tags. Write one new summary that keeps "
    "everything of the previous one that still matters and adds what happened since: "
    "move finished work to Done, update the next steps.\n\n" + _SECTIONS
)

TURN_PREFIX_PROMPT: Final = (
    "The messages above, between <conversation> tags, are the beginning of a turn that "
    "is still going on; its later messages are kept as they are and follow your text. "
    "Summarize only what is shown: the request that started the turn, what was done so "
    "far and what the later messages need to be understood. Use the sections "
    "'## Request', '## Done so far' and '## Needed to continue'."
)

SPLIT_TURN_SEPARATOR: Final = "\n\n---\n\nThe turn in progress, so far:\n\n"
NO_EARLIER_HISTORY: Final = "(no earlier conversation)"

# --------------------------------------------------------------------------- summaries


def summary_text(summary: str) -> str:
    """The text of the message that holds ``summary``."""
    return SUMMARY_PREFIX + summary + SUMMARY_SUFFIX


def summary_message(summary: str, timestamp: int) -> UserMessage:
    """The user message a compacted transcript keeps its summary in."""
    return UserMessage(content=[TextContent(text=summary_text(summary))], timestamp=timestamp)


def previous_summary(message: Any) -> str | None:
    """The summary ``message`` holds, or ``None`` when it is no summary message."""
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return None
    if len(message.content) != 1 or not isinstance(message.content[0], TextContent):
        return None
    text = message.content[0].text
    if text.startswith(SUMMARY_PREFIX) and text.endswith(SUMMARY_SUFFIX):
        return text[len(SUMMARY_PREFIX) : len(text) - len(SUMMARY_SUFFIX)]
    return None


def is_summary_message(message: Any) -> bool:
    """Whether ``message`` is a compaction summary (a user message holding one)."""
    return previous_summary(message) is not None


def leading_summary(messages: Sequence[Any]) -> tuple[int, UserMessage] | None:
    """The summary a compacted transcript starts with (after its system messages), with
    its index."""
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            continue
        if is_summary_message(message):
            return index, message
        return None
    return None


# --------------------------------------------------------------------------- the request


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content or () if isinstance(block, TextContent))


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[{len(text) - limit} more characters left out]"


def serialize_conversation(messages: Sequence[Any]) -> str:
    """The conversation as plain text for the summarizer, so that it reads it rather
    than continues it. Thinking is left out (it is the provider's own, and its
    signatures belong to the model that wrote it); tool results are cut to
    ``TOOL_RESULT_SUMMARY_CHARS`` characters."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = _text(message.content)
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            text = _text(message.content)
            if text:
                parts.append(f"[Assistant]: {text}")
            calls = [
                f"{block.name}({msgspec.json.encode(block.arguments).decode()})"
                for block in message.content
                if isinstance(block, ToolCall)
            ]
            if calls:
                parts.append(f"[Assistant tool calls]: {'; '.join(calls)}")
        elif isinstance(message, ToolResultMessage):
            text = _text(message.content)
            if text:
                label = "Tool error" if message.is_error else "Tool result"
                parts.append(
                    f"[{label} {message.tool_name}]: {_clip(text, TOOL_RESULT_SUMMARY_CHARS)}"
                )
    return "\n\n".join(parts)


def summary_prompt(
    messages: Sequence[Any], instructions: str, previous_summary: str | None = None
) -> str:
    """The user message of one summary request: the conversation, the previous summary
    (when updating one) and the instructions."""
    text = f"<conversation>\n{serialize_conversation(messages)}\n</conversation>\n\n"
    if previous_summary is not None:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    return text + instructions
