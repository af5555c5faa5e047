"""Serving the proxy app with hypercorn's trio worker (the optional ``proxy`` extra)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any

import anyio
import anyio.abc

from ..ai.providers import ProviderRegistry
from ._access import ModelPolicy, catalog_models_only
from ._app import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_STREAMS, ProxyApp, create_app
from ._body import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BYTES_IN_FLIGHT
from ._options import DEFAULT_FORWARD_HEADERS, DEFAULT_SAMPLING_PARAMS

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787


async def serve(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    app: ProxyApp | None = None,
    tokens: list[str] | None = None,
    tokens_file: str | os.PathLike[str] | None = None,
    registry: ProviderRegistry | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_streams: int = DEFAULT_MAX_STREAMS,
    model_policy: ModelPolicy = catalog_models_only,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    forward_headers: Iterable[str] = DEFAULT_FORWARD_HEADERS,
    max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT,
    sampling_params: Iterable[str] = DEFAULT_SAMPLING_PARAMS,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``POST /api/stream`` on ``host:port`` until cancelled (or until
    ``shutdown_trigger()`` returns). Runs on trio. With ``await task_group.start(serve,
    ...)`` the started value is the base URL, e.g. ``"http://127.0.0.1:8787"`` (port 0
    picks a free port). Serves ``app`` if given, else ``create_app(...)`` with the other
    options."""
    try:
        from hypercorn.config import Config
        from hypercorn.trio import serve as hypercorn_serve
    except ImportError as exc:
        raise ImportError(
            "the proxy server needs hypercorn, from the optional 'proxy' extra: "
            "pip install 'pi-trio[proxy]'"
        ) from exc

    if app is None:
        app = create_app(
            tokens=tokens,
            tokens_file=tokens_file,
            registry=registry,
            max_body_bytes=max_body_bytes,
            max_streams=max_streams,
            model_policy=model_policy,
            body_timeout=body_timeout,
            forward_headers=forward_headers,
            max_bytes_in_flight=max_bytes_in_flight,
            sampling_params=sampling_params,
        )
    config = Config()
    config.bind = [
        f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    ]
    config.accesslog = None
    async with anyio.create_task_group() as task_group:
        binds: list[str] = await task_group.start(
            partial(hypercorn_serve, app, config, shutdown_trigger=shutdown_trigger)  # type: ignore[arg-type]
        )
        task_status.started(binds[0] if binds else f"http://{host}:{port}")
