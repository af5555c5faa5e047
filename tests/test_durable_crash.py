"""Durable runs survive real process death: a child process runs a durable agent, is
killed with SIGKILL during the third tool call, and a new process resumes the run
(``tests/durable_child.py`` is the child; the parent talks to it through its stdin and
stdout, never by sleeping). The crashes run on SQLite and on a PostgreSQL server this
module starts (``benchmarks._postgres``: Debian's server, on loopback, in a temporary
directory), a fresh database for each."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from dbos import DBOSClient

from benchmarks._postgres import PostgresMissing, local_postgres
from pi_trio.durable import interrupted_text

from . import durable_child

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = "crash-run-1"
READ_TIMEOUT = 60.0  # seconds a step of the child may take before the test gives up


def sqlite_url(workdir: Path) -> str:
    return f"sqlite:///{workdir / 'dbos.sqlite'}"


@pytest.fixture(scope="module")
def postgres_server() -> Any:
    """A private PostgreSQL server for this module; its URL (one database). Without
    ``fsync``: the tests kill DBOS's processes, never the server, whose acknowledged
    commits stay visible to the next process either way."""
    try:
        with local_postgres(durable=False) as url:
            yield url
    except PostgresMissing as exc:
        if os.environ.get("CI"):
            raise  # CI installs it (scripts/ensure_postgres.sh): missing there is a failure
        pytest.skip(str(exc))


_databases = iter(range(1_000_000))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fresh_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[Path, str]]:
    """``fresh(name)``: a new working directory and system database for one crash."""

    def fresh(name: str) -> tuple[Path, str]:
        workdir = tmp_path_factory.mktemp(name)
        if request.param == "sqlite":
            return workdir, sqlite_url(workdir)
        return workdir, _fresh_postgres(request.getfixturevalue("postgres_server"))

    return fresh


def _fresh_postgres(server_url: str) -> str:
    name = f"crash_{next(_databases)}"
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return f"{server_url.rsplit('/', 1)[0]}/{name}"


class Child:
    """A child process whose stdout lines are read by a thread (so waits are bounded)."""

    def __init__(self, workdir: Path, url: str, command: str, *, replay: str, wait: bool) -> None:
        env = dict(
            os.environ,
            PI_TRIO_DURABLE_DIR=str(workdir),
            PI_TRIO_DURABLE_URL=url,
            PI_TRIO_CHARGE_REPLAY=replay,
            PI_TRIO_WAIT_FOR_PARENT="1" if wait else "0",
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.durable_child", command, WORKFLOW],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
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
        self.lines.put("")  # end of output

    def expect(self, line: str) -> None:
        got = self.lines.get(timeout=READ_TIMEOUT)
        assert got == line, self._failure(f"expected {line!r}, got {got!r}")

    def go_on(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def result(self) -> dict[str, Any]:
        line = self.lines.get(timeout=READ_TIMEOUT)
        assert line, self._failure("no result")
        assert self.proc.wait(timeout=READ_TIMEOUT) == 0, self._failure("non-zero exit")
        self._close()
        return json.loads(line)  # type: ignore[no-any-return]

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        assert self.proc.wait(timeout=READ_TIMEOUT) == -signal.SIGKILL
        self._close()

    def _close(self) -> None:
        self._reader.join(timeout=READ_TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    def _failure(self, what: str) -> str:
        self.proc.kill()
        self.proc.wait()
        assert self.proc.stderr is not None
        stderr = self.proc.stderr.read()[-4000:]
        self._close()
        return f"{what}; child stderr:\n{stderr}"


def send(url: str, kind: str, text: str) -> None:
    """Queue a message for the run from this process, which does not run DBOS itself."""
    client = DBOSClient(system_database_url=url)
    try:
        agent = durable_child.AGENT
        sender = agent.steer if kind == "steer" else agent.follow_up
        asyncio.run(sender(WORKFLOW, text, client=client))
    finally:
        client.destroy()


def first_process(workdir: Path, url: str, *, replay: str, crash: bool) -> Child:
    """Start the run; steer while ``note(1)`` runs, steer again and queue a follow-up while
    ``charge`` runs; then either kill the process there or let it finish."""
    child = Child(workdir, url, "start", replay=replay, wait=True)
    child.expect("NOTE 1 STARTED")
    send(url, "steer", durable_child.STEER)
    child.go_on()
    child.expect("CHARGE STARTED")
    send(url, "steer", durable_child.LATE_STEER)
    send(url, "follow_up", durable_child.FOLLOW_UP)
    if crash:
        child.kill()
    else:
        child.go_on()
    return child


def normalized(value: Any) -> Any:
    """Without what differs between any two runs: wall-clock timestamps and durations."""
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in ("timestamp", "durationMs")}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines(path)]


def shape(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r["type"], r.get("role"), r.get("call"), r.get("event")) for r in records]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same run, uninterrupted."""
    workdir = tmp_path_factory.mktemp("reference")
    result = first_process(workdir, sqlite_url(workdir), replay="never", crash=False).result()
    return {
        "result": result,
        "calls": lines(workdir / "calls"),
        "runs": lines(workdir / "runs"),
        "events": events(workdir / "events-new"),
        "events_all": events(workdir / "events-all"),
    }


def crash_and_resume(workdir: Path, url: str, replay: str) -> tuple[dict[str, Any], int, int]:
    first = first_process(workdir, url, replay=replay, crash=True)
    resumed = Child(workdir, url, "resume", replay=replay, wait=False)
    return resumed.result(), first.proc.pid, resumed.proc.pid


@pytest.fixture(scope="module")
def safe_crash(fresh_database: Any) -> tuple[Path, dict[str, Any], int, int]:
    """The run with ``charge`` declared ``replay="safe"``, killed and resumed."""
    workdir, url = fresh_database("safe")
    result, first_pid, second_pid = crash_and_resume(workdir, url, "safe")
    return workdir, result, first_pid, second_pid


def test_reference_run_has_the_expected_shape(reference):
    roles = [m["role"] for m in reference["result"]["messages"]]
    assert roles == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "user",  # the steering message, taken after the first turn
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "user",  # the second steering message, taken after the third turn
        "assistant",
        "user",  # the follow-up, taken when the run would have stopped
        "assistant",
    ]
    assert len(reference["calls"]) == 5
    assert reference["runs"] == ["note 1", "note 2", "charge 3"]


def test_a_never_tool_interrupted_by_sigkill_is_reported_not_repeated(fresh_database, reference):
    tmp_path, url = fresh_database("never")
    result, first_pid, second_pid = crash_and_resume(tmp_path, url, "never")

    messages = result["messages"]
    charge = next(m for m in messages if m["role"] == "toolResult" and m["toolName"] == "charge")
    assert charge["isError"] is True
    assert charge["content"] == [{"type": "text", "text": interrupted_text("charge")}]
    expected = normalized(reference["result"]["messages"])
    index = next(i for i, m in enumerate(expected) if m.get("toolName") == "charge")
    got = normalized(messages)
    assert len(got) == len(expected)
    assert got[:index] == expected[:index]
    # afterwards the model saw the interruption instead of the result: the same answers,
    # with usage estimated from that other prompt
    for mine, theirs in zip(got[index + 1 :], expected[index + 1 :], strict=True):
        assert {**mine, "usage": None} == {**theirs, "usage": None}
    assert result["stopReason"] == "stop"
    assert result["queued"] == []
    users = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
    assert users == [
        durable_child.PROMPT,
        durable_child.STEER,
        durable_child.LATE_STEER,
        durable_child.FOLLOW_UP,
    ]

    # the model was called as often as without the crash: three times before, twice after
    calls = [int(line.split()[0]) for line in lines(tmp_path / "calls")]
    assert calls == [first_pid] * 3 + [second_pid] * 2
    # completed tools ran once; the interrupted "never" tool was not run again
    assert lines(tmp_path / "runs") == ["note 1", "note 2", "charge 3"]


def test_a_safe_tool_interrupted_by_sigkill_runs_again_and_the_transcript_is_unchanged(
    safe_crash, reference
):
    tmp_path, result, first_pid, second_pid = safe_crash

    assert normalized(result["messages"]) == normalized(reference["result"]["messages"])
    calls = [int(line.split()[0]) for line in lines(tmp_path / "calls")]
    assert calls == [first_pid] * 3 + [second_pid] * 2
    assert lines(tmp_path / "runs") == ["note 1", "note 2", "charge 3", "charge 3"]


def test_steering_and_follow_up_survive_the_crash_in_order_and_once(safe_crash):
    _, result, _, _ = safe_crash
    texts = [m["content"][0]["text"] for m in result["messages"] if m["role"] == "user"]
    # the first steering message was taken before the crash (recorded, replayed, not taken
    # again); the second one and the follow-up were still waiting in the database when the
    # process died, and the resumed run took them after the interrupted turn
    assert texts == [
        durable_child.PROMPT,
        durable_child.STEER,
        durable_child.LATE_STEER,
        durable_child.FOLLOW_UP,
    ]


def test_listeners_get_new_events_once_by_default_and_replays_when_asked(safe_crash, reference):
    tmp_path, _, first_pid, second_pid = safe_crash

    new = events(tmp_path / "events-new")
    # across both processes, every event of the run reached the default listener once
    assert shape(new) == shape(reference["events"])
    assert not any(r["replayed"] for r in new)
    before = [r for r in new if r["pid"] == first_pid]
    assert shape(before)[-1] == ("tool_execution_start", None, "call-3", None)

    everything = events(tmp_path / "events-all")
    resumed = [r for r in everything if r["pid"] == second_pid]
    # the resumed process re-delivered the whole run to the listener that asked for it
    assert shape(resumed) == shape(reference["events_all"])
    replayed = [r["replayed"] for r in resumed]
    cut = len(before)
    assert replayed == [True] * cut + [False] * (len(resumed) - cut)


def test_the_example_resumes_where_it_was_killed(tmp_path):
    command = [
        sys.executable,
        str(ROOT / "examples" / "durable_agent.py"),
        "--faux",
        f"--db={tmp_path / 'example.sqlite'}",
    ]

    def run_to_end(*extra: str) -> list[str]:
        out = subprocess.run(
            [*command, *extra], cwd=ROOT, capture_output=True, text=True, timeout=READ_TIMEOUT
        )
        assert out.returncode == 0, out.stderr[-4000:]
        return out.stdout.splitlines()

    first = subprocess.Popen(
        [*command, "--tool-seconds=600"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert first.stdout is not None
    try:
        with first.stdout:
            run_id = first.stdout.readline().split()[1].rstrip(":")  # "run <id>: a new run ..."
            assert first.stdout.readline() == "  [new] assistant: Let me look.\n"
            assert first.stdout.readline() == "  fetch status.example started\n"
            first.send_signal(signal.SIGKILL)
    finally:
        first.kill()
        first.wait(timeout=READ_TIMEOUT)
    assert first.returncode == -signal.SIGKILL

    answer = "answer: The status page says all systems are nominal."
    assert run_to_end("--tool-seconds=0", "--resume", run_id) == [
        f"run {run_id}: resuming from the database (recorded steps are replayed)",
        "  [replayed] assistant: Let me look.",  # from the database, not the model
        "  fetch status.example started",  # replay="safe": the interrupted fetch runs again
        "  [new] fetch -> <html>status.example: all systems nominal</html>",
        "  [new] assistant: The status page says all systems are nominal.",
        answer,
    ]
    # finished: the recorded result
    assert run_to_end("--resume", run_id) == [
        f"run {run_id}: finished earlier; its recorded result:",
        answer,
    ]
