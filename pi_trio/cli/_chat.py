"""``pi-trio chat``: an interactive loop; typing while the agent works steers it.

One task reads lines (``_input``: on a terminal with a prompt marker, line editing and
history; from a pipe line by line). A line typed while the agent is idle becomes the next
prompt; a line typed while it works on one is queued with ``agent.steer`` and reaches the
model at its next turn. Input that is not a terminal is a list of turns: each line is the
next prompt once the run before it has finished, whatever the timing. Steering that arrives after the run's last turn is delivered by
continuing the run. While a request has no answer yet, the elapsed time shows on the
terminal.
"""

from __future__ import annotations

import contextlib
import os
from typing import Final, TextIO

import anyio
from anyio.abc import ObjectSendStream

from ..agent import Agent
from ._exit import EXIT_INTERRUPTED, EXIT_USAGE
from ._input import InvalidLine, LineSource, stdin_lines, terminal_lines, terminal_settings_kept
from ._render import Renderer, make_renderer
from ._run import prepare_agent
from ._signals import Interrupts, run_interruptible

__all__ = ["EXIT_COMMANDS", "LineSource", "chat_command", "chat_loop"]

EXIT_COMMANDS: Final = frozenset({"/exit", "/quit"})

HELP = (
    "chat: Enter sends; typing while the agent works steers it; arrow keys edit and recall "
    "lines; Ctrl-C aborts a run; Ctrl-C when idle, Ctrl-D or /exit quits."
)

PIPED_HELP = "chat: each line of the input is a prompt, sent once the answer before it is done."


class _Turn:
    """Whether a prompt has been handed to the main loop and is not finished yet, and the
    reader's wait for a steering line, which a finished run cancels (the reader then shows
    the idle prompt)."""

    __slots__ = ("_finished", "busy", "steering_wait")

    def __init__(self) -> None:
        self.busy = False
        self.steering_wait: anyio.CancelScope | None = None
        self._finished = anyio.Event()

    def start(self) -> None:
        self.busy = True
        self._finished = anyio.Event()

    def finish(self) -> None:
        self.busy = False
        self._finished.set()
        if self.steering_wait is not None:
            self.steering_wait.cancel()

    async def wait_finished(self) -> None:
        await self._finished.wait()


async def _read_lines(
    agent: Agent,
    next_line: LineSource,
    prompts: ObjectSendStream[str],
    renderer: Renderer,
    turn: _Turn,
) -> None:
    restarts = getattr(next_line, "restarts_at_idle", False)
    # input that is not a terminal (a pipe, a file) is a list of turns: each line waits
    # for the run before it, instead of steering it at whatever moment it was read
    steers = getattr(next_line, "steers", True)
    async with prompts:
        while True:
            idle = not turn.busy
            line: str | None = ""
            with anyio.CancelScope() as wait:
                turn.steering_wait = None if idle or not restarts else wait
                try:
                    line = await next_line(idle)
                except InvalidLine as exc:
                    renderer.note(str(exc))
                    continue
            turn.steering_wait = None
            if wait.cancelled_caught:
                continue  # the run finished: read again, at the idle prompt
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
                turn.start()
                await prompts.send(text)
                if not steers:
                    await turn.wait_finished()


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
                turn.finish()
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
    request_timeout: float | None = None,
    base_url: str | None = None,
    tokens_per_second: float | None = None,
) -> int:
    """The chat on ``model``; lines come from ``next_line`` (default: stdin, edited on a
    terminal). Returns the exit code."""
    # a terminal shows what was typed; lines from a pipe are shown as the turns they are
    on_terminal = os.name == "posix" and os.isatty(0) and out.isatty()
    renderer = make_renderer(
        out, style=style, show_user_messages=next_line is None and not on_terminal
    )
    session = prepare_agent(
        model,
        thinking=thinking,
        system_prompt=system_prompt,
        renderer=renderer,
        out=out,
        err=err,
        request_timeout=request_timeout,
        base_url=base_url,
        tokens_per_second=tokens_per_second,
    )
    if session is None:
        return EXIT_USAGE
    agent = session.agent
    help_text = HELP if next_line is not None or on_terminal else PIPED_HELP
    renderer.note(f"{agent.state.model.provider}/{agent.state.model.id} · {help_text}")
    keep_terminal: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    source = next_line
    if source is None:
        # a POSIX terminal: readline at the prompt, a readable wait while the agent works
        source = terminal_lines() if on_terminal else stdin_lines()
        if on_terminal:
            keep_terminal = terminal_settings_kept()

    async def body(interrupts: Interrupts) -> int:
        assert source is not None
        async with anyio.create_task_group() as group:
            group.start_soon(session.waiting.run)
            code = await chat_loop(agent, renderer, source, interrupts)
            group.cancel_scope.cancel()
        return code

    with keep_terminal:
        code, interrupts = await run_interruptible(
            body, renderer.note, handle_signals=handle_signals
        )
    renderer.close()
    return EXIT_INTERRUPTED if interrupts.exit_requested else code
