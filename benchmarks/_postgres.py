"""A throwaway PostgreSQL server on loopback, from Debian's ``postgresql`` package.

``local_postgres()`` creates a cluster in a temporary directory (``initdb``), starts it on
a free port of 127.0.0.1 with its socket in that directory (``pg_ctl``), creates one
database and yields its URL; on exit it stops the server and deletes the directory.
Nothing of the machine's own clusters is touched. PostgreSQL refuses to run as root, so a
root process runs the server as the ``postgres`` user the package creates. Settings stay
at their defaults (``fsync`` and ``synchronous_commit`` on): a step is as durable as a
production server makes it. ``durable=False`` turns both off, for tests that kill a
client of the server, never the server itself: a commit it acknowledged stays visible.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["PostgresMissing", "local_postgres", "postgres_bindir"]

DATABASE = "pi_trio_bench"
ROLE = "bench"
START_TIMEOUT_S = 60


class PostgresMissing(RuntimeError):
    """The PostgreSQL server programs are not installed."""


def postgres_bindir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` are: ``pg_config --bindir``, else the newest
    ``/usr/lib/postgresql/*/bin`` (Debian keeps them off ``PATH``)."""
    candidates: list[str] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(out.stdout.strip())
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True
    )
    candidates.extend(versions)
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    raise PostgresMissing(
        "no PostgreSQL server programs (initdb, pg_ctl) found via pg_config or in "
        "/usr/lib/postgresql/*/bin; install Debian's server: apt-get install postgresql"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def local_postgres(*, durable: bool = True) -> Iterator[str]:
    """Start a private PostgreSQL server; yield ``postgresql://...`` for its database."""
    bindir = postgres_bindir()
    as_user: dict[str, Any] = {}
    workdir = Path(tempfile.mkdtemp(prefix="pi-trio-pg-"))
    if os.geteuid() == 0:
        as_user = {"user": "postgres", "group": "postgres"}
        shutil.chown(workdir, "postgres", "postgres")
    data = workdir / "data"
    port = _free_port()

    def run(*args: str) -> None:
        out = subprocess.run(
            list(args), capture_output=True, text=True, check=False, cwd=workdir, **as_user
        )
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stderr[-2000:]}")

    started = False
    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", ROLE, "--auth=trust", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir}"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off"
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(workdir / "server.log"),
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "start",
        )
        started = True
        run(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", ROLE, DATABASE)
        yield f"postgresql://{ROLE}@127.0.0.1:{port}/{DATABASE}"
    finally:
        if started:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(workdir, ignore_errors=True)
