"""``pi-trio run``: one agent run with the built-in tools, streamed to the terminal.

Also the pieces ``chat`` shares: resolving ``provider/model-id`` from the catalog, the
API-key check (a one-line error naming the variable to set), the offline route
``faux/faux-1`` (a scripted faux model that calls the built-in tools, optionally paced
like a real one), the request timeout and the waiting indicator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO, Final, TextIO

import anyio
import msgspec

from ..agent import Agent, RunPolicy
from ..ai import Context, Model, StreamOptions, UnknownModelError, resolve_model
from ..ai._seam import HTTP_READ_TIMEOUT_S, THINKING_LEVELS
from ..ai.models import clamp_thinking_level
from ..ai.providers import default_registry, env_api_key_names, get_env_api_key
from ..testing import (
    FauxProvider,
    FauxState,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from ._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE
from ._render import (
    JsonRenderer,
    Renderer,
    make_renderer,
    on_output_closed,
)
from ._signals import run_interruptible
from ._text import message_text, usage_summary
from ._tools import builtin_tools
from ._waiting import WaitingIndicator

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "FAUX_PROVIDER_NAME",
    "OFFLINE_HINT",
    "CliError",
    "Resolved",
    "offline_provider",
    "read_prompt",
    "resolve",
    "run_command",
]

FAUX_PROVIDER_NAME: Final = "faux"
OFFLINE_HINT: Final = "or try it offline with --model faux/faux-1"

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


def offline_provider(tokens_per_second: float | None = None) -> FauxProvider:
    """A scripted faux model for ``faux/faux-1``: it answers a user message by calling the
    calculator and the clock in parallel, then reports the results; ``tokens_per_second``
    paces it like a real model (``None``: as fast as it can)."""
    faux = FauxProvider(provider=FAUX_PROVIDER_NAME, tokens_per_second=tokens_per_second)

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


def read_prompt(words: Sequence[str], stdin: TextIO, err: TextIO | None = None) -> str:
    """The prompt of ``run``: the words, or stdin for ``-``. ``CliError`` for an empty
    prompt and for stdin that is not UTF-8, before anything is sent. Reading a terminal,
    it first says on ``err`` how to end the prompt."""
    if list(words) == ["-"]:
        if err is not None and stdin.isatty():  # else it would wait without a word
            err.write("pi-trio: type the prompt, then Ctrl-D on a new line to send it\n")
            err.flush()
        raw: BinaryIO | None = getattr(stdin, "buffer", None)
        if raw is None:
            text = stdin.read()
        else:
            data = raw.read()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CliError(
                    f"the prompt on stdin is not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                    f"offset {exc.start}); convert it first, e.g. with iconv -t UTF-8"
                ) from None
        if not text.strip():
            raise CliError("the prompt on stdin is empty")
        return text
    text = " ".join(words)
    if not text.strip():
        raise CliError('the prompt is empty: pi-trio run "your question" --model ...')
    return text


def resolve(
    spec: str, *, tokens_per_second: float | None = None, base_url: str | None = None
) -> Resolved:
    """``provider/model-id`` → the catalog model (or the offline faux model); ``CliError``
    with a one-line explanation when the model is unknown or has no key.
    ``tokens_per_second`` paces the offline model; ``base_url`` replaces a catalog
    model's URL."""
    provider, slash, model_id = spec.partition("/")
    if not slash or not provider or not model_id:
        try:  # refused, with the providers that have such a model id
            resolve_model(spec)
        except UnknownModelError as exc:
            raise CliError(f"--model {exc}; {OFFLINE_HINT}") from None
    if provider == FAUX_PROVIDER_NAME:
        if base_url is not None:
            raise CliError(
                f"--base-url sends the requests to another server, and the offline model "
                f"{spec} makes none; leave it out"
            )
        faux = offline_provider(tokens_per_second)
        model = faux.get_model(model_id)
        if model is None:
            raise CliError(f"the offline provider has one model, faux/faux-1; got {spec!r}")
        return Resolved(model, faux)
    if tokens_per_second is not None:
        raise CliError(
            f"--tokens-per-second paces the offline model faux/faux-1, not {spec}; leave it out"
        )
    try:
        model = resolve_model(provider, model_id)
    except UnknownModelError as exc:
        raise CliError(f"{exc} (pi-trio models lists the catalog)") from exc
    if base_url is not None:
        if not base_url.startswith(("http://", "https://")):
            raise CliError(f"--base-url takes an http:// or https:// URL, got {base_url!r}")
        model = msgspec.structs.replace(model, base_url=base_url.rstrip("/"))
    if get_env_api_key(provider) is None:
        names = env_api_key_names(provider)
        if names:
            alternatives = f" (or {', '.join(names[1:])})" if len(names) > 1 else ""
            raise CliError(
                f"no API key for {provider}: set {names[0]}{alternatives}, {OFFLINE_HINT}"
            )
        raise CliError(
            f"no credentials for {provider}: configure them in the environment, {OFFLINE_HINT}"
        )
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


class Session:
    """What ``run`` and ``chat`` run: the agent and its waiting indicator."""

    __slots__ = ("agent", "waiting")

    def __init__(self, agent: Agent, waiting: WaitingIndicator) -> None:
        self.agent = agent
        self.waiting = waiting


def prepare_agent(
    model: str,
    *,
    thinking: str | None,
    system_prompt: str | None,
    renderer: Renderer,
    out: TextIO,
    err: TextIO,
    request_timeout: float | None = None,
    base_url: str | None = None,
    tokens_per_second: float | None = None,
) -> Session | None:
    """The agent of ``run`` and ``chat``: the model resolved, its thinking level checked,
    the request timeout set, the waiting indicator and the renderer subscribed, and an
    abort when the output goes away. ``None`` after reporting a usage error on ``err``."""
    try:
        resolved = resolve(model, tokens_per_second=tokens_per_second, base_url=base_url)
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
        policy=RunPolicy(close_timeout=2.0),
        stream_options=StreamOptions(
            timeout_ms=None if request_timeout is None else max(1, round(request_timeout * 1000))
        ),
    )
    name = f"{resolved.model.provider}/{resolved.model.id}"
    limit = HTTP_READ_TIMEOUT_S if request_timeout is None else request_timeout
    waiting = WaitingIndicator(err, name, limit)
    agent.subscribe(waiting.event)  # first: it erases its line before anything is drawn
    agent.subscribe(renderer.event)
    on_output_closed(out, agent.abort)
    return Session(agent, waiting)


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
    request_timeout: float | None = None,
    base_url: str | None = None,
    tokens_per_second: float | None = None,
) -> int:
    """One run of ``prompt`` on ``model``; returns the exit code."""
    renderer: Renderer
    if json:
        renderer = JsonRenderer(out, err)
    else:
        renderer = make_renderer(out, style=style, show_user_messages=False)
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

    async def body(interrupts: Any) -> int:
        interrupts.attach(agent)
        async with anyio.create_task_group() as group:
            group.start_soon(session.waiting.run)
            await agent.prompt(prompt)
            group.cancel_scope.cancel()
        return 0

    code, interrupts = await run_interruptible(body, renderer.note, handle_signals=handle_signals)
    if not json:
        renderer.note(usage_summary(agent.state.messages))
    renderer.close()
    if code != 0:
        return code
    return exit_code(agent.state.messages, interrupts.aborted or interrupts.exit_requested)
