"""Session stores: the protocol, the JSON Lines file store and the file loader
(``_record`` has the listener that records an agent's messages into a store)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, Protocol, runtime_checkable

import msgspec

from ..agent import AgentMessage
from ..ai import MessageDecodeError, PiError, messages_from_json, to_json
from ..ai.json import messages_from_jsonl

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the size check still refuses a second writer
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FileSessionStore",
    "SessionError",
    "SessionStore",
    "is_torn",
    "load_messages",
]

_logger = logging.getLogger("pi_trio.session")


class SessionError(PiError, ValueError):
    """A session store and an agent (or a file) that do not go together; the message
    says why and what to do instead."""


@runtime_checkable
class SessionStore(Protocol):
    """Where a conversation is kept, one message at a time.

    ``append(message)`` saves one finished message after the ones saved before (it is
    called from the agent's listener, in the event loop's thread: keep it quick, as a
    local file or SQLite write is); ``load()`` returns every saved message in order.

    A store that can also ``replace(messages)`` (make them the whole session) follows an
    agent that compacts its transcript (``RunPolicy(compaction=...)``), and one whose tools
    need approval: ``Agent.resume`` puts each decided call's result in place of the
    placeholder saved when the run paused.
    """

    def append(self, message: AgentMessage) -> None: ...

    def load(self) -> list[AgentMessage]: ...


def load_messages(path: str | os.PathLike[str]) -> list[AgentMessage]:
    """Read a transcript file: JSON Lines (one message per line, what a session store
    writes) or a JSON array (``messages_to_json``, the TypeScript runtime's export).

    A broken file raises ``MessageDecodeError`` (``MessageValidationError`` for a wrong
    field) naming the file, the line and the field. A last line without its newline that
    is the start of a JSON value cut short (a write that a crash or a full disk
    interrupted) is left out, with a warning on the ``pi_trio.session`` logger; every
    message before it is returned. A last line that is whole but wrong (edited by hand)
    raises like any other line.
    """
    return _decode_file(os.fspath(path), Path(path).read_bytes())


def _decode_file(source: str, data: bytes) -> list[AgentMessage]:
    if data.lstrip()[:1] == b"[":
        return list(messages_from_json(data, source=source))
    try:
        return list(messages_from_jsonl(data, source=source))
    except MessageDecodeError as exc:
        cut = data.rfind(b"\n") + 1
        if data.endswith(b"\n") or exc.line != data.count(b"\n") + 1 or not is_torn(data[cut:]):
            raise
        _logger.warning(
            "%s: the last line (%d bytes, no newline) is a write cut short; left out",
            source,
            len(data) - cut,
        )
        return list(messages_from_jsonl(data[:cut], source=source))


def is_torn(line: bytes) -> bool:
    """Whether ``line`` is the start of a JSON value cut short (what an interrupted
    append leaves), as opposed to a whole line that does not decode."""
    # a cut may fall inside a character: its first bytes are not UTF-8 on their own
    text = line.decode("utf-8", "ignore")
    try:
        msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        return "truncated" in str(exc)
    except RecursionError:
        return False  # nested too deep to be a message: the bounded decode names the line
    return False


class FileSessionStore:
    """A session kept in a JSON Lines file: one message per line, in the original
    runtime's JSON (``to_json``), each line written whole as its message finishes.

    The file is opened for each message, so nothing stays open between runs, and what
    was appended survives the process being killed. ``fsync=True`` also waits until the
    disk has it (survives a power loss; slower). What the store guarantees:

    - An append that fails (a full disk, a quota) leaves the file as it was: the part
      written is cut off again, and ``SessionError`` says why (chained to the
      ``OSError``). The store stays usable once there is room.
    - Before the first append, a last line that a crash cut short is removed (a warning
      on the ``pi_trio.session`` logger); a complete one missing only its newline gets
      it; a whole last line that does not decode (edited by hand) is refused with
      ``SessionError``, never dropped.
    - The path must be a regular file or not exist yet: a symbolic link there is refused
      (``SessionError``), never followed, by ``append`` and ``load``.
    - One writer per file. Each append takes an exclusive lock on the file (``flock``)
      and checks that the file is as this store last saw it (after its own last append,
      or its ``load()``); a file that another store or process wrote meanwhile is
      refused with ``SessionError`` instead of interleaving two conversations.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._tail_checked = False
        self._seen: tuple[int, int, int] | None = None  # (device, inode, size) last seen

    def __repr__(self) -> str:
        return f"FileSessionStore({os.fspath(self.path)!r})"

    def load(self) -> list[AgentMessage]:
        """The saved messages (none when the file does not exist yet)."""
        try:
            fd = self._open(os.O_RDONLY)
        except FileNotFoundError:
            self._seen = (0, 0, 0)
            return []
        try:
            info = os.fstat(fd)
            data = _read_all(fd, info.st_size)
        finally:
            os.close(fd)
        self._seen = (info.st_dev, info.st_ino, len(data))
        return _decode_file(os.fspath(self.path), data)

    def append(self, message: AgentMessage) -> None:
        line = to_json(message) + b"\n"
        fd = self._open(os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            _lock(fd)
            info = os.fstat(fd)
            size = self._check_writer(info)
            if not self._tail_checked:
                size = self._repair_tail(fd, size)
                self._tail_checked = True
            try:
                _write_all(fd, line)
                if self.fsync:
                    os.fsync(fd)
            except OSError as exc:
                self._undo(fd, size, exc)
            self._seen = (info.st_dev, info.st_ino, size + len(line))
        finally:
            os.close(fd)  # and with it the lock

    def replace(self, messages: Sequence[AgentMessage]) -> None:
        """Make ``messages`` the whole session (``record_session`` calls it after a
        compaction condensed the transcript, and when a resumed run puts a call's result
        in place of the placeholder saved when the run paused for approval). The file is
        written anew beside the old one and renamed over it, so a crash leaves the old
        file or the new one, never a mix; the same one-writer check as ``append`` comes
        first."""
        data = b"".join(to_json(m) + b"\n" for m in messages)
        fd = self._open(os.O_RDWR | os.O_CREAT)
        try:
            _lock(fd)
            info = os.fstat(fd)
            self._check_writer(info)
            self._write_new(data, stat.S_IMODE(info.st_mode))
        finally:
            os.close(fd)  # the old file, and with it the lock

    def _write_new(self, data: bytes, mode: int) -> None:
        """``data`` as the store's file: written to a temporary file in its folder, then
        renamed over it."""
        folder = self.path.parent
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{self.path.name}.", suffix=".tmp")
        try:
            try:
                os.fchmod(fd, mode)
                _write_all(fd, data)
                if self.fsync:
                    os.fsync(fd)
                info = os.fstat(fd)
            finally:
                os.close(fd)
            os.replace(temporary, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise SessionError(
                f"could not rewrite {os.fspath(self.path)!r}: {exc.strerror or exc} "
                f"(errno {exc.errno}); the file is as it was"
            ) from exc
        if self.fsync:
            _fsync_folder(folder)
        self._seen = (info.st_dev, info.st_ino, len(data))
        self._tail_checked = True

    def _open(self, flags: int) -> int:
        try:
            fd = os.open(self.path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP and self.path.is_symlink():
                raise SessionError(
                    f"{os.fspath(self.path)!r} is a symbolic link; a session store reads "
                    "and writes only the regular file at its path, so that a link planted "
                    "there cannot make it write elsewhere: give the file's real path"
                ) from exc
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise SessionError(
                f"{os.fspath(self.path)!r} is not a regular file; a session store keeps "
                "its messages in one"
            )
        return fd

    def _check_writer(self, info: os.stat_result) -> int:
        seen = self._seen
        now = (info.st_dev, info.st_ino, info.st_size)
        if seen is not None and seen != now and seen != (0, 0, 0):
            raise SessionError(
                f"{os.fspath(self.path)!r} changed since this store last saw it "
                f"({seen[2]} bytes, now {info.st_size}): another store or process is "
                "writing the same session, and appending now would interleave two "
                "conversations. Record each conversation into a file of its own, or "
                "resume from the file (Agent(model=..., messages=store.load())) in the "
                "one process that writes it"
            )
        if seen == (0, 0, 0) and info.st_size:
            raise SessionError(
                f"{os.fspath(self.path)!r} was created by another store or process after "
                "this store found it missing: two writers of one session; record into "
                "a file of your own, or load() again to continue the other's"
            )
        return info.st_size

    def _repair_tail(self, fd: int, size: int) -> int:
        """The file's size after making its end whole (see the class docstring)."""
        data = _read_all(fd, size)
        if data.lstrip()[:1] == b"[":
            raise SessionError(
                f"{os.fspath(self.path)!r} holds a JSON array transcript, and a session "
                "store appends one message per line; start a new store with its messages: "
                "FileSessionStore(new_path) and record_session(Agent(model=..., messages="
                "load_messages(old_path)), store)"
            )
        if not data or data.endswith(b"\n"):
            return size
        cut = data.rfind(b"\n") + 1
        try:
            messages_from_jsonl(data[cut:])
        except MessageDecodeError as exc:
            if not is_torn(data[cut:]):
                number = data.count(b"\n") + 1
                raise SessionError(
                    f"the last line of {os.fspath(self.path)!r} (line {number}) is not a "
                    "message and not a write cut "
                    f"short ({exc}); it was edited by hand: fix or remove it, then "
                    "append again"
                ) from exc
            _logger.warning(
                "%s: removed the last line (%d bytes), a write cut short",
                os.fspath(self.path),
                size - cut,
            )
            os.ftruncate(fd, cut)
            return cut
        _write_all(fd, b"\n")
        return size + 1

    def _undo(self, fd: int, size: int, exc: OSError) -> NoReturn:
        """Cut what a failed append wrote; raise the ``SessionError`` that says so."""
        try:
            os.ftruncate(fd, size)
        except OSError:
            self._tail_checked = False  # the next append removes the torn line first
            self._seen = None
            kept = "and cutting it off failed too: the next append removes it"
        else:
            kept = "the file is as it was"
        raise SessionError(
            f"could not append to {os.fspath(self.path)!r}: {exc.strerror or exc} "
            f"(errno {exc.errno}); {kept}. Free some space (or raise the quota) and the "
            "store goes on with the next message"
        ) from exc


def _read_all(fd: int, size: int) -> bytes:
    parts = []
    offset = 0
    while offset < size:
        part = os.pread(fd, size - offset, offset)
        if not part:
            break
        parts.append(part)
        offset += len(part)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    """``data`` written whole (a short write is continued; a failure raises)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(fd: int) -> None:
    """An exclusive lock on the open file, released when it is closed (POSIX only)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
