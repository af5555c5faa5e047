"""Serving an ASGI app with hypercorn's trio worker (hypercorn comes with the ``agui``
extra, as with ``proxy``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import anyio.abc

__all__ = ["serve"]


async def serve(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the ASGI ``app`` (an ``AGUIApp``, or an app that mounts one) on
    ``host:port`` until cancelled or until ``shutdown_trigger()`` returns. Runs on trio.
    With ``await task_group.start(serve, app, ...)`` the started value is the base URL
    (port 0 picks a free port)."""
    try:
        from hypercorn.config import Config
        from hypercorn.trio import serve as hypercorn_serve
    except ImportError as exc:
        raise ImportError(
            "serving AG-UI needs hypercorn, from the optional 'agui' extra: "
            "pip install 'pi-trio[agui]'"
        ) from exc

    config = Config()
    config.bind = [
        f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    ]
    config.accesslog = None
    async with anyio.create_task_group() as task_group:
        binds: list[str] = await task_group.start(
            partial(hypercorn_serve, app, config, shutdown_trigger=shutdown_trigger)
        )
        task_status.started(binds[0] if binds else f"http://{host}:{port}")
