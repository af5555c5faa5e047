"""The faux provider's usage estimate, measured incrementally.

The estimate counts the prompt text ``serialize_prompt`` writes (one block per message,
joined by a blank line) and, within a session, the prefix that text shares with the
session's previous prompt. Rendering the whole transcript on every request made a long
conversation quadratic in the test model (3.8 ms per request at 2 000 messages). A
``PromptMeasure`` keeps what it rendered for each conversation: a request renders only
the messages that are not, position by position, the very objects rendered last time
(compared by identity, so a message replaced, inserted or removed anywhere in the list is
rendered anew and everything after it too), and compares a session's two prompts block
by block, reading characters only from the first block that may differ. The numbers are
those of rendering and comparing the whole text.

A message is rendered when a request first holds it at its position: a message object
changed in place afterwards (its content replaced, a block's text edited) keeps the
rendering it had. Put a changed message into the list as a new object
(``messages[i] = msgspec.structs.replace(old, content=...)``) and it is measured anew.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from pi_trio.ai import Context, Usage

from ._faux_usage import (
    CHARS_PER_TOKEN,
    SEPARATOR,
    common_prefix_units,
    estimate_tokens,
    head_block,
    message_block,
    utf16_len,
)

__all__ = ["KEPT_CONVERSATIONS", "PromptMeasure", "Rendering", "same_objects"]

SEPARATOR_UNITS = utf16_len(SEPARATOR)
# Renderings kept for reuse, one per conversation (keyed by its first message): as many
# conversations as a test or benchmark usually drives through one provider at once. A
# conversation pushed out costs one full rendering on its next request, nothing more.
KEPT_CONVERSATIONS = 256


def same_objects(old: Sequence[Any], new: Sequence[Any]) -> int:
    """How many leading items of ``old`` and ``new`` are the same objects."""
    if not any(map(operator.is_not, old, new)):  # C speed: about 10 ns an item
        return min(len(old), len(new))
    return next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a is not b)


class Rendering:
    """One request's prompt, block by block: the head (the system prompt and tools given
    beside the messages, or ``None``), the messages as the request held them, each
    message's block, and ``ends[i]``, the UTF-16 length of the first ``i`` blocks
    without separators. Never changed once made: a session keeps it as its previous
    prompt."""

    __slots__ = ("blocks", "ends", "head", "head_units", "messages")

    def __init__(
        self,
        head: str | None,
        messages: list[Any],
        blocks: list[str],
        ends: list[int],
    ) -> None:
        self.head = head
        self.head_units = 0 if head is None else utf16_len(head)
        self.messages = messages
        self.blocks = blocks
        self.ends = ends

    @classmethod
    def of(cls, context: Context, base: Rendering | None) -> tuple[Rendering, int]:
        """The rendering of ``context``, reusing the blocks of ``base``'s leading messages
        that ``context`` still holds; also how many messages were reused."""
        messages = list(context.messages)
        kept = 0 if base is None else same_objects(base.messages, messages)
        if kept:
            assert base is not None
            blocks = base.blocks[:kept]
            ends = base.ends[: kept + 1]
        else:
            blocks, ends = [], [0]
        total = ends[-1]
        for message in messages[kept:]:
            block = message_block(message)
            blocks.append(block)
            total += utf16_len(block)
            ends.append(total)
        return cls(head_block(context), messages, blocks, ends), kept

    @property
    def units(self) -> int:
        """The prompt's length in UTF-16 code units."""
        count = len(self.blocks) + (self.head is not None)
        return self.head_units + self.ends[-1] + SEPARATOR_UNITS * max(0, count - 1)

    def text(self) -> str:
        """The whole prompt (what ``serialize_prompt`` returns for the context)."""
        return SEPARATOR.join(self.blocks if self.head is None else [self.head, *self.blocks])

    def _rest(self, start: int) -> str:
        """The prompt after the head and the first ``start`` messages' blocks (both
        non-empty together): the separator and the remaining blocks, or ``""``."""
        rest = self.blocks[start:]
        return SEPARATOR + SEPARATOR.join(rest) if rest else ""

    def shared_units(self, previous: Rendering, same: int) -> int:
        """The UTF-16 length of the common prefix of ``previous``'s prompt and this one,
        given that their first ``same`` messages are the same objects."""
        lead = same + (self.head is not None)
        if previous.head != self.head or lead == 0:
            return common_prefix_units(previous.text(), self.text())
        prefix = self.head_units + self.ends[same] + SEPARATOR_UNITS * (lead - 1)
        before = previous._rest(same)
        if not before or same == len(self.blocks):
            return prefix  # one prompt is the other's start: the shared prefix is all of it
        return prefix + common_prefix_units(before, self._rest(same))


class PromptMeasure:
    """The usage estimate of one provider instance: the renderings it keeps for reuse
    and each session's previous prompt (the simulated prompt cache)."""

    __slots__ = ("_recent", "_sessions")

    def __init__(self) -> None:
        self._recent: OrderedDict[int | None, Rendering] = OrderedDict()
        self._sessions: dict[str, Rendering] = {}

    def usage(
        self,
        context: Context,
        output_text: str,
        *,
        session_id: str | None,
        cache_retention: str | None,
    ) -> Usage:
        """Usage of one faux response. Without a session id (or with retention
        ``"none"``) the whole prompt is input. With one, the first request of the session
        writes the prompt to the simulated cache; later ones read the prefix they share
        with the previous prompt and write the rest. Cost is always zero."""
        messages = context.messages
        # The first message's identity names the conversation; the rendering keeps that
        # message alive, so its id is not reused while the entry exists.
        key = id(messages[0]) if messages else None
        base = self._recent.get(key)
        current, kept = Rendering.of(context, base)
        self._recent[key] = current
        self._recent.move_to_end(key)
        if len(self._recent) > KEPT_CONVERSATIONS:
            self._recent.popitem(last=False)

        units = current.units
        prompt_tokens = -(-units // CHARS_PER_TOKEN)
        output = estimate_tokens(output_text)
        input_tokens = prompt_tokens
        cache_read = cache_write = 0
        if session_id and cache_retention != "none":
            previous = self._sessions.get(session_id)
            if previous is not None and (previous.blocks or previous.head is not None):
                same = kept if previous is base else same_objects(previous.messages, messages)
                shared = current.shared_units(previous, same)
                cache_read = -(-shared // CHARS_PER_TOKEN)
                cache_write = -(-(units - shared) // CHARS_PER_TOKEN)
                input_tokens = max(0, prompt_tokens - cache_read)
            else:
                cache_write = prompt_tokens
            self._sessions[session_id] = current
        return Usage(
            input=input_tokens,
            output=output,
            cache_read=cache_read,
            cache_write=cache_write,
            total_tokens=input_tokens + output + cache_read + cache_write,
        )
