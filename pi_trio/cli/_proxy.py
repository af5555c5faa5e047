"""``pi-trio proxy``: serve the Pi proxy protocol with ``pi_trio.proxy.serve``.

The server needs the optional ``proxy`` extra (hypercorn); it is imported only when the
command runs, and a missing extra is a one-line error. Ctrl-C stops the server (exit 0).
"""

from __future__ import annotations

import importlib.util
import signal
from functools import partial
from typing import Any, TextIO

import anyio

from ..ai import PiError
from ._run import EXIT_USAGE

__all__ = ["MISSING_EXTRA", "proxy_command"]

MISSING_EXTRA = (
    "pi-trio: the proxy server needs the 'proxy' extra (hypercorn); install it with "
    "pip install 'pi-trio[proxy]'\n"
)


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
    return 0


def proxy_command(
    *,
    host: str,
    port: int,
    tokens_file: str | None,
    err: TextIO,
    limits: dict[str, Any] | None = None,
) -> int:
    """Serve until Ctrl-C. ``limits``: ``create_app`` keyword arguments (``max_body_bytes``,
    ``max_streams``, ``body_timeout``)."""
    if importlib.util.find_spec("hypercorn") is None:
        err.write(MISSING_EXTRA)
        return EXIT_USAGE
    from ..proxy import create_app, serve

    try:
        app = create_app(tokens_file=tokens_file, **(limits or {}))
    except (PiError, OSError, ValueError) as exc:
        err.write(f"pi-trio: {exc}\n")
        return EXIT_USAGE
    code: int = anyio.run(_serve_until_interrupted, serve, app, host, port, err, backend="trio")
    return code
