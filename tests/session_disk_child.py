"""The child process of the full-disk session tests: appends to a ``FileSessionStore``
until a write fails for real, and prints what it saw as one JSON object.

``tmpfs DIR``: mounts a 64 KiB tmpfs on DIR (the process runs in a mount namespace of its
own, made by ``unshare``), fills it, and appends a message larger than the room left:
``ENOSPC`` part-way through the write. ``fsize DIR``: lowers ``RLIMIT_FSIZE`` to just
past the session file's end: ``EFBIG`` part-way through the write, no privileges needed.
"""

from __future__ import annotations

import errno
import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

from pi_trio.ai import UserMessage, to_json
from pi_trio.session import FileSessionStore, SessionError


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def fill(directory: Path) -> Path:
    """A file taking all the room left on the file system."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as file:
        while True:
            try:
                file.write(b"\0" * 4096)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        for size in (512, 64, 1):
            while True:
                try:
                    file.write(b"\0" * size)
                except OSError:
                    break
    return filler


def main(mode: str, directory: Path) -> None:
    if mode == "tmpfs":
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(directory)], check=True
        )
    path = directory / "chat.jsonl"
    store = FileSessionStore(path)
    store.append(user("one"))
    store.append(user("two"))
    before = path.read_bytes()
    filler = None
    if mode == "tmpfs":
        filler = fill(directory)
    else:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 100, hard))
    failure: dict[str, object] = {}
    try:
        store.append(user("x" * 20_000))
    except SessionError as exc:
        cause = exc.__cause__
        failure = {"text": str(exc), "errno": getattr(cause, "errno", None)}
    after = path.read_bytes()
    if filler is not None:
        filler.unlink()
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    store.append(user("three"))
    loaded = [to_json(m).decode() for m in FileSessionStore(path).load()]
    expected = [to_json(user(t)).decode() for t in ("one", "two", "three")]
    print(
        json.dumps(
            {
                "failure": failure,
                "unchanged": after == before,
                "torn_bytes": len(after) - len(before),
                "loaded_all": loaded == expected,
                "loaded": len(loaded),
                "whole": path.read_bytes() == "".join(f"{line}\n" for line in expected).encode(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
