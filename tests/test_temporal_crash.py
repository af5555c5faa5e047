"""Temporal runs survive the death of their worker: a worker process is killed with
SIGKILL during the third tool call, and a new worker process finishes the run
(``tests/temporal_child.py`` is the worker; the parent talks to it through its stdin and
stdout and to the run through the dev server the session started)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")  # the `temporal` extra; `make test` installs it

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from pi_trio.temporal import interrupted_text

from . import temporal_child

ROOT = Path(__file__).resolve().parent.parent
READ_TIMEOUT = 60.0  # seconds a step of the child may take before the test gives up
_queues = itertools.count()


class Scenario:
    """One run: its directory, task queue and workflow id."""

    def __init__(self, address: str, workdir: Path, replay: str) -> None:
        self.address = address
        self.workdir = workdir
        self.replay = replay
        self.task_queue = f"pi-trio-crash-{os.getpid()}-{next(_queues)}"
        self.workflow_id = f"crash-{self.task_queue}"

    def child(self, command: str, *, wait: bool) -> Child:
        env = dict(
            os.environ,
            PI_TRIO_TEMPORAL_DIR=str(self.workdir),
            PI_TRIO_CHARGE_REPLAY=self.replay,
            PI_TRIO_WAIT_FOR_PARENT="1" if wait else "0",
            PI_TRIO_TEMPORAL_ADDRESS=self.address,
            PI_TRIO_TASK_QUEUE=self.task_queue,
        )
        return Child(command, self.workflow_id, env)

    def send(self, kind: str, text: str) -> None:
        """Signal the run from this process, which runs no worker."""

        async def main() -> None:
            client = await Client.connect(self.address)
            run = temporal_child.AGENT.get_run(client, self.workflow_id)
            await (run.steer if kind == "steer" else run.follow_up)(text)

        asyncio.run(main())

    def settle(self, signals: int) -> None:
        """Wait until the run's worker took ``signals`` signals and has no workflow task
        pending, so a kill now interrupts the tool, not a workflow task."""

        async def main() -> None:
            client = await Client.connect(self.address)
            handle = client.get_workflow_handle(self.workflow_id)
            deadline = time.monotonic() + READ_TIMEOUT
            while True:
                events = (await handle.fetch_history()).events
                taken = sum(
                    e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED for e in events
                )
                last = events[-1].event_type
                if taken == signals and last == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
                    return
                assert time.monotonic() < deadline, "the worker did not take the signals"
                await asyncio.sleep(0.05)

        asyncio.run(main())


class Child:
    """A worker process whose stdout lines are read by a thread (so waits are bounded)."""

    def __init__(self, command: str, workflow_id: str, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.temporal_child", command, workflow_id],
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


def first_process(scenario: Scenario, *, crash: bool) -> Child:
    """Start the run; steer while ``note(1)`` runs, steer again and queue a follow-up while
    ``charge`` runs; then either kill the worker there or let it finish."""
    child = scenario.child("start", wait=True)
    child.expect("NOTE 1 STARTED")
    scenario.send("steer", temporal_child.STEER)
    child.go_on()
    child.expect("CHARGE STARTED")
    scenario.send("steer", temporal_child.LATE_STEER)
    scenario.send("follow_up", temporal_child.FOLLOW_UP)
    if crash:
        scenario.settle(signals=3)
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
def reference(temporal_address: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same run, uninterrupted."""
    workdir = tmp_path_factory.mktemp("reference")
    result = first_process(Scenario(temporal_address, workdir, "never"), crash=False).result()
    return {
        "result": result,
        "calls": lines(workdir / "calls"),
        "runs": lines(workdir / "runs"),
        "events": events(workdir / "events-new"),
        "events_all": events(workdir / "events-all"),
    }


def crash_and_resume(scenario: Scenario) -> tuple[dict[str, Any], int, int]:
    first = first_process(scenario, crash=True)
    resumed = scenario.child("resume", wait=False)
    return resumed.result(), first.proc.pid, resumed.proc.pid


@pytest.fixture(scope="module")
def safe_crash(
    temporal_address: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any], int, int]:
    """The run with ``charge`` declared ``replay="safe"``, its worker killed, resumed."""
    workdir = tmp_path_factory.mktemp("safe")
    result, first_pid, second_pid = crash_and_resume(Scenario(temporal_address, workdir, "safe"))
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
    assert all(not r["replayed"] for r in reference["events_all"])
    assert shape(reference["events_all"]) == shape(reference["events"])


def test_a_never_tool_interrupted_by_sigkill_is_reported_not_repeated(
    temporal_address, tmp_path, reference
):
    result, first_pid, second_pid = crash_and_resume(Scenario(temporal_address, tmp_path, "never"))

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

    # the model was asked as often as without the crash: three times by the killed worker,
    # twice by the new one; the recorded answers were not asked for again
    calls = [int(line.split()[0]) for line in lines(tmp_path / "calls")]
    assert calls == [first_pid] * 3 + [second_pid] * 2
    # completed tools ran once; the interrupted "never" tool was not run again
    assert lines(tmp_path / "runs") == ["note 1", "note 2", "charge 3"]


def test_a_safe_tool_interrupted_by_sigkill_runs_again_and_the_transcript_is_unchanged(
    safe_crash, reference
):
    workdir, result, first_pid, second_pid = safe_crash

    assert normalized(result["messages"]) == normalized(reference["result"]["messages"])
    calls = [int(line.split()[0]) for line in lines(workdir / "calls")]
    assert calls == [first_pid] * 3 + [second_pid] * 2
    assert lines(workdir / "runs") == ["note 1", "note 2", "charge 3", "charge 3"]


def test_steering_and_follow_up_signals_survive_the_crash_in_order_and_once(safe_crash):
    _, result, _, _ = safe_crash
    texts = [m["content"][0]["text"] for m in result["messages"] if m["role"] == "user"]
    # the signals are in the history: the new worker replays the first one where it was
    # taken, and hands the second one and the follow-up to the agent where the killed
    # worker had, so they are taken after the interrupted turn, as without the crash
    assert texts == [
        temporal_child.PROMPT,
        temporal_child.STEER,
        temporal_child.LATE_STEER,
        temporal_child.FOLLOW_UP,
    ]


def test_listeners_get_new_events_once_by_default_and_replays_when_asked(safe_crash, reference):
    workdir, _, first_pid, second_pid = safe_crash

    new = events(workdir / "events-new")
    # across both workers, every event of the run reached the default listener once
    assert shape(new) == shape(reference["events"])
    assert not any(r["replayed"] for r in new)
    before = [r for r in new if r["pid"] == first_pid]
    assert shape(before)[-1] == ("tool_execution_start", None, "call-3", None)

    everything = events(workdir / "events-all")
    resumed = [r for r in everything if r["pid"] == second_pid]
    # the new worker re-delivered the recorded part to the listener that asked for it,
    # marked replayed, then the rest of the run as new events
    assert shape(resumed) == shape(reference["events_all"])
    replayed = [r["replayed"] for r in resumed]
    cut = len(before)
    assert replayed == [True] * cut + [False] * (len(resumed) - cut)


def test_the_example_finishes_where_its_worker_was_killed(temporal_address):
    command = [
        sys.executable,
        str(ROOT / "examples" / "temporal_agent.py"),
        "--faux",
        f"--address={temporal_address}",
        f"--run-id=example-{os.getpid()}",
        f"--task-queue=example-{os.getpid()}",
        "--heartbeat-seconds=1",
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
    with first.stdout:
        assert first.stdout.readline() == "  [new] assistant: Let me look.\n"
        assert first.stdout.readline() == "  fetch status.example started\n"
        first.send_signal(signal.SIGKILL)
        assert first.wait(timeout=READ_TIMEOUT) == -signal.SIGKILL

    answer = "answer: The status page says all systems are nominal."
    assert run_to_end("--tool-seconds=0") == [
        "  fetch status.example started",  # replay="safe": the interrupted fetch runs again
        "  [replayed] assistant: Let me look.",  # from the history, not the model
        "  [new] fetch -> <html>status.example: all systems nominal</html>",
        "  [new] assistant: The status page says all systems are nominal.",
        answer,
    ]
    assert run_to_end() == [answer]  # finished: the recorded result
