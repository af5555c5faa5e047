"""Everyday mistakes at the command line: one line on stderr, the right exit code, never
a traceback. What depends on the process (stdin bytes, a full disk, a closed pipe, a
taken port) runs ``python -m pi_trio`` in a subprocess."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from pi_trio.cli import main
from pi_trio.cli._proxy import serve_error_text
from pi_trio.cli._run import run_command

REPO = Path(__file__).resolve().parent.parent
NO_KEYS = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def pi_trio(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("env", NO_KEYS)
    return subprocess.run(
        [sys.executable, "-m", "pi_trio", *argv], text=True, cwd=REPO, timeout=60, **kwargs
    )


# --------------------------------------------------------------------------- the offline model


def test_the_offline_model_is_named_in_help_and_in_the_missing_key_error(capsys, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert cli(capsys, "run", "--help")[1].count("faux/faux-1") >= 2
    assert 'pi-trio run "hello" --model faux/faux-1' in cli(capsys, "--help")[1]
    code, out, err = cli(capsys, "run", "hi", "--model", "anthropic/claude-haiku-4-5")
    assert code == 2
    assert out == ""
    assert err == (
        "pi-trio: no API key for anthropic: set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), "
        "or try it offline with --model faux/faux-1\n"
    )


async def test_tokens_per_second_paces_the_offline_model_in_real_time(autojump_clock):
    out = io.StringIO()
    start = trio.current_time()
    code = await run_command(
        "hi",
        model="faux/faux-1",
        out=out,
        err=io.StringIO(),
        style="plain",
        handle_signals=False,
        tokens_per_second=10,
    )
    assert code == 0
    assert "You said: hi" in out.getvalue()
    # some 60 tokens at 10 a second: seconds of (virtual) time, not an instant
    assert trio.current_time() - start > 3


def test_tokens_per_second_is_refused_for_a_real_model(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, _, err = cli(
        capsys, "run", "hi", "--model", "openai/gpt-5-mini", "--tokens-per-second", "30"
    )
    assert code == 2
    assert err == (
        "pi-trio: --tokens-per-second paces the offline model faux/faux-1, not "
        "openai/gpt-5-mini; leave it out\n"
    )


@pytest.mark.parametrize("command", ["run", "chat"])
def test_base_url_is_refused_for_the_offline_model(capsys, command):
    words = ["hi"] if command == "run" else []
    code, out, err = cli(
        capsys, command, *words, "--model", "faux/faux-1", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert (code, out) == (2, "")
    assert err == (
        "pi-trio: --base-url sends the requests to another server, and the offline model "
        "faux/faux-1 makes none; leave it out\n"
    )


# --------------------------------------------------------------------------- prompts


@pytest.mark.parametrize("words", [[""], ["  ", " "]])
def test_an_empty_prompt_is_refused_before_anything_runs(capsys, words):
    code, out, err = cli(capsys, "run", *words, "--model", "faux/faux-1")
    assert (code, out) == (2, "")
    assert err == 'pi-trio: the prompt is empty: pi-trio run "your question" --model ...\n'


def test_an_empty_prompt_on_stdin_is_refused(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b" \n\n")))
    code, out, err = cli(capsys, "run", "-", "--model", "faux/faux-1")
    assert (code, out, err) == (2, "", "pi-trio: the prompt on stdin is empty\n")


def test_a_prompt_on_stdin_that_is_not_utf8_is_refused_with_where():
    read, write = os.pipe()
    os.write(write, b"hello \xff world")
    os.close(write)
    try:
        done = pi_trio("run", "-", "--model", "faux/faux-1", stdin=read)
    finally:
        os.close(read)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "pi-trio: the prompt on stdin is not UTF-8 text (byte 0xff at offset 6); convert it "
        "first, e.g. with iconv -t UTF-8\n"
    )


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(capsys, port):
    code, out, err = cli(capsys, "proxy", "--port", port)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "pi-trio proxy: error: argument --port: a port is a whole number from 0 to 65535 "
        f"(0 picks a free one), got {port!r}"
    )


@pytest.mark.parametrize(("option", "value"), [("--timeout", "0"), ("--tokens-per-second", "x")])
def test_timeouts_and_rates_must_be_positive(capsys, option, value):
    code, _, err = cli(capsys, "run", "hi", "--model", "faux/faux-1", option, value)
    assert code == 2
    assert f"argument {option}: expected positive" in err


def test_the_proxy_help_says_how_tokens_are_given_and_what_it_serves(capsys):
    code, out, _ = cli(capsys, "proxy", "--help")
    assert code == 0
    assert "PI_TRIO_PROXY_TOKENS=token1,token2 pi-trio proxy" in out
    assert "required unless PI_TRIO_PROXY_TOKENS is set" in " ".join(out.split())
    assert "stream_proxy(proxy_url=..., auth_token=...) from pi_trio.proxy" in " ".join(out.split())
    assert "serves only catalog models, each called as its own catalog entry says" in " ".join(
        out.split()
    )


def test_a_proxy_port_in_use_is_one_line_and_exit_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = pi_trio(
            "proxy", "--port", str(port), env={**NO_KEYS, "PI_TRIO_PROXY_TOKENS": "secret"}
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"pi-trio: cannot serve on 127.0.0.1:{port}: the port is already in use (is another "
        "server running? pick another --port, or 0 for a free one)\n"
    )


def test_an_unknown_host_and_a_refused_port_are_named_in_one_line():
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert serve_error_text(unknown, "nowhere.invalid", 80) == (
        "pi-trio: cannot serve on nowhere.invalid:80: unknown host 'nowhere.invalid' "
        "(Name or service not known)"
    )
    refused = PermissionError(13, "Permission denied")
    assert serve_error_text(refused, "127.0.0.1", 80).endswith(
        "permission denied (ports below 1024 need privileges; pick another --port)"
    )


def test_a_tokens_file_that_cannot_be_read_is_one_line(capsys, tmp_path):
    code, _, err = cli(capsys, "proxy", "--tokens-file", str(tmp_path / "missing"))
    assert code == 2
    assert err == (
        f"pi-trio: cannot read --tokens-file {str(tmp_path / 'missing')!r}: "
        "No such file or directory\n"
    )
    binary = tmp_path / "tokens.bin"
    binary.write_bytes(b"token1\n\xff\xfe\n")
    code, _, err = cli(capsys, "proxy", "--tokens-file", str(binary))
    assert code == 2
    assert err == (
        f"pi-trio: --tokens-file {str(binary)!r} is not UTF-8 text (byte 0xff at offset 7); "
        "write one token per line\n"
    )


# --------------------------------------------------------------------------- output


COMMANDS = [
    ("run", "hi", "--model", "faux/faux-1"),
    ("run", "hi", "--model", "faux/faux-1", "--json"),
    ("models",),
    ("demo", "--fast"),
    ("--help",),
]


class FailingOutput(io.StringIO):
    """A stdout whose writes fail with ``error`` once ``after`` characters are written."""

    def __init__(self, error: OSError, after: int = 0) -> None:
        super().__init__()
        self.error = error
        self.after = after

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.after:
            raise self.error
        return super().write(text)


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("after", [0, 200])
def test_a_full_disk_is_one_line_and_exit_1(capsys, monkeypatch, argv, after):
    monkeypatch.setattr(sys, "stdout", FailingOutput(OSError(28, "No space left on device"), after))
    assert main(list(argv)) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "pi-trio: cannot write the output: No space left on device"
    )


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("after", [0, 200])
def test_a_reader_that_went_away_ends_every_command_quietly(capsys, monkeypatch, argv, after):
    monkeypatch.setattr(sys, "stdout", FailingOutput(BrokenPipeError(32, "Broken pipe"), after))
    assert main(list(argv)) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_real_full_disk_and_a_real_closed_pipe():
    with open("/dev/full", "w") as full:
        done = pi_trio("models", stdout=full, stderr=subprocess.PIPE, capture_output=False)
    assert (done.returncode, done.stderr) == (
        1,
        "pi-trio: cannot write the output: No space left on device\n",
    )
    read, write = os.pipe()
    os.close(read)  # like `| head` that has already exited
    try:
        done = pi_trio(
            "run", "hi", "--model", "faux/faux-1", stdout=write, stderr=subprocess.PIPE,
            capture_output=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_cli_runs_without_rich():
    code = (
        "import sys; sys.modules['rich'] = None\n"
        "from pi_trio.cli import main\n"
        "sys.exit(main(['--plain', 'run', 'hi', '--model', 'faux/faux-1']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "You said: hi" in done.stdout


@pytest.mark.parametrize(
    ("argv", "plain"),
    [
        (["run", "hi", "--model", "faux/faux-1", "--plain"], True),
        (["--plain", "run", "hi", "--model", "faux/faux-1"], True),
        (["run", "hi", "--model", "faux/faux-1"], False),
        (["models", "haiku", "--plain"], True),
        (["chat", "--model", "faux/faux-1", "--plain"], True),
        (["demo", "--plain"], True),
    ],
)
def test_plain_is_taken_before_or_after_the_command(argv, plain):
    from pi_trio.cli import build_parser

    assert build_parser().parse_args(argv).plain is plain


@pytest.mark.parametrize(
    "argv",
    [("models",), ("run", "hi", "--model", "faux/faux-1", "--json", "--tokens-per-second", "300")],
    ids=" ".join,
)
def test_a_reader_that_leaves_after_the_first_line_like_head_1(argv):
    # `pi-trio models | head -1`: the reader takes one line and goes while the command
    # still writes (the catalog is larger than a pipe's buffer; the paced run's events
    # come over a second or so)
    with subprocess.Popen(
        [sys.executable, "-m", "pi_trio", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=NO_KEYS,
    ) as process:  # fmt: skip
        assert process.stdout is not None
        first = process.stdout.readline()
        process.stdout.close()
        _, err = process.communicate(timeout=60)
    assert first
    assert (process.returncode, err) == (0, b"")


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "hi", "--model", "faux/faux-1"),
        ("run", "hi", "--model", "faux/faux-1", "--json"),
        ("models",),
        ("demo", "--fast"),
        ("--version",),
    ],
    ids=" ".join,
)
def test_a_closed_stdout_is_one_line_and_exit_1(argv):
    # `pi-trio run ... >&-`: Python starts with sys.stdout None; nothing is run
    done = pi_trio(*argv, stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    assert (done.returncode, done.stderr) == (
        1,
        "pi-trio: cannot write the output: standard output is closed (started with >&-); "
        "redirect it to a file or /dev/null\n",
    )


def test_a_closed_stderr_keeps_the_exit_code():
    done = pi_trio("run", "hi", "--model", "nobody/nothing", preexec_fn=lambda: os.close(2))
    assert (done.returncode, done.stdout) == (2, "")
