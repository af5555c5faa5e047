"""The ``pi-trio`` command line: ``demo``, ``run``, ``chat``, ``models`` and ``proxy``.

``main(argv)`` parses the arguments, runs the command on trio and returns the exit code:
0 success, 1 the model's answer ended in an error, 2 a usage error (bad arguments, unknown
model, missing API key), 130 ended by Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio

from .. import __version__
from ..ai._models import THINKING_LEVELS
from ._signals import EXIT_INTERRUPTED

__all__ = ["build_parser", "main"]

EPILOG = """\
first steps:
  pi-trio demo                      an offline tour (no key needed)
  pi-trio models                    the model catalog and which keys are set
  pi-trio models claude --reasoning the reasoning models with "claude" in their name
  pi-trio run "what time is it?" --model anthropic/claude-haiku-4-5
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-trio",
        description="The Pi agent runtime on structured concurrency.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pi-trio {__version__}")
    parser.add_argument("--plain", action="store_true", help="plain text output even on a terminal")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser("demo", help="an offline tour of the runtime on the faux provider")
    demo.add_argument("--fast", action="store_true", help="no real-time pacing (for tests)")
    demo.add_argument("--tokens-per-second", type=float, default=None, help=argparse.SUPPRESS)

    def model_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--model",
            "-m",
            required=True,
            metavar="PROVIDER/MODEL-ID",
            help="a catalog model, e.g. anthropic/claude-sonnet-4-5 (see `pi-trio models`)",
        )
        sub.add_argument(
            "--thinking",
            choices=THINKING_LEVELS,
            default=None,
            help="reasoning effort (clamped to what the model supports)",
        )
        sub.add_argument("--system", default=None, metavar="TEXT", help="the system prompt")

    run = commands.add_parser("run", help="one agent run with the built-in tools")
    run.add_argument("prompt", nargs="+", help="the prompt ('-' reads it from stdin)")
    model_options(run)
    run.add_argument(
        "--json",
        action="store_true",
        help="print the agent events as JSON lines (the original runtime's format)",
    )

    chat = commands.add_parser("chat", help="an interactive session; typing while it works steers")
    model_options(chat)

    models = commands.add_parser(
        "models",
        help="the model catalog by provider, and which keys are set",
        description="List the catalog's models, grouped by provider. Search words and the "
        "options narrow the list; a model is kept when it matches all of them.",
    )
    models.add_argument(
        "words",
        nargs="*",
        metavar="SEARCH",
        help="words to find in provider/model-id or the name (any case)",
    )
    models.add_argument("--provider", "-p", default=None, help="only this provider's models")
    models.add_argument("--reasoning", action="store_true", help="only models that can think")
    models.add_argument("--images", action="store_true", help="only models that accept images")

    proxy = commands.add_parser("proxy", help="serve the Pi proxy protocol (needs the proxy extra)")
    proxy.add_argument("--host", default="127.0.0.1")
    proxy.add_argument("--port", type=int, default=8787)
    proxy.add_argument(
        "--tokens-file",
        default=None,
        metavar="FILE",
        help="the accepted bearer tokens, one per line",
    )
    return parser


def _prompt_text(words: list[str]) -> str:
    if words == ["-"]:
        return sys.stdin.read()
    return " ".join(words)


def _dispatch(args: argparse.Namespace, out: Any, err: Any) -> int:
    style = "plain" if args.plain else "auto"
    command: Any
    match args.command:
        case "demo":
            from ._demo import run_demo

            command = partial(
                run_demo,
                out,
                fast=args.fast,
                tokens_per_second=args.tokens_per_second,
                style=style,
            )
        case "run":
            from ._run import run_command

            command = partial(
                run_command,
                _prompt_text(args.prompt),
                model=args.model,
                out=out,
                err=err,
                thinking=args.thinking,
                json=args.json,
                system_prompt=args.system,
                style=style,
            )
        case "chat":
            from ._chat import chat_command

            command = partial(
                chat_command,
                model=args.model,
                out=out,
                err=err,
                thinking=args.thinking,
                system_prompt=args.system,
                style=style,
            )
        case "models":
            from ._models import models_command

            return models_command(
                out=out,
                err=err,
                provider=args.provider,
                words=args.words,
                reasoning=args.reasoning,
                images=args.images,
                style=style,
            )
        case "proxy":
            from ._proxy import proxy_command

            return proxy_command(
                host=args.host, port=args.port, tokens_file=args.tokens_file, err=err
            )
        case _:
            build_parser().print_help(err)
            return 2
    code: int = anyio.run(command, backend="trio")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: the process arguments); return the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else 0
    from ._render import GuardedOutput

    out = GuardedOutput(sys.stdout)
    try:
        return _dispatch(args, out, sys.stderr)
    except KeyboardInterrupt:
        # Ctrl-C outside a run's signal handling (start-up, shutdown): exit quietly.
        sys.stderr.write("\npi-trio: interrupted\n")
        return EXIT_INTERRUPTED
    finally:
        if out.broken:
            _silence_stdout()


def _silence_stdout() -> None:
    """The reader of stdout went away: point it at devnull so the interpreter's final
    flush does not report the broken pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout has no descriptor (captured in tests): nothing will flush to a pipe
    finally:
        os.close(devnull)
