"""A paused run in a session store: the placeholders are saved like any message, the
process may die while a person decides, and a new process resumes the run from the file
(``tests/approval_child.py``); the file then holds the transcript the agent holds."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_trio.agent import Agent, approve, deny, tool
from pi_trio.agent.extend import is_approval_placeholder
from pi_trio.ai import UserMessage, to_json
from pi_trio.ai.json import messages_to_jsonl
from pi_trio.session import FileSessionStore, SessionError, load_messages, record_session
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

CHILD = Path(__file__).resolve().parent / "approval_child.py"
TIMEOUT = 60.0


def child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def runs(path: Path) -> list[tuple[int, str]]:
    lines = Path(f"{path}.runs").read_text().splitlines()
    return [(int(pid), rest) for pid, rest in (line.split(" ", 1) for line in lines)]


def test_a_run_paused_in_a_killed_process_resumes_in_a_new_one_from_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "refunds.jsonl"
    first = child(str(path), "pause")
    assert first.stdout is not None
    try:
        paused = json.loads(first.stdout.readline())
        first.send_signal(signal.SIGKILL)  # a restart while the person decides
        assert first.wait(timeout=TIMEOUT) == -signal.SIGKILL
    finally:
        first.kill()
        first.communicate()
    assert paused == {
        "status": "approval_pending",
        "pending": [
            {"toolCallId": "r1", "toolName": "refund", "arguments": {"order": 1, "amount": 500}}
        ],
    }
    saved = load_messages(path)
    assert [m.role for m in saved] == ["system", "user", "assistant"] + ["toolResult"] * 3
    assert [is_approval_placeholder(m) for m in saved[3:]] == [True, False, False]
    assert path.read_bytes() == messages_to_jsonl(saved)

    decisions = json.dumps({"r1": {"action": "edit", "arguments": {"order": 1, "amount": 450}}})
    second = child(str(path), "resume", decisions, "--asyncio")
    out, err = second.communicate(timeout=TIMEOUT)
    assert second.returncode == 0, err[-4000:]
    result = json.loads(out)
    assert result["status"] == "completed"
    assert result["text"] == (
        "Done: refunded 450 on order 1; refunded 30 on order 2; order 3: delivered"
    )
    # the calls that were not waiting ran in the first process, the approved one in the
    # second, once
    assert runs(path) == [
        (first.pid, "refund 2 30"),
        (first.pid, "lookup 3"),
        (second.pid, "refund 1 450"),
    ]
    final = load_messages(path)
    assert [m.role for m in final] == result["roles"]
    assert not any(is_approval_placeholder(m) for m in final)
    assert final[3].tool_call_id == "r1"
    assert to_json(final[:3]) == to_json(saved[:3])
    assert to_json(final[4:6]) == to_json(saved[4:6])
    assert path.read_bytes() == messages_to_jsonl(final)

    # resuming again: nothing waits any more
    again = child(str(path), "resume", decisions)
    _, err = again.communicate(timeout=TIMEOUT)
    assert again.returncode == 1
    assert "ResumeError: no tool call is waiting for approval" in err


# --------------------------------------------------------------------------- in one process


@tool(needs_approval=True)
async def publish(text: str) -> str:
    """Publish a text."""
    return f"published {text!r}"


def agent_on(store: FileSessionStore, *answers: Any) -> Agent:
    faux = FauxProvider()
    faux.set_responses(list(answers))
    agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[publish], messages=store.load())
    record_session(agent, store)
    return agent


async def test_the_store_holds_what_the_agent_holds_after_a_pause_and_a_resume(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    store = FileSessionStore(path)
    agent = agent_on(
        store,
        faux_assistant_message(
            [faux_tool_call("publish", {"text": "a"}, id="p1")], stop_reason="toolUse"
        ),
        faux_assistant_message(
            [faux_tool_call("publish", {"text": "b"}, id="p1")], stop_reason="toolUse"
        ),
        faux_assistant_message("Both published."),
    )
    await agent.prompt("Publish a then b.")
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)
    await agent.resume({"p1": approve()})  # the model reuses the call id: replaced once
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)
    placeholders = [is_approval_placeholder(m) for m in agent.state.messages]
    assert placeholders == [False] * 5 + [True]
    await agent.resume({"p1": approve()})
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)
    assert [m.role for m in load_messages(path)] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]


async def test_each_decided_call_of_a_batch_takes_its_placeholders_place_in_the_store(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    store = FileSessionStore(path)
    calls = [faux_tool_call("publish", {"text": t}, id=f"p{t}") for t in "abc"]
    agent = agent_on(
        store,
        faux_assistant_message(calls, stop_reason="toolUse"),
        faux_assistant_message("Published a and c."),
    )
    await agent.prompt("Publish a, b and c.")
    assert [is_approval_placeholder(m) for m in load_messages(path)[3:]] == [True] * 3
    await agent.resume({"pa": approve(), "pb": deny("not b"), "pc": approve()})
    saved = load_messages(path)
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)
    assert [m.role for m in saved] == ["system", "user", "assistant"] + ["toolResult"] * 3 + [
        "assistant"
    ]
    assert [(m.tool_call_id, m.content[0].text) for m in saved[3:6]] == [
        ("pa", "published 'a'"),
        ("pb", "not b"),
        ("pc", "published 'c'"),
    ]


async def test_a_store_that_cannot_replace_is_refused_when_recording_starts() -> None:
    class AppendOnly:
        def __init__(self) -> None:
            self.messages: list[Any] = []

        def append(self, message: Any) -> None:
            self.messages.append(message)

        def load(self) -> list[Any]:
            return list(self.messages)

    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[publish])
    with pytest.raises(SessionError, match=r"has no replace\(messages\).*needs_approval"):
        record_session(agent, AppendOnly())


# --------------------------------------------------------------------------- FileSessionStore.replace


def filled(tmp_path: Path, count: int = 4) -> tuple[Path, FileSessionStore, list[Any]]:
    path = tmp_path / "s.jsonl"
    store = FileSessionStore(path)
    messages = [UserMessage(content=f"m{i}", timestamp=i) for i in range(count)]
    for message in messages:
        store.append(message)
    return path, store, messages


def test_replace_makes_the_messages_the_whole_file_and_keeps_its_mode(tmp_path: Path) -> None:
    path, store, messages = filled(tmp_path)
    path.chmod(0o640)
    new = [messages[0], UserMessage(content="changed", timestamp=99), *messages[2:]]
    store.replace(new)
    assert path.read_bytes() == messages_to_jsonl(new)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["s.jsonl"]  # no temporary file left
    store.append(UserMessage(content="next", timestamp=5))  # the store goes on
    assert len(load_messages(path)) == 5


def test_replace_writes_a_session_that_was_not_there(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    store = FileSessionStore(path)
    messages = [UserMessage(content="m", timestamp=1)]
    store.replace(messages)
    assert path.read_bytes() == messages_to_jsonl(messages)
    store.append(UserMessage(content="next", timestamp=2))
    assert len(load_messages(path)) == 2


def test_replace_refuses_a_file_another_writer_changed(tmp_path: Path) -> None:
    path, store, _ = filled(tmp_path, 2)
    other = FileSessionStore(path)
    other.load()
    other.append(UserMessage(content="theirs", timestamp=1))
    before = path.read_bytes()
    with pytest.raises(SessionError, match="changed since this store last saw it"):
        store.replace([UserMessage(content="mine", timestamp=1)])
    assert path.read_bytes() == before
