"""``pi-trio run``: one agent run with the built-in tools, streamed to the terminal.

Also the pieces ``chat`` shares: resolving ``provider/model-id`` from the catalog, the
API-key check (a one-line error naming the variable to set), and the offline route
``faux/faux-1`` (a scripted faux model that calls the built-in tools; used by tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TextIO

from ..agent import Agent
from ..ai import (
    Context,
    Model,
    StreamOptions,
    UnknownModelError,
    clamp_thinking_level,
    default_registry,
    env_api_key_names,
    get_env_api_key,
    resolve_model,
)
from ..ai._models import THINKING_LEVELS
from ..testing import (
    FauxProvider,
    FauxState,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from ._render import (
    JsonRenderer,
    Renderer,
    make_renderer,
    on_output_closed,
)
from ._signals import EXIT_INTERRUPTED, run_interruptible
from ._text import message_text, usage_summary
from ._tools import builtin_tools

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "FAUX_PROVIDER_NAME",
    "CliError",
    "Resolved",
    "offline_provider",
    "resolve",
    "run_command",
]

EXIT_FAILED: Final = 1  # the model's answer ended in an error
EXIT_USAGE: Final = 2  # bad arguments, unknown model, missing key

FAUX_PROVIDER_NAME: Final = "faux"

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant in a terminal. Use the tools when they help: current_time "
    "for the date and time, calculator for arithmetic, read_file for files under the "
    "working directory. Answer concisely."
)


class CliError(Exception):
    """A usage error: printed as one line, exit code 2."""


class Resolved:
    """A model and the stream function to use (``None``: the registry's provider)."""

    __slots__ = ("model", "stream_fn")

    def __init__(self, model: Model, stream_fn: Any = None) -> None:
        self.model = model
        self.stream_fn = stream_fn


def offline_provider() -> FauxProvider:
    """A scripted faux model for ``faux/faux-1``: it answers a user message by calling the
    calculator and the clock in parallel, then reports the results."""
    faux = FauxProvider(provider=FAUX_PROVIDER_NAME)

    def respond(context: Context, options: StreamOptions, state: FauxState, model: Model) -> Any:
        faux.append_responses([respond])
        last = context.messages[-1] if context.messages else None
        if last is not None and last.role == "toolResult":
            results = {
                m.tool_name: message_text(m) for m in context.messages if m.role == "toolResult"
            }
            user = next(
                (message_text(m) for m in reversed(context.messages) if m.role == "user"), ""
            )
            return faux_assistant_message(
                f"Offline faux model here. 6 * 7 = {results.get('calculator', '?')}; the "
                f"clock says {results.get('current_time', '?')}. You said: {user}"
            )
        return faux_assistant_message(
            [
                faux_thinking("I am a scripted model; I will call two tools in parallel."),
                faux_text("Let me check."),
                faux_tool_call("calculator", {"expression": "6 * 7"}),
                faux_tool_call("current_time", {"timezone": "UTC"}),
            ],
            stop_reason="toolUse",
        )

    faux.set_responses([respond])
    return faux


def resolve(spec: str) -> Resolved:
    """``provider/model-id`` → the catalog model (or the offline faux model); ``CliError``
    with a one-line explanation when the model is unknown or has no key."""
    provider, slash, model_id = spec.partition("/")
    if not slash or not provider or not model_id:
        raise CliError(
            f"--model takes provider/model-id (e.g. anthropic/claude-sonnet-4-5), got {spec!r}"
        )
    if provider == FAUX_PROVIDER_NAME:
        faux = offline_provider()
        model = faux.get_model(model_id)
        if model is None:
            raise CliError(f"the offline provider has one model, faux/faux-1; got {spec!r}")
        return Resolved(model, faux)
    try:
        model = resolve_model(provider, model_id)
    except UnknownModelError as exc:
        raise CliError(f"{exc} (`pi-trio models` lists the catalog)") from exc
    if get_env_api_key(provider) is None:
        names = env_api_key_names(provider)
        if names:
            alternatives = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
            raise CliError(f"no API key for {provider}: set {names[0]}{alternatives}")
        raise CliError(f"no credentials for {provider}: configure them in the environment")
    try:
        available = default_registry.get(model.api) is not None
    except ImportError:
        available = False
    if not available:
        raise CliError(f"the {model.api!r} provider is not available in this installation")
    return Resolved(model)


def thinking_level(model: Model, requested: str | None, note: Any) -> str:
    if requested is None:
        return "off"
    if requested not in THINKING_LEVELS:
        raise CliError(f"--thinking takes one of {', '.join(THINKING_LEVELS)}; got {requested!r}")
    level = clamp_thinking_level(model, requested)
    if level != requested:
        note(
            f"{model.provider}/{model.id} does not support thinking {requested!r}; using {level!r}"
        )
    return level


def exit_code(messages: Sequence[Any], interrupted: bool) -> int:
    if interrupted:
        return EXIT_INTERRUPTED
    last = next((m for m in reversed(messages) if getattr(m, "role", None) == "assistant"), None)
    if last is not None and last.stop_reason == "error":
        return EXIT_FAILED
    return 0


def prepare_agent(
    model: str,
    *,
    thinking: str | None,
    system_prompt: str | None,
    renderer: Renderer,
    out: TextIO,
    err: TextIO,
) -> Agent | None:
    """The agent of ``run`` and ``chat``: the model resolved, its thinking level checked,
    the renderer subscribed, and an abort when the output goes away. ``None`` after
    reporting a usage error on ``err``."""
    try:
        resolved = resolve(model)
        level = thinking_level(resolved.model, thinking, renderer.note)
    except CliError as exc:
        err.write(f"pi-trio: {exc}\n")
        return None
    agent = Agent(
        model=resolved.model,
        system_prompt=system_prompt or DEFAULT_SYSTEM_PROMPT,
        tools=builtin_tools(),
        stream_fn=resolved.stream_fn,
        thinking_level=level,
        close_timeout=2.0,
    )
    agent.subscribe(renderer.event)
    on_output_closed(out, agent.abort)
    return agent


async def run_command(
    prompt: str,
    *,
    model: str,
    out: TextIO,
    err: TextIO,
    thinking: str | None = None,
    json: bool = False,
    system_prompt: str | None = None,
    style: str = "auto",
    handle_signals: bool = True,
) -> int:
    """One run of ``prompt`` on ``model``; returns the exit code."""
    renderer: Renderer
    if json:
        renderer = JsonRenderer(out, err)
    else:
        renderer = make_renderer(out, style=style, show_user_messages=False)
    agent = prepare_agent(
        model, thinking=thinking, system_prompt=system_prompt, renderer=renderer, out=out, err=err
    )
    if agent is None:
        return EXIT_USAGE

    async def body(interrupts: Any) -> int:
        interrupts.attach(agent)
        await agent.prompt(prompt)
        return 0

    code, interrupts = await run_interruptible(body, renderer.note, handle_signals=handle_signals)
    if not json:
        renderer.note(usage_summary(agent.state.messages))
    renderer.close()
    if code != 0:
        return code
    return exit_code(agent.state.messages, interrupts.aborted or interrupts.exit_requested)
