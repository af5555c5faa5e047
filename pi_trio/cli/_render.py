"""Turning agent events into terminal output.

A renderer is an agent listener (``renderer.event``) plus ``note`` / ``heading`` for the
command's own lines and ``close``. ``PlainRenderer`` writes line-oriented text (used when
stdout is not a terminal or rich is missing); ``RichRenderer`` (``_render_rich``) draws
live tool cards. ``JsonRenderer`` prints each event as one line of the original runtime's
JSON. ``make_renderer`` picks one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, Protocol, TextIO

from ..ai import to_json
from ._text import args_preview, format_duration, message_text, result_preview, stop_line

__all__ = [
    "GuardedOutput",
    "JsonRenderer",
    "PlainRenderer",
    "Renderer",
    "make_renderer",
    "on_output_closed",
    "rich_available",
]


class Renderer(Protocol):
    def event(self, event: Any) -> None: ...
    def note(self, text: str) -> None: ...
    def heading(self, text: str) -> None: ...
    def close(self) -> None: ...


# --------------------------------------------------------------------------- output


class GuardedOutput:
    """A text stream that survives its reader going away (``pi-trio run … | head``) and a
    write that fails (a full disk).

    The first ``BrokenPipeError`` marks the stream ``broken`` (nobody reads any more: the
    command ends quietly); any other ``OSError`` marks it ``broken`` and keeps the error in
    ``failure`` (the command reports it in one line and exits with 1). Either way the
    ``on_broken`` callbacks run (the commands abort their run) and later writes are
    dropped. Other attributes are the wrapped stream's.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.broken = False
        self.failure: OSError | None = None
        self._callbacks: list[Any] = []

    def on_broken(self, callback: Any) -> None:
        self._callbacks.append(callback)

    def _failed(self, error: OSError) -> None:
        if not self.broken:
            self.broken = True
            if not isinstance(error, BrokenPipeError):
                self.failure = error
            for callback in self._callbacks:
                callback()

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self.stream.write(text)
            except OSError as exc:
                self._failed(exc)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.broken:
            try:
                self.stream.flush()
            except OSError as exc:
                self._failed(exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def on_output_closed(out: TextIO, callback: Any) -> None:
    """Call ``callback`` when ``out`` is a ``GuardedOutput`` whose reader went away."""
    if isinstance(out, GuardedOutput):
        out.on_broken(callback)


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- plain


class PlainRenderer:
    """Line-oriented output: streamed text, one line per tool event. Flushes after each
    event so a reader of a pipe sees progress as it happens."""

    def __init__(self, out: TextIO, *, show_user_messages: bool = True) -> None:
        self.out = out
        self.show_user_messages = show_user_messages
        self._mid_line = False
        self._names: dict[str, str] = {}

    def _write(self, text: str) -> None:
        self.out.write(text)
        self._mid_line = not text.endswith("\n")

    def _line(self, text: str) -> None:
        if self._mid_line:
            self.out.write("\n")
        self.out.write(text + "\n")
        self._mid_line = False

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False

    def note(self, text: str) -> None:
        self._line(f"-- {text}")
        self.out.flush()

    def heading(self, text: str) -> None:
        self._line("")
        self._line(f"== {text} ==")
        self.out.flush()

    def close(self) -> None:
        self._end_line()
        self.out.flush()

    def event(self, event: Any) -> None:
        self._handle(event)
        self.out.flush()

    def _handle(self, event: Any) -> None:
        match event.type:
            case "message_start" if getattr(event.message, "role", None) == "user":
                if self.show_user_messages:
                    self._line(f"user: {message_text(event.message)}")
            case "message_update":
                self._stream(event.assistant_message_event)
            case "message_end" if getattr(event.message, "role", None) == "assistant":
                line = stop_line(event.message)
                if line is not None:
                    self._line(line)
                else:
                    self._end_line()
            case "tool_execution_start":
                self._names[event.tool_call_id] = event.tool_name
                self._line(f"[tool {event.tool_name}] started {args_preview(event.args)}")
            case "tool_execution_update":
                self._line(f"[tool {event.tool_name}] {result_preview(event.partial_result)}")
            case "tool_execution_end":
                verb = "failed" if event.is_error else "done"
                took = format_duration(event.duration_ms)
                took = f" in {took}" if took else ""
                self._line(f"[tool {event.tool_name}] {verb}{took}: {result_preview(event.result)}")
            case _:
                pass

    def _stream(self, update: Any) -> None:
        match update.type:
            case "thinking_start":
                self._start_block("thinking: ")
            case "text_start":
                self._start_block("assistant: ")
            case "thinking_delta" | "text_delta":
                self._write(update.delta)
            case "thinking_end" | "text_end":
                self._end_line()
            case _:
                pass

    def _start_block(self, label: str) -> None:
        if self._mid_line:
            self.out.write("\n")
        self._write(label)


# --------------------------------------------------------------------------- json


class JsonRenderer:
    """Every agent event as one JSON line (the original runtime's format) on ``out``;
    notes go to ``err`` so ``out`` stays machine-readable."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def event(self, event: Any) -> None:
        self.out.write(to_json(event).decode() + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.err.write(f"pi-trio: {text}\n")
        self.err.flush()

    def heading(self, text: str) -> None:
        self.note(text)

    def close(self) -> None:
        self.out.flush()


# --------------------------------------------------------------------------- choice


def rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def make_renderer(
    out: TextIO | None = None,
    *,
    style: str = "auto",
    show_user_messages: bool = True,
) -> Renderer:
    """``style``: ``"rich"``, ``"plain"``, or ``"auto"`` (rich when ``out`` is a terminal
    and rich is installed, else plain)."""
    stream = sys.stdout if out is None else out
    if style not in ("auto", "rich", "plain"):
        raise ValueError(f"style must be 'auto', 'rich' or 'plain', got {style!r}")
    use_rich = style == "rich" or (style == "auto" and stream.isatty() and rich_available())
    if use_rich:
        from ._render_rich import RichRenderer

        return RichRenderer.for_stream(stream, show_user_messages=show_user_messages)
    return PlainRenderer(stream, show_user_messages=show_user_messages)
