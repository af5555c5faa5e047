"""A chat whose conversation lives in SQLite: each message is a row, written as it
finishes, and the next run resumes where the last one stopped.

A session store is two methods, append and load; SqliteSessionStore below is the whole
of it. A run that fails (no key, a network error) prints the reason and exits with 1;
Ctrl-C aborts it, keeps the answer so far in the chat and exits with 130.

    python examples/sqlite_session.py --faux "my name is Ada"      # offline, scripted
    python examples/sqlite_session.py --faux "what is my name?"    # resumes the chat
    python examples/sqlite_session.py --model anthropic/claude-haiku-4-5 "hello"
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
from collections.abc import Sequence
from typing import Any

import trio

from pi_trio.agent import Agent
from pi_trio.ai import UnknownModelError, from_json, resolve_model, to_json
from pi_trio.session import record_session
from pi_trio.testing import FauxProvider, faux_assistant_message


class SqliteSessionStore:
    """One conversation (``session``) in a SQLite table, a message per row."""

    def __init__(self, db: sqlite3.Connection, session: str) -> None:
        self.db = db
        self.session = session
        db.execute(
            "CREATE TABLE IF NOT EXISTS messages"
            " (session TEXT, seq INTEGER PRIMARY KEY AUTOINCREMENT, json BLOB)"
        )

    def append(self, message: Any) -> None:
        with self.db:  # one transaction per message: committed as it finishes
            self.db.execute(
                "INSERT INTO messages (session, json) VALUES (?, ?)",
                (self.session, to_json(message)),
            )

    def load(self) -> list[Any]:
        rows = self.db.execute(
            "SELECT json FROM messages WHERE session = ? ORDER BY seq", (self.session,)
        )
        return [from_json(row[0]) for row in rows]


def faux_model() -> tuple[Any, FauxProvider]:
    """A scripted model that answers with how many user messages it has seen."""
    faux = FauxProvider()

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        faux.append_responses([reply])
        said = [m for m in context.messages if m.role == "user"]
        return faux_assistant_message(f"Message {len(said)} of this chat, received.")

    faux.set_responses([reply])
    return faux.get_model(), faux


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt")
    parser.add_argument("--faux", action="store_true", default=bool(os.environ.get("PI_TRIO_FAUX")))
    parser.add_argument("--model", help="provider/model-id (needs its API key in the environment)")
    parser.add_argument("--db", default="chat.sqlite3", help="the SQLite file")
    parser.add_argument("--session", default="default", help="which conversation")
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
            + ("; PI_TRIO_FAUX is set" if os.environ.get("PI_TRIO_FAUX") else "")
        )
    if not args.prompt.strip():
        parser.error("the prompt is empty")
    if not args.faux:
        try:
            args.model = resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


async def main(argv: Sequence[str] | None = None) -> list[Any]:
    args = parse_args(argv)
    model, stream_fn = faux_model() if args.faux else (args.model, None)
    try:
        db = sqlite3.connect(args.db)
        store = SqliteSessionStore(db, args.session)
    except sqlite3.Error as exc:
        sys.exit(f"sqlite_session: cannot open the database {args.db!r}: {exc}")
    try:
        agent = Agent(
            model=model,
            stream_fn=stream_fn,
            system_prompt="You are a brief assistant.",
            messages=store.load(),  # resume: the conversation so far
        )
        record_session(agent, store)  # save every message as it finishes
        interrupted = False

        async def abort_on_ctrl_c(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            nonlocal interrupted
            with trio.open_signal_receiver(signal.SIGINT) as presses:
                task_status.started()
                async for _ in presses:
                    interrupted = True
                    agent.abort()  # the answer so far is saved, marked aborted

        async with trio.open_nursery() as nursery:
            await nursery.start(abort_on_ctrl_c)
            result = await agent.prompt(args.prompt)
            nursery.cancel_scope.cancel()
    finally:
        db.close()
    if interrupted:
        print("sqlite_session: interrupted; the answer so far is saved", file=sys.stderr)
        sys.exit(130)
    for message in agent.state.messages:
        text = message.content if isinstance(message.content, str) else ""
        text = text or "".join(getattr(b, "text", "") for b in message.content)
        print(f"{message.role:>9}: {text}")
    if not result.ok:  # the failed answer is saved too; say why it failed
        sys.exit(f"sqlite_session: the run failed: {result.error_message}")
    return agent.state.messages


if __name__ == "__main__":
    trio.run(main)
