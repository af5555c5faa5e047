"""Session stores: the protocol, the JSON Lines file store, the file loader, and the
listener that records an agent's finished messages."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..agent import Agent, AgentMessage
from ..ai import MessageDecodeError, PiError, messages_from_json, to_json
from ..ai.json import messages_from_jsonl

__all__ = ["FileSessionStore", "SessionError", "SessionStore", "load_messages", "record_session"]


class SessionError(PiError, ValueError):
    """A session store and an agent (or a file) that do not go together; the message
    says why and what to do instead."""


@runtime_checkable
class SessionStore(Protocol):
    """Where a conversation is kept, one message at a time.

    ``append(message)`` saves one finished message after the ones saved before (it is
    called from the agent's listener, in the event loop's thread: keep it quick, as a
    local file or SQLite write is); ``load()`` returns every saved message in order.
    """

    def append(self, message: AgentMessage) -> None: ...

    def load(self) -> list[AgentMessage]: ...


def load_messages(path: str | os.PathLike[str]) -> list[AgentMessage]:
    """Read a transcript file: JSON Lines (one message per line, what a session store
    writes) or a JSON array (``messages_to_json``, the TypeScript runtime's export).

    A broken file raises ``MessageDecodeError`` (``MessageValidationError`` for a wrong
    field) naming the file, the line and the field. A last line without its newline that
    does not decode is a write that a crash cut short: it is left out, every message
    before it is returned.
    """
    source = os.fspath(path)
    data = Path(path).read_bytes()
    if data.lstrip()[:1] == b"[":
        return list(messages_from_json(data, source=source))
    try:
        return list(messages_from_jsonl(data, source=source))
    except MessageDecodeError as exc:
        if data.endswith(b"\n") or exc.line != data.count(b"\n") + 1:
            raise
        return list(messages_from_jsonl(data[: data.rfind(b"\n") + 1], source=source))


class FileSessionStore:
    """A session kept in a JSON Lines file: one message per line, in the original
    runtime's JSON (``to_json``), each line written whole as its message finishes.

    The file is opened for each message, so nothing stays open between runs, and what
    was appended survives the process being killed. ``fsync=True`` also waits until the
    disk has it (survives a power loss; slower). Before the first append, a last line
    that a crash cut short is removed (a complete one missing only its newline gets it).
    One writer per file.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._tail_checked = False

    def __repr__(self) -> str:
        return f"FileSessionStore({os.fspath(self.path)!r})"

    def load(self) -> list[AgentMessage]:
        """The saved messages (none when the file does not exist yet)."""
        if not self.path.exists():
            return []
        return load_messages(self.path)

    def append(self, message: AgentMessage) -> None:
        line = to_json(message) + b"\n"
        if not self._tail_checked:
            self._repair_tail()
            self._tail_checked = True
        with self.path.open("ab") as file:
            file.write(line)
            if self.fsync:
                file.flush()
                os.fsync(file.fileno())

    def _repair_tail(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if data.lstrip()[:1] == b"[":
            raise SessionError(
                f"{os.fspath(self.path)!r} holds a JSON array transcript, and a session "
                "store appends one message per line; start a new store with its messages: "
                "FileSessionStore(new_path) and record_session(Agent(model=..., messages="
                "load_messages(old_path)), store)"
            )
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        try:
            messages_from_jsonl(data[cut:])
        except MessageDecodeError:
            with self.path.open("r+b") as file:
                file.truncate(cut)  # the torn line of a write a crash cut short
        else:
            with self.path.open("ab") as file:
                file.write(b"\n")


def record_session(agent: Agent, store: SessionStore) -> Callable[[], None]:
    """Save ``agent``'s conversation in ``store`` as it happens: every message is
    appended when its ``message_end`` arrives (a listener; abort never interrupts
    listeners, so an aborted answer is saved too), a failed response with the next event,
    unless that is the ``auto_retry_start`` that withdraws it. Returns the function that
    stops.

    The store must hold the start of the agent's transcript: none of it (a new session:
    the agent's messages so far, such as its system prompt, are appended first) or all
    of it (the agent was resumed with ``Agent(model=..., messages=store.load())``).
    """
    if agent.state.is_streaming:
        raise SessionError(
            "record_session(agent, store) while the agent runs would miss the messages "
            "of the run so far; call it before prompt()"
        )
    saved = store.load()
    held = agent.state.messages
    if len(saved) > len(held) or any(
        to_json(a) != to_json(b) for a, b in zip(saved, held, strict=False)
    ):
        raise SessionError(
            f"{store!r} holds {len(saved)} messages that are not the start of the agent's "
            f"{len(held)}; resume the agent from the store (Agent(model=..., "
            "messages=store.load())) or record into a new store"
        )
    for message in held[len(saved) :]:
        store.append(message)
    # A failed response is saved once the next event shows it stays: with a retry policy
    # (``RunPolicy(retry=...)``) ``auto_retry_start`` withdraws it from the transcript instead.
    failed: list[AgentMessage] = []

    def save(event: Any) -> None:
        if failed:
            message = failed.pop()
            if event.type == "auto_retry_start":
                return
            store.append(message)
        if event.type == "message_end":
            message = event.message
            if getattr(message, "role", None) == "assistant" and message.stop_reason == "error":
                failed.append(message)
            else:
                store.append(message)

    return agent.subscribe(save)
