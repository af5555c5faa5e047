"""A chat page on the AG-UI endpoint: an agent in the browser, with no build step.

GET / serves one HTML page (vanilla JavaScript); POST /agui is ``pi_trio.agui``'s endpoint,
which runs an agent per request and streams its AG-UI events. The page keeps the
conversation and sends it with every question (AG-UI servers keep no thread); it shows the
answer as it streams, the model's thinking apart (folded), each tool call with its
arguments and result, a failed run's error, and a Stop button that aborts the run
(POST /agui/cancel): the answer keeps what had arrived.

    python examples/chat_app.py --faux              # then open http://127.0.0.1:8000
    python examples/chat_app.py --model anthropic/claude-haiku-4-5 --port 8080

With --faux a scripted model answers offline: "What is 6 * 7?" thinks and calls the
multiply tool, "Tell me a long story" streams for a while (press Stop), and anything with
"fail" in it fails the way an overloaded provider does.
"""

from __future__ import annotations

import argparse
import html
import os
import random
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from pi_trio.agent import Agent, tool
from pi_trio.agui import AGUIApp, AguiRun, create_app, serve
from pi_trio.ai import Model, UnknownModelError, resolve_model
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

PAGE = (Path(__file__).resolve().parent / "chat_page.html").read_text(encoding="utf-8")

SYSTEM_PROMPT = "You are a helpful assistant. Use the multiply tool for arithmetic."

# tokens per second of the scripted model: slow enough to watch the answer arrive
FAUX_SPEED = 40.0

STORY = (
    "Once upon a time, in a harbour town where the fog came in every evening, there lived "
    "a lighthouse keeper who counted ships. Every night she wrote their names in a blue "
    "book: the Albatross, the Morning Star, the little Heron that never carried more than "
    "three crates of apples. One winter a ship came in without a name, its sails grey as "
    "the fog itself, and nobody stepped ashore. The keeper rowed out with her lantern and "
    "found only a cat on the deck, asleep on a coil of rope, and a letter addressed to the "
    "town. She carried both home, and the letter sat on her table for three days before "
    "she dared to open it. Inside was a map of the coast, drawn by hand, with every "
    "lighthouse marked and one more that no chart had ever shown. " * 3
)


@tool
def multiply(a: float, b: float) -> str:
    """Multiply two numbers."""
    return f"{a * b:g}"


def scripted_model(speed: float = FAUX_SPEED) -> tuple[Model, FauxProvider]:
    """The offline model: multiplies with the tool, tells a long story, or fails."""
    faux = FauxProvider(tokens_per_second=speed, rng=random.Random(7))

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        faux.append_responses([reply])
        said = [m for m in context.messages if m.role in ("user", "toolResult")]
        last = said[-1]
        if last.role == "toolResult":
            return faux_assistant_message(
                f"The answer is {last.content[0].text}. I used the multiply tool to be sure; "
                "ask me another one whenever you like."
            )
        text = last.content if isinstance(last.content, str) else last.content[0].text
        asked = sum(1 for m in said if m.role == "user")
        if "fail" in text.lower():
            return faux_assistant_message(
                "",
                stop_reason="error",
                error_message="529 Overloaded: the model is busy (a scripted failure, as "
                "you asked). Try again in a moment.",
            )
        numbers = re.search(r"(-?\d+(?:\.\d+)?)\s*[*x\u00d7]\s*(-?\d+(?:\.\d+)?)", text)
        if numbers:
            a, b = (float(n) if "." in n else int(n) for n in numbers.groups())
            return faux_assistant_message(
                [
                    faux_thinking(f"The user wants {a:g} times {b:g}. Arithmetic: use the tool."),
                    faux_text("Let me multiply that for you."),
                    faux_tool_call("multiply", {"a": a, "b": b}),
                ],
                stop_reason="toolUse",
            )
        if "story" in text.lower() or "long" in text.lower():
            return faux_assistant_message([faux_thinking("A story, then."), faux_text(STORY)])
        return faux_assistant_message(
            f"You said: “{text}”. That is message {asked} of our conversation. Ask me to "
            "multiply two numbers, to tell a long story, or to fail."
        )

    faux.set_responses([reply])
    model = faux.get_model()
    assert model is not None
    return model, faux


class ChatApp:
    """The page at ``/`` and the AG-UI endpoint at ``/agui`` (``agui``)."""

    def __init__(self, model: Model, stream_fn: Any = None) -> None:
        self.model = model
        self.stream_fn = stream_fn
        self.agui: AGUIApp = create_app(self.new_agent, path="/agui")
        self.page = PAGE.replace("{{model}}", html.escape(f"{model.provider}/{model.id}")).encode()

    def new_agent(self, run: AguiRun) -> Agent:
        return Agent(
            model=self.model,
            system_prompt=SYSTEM_PROMPT,
            tools=[multiply],
            stream_fn=self.stream_fn,
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/":
            status, body = (200, self.page) if scope["method"] == "GET" else (405, b"")
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"text/html; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
        else:
            await self.agui(scope, receive, send)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", default=bool(os.environ.get("PI_TRIO_FAUX")))
    parser.add_argument("--model", help="provider/model-id (needs its API key in the environment)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--faux-speed", type=float, default=FAUX_SPEED, help="tokens per second (--faux)"
    )
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
            + ("; PI_TRIO_FAUX is set" if os.environ.get("PI_TRIO_FAUX") else "")
        )
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0-65535, got {args.port}")
    if not args.faux_speed > 0:
        parser.error(f"--faux-speed must be positive, got {args.faux_speed}")
    if not args.faux:
        try:
            args.model = resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


async def main(argv: Sequence[str] | None = None) -> int:
    """Serve until Ctrl-C; then 130, the shell's status for it."""
    args = parse_args(argv)
    model, stream_fn = scripted_model(args.faux_speed) if args.faux else (args.model, None)
    with trio.open_signal_receiver(signal.SIGINT) as presses:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, ChatApp(model, stream_fn), args.host, args.port)
            print(f"serving {url} (Ctrl-C stops)", flush=True)
            async for _ in presses:
                break
            nursery.cancel_scope.cancel()
    print("chat_app: stopped", file=sys.stderr)
    return 130


if __name__ == "__main__":
    try:
        sys.exit(trio.run(main))
    except OSError as exc:  # the port is taken, the host unknown, ...
        raise SystemExit(f"chat_app: cannot serve: {exc}") from None
