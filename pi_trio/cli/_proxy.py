"""``pi-trio proxy``: serve the Pi proxy protocol with ``pi_trio.proxy.serve``.

The server needs the optional ``proxy`` extra (hypercorn); it is imported only when the
command runs, and a missing extra is a one-line error. The accepted bearer tokens come
from ``PI_TRIO_PROXY_TOKENS`` (comma-separated) and ``--tokens-file`` (one per line); one
of the two is required. An address that cannot be served (the port is taken, the host is
unknown) is one line and exit code 1. Ctrl-C stops the server (exit 130, as for every
command ended by Ctrl-C).
"""

from __future__ import annotations

import errno
import importlib.util
import signal
import socket
from functools import partial
from typing import Any, TextIO

import anyio

from ..ai import PiError
from ..ai._seam import sole_exception
from ._exit import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

__all__ = ["MISSING_EXTRA", "proxy_command", "serve_error_text"]

MISSING_EXTRA = (
    "pi-trio: the proxy server needs the 'proxy' extra (hypercorn); install it with "
    "pip install 'pi-trio[proxy]'\n"
)

_BIND_ERRORS = {
    errno.EADDRINUSE: "the port is already in use (is another server running? pick another "
    "--port, or 0 for a free one)",
    errno.EACCES: "permission denied (ports below 1024 need privileges; pick another --port)",
    errno.EADDRNOTAVAIL: "this machine has no such address (check --host)",
}


def serve_error_text(error: OSError, host: str, port: int) -> str:
    """The one line for an address the server cannot listen on."""
    if isinstance(error, socket.gaierror):
        reason = f"unknown host {host!r} ({error.strerror or error})"
    else:
        reason = _BIND_ERRORS.get(error.errno or 0) or error.strerror or str(error)
    return f"pi-trio: cannot serve on {host}:{port}: {reason}"


def _os_error(exc: BaseException) -> OSError | None:
    """``exc`` as the OSError it is or, alone, wraps (task groups wrap it)."""
    if isinstance(exc, BaseExceptionGroup):
        sole = sole_exception(exc)
        return sole if isinstance(sole, OSError) else None
    return exc if isinstance(exc, OSError) else None


async def _serve_until_interrupted(serve: Any, app: Any, host: str, port: int, err: TextIO) -> int:
    async with anyio.create_task_group() as group:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            url = await group.start(partial(serve, host, port, app=app))
            err.write(f"pi-trio: proxy serving {url}/api/stream (Ctrl-C stops it)\n")
            err.flush()
            async for _ in signals:
                err.write("pi-trio: proxy stopped\n")
                group.cancel_scope.cancel()
                break
    return EXIT_INTERRUPTED  # the one way it ends: Ctrl-C, with the status every command gives it


def proxy_command(
    *,
    host: str,
    port: int,
    tokens_file: str | None,
    err: TextIO,
    limits: dict[str, Any] | None = None,
) -> int:
    """Serve until Ctrl-C. ``limits``: ``create_app`` keyword arguments (``max_body_bytes``,
    ``max_streams``, ``body_timeout``, ``max_bytes_in_flight``)."""
    if importlib.util.find_spec("hypercorn") is None:
        err.write(MISSING_EXTRA)
        return EXIT_USAGE
    from ..proxy import create_app, serve

    try:
        app = create_app(tokens_file=tokens_file, **(limits or {}))
    except OSError as exc:
        err.write(f"pi-trio: cannot read --tokens-file {tokens_file!r}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    except UnicodeDecodeError as exc:  # only the file is decoded: the environment is text
        err.write(
            f"pi-trio: --tokens-file {tokens_file!r} is not UTF-8 text (byte "
            f"0x{exc.object[exc.start]:02x} at offset {exc.start}); write one token per line\n"
        )
        return EXIT_USAGE
    except (PiError, ValueError) as exc:
        err.write(f"pi-trio: {exc}\n")
        return EXIT_USAGE
    try:
        code: int = anyio.run(_serve_until_interrupted, serve, app, host, port, err, backend="trio")
    except (OSError, BaseExceptionGroup) as exc:
        error = _os_error(exc)
        if error is None:
            raise
        err.write(serve_error_text(error, host, port) + "\n")
        return EXIT_FAILED
    return code
