"""The ``pi-trio`` command line: ``demo``, ``run``, ``chat``, ``models`` and ``proxy``.

``main(argv)`` parses the arguments, runs the command on trio and returns the exit code:
0 success, 1 a failure (the model's answer ended in an error, the proxy cannot listen, the
output cannot be written), 2 a usage error (bad arguments, unknown model, missing API key,
empty prompt), 130 ended by Ctrl-C. Everyday mistakes are one line on stderr, never a
traceback; a reader that goes away (``pi-trio models | head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import anyio

from .. import __version__
from ..ai._seam import THINKING_LEVELS
from ._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

__all__ = ["build_parser", "main"]

EPILOG = """\
first steps:
  pi-trio demo                      an offline tour (no key needed)
  pi-trio run "hello" --model faux/faux-1
                                    an offline scripted model calling the built-in tools
  pi-trio models                    the model catalog and which keys are set
  pi-trio models claude --reasoning the reasoning models with "claude" in their name
  pi-trio run "what time is it?" --model anthropic/claude-haiku-4-5
"""

MODEL_HELP = (
    "a catalog model, e.g. anthropic/claude-sonnet-4-5 (pi-trio models lists them), or "
    "faux/faux-1: an offline scripted model that needs no key"
)

PROXY_DESCRIPTION = """\
Serve the Pi proxy protocol: POST /api/stream with a bearer token and a JSON body
{"model": ..., "context": {"messages": [...]}, "options": {...}}, answered by
Server-Sent Events. The server calls the providers with its own API keys (from its
environment) and serves only catalog models, each called as its own catalog entry
says (a client names the model and picks from a few options). Clients use
stream_proxy(proxy_url=..., auth_token=...) from pi_trio.proxy (or the original's
streamProxy)."""

PROXY_EPILOG = """\
tokens (one of the two is required):
  PI_TRIO_PROXY_TOKENS=token1,token2 pi-trio proxy
  pi-trio proxy --tokens-file tokens.txt      one token per line, # comments
"""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"a port is a whole number from 0 to 65535 (0 picks a free one), got {text!r}"
        )
    return port


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected positive seconds (e.g. 60), got {text!r}")
    return seconds


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not rate > 0:
        raise argparse.ArgumentTypeError(
            f"expected positive tokens per second (e.g. 30), got {text!r}"
        )
    return rate


PLAIN_HELP = "plain text output even on a terminal"
STDOUT_CLOSED = "standard output is closed (started with >&-); redirect it to a file or /dev/null"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pi-trio",
        description="The Pi agent runtime on structured concurrency.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"pi-trio {__version__}")
    parser.add_argument("--plain", action="store_true", help=PLAIN_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def plain_option(sub: argparse.ArgumentParser) -> None:
        # also after the command (`pi-trio run ... --plain`); absent there, the value
        # given before the command stands
        sub.add_argument("--plain", action="store_true", default=argparse.SUPPRESS, help=PLAIN_HELP)

    demo = commands.add_parser("demo", help="an offline tour of the runtime on the faux provider")
    plain_option(demo)
    demo.add_argument("--fast", action="store_true", help="no real-time pacing (for tests)")
    demo.add_argument("--tokens-per-second", type=float, default=None, help=argparse.SUPPRESS)

    def model_options(sub: argparse.ArgumentParser) -> None:
        plain_option(sub)
        sub.add_argument(
            "--model", "-m", required=True, metavar="PROVIDER/MODEL-ID", help=MODEL_HELP
        )
        sub.add_argument(
            "--thinking",
            choices=THINKING_LEVELS,
            default=None,
            help="reasoning effort (clamped to what the model supports)",
        )
        sub.add_argument("--system", default=None, metavar="TEXT", help="the system prompt")
        sub.add_argument(
            "--timeout",
            type=_seconds,
            default=None,
            metavar="SECONDS",
            help="give up on a request when the server sends nothing for this long "
            "(default: 15 s to connect, 300 s between two chunks of the answer); while a "
            "request waits, the elapsed time shows on the terminal",
        )
        sub.add_argument(
            "--base-url",
            default=None,
            metavar="URL",
            help="send the requests to this URL instead of the model's (a local or "
            "compatible server, e.g. http://localhost:11434/v1)",
        )
        sub.add_argument(
            "--tokens-per-second",
            type=_rate,
            default=None,
            metavar="N",
            help="pace the offline model faux/faux-1 like a real one (e.g. 30), to try "
            "Ctrl-C; default: as fast as it can",
        )

    run = commands.add_parser(
        "run",
        help="one agent run with the built-in tools",
        description="One agent run with the built-in tools (the time, a calculator, reading "
        "files under the current directory). Try it offline: "
        'pi-trio run "hello" --model faux/faux-1',
    )
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
    plain_option(models)

    proxy = commands.add_parser(
        "proxy",
        help="serve the Pi proxy protocol (needs the proxy extra)",
        description=PROXY_DESCRIPTION,
        epilog=PROXY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    proxy.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    proxy.add_argument("--port", type=_port, default=8787, help="the port (0 picks a free one)")
    proxy.add_argument(
        "--tokens-file",
        default=None,
        metavar="FILE",
        help="the accepted bearer tokens, one per line; required unless "
        "PI_TRIO_PROXY_TOKENS is set",
    )
    proxy.add_argument(
        "--max-body-bytes",
        type=int,
        default=None,
        metavar="N",
        help="largest request body accepted (default 32 MiB)",
    )
    proxy.add_argument(
        "--max-streams",
        type=int,
        default=None,
        metavar="N",
        help="streams served at once (default 64)",
    )
    proxy.add_argument(
        "--body-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="time a client has to send its request body (default 30)",
    )
    proxy.add_argument(
        "--max-bytes-in-flight",
        type=int,
        default=None,
        metavar="N",
        help="memory all request bodies may take at once, counted as they arrive and "
        "then as what they decode into (default 1 GiB)",
    )
    return parser


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
            from ._run import CliError, read_prompt, run_command

            try:
                prompt = read_prompt(args.prompt, sys.stdin, err)
            except CliError as exc:
                err.write(f"pi-trio: {exc}\n")
                return EXIT_USAGE
            command = partial(
                run_command,
                prompt,
                model=args.model,
                out=out,
                err=err,
                thinking=args.thinking,
                json=args.json,
                system_prompt=args.system,
                style=style,
                request_timeout=args.timeout,
                base_url=args.base_url,
                tokens_per_second=args.tokens_per_second,
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
                request_timeout=args.timeout,
                base_url=args.base_url,
                tokens_per_second=args.tokens_per_second,
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

            limits = {
                "max_body_bytes": args.max_body_bytes,
                "max_streams": args.max_streams,
                "body_timeout": args.body_timeout,
                "max_bytes_in_flight": args.max_bytes_in_flight,
            }
            return proxy_command(
                host=args.host,
                port=args.port,
                tokens_file=args.tokens_file,
                err=err,
                limits={name: value for name, value in limits.items() if value is not None},
            )
        case _:
            build_parser().print_help(err)
            return 2
    code: int = anyio.run(command, backend="trio")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: the process arguments); return the exit code."""
    from ._render import GuardedOutput

    if sys.stderr is None:  # started with stderr closed (2>&-): its lines go nowhere
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process)
    if sys.stdout is None:  # started with stdout closed (>&-): nothing could be shown
        sys.stderr.write(f"pi-trio: cannot write the output: {STDOUT_CLOSED}\n")
        return EXIT_FAILED
    out = GuardedOutput(sys.stdout)
    try:
        try:
            with contextlib.redirect_stdout(out):
                args = build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse's --help, --version and usage errors
            code = exc.code if isinstance(exc.code, int) else 0
        else:
            code = _dispatch(args, out, sys.stderr)
        out.flush()
    except KeyboardInterrupt:
        # Ctrl-C outside a run's signal handling (start-up, shutdown): exit quietly.
        sys.stderr.write("\npi-trio: interrupted\n")
        code = EXIT_INTERRUPTED
    finally:
        if out.broken:
            _silence_stdout()
    if out.failure is not None:
        reason = out.failure.strerror or str(out.failure)
        sys.stderr.write(f"pi-trio: cannot write the output: {reason}\n")
        return EXIT_FAILED
    return code


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
