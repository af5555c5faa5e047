"""``RichRenderer``: streamed text and thinking, and parallel tool calls as live cards.

A ``rich.live.Live`` region at the bottom of the terminal shows what is in flight (the
streaming assistant message and the cards of the running tool batch). Finished pieces are
printed above it and never redrawn. The region is refreshed from the listener (throttled),
never from a background thread, so rendering never races the event stream.
"""

from __future__ import annotations

import time
from typing import Any, TextIO

from rich.columns import Columns
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markdown import Markdown
from rich.panel import Panel
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from ._text import args_preview, format_duration, message_text, result_preview, stop_line

__all__ = ["RichRenderer"]

REFRESH_INTERVAL_S = 1 / 20  # redraw at most 20 times a second; events arrive far faster
CARD_WIDTH = 38  # three cards side by side on a 120-column terminal, stacked when narrower


class _Card:
    __slots__ = ("args", "duration_ms", "is_error", "name", "progress", "result", "started")

    def __init__(self, name: str, args: Any) -> None:
        self.name = name
        self.args = args_preview(args)
        self.progress = ""
        self.result: str | None = None
        self.is_error = False
        self.duration_ms: int | None = None
        self.started = time.monotonic()

    def render(self) -> RenderableType:
        body = Table.grid(padding=(0, 1))
        body.add_column(style="dim", no_wrap=True)
        body.add_column()
        body.add_row("args", self.args)
        if self.result is None:
            elapsed = format_duration((time.monotonic() - self.started) * 1000)
            title: RenderableType = Spinner("dots", text=Text(f" {self.name}", style="bold"))
            if self.progress:
                body.add_row("progress", self.progress)
            subtitle = f"running {elapsed}"
            border = "cyan"
        else:
            mark = "✗" if self.is_error else "✓"
            title = Text(f"{mark} {self.name}", style="bold red" if self.is_error else "bold green")
            body.add_row("error" if self.is_error else "result", self.result)
            subtitle = format_duration(self.duration_ms) or ("stopped" if self.is_error else "done")
            border = "red" if self.is_error else "green"
        return Panel(
            Group(title, body),
            border_style=border,
            subtitle=subtitle,
            subtitle_align="right",
            width=CARD_WIDTH,
        )


class RichRenderer:
    """Rich terminal output; see the module docstring."""

    def __init__(self, console: Console, *, show_user_messages: bool = True) -> None:
        self.console = console
        self.show_user_messages = show_user_messages
        self._live: Live | None = None
        self._message: Any = None
        self._cards: dict[str, _Card] = {}
        self._last_refresh = 0.0

    @classmethod
    def for_stream(cls, stream: TextIO, *, show_user_messages: bool = True) -> RichRenderer:
        return cls(Console(file=stream), show_user_messages=show_user_messages)

    # ------------------------------------------------------------------ lines

    def note(self, text: str) -> None:
        self.console.print(Text(f"· {text}", style="yellow"))

    def heading(self, text: str) -> None:
        self.console.print()
        self.console.rule(Text(text, style="bold magenta"))

    def close(self) -> None:
        self._commit_cards()
        self._stop_live()

    # ------------------------------------------------------------------ events

    def event(self, event: Any) -> None:
        match event.type:
            case "agent_start":
                self._start_live()
            case "message_start":
                role = getattr(event.message, "role", None)
                if role == "assistant":
                    self._message = event.message
                elif role == "user" and self.show_user_messages:
                    self._commit(
                        Text.assemble(("you > ", "bold blue"), message_text(event.message))
                    )
            case "message_update":
                self._message = event.message
                self._refresh()
            case "message_end" if getattr(event.message, "role", None) == "assistant":
                self._message = None
                self._commit(self._render_message(event.message, final=True))
            case "tool_execution_start":
                self._cards[event.tool_call_id] = _Card(event.tool_name, event.args)
                self._refresh(force=True)
            case "tool_execution_update":
                card = self._cards.get(event.tool_call_id)
                if card is not None:
                    card.progress = result_preview(event.partial_result)
                    self._refresh()
            case "tool_execution_end":
                card = self._cards.get(event.tool_call_id)
                if card is not None:
                    card.result = result_preview(event.result)
                    card.is_error = event.is_error
                    card.duration_ms = event.duration_ms
                    self._refresh(force=True)
            case "turn_end":
                self._commit_cards()
            case "agent_end":
                self._commit_cards()
                self._stop_live()
            case _:
                pass

    # ------------------------------------------------------------------ drawing

    def _render_message(self, message: Any, *, final: bool) -> RenderableType:
        parts: list[RenderableType] = []
        for block in message.content:
            if block.type == "thinking" and block.thinking:
                parts.append(Text(block.thinking, style="dim italic"))
            elif block.type == "text" and block.text:
                parts.append(Markdown(block.text) if final else Text(block.text))
            elif block.type == "toolCall" and not final:
                parts.append(Text(f"→ {block.name}", style="cyan"))
        line = stop_line(message) if final else None
        if line is not None:
            parts.append(Text(line, style="bold yellow" if "aborted" in line else "bold red"))
        return Group(*parts)

    def _live_view(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self._message is not None:
            parts.append(self._render_message(self._message, final=False))
        if self._cards:
            parts.append(Columns([card.render() for card in self._cards.values()]))
        return Group(*parts)

    def _start_live(self) -> None:
        if self._live is None:
            self._live = Live(
                console=self.console,
                auto_refresh=False,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def _stop_live(self) -> None:
        live = self._live
        if live is not None:
            self._live = None
            live.update(Group(), refresh=True)
            live.stop()

    def _refresh(self, *, force: bool = False) -> None:
        live = self._live
        if live is None:
            return
        now = time.monotonic()
        if force or now - self._last_refresh >= REFRESH_INTERVAL_S:
            self._last_refresh = now
            live.update(self._live_view(), refresh=True)

    def _commit(self, renderable: RenderableType) -> None:
        self.console.print(renderable)
        self._refresh(force=True)

    def _commit_cards(self) -> None:
        if self._cards:
            cards = [card.render() for card in self._cards.values()]
            self._cards = {}
            self._commit(Columns(cards))
