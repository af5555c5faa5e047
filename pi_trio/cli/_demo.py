"""``pi-trio demo``: an offline tour of the runtime on the faux provider.

Four short acts on one ``Agent``: streamed thinking and text; three tool calls running in
parallel with live progress, and a steering message injected while they run; a long answer
aborted mid-stream; and a last prompt showing the agent is ready again after the abort.
Each act has its own scripted answers and starts with empty queues, so an act cut short
leaves nothing to the next one.
The faux provider is paced in real time (``tokens_per_second``) so it looks like a model
typing; ``fast=True`` removes every real-time wait (tests use it). Ctrl-C aborts the act
that runs and the tour goes on with the next one; a second Ctrl-C ends the demo. The last
line says how to run ``pi-trio`` from here (the path, when the command is not on PATH).
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any, Final, TextIO

import anyio

from ..agent import Agent, AgentTool, RunPolicy, tool
from ..ai import AbortSignal, Context, Model, StreamOptions
from ..testing import (
    FauxProvider,
    FauxState,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from ._render import (
    GuardedOutput,
    Renderer,
    make_renderer,
    on_output_closed,
)
from ._signals import EXIT_INTERRUPTED, Interrupts, run_interruptible
from ._text import message_text, usage_summary

__all__ = ["DEMO_TOKENS_PER_SECOND", "run_demo"]

DEMO_TOKENS_PER_SECOND: Final = 160.0  # brisk but readable; the whole demo takes ~4 s
ABORT_AFTER_CHARS: Final = 240  # how much of the long answer streams before the abort
STEERING_TEXT: Final = "Also: keep the final answer under 40 words."

SYSTEM_PROMPT = "You are the pi_trio demo assistant. You answer briefly and use tools."

PROMPT_STREAM = "In two sentences: what does structured concurrency buy an agent runtime?"
PROMPT_TOOLS = (
    "Check the weather in Lisbon, count the primes below 50,000 and look up the abort "
    "contract, all at once."
)
PROMPT_ABORT = "Now write me a long essay on cancellation semantics."
PROMPT_AFTER = "Still there after that abort?"


class _Clock:
    """Real-time waits of the demo tools; all zero in fast mode."""

    def __init__(self, fast: bool) -> None:
        self.fast = fast

    async def pause(self, seconds: float) -> None:
        await anyio.sleep(0 if self.fast else seconds)


def _primes_below(n: int) -> int:
    sieve = bytearray([1]) * n
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = bytes(len(range(i * i, n, i)))
    return sum(sieve)


def demo_tools(clock: _Clock) -> list[AgentTool]:
    @tool(label="Weather")
    async def get_weather(city: str, on_update: Any) -> str:
        """Current weather for a city (simulated)."""
        for step in ("resolving city", "calling weather service", "parsing forecast"):
            on_update(f"{step}…")
            await clock.pause(0.2)
        return f"{city}: 21°C, sunny, light wind from the north-west"

    @tool(label="Primes")
    async def count_primes(below: int, on_update: Any) -> str:
        """Count the prime numbers below a bound."""
        for quarter in range(1, 5):
            on_update(f"sieving {quarter * 25}%")
            await clock.pause(0.25)
        return f"{_primes_below(below)} primes below {below}"

    @tool(label="Docs")
    async def search_docs(query: str, on_update: Any) -> str:
        """Search the pi_trio design notes."""
        on_update("searching DESIGN.md")
        await clock.pause(0.4)
        on_update("ranking 3 passages")
        await clock.pause(0.4)
        return (
            "DESIGN §3.1: abort cancels the run's scope; every tool call gets exactly one "
            "result; the run always ends with agent_end."
        )

    return [get_weather, count_primes, search_docs]


def _last_user_text(context: Context) -> str:
    for message in reversed(context.messages):
        if message.role == "user":
            return message_text(message)
    return ""


def _tool_text(context: Context, name: str) -> str:
    for message in reversed(context.messages):
        if message.role == "toolResult" and message.tool_name == name:
            return "".join(block.text for block in message.content if block.type == "text")
    return "?"


def _after_tools(context: Context, options: StreamOptions, state: FauxState, model: Model) -> Any:
    steered = _last_user_text(context) == STEERING_TEXT
    primes = _tool_text(context, "count_primes")
    weather = _tool_text(context, "get_weather").split(",")[0]
    answer = (
        f"{weather}, sunny. {primes.capitalize()}. Abort contract: one result per tool "
        "call, and every run ends with agent_end."
    )
    if steered:
        answer = "Noted, short version. " + answer
    return faux_assistant_message(
        [
            faux_thinking("Three results are in; the user asked me to keep it short."),
            faux_text(answer),
        ]
    )


def demo_script() -> list[list[Any]]:
    """The scripted responses of each act, in request order. Each act gets its own list,
    so an act cut short by Ctrl-C leaves none of its answers to the next one."""
    essay = (
        "Cancellation is the part of concurrency that most runtimes get wrong. In a "
        "structured runtime, every task has a parent, and cancelling the parent reaches "
        "every child at its next checkpoint: the HTTP stream, the tool that is sleeping, the "
        "hook that is waiting on a lock. Nothing is left running in the background, and the "
        "code that owns the scope writes the outcome afterwards, so the transcript always "
        "tells the truth about what happened. " * 3
    )
    streamed = faux_assistant_message(
        [
            faux_thinking(
                "The user wants the payoff, not the theory: ownership, cancellation, "
                "and no leaked tasks. Two sentences."
            ),
            faux_text(
                "Every task has a visible parent, so when a run ends, nothing it started "
                "keeps running. And cancelling the run (an abort, a deadline, Ctrl-C) "
                "reaches the HTTP stream and every tool at once, then leaves a "
                "transcript you can trust."
            ),
        ]
    )
    tools = faux_assistant_message(
        [
            faux_text("Running all three in parallel."),
            faux_tool_call("get_weather", {"city": "Lisbon"}),
            faux_tool_call("count_primes", {"below": 50_000}),
            faux_tool_call("search_docs", {"query": "abort contract"}),
        ],
        stop_reason="toolUse",
    )
    after = faux_assistant_message(
        "Yes. The aborted answer stayed in the transcript, marked aborted, and this run "
        "started from a clean state."
    )
    return [[streamed], [tools, _after_tools], [faux_assistant_message(essay)], [after]]


class _Director:
    """The listeners that play the scripted interventions: one steering message when the
    first tool finishes, one abort once enough of the long answer has streamed."""

    def __init__(self, agent: Agent, renderer: Renderer) -> None:
        self.agent = agent
        self.renderer = renderer
        self.steered = False
        self.streamed_chars = 0
        self.aborted = False

    def steer_once(self, event: Any, signal: AbortSignal) -> None:
        # not once the act is aborted: its tools end with "Operation aborted", not done
        if event.type == "tool_execution_end" and not self.steered and not signal.aborted:
            self.steered = True
            self.renderer.note(f"steering while tools run: {STEERING_TEXT!r}")
            self.agent.steer(STEERING_TEXT)

    def abort_midway(self, event: Any) -> None:
        if event.type != "message_update" or self.aborted:
            return
        update = event.assistant_message_event
        if update.type == "text_delta":
            self.streamed_chars += len(update.delta)
            if self.streamed_chars >= ABORT_AFTER_CHARS:
                self.aborted = True
                self.renderer.note("calling agent.abort() mid-stream (Ctrl-C does the same)")
                self.agent.abort()


def command_name() -> str:
    """How to run this installation's ``pi-trio`` from the current directory: the bare
    name when it is on PATH, else the script's path (relative when it is below the current
    directory), else ``python -m pi_trio``."""
    script = Path(sysconfig.get_path("scripts")) / ("pi-trio.exe" if os.name == "nt" else "pi-trio")
    found = shutil.which("pi-trio")
    if found is not None and script.exists() and Path(found).resolve() == script.resolve():
        return "pi-trio"
    if script.exists():
        relative = os.path.relpath(script)
        return relative if not relative.startswith("..") else str(script)
    return f"{sys.executable} -m pi_trio"


def next_steps() -> str:
    command = command_name()
    text = f'next: {command} models, then {command} run "…" --model provider/id'
    if command != "pi-trio" and sys.prefix != sys.base_prefix:
        activate = os.path.join(os.path.dirname(command), "activate")
        text += f" (or `source {activate}` once, then just pi-trio)"
    return text


def _summary(messages: list[Any]) -> str:
    parts = []
    for message in messages:
        role = message.role
        if role == "assistant":
            parts.append(f"assistant({message.stop_reason})")
        elif role == "toolResult":
            parts.append("toolResult" + ("(error)" if message.is_error else ""))
        else:
            parts.append(role)
    return " → ".join(parts)


async def run_demo(
    out: TextIO,
    *,
    fast: bool = False,
    tokens_per_second: float | None = None,
    style: str = "auto",
    handle_signals: bool = True,
) -> int:
    """Run the demo, writing to ``out``; returns the exit code (130 after Ctrl-C)."""
    clock = _Clock(fast)
    pace = None if fast else (tokens_per_second or DEMO_TOKENS_PER_SECOND)
    faux = FauxProvider(tokens_per_second=pace)
    agent = Agent(
        model=faux.get_model(),
        system_prompt=SYSTEM_PROMPT,
        tools=demo_tools(clock),
        stream_fn=faux,
        policy=RunPolicy(close_timeout=1.0),
    )
    renderer = make_renderer(out, style=style)
    agent.subscribe(renderer.event)
    on_output_closed(out, agent.abort)

    script = _Director(agent, renderer)
    titles: list[tuple[str, str, Any]] = [
        ("1 · streamed thinking and text", PROMPT_STREAM, None),
        ("2 · parallel tools with live progress, steered mid-run", PROMPT_TOOLS, script.steer_once),
        ("3 · abort mid-stream", PROMPT_ABORT, script.abort_midway),
        ("4 · ready again after the abort", PROMPT_AFTER, None),
    ]
    acts = [(*act, responses) for act, responses in zip(titles, demo_script(), strict=True)]

    async def tour(interrupts: Interrupts) -> int:
        interrupts.attach(agent)
        renderer.note(
            "pi_trio demo: offline, on the faux provider. Ctrl-C aborts a run; "
            "a second Ctrl-C ends the demo."
        )
        for title, prompt, hook, responses in acts:
            renderer.heading(title)
            # each act owns its script and its queue: what an aborted act left unused (its
            # last answers, a steering message put back by the abort) goes with it
            faux.set_responses(responses)
            agent.clear_all_queues()
            unsubscribe = agent.subscribe(hook) if hook is not None else None
            try:
                await agent.prompt(prompt)
            finally:
                if unsubscribe is not None:
                    unsubscribe()
            if interrupts.aborted:
                # the next Ctrl-C exits (no run_finished()), as the abort note promised
                interrupts.aborted = False
                renderer.note("this act was aborted by Ctrl-C; the tour goes on")
            if isinstance(out, GuardedOutput) and out.broken:
                return 0  # nobody is reading any more
        return 0

    code, interrupts = await run_interruptible(tour, renderer.note, handle_signals=handle_signals)
    renderer.heading("transcript")
    renderer.note(_summary(agent.state.messages))
    renderer.note(usage_summary(agent.state.messages))
    if code == 0:
        renderer.note(next_steps())
    renderer.close()
    return EXIT_INTERRUPTED if interrupts.exit_requested else code
