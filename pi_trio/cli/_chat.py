"""``pi-trio chat``: an interactive loop; typing while the agent works steers it.

One task reads lines (stdin is read in a worker thread with ``os.read``, which holds no
buffer lock, so an abandoned read never blocks interpreter exit). A line typed while the
agent is idle becomes the next prompt; a line typed while it works on one is queued with
``agent.steer`` and reaches the model at its next turn. Steering that arrives after the
run's last turn is delivered by continuing the run.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Awaitable, Callable
from typing import Final, TextIO

import anyio
from anyio.abc import ObjectSendStream

from ..agent import Agent
from ._render import Renderer, make_renderer
from ._run import EXIT_USAGE, prepare_agent
from ._signals import EXIT_INTERRUPTED, Interrupts, run_interruptible

__all__ = ["EXIT_COMMANDS", "LineSource", "chat_command", "chat_loop", "stdin_lines"]

LineSource = Callable[[], Awaitable[str | None]]
"""``await next_line()`` → the next line without its newline, or ``None`` at end of input."""

EXIT_COMMANDS: Final = frozenset({"/exit", "/quit"})
READ_CHUNK: Final = 4096

HELP = (
    "chat: Enter sends; typing while the agent works steers it; "
    "Ctrl-C aborts a run; Ctrl-C when idle, Ctrl-D or /exit quits."
)


def stdin_lines(fd: int = 0) -> LineSource:
    """Lines from file descriptor ``fd``, each read in a worker thread."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending: list[str] = []
    buffer = [""]
    eof = [False]

    async def next_line() -> str | None:
        while not pending:
            if eof[0]:
                return None
            chunk = await anyio.to_thread.run_sync(os.read, fd, READ_CHUNK, abandon_on_cancel=True)
            text = buffer[0] + decoder.decode(chunk, final=not chunk)
            if not chunk:
                eof[0] = True
                if text:
                    pending.append(text)
                buffer[0] = ""
                continue
            *lines, buffer[0] = text.split("\n")
            pending.extend(line.rstrip("\r") for line in lines)
        return pending.pop(0)

    return next_line


class _Turn:
    """Whether a prompt has been handed to the main loop and is not finished yet."""

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy = False


async def _read_lines(
    agent: Agent,
    next_line: LineSource,
    prompts: ObjectSendStream[str],
    renderer: Renderer,
    turn: _Turn,
) -> None:
    async with prompts:
        while True:
            line = await next_line()
            if line is None:
                return
            text = line.strip()
            if not text:
                continue
            if text in EXIT_COMMANDS:
                return
            if turn.busy:
                agent.steer(text)
                renderer.note(f"steering queued: {text!r}")
            else:
                turn.busy = True
                await prompts.send(text)


async def chat_loop(
    agent: Agent,
    renderer: Renderer,
    next_line: LineSource,
    interrupts: Interrupts,
) -> int:
    """Prompt ``agent`` with each idle line until the input ends; returns the exit code."""
    interrupts.attach(agent)
    send, receive = anyio.create_memory_object_stream[str](0)  # hand-off, no backlog
    turn = _Turn()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_lines, agent, next_line, send, renderer, turn)
        async with receive:
            async for text in receive:
                await agent.prompt(text)
                while not interrupts.aborted and agent.has_queued_messages():
                    await agent.continue_()
                if interrupts.aborted:
                    kept = len(agent.peek_queued_messages())
                    if kept:
                        renderer.note(f"{kept} queued message(s) kept for your next prompt")
                    interrupts.aborted = False
                interrupts.run_finished()
                turn.busy = False
        group.cancel_scope.cancel()
    return 0


async def chat_command(
    *,
    model: str,
    out: TextIO,
    err: TextIO,
    thinking: str | None = None,
    system_prompt: str | None = None,
    style: str = "auto",
    next_line: LineSource | None = None,
    handle_signals: bool = True,
) -> int:
    renderer = make_renderer(out, style=style, show_user_messages=False)
    agent = prepare_agent(
        model, thinking=thinking, system_prompt=system_prompt, renderer=renderer, out=out, err=err
    )
    if agent is None:
        return EXIT_USAGE
    renderer.note(f"{agent.state.model.provider}/{agent.state.model.id} · {HELP}")
    source = stdin_lines() if next_line is None else next_line

    async def body(interrupts: Interrupts) -> int:
        return await chat_loop(agent, renderer, source, interrupts)

    code, interrupts = await run_interruptible(body, renderer.note, handle_signals=handle_signals)
    renderer.close()
    return EXIT_INTERRUPTED if interrupts.exit_requested else code
