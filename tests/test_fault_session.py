"""The fault suite, the session store: a disk that fills up mid-write (a real tmpfs, and
a real file-size limit), a symbolic link planted at the session's path, a last line
edited by hand, and two processes writing one session."""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from pi_trio.ai import MessageDecodeError, UserMessage, to_json
from pi_trio.ai.json import messages_to_jsonl
from pi_trio.session import FileSessionStore, SessionError, load_messages

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux file systems")

DISK_CHILD = Path(__file__).with_name("session_disk_child.py")
REPO = Path(__file__).resolve().parent.parent


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def _namespace_command() -> list[str]:
    """``unshare`` into a mount namespace of our own: as root directly, else as root of a
    user namespace (so the tmpfs is mounted, and gone, with the child alone)."""
    unshare = shutil.which("unshare")
    assert unshare is not None, "the full-disk test needs unshare (util-linux)"
    if os.geteuid() == 0:
        return [unshare, "--mount", "--propagation", "private"]
    return [unshare, "--user", "--map-root-user", "--mount"]


def _run_disk_child(mode: str, prefix: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as directory:
        done = subprocess.run(
            [*prefix, sys.executable, str(DISK_CHILD), mode, directory],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("mode", "code"), [("tmpfs", errno.ENOSPC), ("fsize", errno.EFBIG)], ids=["full", "fsize"]
)
def test_an_append_that_fails_mid_write_leaves_the_file_as_it_was(mode: str, code: int) -> None:
    prefix = _namespace_command() if mode == "tmpfs" else []
    result = _run_disk_child(mode, prefix)
    failure = result["failure"]
    assert isinstance(failure, dict), result
    assert failure["errno"] == code, result
    assert "the file is as it was" in failure["text"], result
    assert "Free some space" in failure["text"], result
    assert result["unchanged"] is True, result  # nothing of the failed line stayed
    assert result["loaded_all"] is True, result  # and the next append went on after it
    assert result["whole"] is True, result


# --------------------------------------------------------------------------- symlinks


def test_a_symbolic_link_at_the_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"line one\nno newline at the end")
    link = tmp_path / "chat.jsonl"
    link.symlink_to(victim)
    store = FileSessionStore(link)
    with pytest.raises(SessionError, match=r"chat\.jsonl' is a symbolic link; "):
        store.append(user("hello"))
    with pytest.raises(SessionError, match=r"is a symbolic link"):
        store.load()
    assert victim.read_bytes() == b"line one\nno newline at the end"


def test_a_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "chat.jsonl"
    os.mkfifo(fifo)
    raised: list[BaseException] = []

    def append() -> None:
        try:
            FileSessionStore(fifo).append(user("hello"))
        except BaseException as exc:
            raised.append(exc)

    # a store that opened the pipe would wait for its other end forever: in a thread,
    # so that the test fails instead of hanging
    thread = threading.Thread(target=append, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the store opened a named pipe and waits on it"
    assert len(raised) == 1
    assert isinstance(raised[0], SessionError)
    assert "is not a regular file" in str(raised[0])


# --------------------------------------------------------------------------- the last line


@pytest.mark.parametrize(
    "edited",
    [
        b'{"role": "user", "content": "hi", "timestamp": "yesterday"}',  # JSON, no message
        b"I fixed the typo here",  # not JSON at all
    ],
    ids=["not a message", "not json"],
)
def test_a_last_line_edited_by_hand_is_refused_not_dropped(tmp_path: Path, edited: bytes) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(messages_to_jsonl([user("one")]) + edited)
    with pytest.raises(MessageDecodeError, match=r"line 2"):
        load_messages(path)
    with pytest.raises(SessionError, match=r"\(line 2\) is not a message and not a write cut"):
        FileSessionStore(path).append(user("two"))
    assert path.read_bytes() == messages_to_jsonl([user("one")]) + edited


def test_a_line_cut_short_is_left_out_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "chat.jsonl"
    torn = to_json(user("tw\u00e9")).replace(b"\xc3\xa9", b"\xc3")[:-3]  # cut inside the é
    path.write_bytes(messages_to_jsonl([user("one")]) + torn)
    with caplog.at_level(logging.WARNING, logger="pi_trio.session"):
        assert to_json(load_messages(path)) == to_json([user("one")])
        FileSessionStore(path).append(user("two"))
    assert path.read_bytes() == messages_to_jsonl([user("one"), user("two")])
    assert [r.message.split(": ", 1)[1] for r in caplog.records] == [
        f"the last line ({len(torn)} bytes, no newline) is a write cut short; left out",
        f"removed the last line ({len(torn)} bytes), a write cut short",
    ]


# --------------------------------------------------------------------------- two writers

_SECOND_WRITER = """
import sys
from pi_trio.ai import UserMessage
from pi_trio.session import FileSessionStore, SessionError
store = FileSessionStore(sys.argv[1])
print(len(store.load()), flush=True)
sys.stdin.readline()  # the other process appends meanwhile
try:
    store.append(UserMessage(content="from the child", timestamp=1))
except SessionError as exc:
    print("refused:", exc, flush=True)
else:
    print("appended", flush=True)
"""


def test_a_second_process_writing_the_session_is_refused_with_a_clear_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    ours = FileSessionStore(path)
    ours.append(user("one"))
    child = subprocess.Popen(
        [sys.executable, "-c", _SECOND_WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    with child:
        assert child.stdout is not None
        assert child.stdin is not None
        assert child.stdout.readline() == "1\n"  # it loaded the session as it was
        ours.append(user("two"))
        child.stdin.write("go\n")
        child.stdin.flush()
        answer = child.stdout.readline()
        assert child.wait(timeout=30) == 0
    assert answer.startswith(f"refused: {str(path)!r} changed since this store last saw it"), answer
    assert "another store or process is writing the same session" in answer
    assert path.read_bytes() == messages_to_jsonl([user("one"), user("two")])
    # the writer that keeps going is never refused by its own appends
    ours.append(user("three"))
    assert len(load_messages(path)) == 3


def test_a_store_that_found_no_file_refuses_one_another_writer_created(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    late = FileSessionStore(path)
    assert late.load() == []
    FileSessionStore(path).append(user("first"))
    with pytest.raises(SessionError, match="was created by another store or process"):
        late.append(user("mine"))
    assert load_messages(path)[0].content == "first"
