"""The command line on a real (pseudo-)terminal: chat's prompt, line editing and history,
the elapsed time while a request waits, and the demo's next step. Input that is not a
terminal (a pipe) is covered too."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from pi_trio.agent import Agent
from pi_trio.cli._waiting import WaitingIndicator

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")

REPO = Path(__file__).resolve().parent.parent
NO_KEYS = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))}


@pytest.fixture
def terminal() -> Iterator[Any]:
    from .pty_support import Terminal

    opened: list[Terminal] = []

    def open_terminal(*args: str, env: dict[str, str] | None = None) -> Terminal:
        opened.append(Terminal(*args, env=env or NO_KEYS, cwd=REPO))
        return opened[-1]

    yield open_terminal
    for term in opened:
        term.close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers: its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()
    for connection in held:
        connection.close()


# --------------------------------------------------------------------------- chat


def test_chat_shows_a_prompt_edits_lines_and_recalls_them_with_the_arrow_keys(terminal):
    term = terminal("--plain", "chat", "--model", "faux/faux-1")
    term.wait_for("you > ")
    term.type("hellp\x7fo\r")  # a typo, backspace, the fix
    term.wait_for("You said: hello")
    term.wait_for("you > ", count=2)
    term.type("\x1b[A\r")  # arrow up: the last line again, not an escape code
    term.wait_for("You said: hello", count=2)
    term.wait_for("you > ", count=3)
    term.type("\x04")  # Ctrl-D ends the chat
    assert term.finish() == 0
    assert term.text().endswith("you > \r\n")  # the shell's prompt starts on a line of its own
    assert "You said: \x1b" not in term.text()
    assert "hellp" not in term.text().split("You said:")[1]
    assert term.settings_kept()


def test_chat_ctrl_c_while_idle_exits_and_gives_the_terminal_back(terminal):
    term = terminal("--plain", "chat", "--model", "faux/faux-1")
    term.wait_for("you > ")
    term.type("half a li")
    term.type("\x03")  # Ctrl-C at the prompt: input() is left waiting in its thread
    assert term.finish() == 130
    assert "Interrupted: exiting" in term.text()
    assert "Traceback" not in term.text()
    assert term.settings_kept()  # not left in readline's character mode


def test_chat_shows_the_waiting_time_and_ctrl_c_aborts_the_request(terminal, silent_server):
    term = terminal(
        "--plain", "chat", "--model", "openai/gpt-5-mini", "--base-url", silent_server,
        env={**NO_KEYS, "OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    term.wait_for("you > ")
    term.type("hello\r")
    term.wait_for("waiting for openai/gpt-5-mini · 1 s (times out after 300 s; Ctrl-C aborts)")
    term.type("\x03")
    term.wait_for("[aborted]")
    term.wait_for("you > ", count=2)  # back at the prompt, ready for the next one
    term.type("/exit\r")
    assert term.finish() == 0


def test_chat_reads_piped_lines_and_names_one_that_is_not_utf8():
    done = subprocess.run(
        [sys.executable, "-m", "pi_trio", "--plain", "chat", "--model", "faux/faux-1"],
        input=b"first\n\xff\xfe oops\n",
        capture_output=True,
        cwd=REPO,
        timeout=60,
    )
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "You said: first" in out
    assert "-- line 2 of the input is not UTF-8 text (byte 0xff at offset 0); it was not sent" in (
        out
    )
    assert "you > " not in out  # no prompt when the input is not a terminal


def test_piped_chat_lines_are_turns_in_order_however_fast_they_arrive():
    # all three lines are in the pipe before the first (paced) answer has finished
    done = subprocess.run(
        [sys.executable, "-m", "pi_trio", "--plain", "chat", "--model", "faux/faux-1",
         "--tokens-per-second", "200"],
        input=b"one\ntwo\nthree\n", capture_output=True, cwd=REPO, timeout=60, env=NO_KEYS,
    )  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert "steering" not in out
    said = [line.rpartition("You said: ")[2] for line in out.splitlines() if "You said: " in line]
    assert said == ["one", "two", "three"]
    asked = [line for line in out.splitlines() if line.startswith("user: ")]
    assert asked == ["user: one", "user: two", "user: three"]  # each turn says what it answers
    assert "each line of the input is a prompt" in out.splitlines()[0]


# --------------------------------------------------------------------------- run


def test_ctrl_c_can_be_tried_offline_on_a_paced_faux_model(terminal):
    term = terminal(
        "--plain", "run", "hello", "--model", "faux/faux-1", "--tokens-per-second", "20"
    )
    term.wait_for("thinking: I am")  # it types like a model: a few words a second
    term.type("\x03")
    assert term.finish() == 130
    text = term.text()
    assert "Interrupted: aborting the run (press Ctrl-C again to exit)" in text
    assert "[aborted] Request was aborted" in text
    assert "You said: hello" not in text
    assert "Traceback" not in text


def test_run_shows_the_waiting_time_on_a_terminal_and_times_out_as_asked(terminal, silent_server):
    term = terminal(
        "--plain", "run", "hi", "--model", "openai/gpt-5-mini", "--base-url", silent_server,
        "--timeout", "2", env={**NO_KEYS, "OPENAI_API_KEY": "sk-test"},
    )  # fmt: skip
    assert term.finish() == 1
    text = term.text()
    assert "waiting for openai/gpt-5-mini · 1 s (times out after 2 s; Ctrl-C aborts)" in text
    assert "[error] Request timed out while waiting for data" in text


def test_run_dash_on_a_terminal_says_how_to_end_the_prompt(terminal):
    term = terminal("--plain", "run", "-", "--model", "faux/faux-1")
    term.wait_for("pi-trio: type the prompt, then Ctrl-D on a new line to send it")
    term.type("two\rlines\r\x04")  # Enter twice, then Ctrl-D on the new line
    assert term.finish() == 0
    assert "You said: two\nlines" in term.text().replace("\r\n", "\n")


def test_run_dash_from_a_pipe_reads_without_a_word(capsys, monkeypatch):
    from pi_trio.cli import main

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from a pipe\n")))
    assert main(["--plain", "run", "-", "--model", "faux/faux-1"]) == 0
    captured = capsys.readouterr()
    assert "You said: from a pipe" in captured.out
    assert "Ctrl-D" not in captured.err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_waiting_line_counts_seconds_and_is_erased_when_the_answer_starts(
    autojump_clock,
):
    from pi_trio.testing import FauxProvider, faux_assistant_message

    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("late")])
    gate = trio.Event()

    async def slow_start(model: Any, context: Any, options: Any, send: Any) -> None:
        await gate.wait()
        await faux(model, context, options, send)

    err = _Terminal()
    waiting = WaitingIndicator(err, "faux/faux-1", 300)
    agent = Agent(model=faux.get_model(), stream_fn=slow_start)
    shown: list[str] = []

    def listener(event: Any) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            shown.append(err.getvalue())

    agent.subscribe(waiting.event)
    agent.subscribe(listener)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiting.run)
        nursery.start_soon(agent.prompt, "hi")
        await trio.sleep(3.5)
        gate.set()
        await agent.wait_for_idle()
        nursery.cancel_scope.cancel()
    lines = shown[0].split("\r\x1b[2K")
    assert [line for line in lines if line] == [
        f"waiting for faux/faux-1 · {n} s (times out after 300 s; Ctrl-C aborts)" for n in (1, 2, 3)
    ]
    assert shown[0].endswith("\r\x1b[2K")  # erased before the answer is drawn


async def test_nothing_is_drawn_when_stderr_is_not_a_terminal(autojump_clock):
    err = io.StringIO()
    waiting = WaitingIndicator(err, "faux/faux-1", 300)
    assert not waiting.enabled
    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiting.run)
        waiting.event(type("TurnStart", (), {"type": "turn_start"})())
        await trio.sleep(5)
        nursery.cancel_scope.cancel()
    assert err.getvalue() == ""


# --------------------------------------------------------------------------- demo


def test_the_demos_next_step_works_as_printed_without_the_command_on_path(capsys, monkeypatch):
    from pi_trio.cli import main

    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))
    assert main(["demo", "--fast"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("-- next: ")
    command = last.removeprefix("-- next: ").split(" models, then ")[0]
    assert command != "pi-trio"  # not on this PATH: the printed command has a path
    followed = subprocess.run(
        [*command.split(), "models", "--provider", "anthropic"],
        capture_output=True, text=True, timeout=60, env={**NO_KEYS, "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert followed.returncode == 0, followed.stderr
    assert "anthropic/claude-haiku-4-5" in followed.stdout


def test_the_demos_next_step_is_the_bare_command_when_it_is_on_path(capsys, monkeypatch):
    import sysconfig

    from pi_trio.cli._demo import next_steps

    scripts = sysconfig.get_path("scripts")
    if not os.path.exists(os.path.join(scripts, "pi-trio")):
        pytest.skip("pi-trio is not installed as a script here")
    monkeypatch.setenv("PATH", os.pathsep.join([scripts, "/usr/bin", "/bin"]))
    assert next_steps() == 'next: pi-trio models, then pi-trio run "…" --model provider/id'


def test_ctrl_c_in_the_demos_second_act_leaves_nothing_to_the_acts_after_it(terminal):
    # paced so that the steered answer still streams when the key is pressed
    term = terminal("--plain", "demo", "--tokens-per-second", "40")
    term.wait_for("-- steering while tools run")  # the steering message is queued
    term.type("\x03")
    assert term.finish() == 0
    text = term.text().replace("\r\n", "\n")
    assert "-- this act was aborted by Ctrl-C; the tour goes on" in text
    act3 = text.split("== 3 · abort mid-stream ==")[1].split("== 4 ·")[0]
    act4 = text.split("== 4 · ready again after the abort ==")[1].split("== transcript ==")[0]
    # act 3 gets neither act 2's steering message nor its unused answer, and aborts itself
    request, answer = act3.splitlines()[1:3]
    assert request == "user: Now write me a long essay on cancellation semantics."
    assert answer.startswith("assistant: Cancellation is the part of concurrency that most")
    assert "-- calling agent.abort() mid-stream (Ctrl-C does the same)" in act3
    assert "[aborted] Request was aborted" in act3
    assert "keep the final answer" not in act3
    assert act4.splitlines()[1:3] == [
        "user: Still there after that abort?",
        "assistant: Yes. The aborted answer stayed in the transcript, marked aborted, and "
        "this run started from a clean state.",
    ]
    assert "user → assistant(aborted) → user → assistant(stop)\n" in text
    assert "Traceback" not in text
