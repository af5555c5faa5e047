"""The run's message list, and the model's view of it kept up to date incrementally.

A run's transcript grows by appending. Converting the whole transcript for every request
(``default_convert_to_llm`` keeps the messages a model understands) would cost time
proportional to the conversation on every turn, so a long conversation would slow down
turn after turn. ``Transcript`` is the run's message list: a ``list`` that counts every
change other than appending (``edits``: an item replaced, inserted or removed, a sort…),
whoever makes it, hooks included. ``LlmView`` converts only what was appended since the
last request, and starts over whenever the list was edited or replaced.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex

from ._config import default_convert_to_llm

__all__ = ["LlmView", "Transcript"]


class Transcript(list[Any]):
    """A message list that counts its edits (anything but appending and extending)."""

    __slots__ = ("edits",)

    def __init__(self, messages: Iterable[Any] = ()) -> None:
        super().__init__(messages)
        self.edits = 0

    def replace_last(self, message: Any) -> None:
        """The runtime's swap of a streamed partial for its final message: the partial
        was never part of a view (it entered after the request was converted)."""
        super().__setitem__(-1, message)

    def __setitem__(self, index: Any, value: Any) -> None:
        self.edits += 1
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self.edits += 1
        super().__delitem__(index)

    def __iadd__(self, other: Iterable[Any]) -> Transcript:  # type: ignore[misc]
        self.extend(other)
        return self

    def __imul__(self, count: SupportsIndex) -> Transcript:
        self.edits += 1
        return super().__imul__(count)

    def insert(self, index: SupportsIndex, value: Any) -> None:
        self.edits += 1
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1) -> Any:
        self.edits += 1
        return super().pop(index)

    def remove(self, value: Any) -> None:
        self.edits += 1
        super().remove(value)

    def clear(self) -> None:
        self.edits += 1
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self.edits += 1
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self.edits += 1
        super().reverse()


class LlmView:
    """``default_convert_to_llm`` of a run's messages, converting only what was appended
    since the last call when the messages are a ``Transcript`` that was not edited.
    Returns a new list each time (a stream function may keep it)."""

    __slots__ = ("_converted", "_edits", "_source", "_upto")

    def __init__(self) -> None:
        self._source: Transcript | None = None
        self._edits = 0
        self._upto = 0
        self._converted: list[Any] = []

    def convert(self, messages: list[Any]) -> list[Any]:
        if not isinstance(messages, Transcript):
            return default_convert_to_llm(messages)
        if (
            messages is self._source
            and messages.edits == self._edits
            and len(messages) >= self._upto
        ):
            self._converted.extend(default_convert_to_llm(messages[self._upto :]))
        else:
            self._source = messages
            self._edits = messages.edits
            self._converted = default_convert_to_llm(messages)
        self._upto = len(messages)
        return list(self._converted)
