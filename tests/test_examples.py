"""Every example in ``examples/`` runs, on the faux provider: the trio service (virtual
time), the asyncio SSE app (read with httpx2's EventSource over loopback), the benchmark harness
(resumed from its own output) and the SQLite session (resumed from its database)."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest

from pi_trio.ai import from_json, to_json

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- trio service


async def test_trio_service_caps_concurrency_and_gives_each_run_a_deadline(autojump_clock, capsys):
    service = load("trio_service")
    summary = await service.main(
        ["--faux", "--jobs", "12", "--concurrency", "3", "--deadline", "1.0"]
    )
    results = summary["results"]
    assert [r["job"] for r in results] == list(range(12))
    assert summary["peak_in_flight"] == 3
    assert set(summary["counts"]) == {"stop", "deadline"}
    for r in results:
        assert not r["streaming_after"]
        if r["status"] == "deadline":
            assert r["seconds"] == pytest.approx(1.0)
            assert r["chars"] > 0  # the partial answer was kept
        else:
            assert r["seconds"] < 1.0
    assert "12 jobs, peak 3 in flight" in capsys.readouterr().out


def test_trio_service_needs_faux_or_a_model():
    service = load("trio_service")
    with pytest.raises(SystemExit):
        service.parse_args([])


# --------------------------------------------------------------------------- asyncio app


async def _serve_and(module: ModuleType, client_body: Any, argv: list[str]) -> Any:
    stop = asyncio.Event()
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(module.main(argv, started=ready.set_result, stop=stop))
    try:
        url = await ready
        async with httpx2.AsyncClient(base_url=url, timeout=10) as client:
            return await client_body(client)
    finally:
        stop.set()
        await server


def test_asyncio_app_streams_agent_events_to_the_browser_over_sse(capsys):
    app = load("asyncio_sse_app")

    async def client_body(client: httpx2.AsyncClient) -> list[tuple[str, Any]]:
        page = await client.get("/")
        assert page.status_code == 200
        assert "new EventSource" in page.text
        missing = await client.get("/nope")
        assert missing.status_code == 404
        events = []
        async with client.stream("GET", "/events", params={"prompt": "6 times 7?"}) as response:
            assert response.headers["content-type"] == "text/event-stream"
            async for message in httpx2.EventSource(response):
                events.append((message.event, json.loads(message.data)))
        return events

    events = asyncio.run(_serve_and(app, client_body, ["--faux", "--port", "0"]))
    names = [name for name, _ in events]
    assert names[0] == "agent_start"
    assert names[-1] == "agent_end"
    assert all(name == data["type"] for name, data in events)
    deltas = [
        data["assistantMessageEvent"]["delta"]
        for name, data in events
        if name == "message_update" and data["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert "".join(deltas).endswith("The answer is 42.")
    tool_end = next(data for name, data in events if name == "tool_execution_end")
    assert tool_end["toolName"] == "multiply"
    assert tool_end["result"]["content"][0]["text"] == "42"
    assert "serving http://127.0.0.1:" in capsys.readouterr().out


def test_asyncio_app_aborts_the_run_when_the_browser_goes_away():
    module = load("asyncio_sse_app")

    async def never_answers(model: Any, context: Any, options: Any, send: Any) -> None:
        await asyncio.Event().wait()  # a provider that keeps the request open

    async def scenario() -> list[str]:
        from pi_trio.testing import FauxProvider

        app = module.App(FauxProvider().get_model(), never_answers)
        stop = asyncio.Event()
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        server = asyncio.create_task(
            module.serve(app, "127.0.0.1", 0, started=ready.set_result, stop=stop)
        )
        url = await ready
        async with (
            httpx2.AsyncClient(base_url=url, timeout=10) as client,
            client.stream("GET", "/events", params={"prompt": "hi"}) as response,
        ):
            async for message in httpx2.EventSource(response):
                if message.event == "turn_start":
                    break  # the browser tab closes
        async with asyncio.timeout(10):
            await app.settled.wait()
        stop.set()
        await server
        return app.outcomes

    assert asyncio.run(scenario()) == ["aborted"]


async def _page_shows(server_handler: Any, prompt: str) -> str:
    """What the SSE app's page shows for ``prompt``, run by node against ``server_handler``
    (an asyncio connection handler) on loopback."""
    server = await asyncio.start_server(server_handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        node = await asyncio.create_subprocess_exec(
            "node", str(Path(__file__).parent / "sse_page_driver.mjs"),
            f"http://127.0.0.1:{port}", prompt,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        async with asyncio.timeout(60):
            out, err = await node.communicate()
    assert node.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.node
def test_the_sse_page_shows_the_answer_and_why_a_run_failed(monkeypatch):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    module = load("asyncio_sse_app")
    answered = module.App(*module.faux_stream())
    failing = module.App(module.resolve_model("anthropic/claude-haiku-4-5"), None)

    shown = asyncio.run(_page_shows(answered.handle, "6 times 7?"))
    assert shown == ("Arithmetic: use the tool.Let me multiply.\n[multiply: 42]\nThe answer is 42.")
    shown = asyncio.run(_page_shows(failing.handle, "hi"))
    assert (
        shown
        == "\n[error: No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key]\n"
    )  # not an empty page
    assert failing.outcomes == ["error"]


@pytest.mark.node
def test_the_sse_page_says_when_the_server_went_away_and_does_not_retry():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    module = load("asyncio_sse_app")
    requests: list[str] = []

    async def dies_after_one_event(reader: Any, writer: Any) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        path = head.split(b" ")[1].decode()
        requests.append(path.split("?")[0])
        if path == "/":
            await module.App(None, None).respond(
                writer, "200 OK", "text/html", module.PAGE.encode()
            )
        else:  # the server process dies during the run
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                b'event: message_update\ndata: {"assistantMessageEvent": '
                b'{"type": "text_delta", "delta": "Let me"}}\n\n'
            )
        writer.close()

    shown = asyncio.run(_page_shows(dies_after_one_event, "hi"))
    assert shown == "Let me\n[the connection to the server was lost]\n"
    assert requests == ["/", "/events"]  # the prompt was not sent again


# --------------------------------------------------------------------------- bench harness


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_bench_harness_writes_one_json_line_per_task_and_resumes(
    tmp_path, monkeypatch, capsys
):
    harness = load("bench_harness")
    monkeypatch.setattr(harness, "FETCH_SECONDS", 0)
    out = tmp_path / "runs.jsonl"
    argv = ["--faux", "--tasks", "12", "--concurrency", "4", "--out", str(out)]
    progress = io.StringIO()

    first = await harness.main(argv, progress_to=progress)
    rows = records(out)
    assert first["ran"] == 12
    assert sorted(r["task"] for r in rows) == list(range(12))
    assert {r["status"] for r in rows} == {"stop", "error"}
    assert next(r for r in rows if r["task"] == 3)["error"] == "429 rate limited (scripted)"
    assert next(r for r in rows if r["task"] == 5)["requests"] == 2  # fetch, then answer
    assert "[##############################] 12/12" in progress.getvalue()
    assert progress.getvalue().endswith(
        "bench_harness: 2 of 12 tasks failed; the first: 429 rate limited (scripted)\n"
    )

    second = await harness.main(argv, progress_to=io.StringIO())
    assert second["ran"] == 0
    assert len(records(out)) == 12

    kept = out.read_text().splitlines()[:4]
    out.write_text("\n".join(kept) + '\n{"task": 9, "sta')  # the process died mid-line
    third = await harness.main(argv, progress_to=io.StringIO())
    assert third["ran"] == 8
    assert sorted(r["task"] for r in records(out)) == list(range(12))
    assert capsys.readouterr().out.count('"ran"') == 3


# --------------------------------------------------------------------------- SQLite session


async def test_sqlite_session_saves_each_message_and_resumes_the_chat(tmp_path, capsys):
    example = load("sqlite_session")
    db = tmp_path / "chat.sqlite3"
    first = await example.main(["--faux", "--db", str(db), "my name is Ada"])
    assert [m.role for m in first] == ["system", "user", "assistant"]
    second = await example.main(["--faux", "--db", str(db), "what is my name?"])
    assert [m.role for m in second] == ["system", "user", "assistant", "user", "assistant"]
    assert second[-1].content[0].text == "Message 2 of this chat, received."
    assert [to_json(m) for m in second[:3]] == [to_json(m) for m in first]

    other = await example.main(["--faux", "--db", str(db), "--session", "b", "hi"])
    assert len(other) == 3  # another conversation in the same table
    check = sqlite3.connect(db)
    try:
        rows = check.execute("SELECT session, json FROM messages ORDER BY seq").fetchall()
    finally:
        check.close()
    assert [r[0] for r in rows] == ["default"] * 5 + ["b"] * 3
    assert [from_json(r[1]).role for r in rows[:5]] == [m.role for m in second]
    assert "assistant: Message 2 of this chat, received." in capsys.readouterr().out


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sqlite_session_on_ctrl_c_keeps_the_answer_so_far_and_exits_130(tmp_path):
    import time

    db = tmp_path / "chat.sqlite3"
    # the example as it is, its scripted model slowed down to a few words a second
    slow = (
        "import runpy, sys\n"
        "import pi_trio.testing as testing\n"
        "made = testing.FauxProvider.__init__\n"
        "def slow(self, *args, **kwargs):\n"
        "    made(self, *args, **kwargs, tokens_per_second=5)\n"
        "testing.FauxProvider.__init__ = slow\n"
        f"sys.argv = ['sqlite_session.py', '--faux', '--db', {str(db)!r}, 'hello']\n"
        f"runpy.run_path({str(EXAMPLES / 'sqlite_session.py')!r}, run_name='__main__')\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", slow], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            deadline = time.monotonic() + 60
            while not (db.exists() and sqlite_rows(db) >= 2):  # the prompt is saved: it runs
                assert time.monotonic() < deadline, "the chat did not start"
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert (process.returncode, err) == (
        130,
        "sqlite_session: interrupted; the answer so far is saved\n",
    )
    assert out == ""
    check = sqlite3.connect(db)
    try:
        saved = [
            from_json(row[0]) for row in check.execute("SELECT json FROM messages ORDER BY seq")
        ]
    finally:
        check.close()
    assert [m.role for m in saved] == ["system", "user", "assistant"]
    assert saved[-1].stop_reason == "aborted"


def sqlite_rows(db: Path) -> int:
    check = sqlite3.connect(db)
    try:
        return int(check.execute("SELECT count(*) FROM messages").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not there yet
        return 0
    finally:
        check.close()


class VanishingWriter:
    """An asyncio ``StreamWriter`` whose browser goes away when ``vanish(data)`` is true
    for what the server writes: that write and every later one raise ``ConnectionError``."""

    def __init__(self, vanish: Any) -> None:
        self.vanish = vanish
        self.gone = False
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self.gone or self.vanish(data):
            self.gone = True
            raise ConnectionResetError("the browser went away")
        self.sent.append(data)

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "leaves_at",
    [
        b"event: turn_start\n",
        b"event: message_update\n",
        b"event: tool_execution_end\n",
        b'"role":"toolResult"',  # the tool result's message_end: the abort lands between turns
        b"event: turn_end\n",
    ],
)
def test_asyncio_app_survives_the_browser_leaving_at_any_point_and_reports_the_abort(
    leaves_at: bytes,
) -> None:
    module = load("asyncio_sse_app")

    async def scenario() -> tuple[list[str], VanishingWriter]:
        model, stream_fn = module.faux_stream()
        app = module.App(model, stream_fn)
        reader = asyncio.StreamReader()  # the browser sends nothing more, and stays connected
        writer = VanishingWriter(lambda data: data.startswith(b"event: ") and leaves_at in data)
        await app.stream_events(reader, writer, "6 times 7?")
        return app.outcomes, writer

    outcomes, writer = asyncio.run(scenario())
    assert outcomes == ["aborted"]
    assert writer.gone
    assert not any(b"event: agent_end" in data for data in writer.sent)


def test_asyncio_app_survives_real_clients_leaving_after_any_number_of_lines():
    """``curl -N .../events | head -N`` for many N, over loopback: every run settles and
    reports how it ended; no handler dies (a crash would lose the run's outcome)."""
    module = load("asyncio_sse_app")
    clients = list(range(1, 60, 4))

    async def scenario() -> tuple[list[str], list[Any]]:
        loop = asyncio.get_running_loop()
        crashes: list[Any] = []
        loop.set_exception_handler(lambda _, context: crashes.append(context))
        model, stream_fn = module.faux_stream()
        app = module.App(model, stream_fn)
        stop = asyncio.Event()
        ready: asyncio.Future[str] = loop.create_future()
        server = asyncio.create_task(
            module.serve(app, "127.0.0.1", 0, started=ready.set_result, stop=stop)
        )
        host, port = (await ready).removeprefix("http://").split(":")
        for lines in clients:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(b"GET /events?prompt=6%20times%207 HTTP/1.1\r\nHost: x\r\n\r\n")
            for _ in range(lines):
                if not await reader.readline():
                    break
            writer.close()  # the reader leaves
            await writer.wait_closed()
        async with asyncio.timeout(30):
            while len(app.outcomes) < len(clients):
                app.settled.clear()
                await app.settled.wait()
        stop.set()
        await server
        return app.outcomes, crashes

    outcomes, crashes = asyncio.run(scenario())
    assert crashes == []
    assert len(outcomes) == len(clients)
    assert set(outcomes) <= {"stop", "aborted"}
    assert "aborted" in outcomes


def test_example_help_texts_are_plain_text(capsys):
    for name in ("asyncio_sse_app", "trio_service", "bench_harness", "sqlite_session", "chat_app"):
        with pytest.raises(SystemExit) as caught:
            load(name).parse_args(["--help"])
        assert caught.value.code == 0
        text = capsys.readouterr().out
        assert text.startswith("usage: ")
        assert "`" not in text, name


@pytest.mark.parametrize(
    ("name", "argv", "message"),
    [
        (
            "trio_service",
            ["--faux", "--concurrency", "0"],
            "--concurrency must be at least 1, got 0",
        ),
        ("trio_service", ["--faux", "--deadline", "0"], "--deadline must be positive seconds"),
        ("bench_harness", ["--faux", "--concurrency", "0"], "--concurrency must be at least 1"),
        (
            "trio_service",
            ["--model", "anthropic/claude-hiku-4-5"],
            "did you mean 'claude-haiku-4-5'",
        ),
        ("asyncio_sse_app", ["--faux", "--port", "99999"], "--port must be 0-65535, got 99999"),
        ("sqlite_session", ["--faux", "  "], "the prompt is empty"),
        ("chat_app", ["--faux", "--port", "99999"], "--port must be 0-65535, got 99999"),
        ("chat_app", ["--faux", "--faux-speed", "0"], "--faux-speed must be positive, got 0.0"),
        ("chat_app", ["--model", "anthropic/claude-hiku-4-5"], "did you mean 'claude-haiku-4-5'"),
        ("chat_app", [], "choose --faux (offline) or --model provider/model-id"),
    ]
    + [
        (
            name,
            ["--faux", "--model", "anthropic/claude-haiku-4-5"]
            + (["hi"] if name == "sqlite_session" else []),
            "--faux and --model exclude each other: --faux is the offline scripted model, "
            "--model a real one",
        )
        for name in (
            "asyncio_sse_app",
            "bench_harness",
            "chat_app",
            "sqlite_session",
            "trio_service",
        )
    ],
)
def test_example_usage_errors_exit_2_with_one_line(capsys, name, argv, message):
    with pytest.raises(SystemExit) as caught:
        load(name).parse_args(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1].endswith(message) or message in err.splitlines()[-1]


def example_process(name: str, *argv: str, **kwargs: Any) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))}
    return subprocess.Popen(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
        **kwargs,
    )


def test_trio_service_prints_why_each_run_failed_and_exits_1():
    process = example_process(
        "trio_service", "--model", "anthropic/claude-haiku-4-5", "--jobs", "2"
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1, err
    jobs = [line for line in out.splitlines() if line.startswith("job ")]
    assert len(jobs) == 2
    assert all(
        line.endswith(
            "No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
        )
        for line in jobs
    )
    assert "Traceback" not in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_bench_harness_stops_on_ctrl_c_with_one_line_and_keeps_whole_results(tmp_path):
    out = tmp_path / "runs.jsonl"
    process = example_process(
        "bench_harness", "--faux", "--tasks", "1000", "--tokens-per-second", "200",
        "--concurrency", "4", "--out", str(out),
    )  # fmt: skip
    assert process.stderr is not None
    assert process.stderr.readline().startswith("[")  # the progress bar: it is running
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert (
        err.rstrip().splitlines()[-1]
        == "interrupted; finished tasks are saved, run again to resume"
    )
    assert all(json.loads(line)["task"] >= 0 for line in out.read_text().splitlines())


def test_bench_harness_refuses_an_output_it_cannot_write_before_running(tmp_path):
    process = example_process("bench_harness", "--faux", "--out", str(tmp_path / "no" / "x.jsonl"))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "Traceback" not in err
    assert err.splitlines()[-1].endswith("x.jsonl': No such file or directory")


async def test_sqlite_session_exits_1_with_the_reason_when_the_run_fails(tmp_path, monkeypatch):
    example = load("sqlite_session")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as caught:
        await example.main(
            ["--model", "anthropic/claude-haiku-4-5", "--db", str(tmp_path / "c.db"), "hi"]
        )
    assert caught.value.code == (
        "sqlite_session: the run failed: No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
    )


def limit_file_size(limit: int) -> Any:
    """A ``preexec_fn``: files the child writes stop growing at ``limit`` bytes, with the
    write failing (``EFBIG``) as on a full disk instead of killing the child."""

    def apply() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_bench_harness_stops_with_one_line_when_its_results_stop_fitting(tmp_path):
    out = tmp_path / "runs.jsonl"
    process = example_process(
        "bench_harness", "--faux", "--tasks", "40", "--out", str(out),
        preexec_fn=limit_file_size(600),
    )  # fmt: skip
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"bench_harness: cannot write results to {str(out)!r}: File too large"
    )
    # what was written whole is kept; a cut-off last line is dropped when it resumes
    harness = load("bench_harness")
    assert 0 < len(harness.load_done(out)) < 40


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_bench_harness_on_a_device_writes_without_reading_it():
    # /dev/full reads as endless zeros and takes no writes: one line, not a hang
    process = example_process("bench_harness", "--faux", "--tasks", "5", "--out", "/dev/full")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.splitlines()[-1] == (
        "bench_harness: cannot write results to '/dev/full': No space left on device"
    )
    process = example_process("bench_harness", "--faux", "--tasks", "5", "--out", os.devnull)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert json.loads(out)["ran"] == 5


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_trio_service_stops_on_ctrl_c_with_one_line_and_exit_130():
    process = example_process(
        "trio_service", "--faux", "--jobs", "50", "--tokens-per-second", "20",
        "--deadline", "60",
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline() == "50 jobs, at most 4 at once (Ctrl-C stops)\n"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert err == "interrupted; the runs in flight were aborted\n"


ENGINES = {"durable_agent": "dbos", "temporal_agent": "temporalio", "ray_fanout": "ray"}


@pytest.mark.parametrize("name", list(ENGINES))
def test_the_engine_examples_explain_themselves_and_refuse_a_misspelt_model(name):
    pytest.importorskip(ENGINES[name])
    helping = example_process(name, "--help")  # both at once: each imports its engine
    process = example_process(name, "--model", "anthropic/claude-hiku-4-5")
    out, _ = helping.communicate(timeout=60)
    assert helping.returncode == 0
    assert out.startswith("usage: ")
    assert "`" not in out
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert err.splitlines()[-1] == (
        f"{name}.py: error: --model: unknown model 'claude-hiku-4-5' for provider "
        "'anthropic'; did you mean 'claude-haiku-4-5', 'claude-haiku-5-5' or "
        "'claude-opus-4-5'?"
    )


@pytest.mark.parametrize("name", ["durable_agent", "ray_fanout"])
def test_the_engine_examples_refuse_faux_together_with_a_model(name):
    process = example_process(name, "--faux", "--model", "anthropic/claude-haiku-4-5")
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2
    assert err.splitlines()[-1] == (
        f"{name}.py: error: --faux and --model exclude each other: --faux is the offline "
        "scripted model, --model a real one"
    )


def closed_port() -> int:
    with socket.socket() as probe:  # bound, never listening: connections are refused
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_ray_example_refuses_its_mistakes_before_starting_ray(tmp_path):
    port = closed_port()
    cases = [
        (["--shards", "0"], 2, "ray_fanout.py: error: --shards must be at least 1, got 0"),
        (
            ["--concurrency", "0"],
            2,
            "ray_fanout.py: error: --concurrency must be at least 1, got 0",
        ),
        (
            ["--out", str(tmp_path / "missing" / "t.jsonl")],
            2,
            f"ray_fanout.py: error: --out {str(tmp_path / 'missing' / 't.jsonl')!r}: No such "
            "file or directory",
        ),
        (
            ["--address", "ray-head"],
            2,
            "ray_fanout.py: error: --address takes host:port, ray://host:port or auto, got "
            "'ray-head'",
        ),
        (
            ["--address", f"127.0.0.1:{port}"],
            1,
            f"ray_fanout: cannot reach a Ray cluster at 127.0.0.1:{port} (Connection refused); "
            "start one with `ray start --head` there, or leave out --address for a local one",
        ),
    ]
    processes = [
        example_process("ray_fanout", "--faux", "--jobs", "4", *argv) for argv, *_ in cases
    ]
    for process, (argv, code, line) in zip(processes, cases, strict=True):
        out, err = process.communicate(timeout=60)  # Ray would keep trying for minutes
        assert (process.returncode, err.splitlines()[-1]) == (code, line), argv
        assert out == ""
        assert "Ray instance" not in err  # "Started a local Ray instance", "Connecting to ..."
        assert "Traceback" not in err


def test_the_durable_example_starts_a_new_run_after_a_failed_one(tmp_path):
    # the docstring's path: first with --model and no key, then offline with --faux on the
    # same (default) database; the second run is a run of its own, not the first's failure
    failed = example_process("durable_agent", "--model", "anthropic/claude-haiku-4-5", cwd=tmp_path)
    out, err = failed.communicate(timeout=120)
    assert failed.returncode == 1, err
    assert "answer:" not in out
    assert err.splitlines()[-1] == (
        "durable_agent: the run failed: No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
    )
    first_id = out.split()[1].rstrip(":")
    offline = example_process("durable_agent", "--faux", "--tool-seconds=0", cwd=tmp_path)
    out, err = offline.communicate(timeout=120)
    assert offline.returncode == 0, err
    assert (tmp_path / "durable.sqlite").exists()
    header, *events, answer = out.splitlines()
    run_id = header.split()[1].rstrip(":")
    assert run_id != first_id
    assert header == f"run {run_id}: a new run (interrupted, it resumes with --resume {run_id})"
    assert events[0] == "  [new] assistant: Let me look."
    assert answer == "answer: The status page says all systems are nominal."


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_durable_example_resumes_a_run_only_when_asked_and_says_so(tmp_path):
    db = f"--db={tmp_path / 'c.sqlite'}"
    with example_process("durable_agent", "--faux", "--tool-seconds=600", db) as process:
        try:
            assert process.stdout is not None
            run_id = process.stdout.readline().split()[1].rstrip(":")
            assert process.stdout.readline() == "  [new] assistant: Let me look.\n"
            assert process.stdout.readline() == "  fetch status.example started\n"
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
        finally:
            process.kill()  # its tool waits for 600 s: never left behind by a failure
    assert process.returncode == 130
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"durable_agent: interrupted; to finish the run: python "
        f"{EXAMPLES / 'durable_agent.py'} --faux {db.replace('=', ' ')} --resume {run_id}"
    )
    resumed = example_process("durable_agent", "--faux", "--tool-seconds=0", db, "--resume", run_id)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert out.splitlines() == [
        f"run {run_id}: resuming from the database (recorded steps are replayed)",
        "  [replayed] assistant: Let me look.",  # the model is not asked again
        "  fetch status.example started",  # the interrupted fetch (replay="safe") runs again
        "  [new] fetch -> <html>status.example: all systems nominal</html>",
        "  [new] assistant: The status page says all systems are nominal.",
        "answer: The status page says all systems are nominal.",
    ]
    again = example_process("durable_agent", "--faux", db, "--resume", run_id)
    unknown = example_process("durable_agent", "--faux", db, "--resume", "status-check-none")
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert out.splitlines() == [
        f"run {run_id}: finished earlier; its recorded result:",
        "answer: The status page says all systems are nominal.",
    ]
    _, err = unknown.communicate(timeout=120)
    assert unknown.returncode == 2
    assert err == (
        f"durable_agent: no run 'status-check-none' in the database "
        f"{str(tmp_path / 'c.sqlite')!r}; leave out --resume to start a new one\n"
    )


def test_the_durable_example_names_a_database_it_cannot_open(tmp_path):
    unopenable = str(tmp_path / "no such dir" / "x.sqlite")
    port = closed_port()
    refused = f"postgresql://pi:secret@127.0.0.1:{port}/runs"
    processes = [
        example_process("durable_agent", "--faux", "--db", db)
        for db in (unopenable, refused, "postgresql://pi@127.0.0.1")
    ]
    results = [(*process.communicate(timeout=120), process.returncode) for process in processes]
    assert results == [
        (
            "",
            f"durable_agent: cannot open the database {unopenable!r}: unable to open database "
            "file\n",
            1,
        ),
        (
            "",
            f"durable_agent: cannot open the database 'postgresql://pi:***@127.0.0.1:{port}/runs': "
            f'connection failed: connection to server at "127.0.0.1", port {port} failed: '
            "Connection refused\n",
            1,
        ),
        (
            "",
            "durable_agent: cannot open the database 'postgresql://pi@127.0.0.1': Database "
            "name must be specified in the connection URL\n",
            1,
        ),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("name", ["asyncio_sse_app", "chat_app"])
def test_the_web_apps_stop_on_ctrl_c_with_exit_130(name):
    with example_process(name, "--faux", "--port", "0") as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("serving http://127.0.0.1:")
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            process.kill()
    # (hypercorn, under the chat app, logs a line of its own first)
    assert (process.returncode, err.splitlines()[-1]) == (130, f"{name}: stopped")
    assert "Traceback" not in err


def test_the_sse_app_on_a_port_in_use_is_one_line_and_exit_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = example_process("asyncio_sse_app", "--faux", "--port", str(port))
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.startswith("asyncio_sse_app: cannot serve: ")
    assert err.endswith("address already in use\n")
    assert err.count("\n") == 1


def test_bench_harness_where_every_task_fails_says_why_and_exits_1(tmp_path):
    process = example_process(
        "bench_harness", "--model", "anthropic/claude-haiku-4-5", "--tasks", "3",
        "--out", str(tmp_path / "runs.jsonl"),
    )  # fmt: skip
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert err.splitlines()[-1] == (
        "bench_harness: 3 of 3 tasks failed; the first: No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
    )
    assert json.loads(out)["statuses"] == {"error": 3}


def test_the_temporal_example_says_why_its_run_failed_and_exits_1(temporal_address):
    pytest.importorskip("temporalio")
    process = example_process(
        "temporal_agent", "--model", "anthropic/claude-haiku-4-5",
        f"--address={temporal_address}", "--run-id=failed-run", "--task-queue=failed-run",
    )  # fmt: skip
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, err
    assert "answer:" not in out
    assert err.splitlines()[-1] == (
        "temporal_agent: the run failed: No API key for provider: anthropic; "
        "set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key"
    )


def test_the_temporal_example_without_a_server_says_so_in_one_line():
    pytest.importorskip("temporalio")
    process = example_process("temporal_agent", "--faux", "--address=127.0.0.1:1")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "Traceback" not in err
    assert err.startswith("temporal_agent: no Temporal server at 127.0.0.1:1 (")
    assert err.rstrip().endswith("start one with `temporal server start-dev` or give --address")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_temporal_example_stops_on_ctrl_c_with_one_line(temporal_address):
    pytest.importorskip("temporalio")
    process = example_process(
        "temporal_agent", "--faux", "--tool-seconds=600",
        f"--address={temporal_address}", "--run-id=ctrl-c-run", "--task-queue=ctrl-c-run",
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline() == "  [new] assistant: Let me look.\n"
    assert process.stdout.readline() == "  fetch status.example started\n"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        "temporal_agent: interrupted; run the same command again to resume"
    )
