"""Saving and resuming conversations.

``record_session(agent, store)`` appends every message to a ``SessionStore`` as it
finishes; ``Agent(model=..., messages=store.load())`` resumes from it. ``FileSessionStore``
keeps a session in a JSON Lines file (one message per line, the original runtime's JSON),
which keeps every finished message when the process is killed mid-run. A store is two
methods (``append``, ``load``), so one on a database is a few lines.
``load_messages(path)`` reads a transcript file (JSON Lines or a JSON array); a broken file
raises ``pi_trio.ai.MessageDecodeError`` naming the file, the line and the field.
"""

from ._record import record_session as record_session
from ._store import FileSessionStore as FileSessionStore
from ._store import SessionError as SessionError
from ._store import SessionStore as SessionStore
from ._store import load_messages as load_messages

__all__ = ["FileSessionStore", "SessionError", "SessionStore", "load_messages", "record_session"]
