"""A durable run waiting for approval survives the death of its process: a child process
runs it until it pauses and is killed with SIGKILL; a new process launches DBOS, which
recovers the run (it replays to the pause without asking the model or running a tool
again) and waits; the decisions, sent from a process that does not run DBOS, reach it.
``tests/durable_approval_child.py`` is the child."""

from __future__ import annotations

import asyncio
import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from dbos import DBOSClient

from pi_trio.agent import approve, edit
from pi_trio.agent.extend import is_approval_placeholder
from pi_trio.ai import from_json

from . import durable_approval_child

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = "approval-crash-1"
READ_TIMEOUT = 60.0


class Child:
    def __init__(self, workdir: Path, command: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.durable_approval_child", str(workdir), command, WORKFLOW],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")

    def line(self) -> str:
        got = self.lines.get(timeout=READ_TIMEOUT)
        if not got:
            self.proc.wait(timeout=READ_TIMEOUT)
            assert self.proc.stderr is not None
            raise AssertionError(f"the child ended; stderr:\n{self.proc.stderr.read()[-4000:]}")
        return got

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(timeout=READ_TIMEOUT) == -signal.SIGKILL
        self.close()

    def result(self) -> dict[str, Any]:
        line = self.line()
        assert self.proc.wait(timeout=READ_TIMEOUT) == 0
        self.close()
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        self._reader.join(timeout=READ_TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


def decide(workdir: Path, approvals: dict[str, Any]) -> None:
    """Send the decisions from this process, which does not run DBOS."""
    client = DBOSClient(system_database_url=f"sqlite:///{workdir / 'dbos.sqlite'}")
    try:
        asyncio.run(durable_approval_child.AGENT.resume(WORKFLOW, approvals, client=client))
    finally:
        client.destroy()


def lines(path: Path) -> list[tuple[int, str]]:
    if not path.exists():
        return []
    return [(int(p), rest) for p, rest in (x.split(" ", 1) for x in path.read_text().splitlines())]


def paused_and_killed(workdir: Path) -> int:
    first = Child(workdir, "start")
    try:
        tag, pending = first.line().split(" ", 1)
        assert tag == "PAUSED"
        assert json.loads(pending) == [
            {"toolCallId": "pay-1", "arguments": {"invoice": "INV-7", "amount": 250}}
        ]
    finally:
        first.kill()
    return first.proc.pid


def check_finished(
    workdir: Path, result: dict[str, Any], first: int, second: int, paid: str
) -> None:
    messages = [from_json(json.dumps(m)) for m in result["messages"]]
    assert result["stopReason"] == "stop"
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert not any(is_approval_placeholder(m) for m in messages)
    assert messages[-1].content[0].text.endswith(f"{paid}; balance: 1000")
    # the model was asked once before the crash and once after; the run that waited was
    # replayed from the database, not asked again
    assert lines(workdir / "calls") == [(first, "request"), (second, "request")]
    # the call that did not wait ran once, before the crash; the approved one once, after
    runs = lines(workdir / "runs")
    assert runs[0] == (first, "balance")
    assert len(runs) == 2
    assert runs[1][0] == second
    # a listener of new events saw the paused run in the first process and the resumed
    # run in the second, each event once (the replay to the pause is not new)
    events = lines(workdir / "events")
    paused = [e for pid, e in events if pid == first]
    resumed = [e for pid, e in events if pid == second]
    assert [pid for pid, _ in events] == [first] * len(paused) + [second] * len(resumed)
    assert paused[0] == "agent_start"
    assert paused[-3:] == ["message_end toolResult", "turn_end", "agent_end"]
    assert resumed == [
        "agent_start",
        "turn_start",
        "tool_execution_start pay-1",
        "tool_execution_end pay-1",
        "message_start toolResult",
        "message_end toolResult",
        "turn_end",
        "turn_start",
        "message_start assistant",
        "message_end assistant",
        "turn_end",
        "agent_end",
    ]


def test_decisions_sent_while_the_restarted_process_waits_reach_the_run(tmp_path: Path) -> None:
    first = paused_and_killed(tmp_path)
    second = Child(tmp_path, "resume")
    assert second.line() == "WAITING"
    decide(tmp_path, {"pay-1": approve()})
    result = second.result()
    check_finished(tmp_path, result, first, second.proc.pid, "paid 250 for INV-7")
    assert lines(tmp_path / "runs")[1] == (second.proc.pid, "pay INV-7 250")


def test_decisions_sent_while_no_process_runs_the_run_are_taken_after_the_restart(
    tmp_path: Path,
) -> None:
    first = paused_and_killed(tmp_path)
    decide(tmp_path, {"pay-1": edit({"invoice": "INV-7", "amount": 200})})
    second = Child(tmp_path, "resume")
    assert second.line() == "WAITING"
    result = second.result()
    check_finished(tmp_path, result, first, second.proc.pid, "paid 200 for INV-7")
    assert lines(tmp_path / "runs")[1] == (second.proc.pid, "pay INV-7 200")
