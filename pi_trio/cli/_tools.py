"""The CLI's built-in tools: all safe to hand to any model.

``current_time`` reads the clock, ``calculator`` evaluates arithmetic without ``eval``, and
``read_file`` reads a text file under one root directory (the working directory), refusing
paths that lead outside it and reading at most ``max_bytes``.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import anyio

from ..agent import AgentTool, tool
from ._calc import evaluate, format_number

__all__ = [
    "READ_FILE_MAX_BYTES",
    "PathEscapeError",
    "builtin_tools",
    "calculator",
    "current_time",
    "make_read_file",
    "resolve_under",
]

# Enough for a source file or a README; a model that needs more can ask for a smaller file.
READ_FILE_MAX_BYTES: Final = 64 * 1024


class PathEscapeError(ValueError):
    """A path that leads outside the directory the tool may read."""


@tool(label="Current time")
def current_time(timezone: str | None = None) -> str:
    """Get the current date and time. Optionally pass an IANA time zone name such as
    'Europe/Paris' or 'UTC'; by default the local time of this machine is used."""
    if timezone is None:
        now = dt.datetime.now().astimezone()
    else:
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"unknown time zone {timezone!r}; use an IANA name like 'Europe/Paris' or 'UTC'"
            ) from exc
        now = dt.datetime.now(zone)
    return f"{now.isoformat(timespec='seconds')} ({now:%A}, {now.tzname()})"


@tool(label="Calculator")
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly, e.g. '(17 + 25) * 3 / 7' or
    'sqrt(2) ** 10'. Supports + - * / // % **, parentheses, pi, e, tau and abs, round,
    min, max, sqrt, exp, log, log2, log10, sin, cos, tan, floor, ceil."""
    return format_number(evaluate(expression))


def resolve_under(root: Path, path: str) -> Path:
    """``path`` (relative to ``root``, or absolute inside it) resolved, symlinks included;
    ``PathEscapeError`` if the result is not inside ``root``."""
    if not path or "\x00" in path:
        raise PathEscapeError(f"{path!r} is not a file path; give a path like 'README.md'")
    base = root.resolve()
    target = (base / os.path.expanduser(path)).resolve()
    if not target.is_relative_to(base):
        raise PathEscapeError(
            f"{path!r} is outside the working directory {str(base)!r}; read_file only "
            "reads files under it (give a relative path such as 'README.md')"
        )
    return target


def make_read_file(root: Path, *, max_bytes: int = READ_FILE_MAX_BYTES) -> AgentTool:
    """The ``read_file`` tool confined to ``root``."""
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")

    @tool(label="Read file")
    async def read_file(path: str) -> str:
        """Read a UTF-8 text file under the current working directory. Give the path
        relative to it, e.g. 'README.md' or 'src/main.py'. Large files are cut off."""
        target = resolve_under(root, path)
        if not target.is_file():
            raise FileNotFoundError(f"{path!r} is not a file under the working directory")
        async with await anyio.open_file(target, "rb") as handle:
            data = await handle.read(max_bytes + 1)
        if b"\x00" in data:
            raise ValueError(f"{path!r} looks like a binary file; read_file reads text only")
        text = data[:max_bytes].decode("utf-8", errors="replace")
        if len(data) > max_bytes:
            size = target.stat().st_size
            text += f"\n[truncated: the file has {size} bytes; showing the first {max_bytes}]"
        return text

    return read_file


def builtin_tools(root: Path | None = None) -> list[AgentTool]:
    """``current_time``, ``calculator`` and ``read_file`` (under ``root``, default cwd)."""
    return [current_time, calculator, make_read_file(Path.cwd() if root is None else root)]
