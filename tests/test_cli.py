"""The ``pi-trio`` command line: demo, run, chat, models, proxy, the built-in tools and
Ctrl-C. Commands are called in-process (``main(argv)``) with the faux provider and no
real-time pacing; one subprocess test sends a real SIGINT."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from pi_trio.agent import Agent
from pi_trio.ai.providers import default_registry
from pi_trio.cli import main
from pi_trio.cli._calc import MAX_EXPRESSION_CHARS, CalculatorError, evaluate, format_number
from pi_trio.cli._chat import chat_loop
from pi_trio.cli._demo import run_demo
from pi_trio.cli._render import GuardedOutput, PlainRenderer, make_renderer
from pi_trio.cli._render_rich import RichRenderer
from pi_trio.cli._signals import EXIT_INTERRUPTED, Interrupts, run_interruptible
from pi_trio.cli._tools import (
    PathEscapeError,
    builtin_tools,
    calculator,
    current_time,
    make_read_file,
    resolve_under,
)
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
)

REPO = Path(__file__).resolve().parent.parent
KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def walk_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        keys = list(value)
        for item in value.values():
            keys.extend(walk_keys(item))
        return keys
    if isinstance(value, list):
        return [key for item in value for key in walk_keys(item)]
    return []


# --------------------------------------------------------------------------- demo


def test_demo_shows_thinking_parallel_tools_steering_and_abort_then_exits_0(capsys):
    code, out, _ = cli(capsys, "demo", "--fast")
    assert code == 0
    assert "thinking: " in out
    for name in ("get_weather", "count_primes", "search_docs"):
        assert f"[tool {name}] started" in out
        assert f"[tool {name}] done in " in out
    assert "[tool count_primes] sieving 50%" in out
    assert "5133 primes below 50000" in out
    assert "steering while tools run" in out
    assert "user: Also: keep the final answer under 40 words." in out
    assert "[aborted] Request was aborted" in out
    assert "assistant(aborted) → user → assistant(stop)" in out


def test_demo_tool_calls_run_in_parallel(capsys):
    code, out, _ = cli(capsys, "demo", "--fast")
    assert code == 0
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.endswith(("}",)) and "started" in line]
    first_end = next(i for i, line in enumerate(lines) if "] done in " in line)
    assert len(starts) == 3
    assert max(starts) < first_end


async def test_demo_renders_with_rich_cards_on_a_terminal(monkeypatch):
    from rich.console import Console

    buffer = io.StringIO()

    def rich_renderer(out: Any, **kwargs: Any) -> RichRenderer:
        console = Console(file=buffer, force_terminal=True, width=120)
        return RichRenderer(console, show_user_messages=kwargs.get("show_user_messages", True))

    monkeypatch.setattr("pi_trio.cli._demo.make_renderer", rich_renderer)
    code = await run_demo(buffer, fast=True, handle_signals=False)
    text = buffer.getvalue()
    assert code == 0
    assert "✓ get_weather" in text
    assert "5133 primes below 50000" in text
    assert "Request was aborted" in text


# --------------------------------------------------------------------------- run


def test_run_on_the_faux_model_streams_the_answer_and_tool_cards(capsys):
    code, out, err = cli(capsys, "run", "hello", "there", "--model", "faux/faux-1")
    assert code == 0, err
    assert "[tool calculator] done in " in out
    assert "[tool current_time] done in " in out
    assert "6 * 7 = 42" in out
    assert "You said: hello there" in out


def test_run_reads_the_prompt_from_stdin_with_a_dash(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("piped prompt"))
    code, out, _ = cli(capsys, "run", "-", "--model", "faux/faux-1")
    assert code == 0
    assert "You said: piped prompt" in out


def test_run_json_prints_one_event_per_line_in_the_original_format(capsys):
    code, out, _ = cli(capsys, "run", "hi", "--model", "faux/faux-1", "--json")
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    types = [event["type"] for event in events]
    assert types[0] == "agent_start"
    assert types[-1] == "agent_end"
    assert {"message_update", "tool_execution_start", "tool_execution_end"} <= set(types)
    update = next(e for e in events if e["type"] == "message_update")
    assert {"type", "partial"} <= set(update["assistantMessageEvent"])
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert {"toolCallId", "toolName", "result", "isError", "durationMs"} <= set(end)
    final = events[-1]["messages"][-1]
    assert final["stopReason"] == "stop"
    assert not [key for key in walk_keys(events) if "_" in key]


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY"),
        ("openai/gpt-5-mini", "OPENAI_API_KEY"),
        ("google/gemini-2.5-flash", "GEMINI_API_KEY"),
    ],
)
def test_run_without_a_key_prints_one_line_naming_the_variable_and_exits_2(
    capsys, monkeypatch, model, variable
):
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    code, out, err = cli(capsys, "run", "hi", "--model", model)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert variable in err
    assert err.startswith("pi-trio: no API key for ")


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude", "--model 'claude' names no provider: write 'provider/model-id'"),
        ("gpt-5-mini", "e.g. 'azure/gpt-5-mini', 'cloudflare-ai-gateway/gpt-5-mini', 'openai/"),
        ("nope/x", "unknown provider 'nope' in 'nope/x'"),
        ("antropic/claude-haiku-4-5", "did you mean 'anthropic'?"),
        ("anthropic/claude-hiku-4-5", "did you mean 'claude-haiku-4-5'"),
        ("faux/other", "the offline provider has one model, faux/faux-1"),
    ],
)
def test_run_with_a_bad_model_explains_and_exits_2(capsys, model, expected):
    code, out, err = cli(capsys, "run", "hi", "--model", model)
    assert code == 2
    assert out == ""
    assert expected in err
    assert err.count("\n") == 1


def test_run_clamps_an_unsupported_thinking_level_with_a_note(capsys):
    code, out, _ = cli(capsys, "run", "hi", "--model", "faux/faux-1", "--thinking", "high")
    assert code == 0
    assert "does not support thinking 'high'; using 'off'" in out


def test_argument_errors_return_2_and_help_returns_0(capsys):
    assert main(["run", "hi"]) == 2  # --model is required
    assert main(["run", "hi", "-m", "faux/faux-1", "--thinking", "huge"]) == 2
    assert main(["--help"]) == 0
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "pi-trio demo" in err


def test_python_dash_m_pi_trio_runs_the_cli():
    done = subprocess.run(
        [sys.executable, "-m", "pi_trio", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("pi-trio ")


# --------------------------------------------------------------------------- models


def model_rows(out: str) -> list[str]:
    """The model ids of a ``pi-trio models`` listing (first cell of each table row)."""
    cells = [line.split() for line in out.splitlines() if line.startswith("  ")]
    return [row[0] for row in cells if row[0] != "model"]


def test_models_lists_the_whole_catalog_grouped_by_provider_with_a_count(capsys):
    code, out, _ = cli(capsys, "models")
    assert code == 0
    rows = model_rows(out)
    providers = {row.split("/", 1)[0] for row in rows}
    assert len(rows) >= 1500
    assert len(providers) >= 35
    first = out.splitlines()[0]
    assert first.startswith(f"{len(rows):,} models, from {len(providers)} providers;")
    assert "anthropic/claude-sonnet-4-5" in rows
    assert "openai/gpt-5-mini" in rows
    assert rows[-1] == "faux/faux-1"  # the offline model, listed last
    # one block per provider, headed by its count, in catalog order
    headings = [line for line in out.splitlines() if " · " in line and not line.startswith(" ")]
    assert [h.split(" · ")[0] for h in headings][:3] == ["amazon-bedrock", "ant-ling", "anthropic"]
    assert "anthropic · 18 models · " in out
    assert len(headings) == len(providers)


def test_models_gives_every_size_in_thousands_of_tokens(capsys):
    _, out, _ = cli(capsys, "models", "--provider", "openai")
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("  ")}
    assert lines["model"][2:4] == ["context", "max"]
    # gpt-4.1: 1 047 576 context, 32 768 output; gpt-5: 400 000 and 128 000
    assert lines["openai/gpt-4.1"][2:4] == ["1,048k", "33k"]
    assert lines["openai/gpt-5"][2:4] == ["400k", "128k"]


def test_models_marks_apis_this_installation_cannot_call(capsys, monkeypatch):
    _, out, _ = cli(capsys, "models", "--provider", "radius")
    rows = [line.split() for line in out.splitlines() if line.startswith("  radius/")]
    assert len(rows) == 39
    assert {row[1] for row in rows} == {"pi-messages"}  # served since pi-messages exists
    assert "*" not in out
    # a registry without the api: its models are marked and the footnote names it
    served = [api for api in default_registry.apis() if api != "pi-messages"]
    monkeypatch.setattr(default_registry, "apis", lambda: served)
    _, out, _ = cli(capsys, "models", "--provider", "radius")
    rows = [line.split() for line in out.splitlines() if line.startswith("  radius/")]
    assert {row[1] for row in rows} == {"pi-messages*"}
    assert "* not callable from this installation yet: pi-messages" in out
    _, out, _ = cli(capsys, "models", "--provider", "mistral")
    assert "*" not in out  # mistral-conversations is served


def test_models_search_words_all_match_id_or_name_in_any_case(capsys):
    code, out, _ = cli(capsys, "models", "CLAUDE", "haiku", "--provider", "anthropic")
    assert code == 0
    rows = model_rows(out)
    assert rows == [
        "anthropic/claude-haiku-4-5",
        "anthropic/claude-haiku-4-5-20251001",
        "anthropic/claude-haiku-5-5",
    ]
    assert out.startswith(f"{len(rows)} of 18 models match 'CLAUDE haiku', from 1 provider;")
    # a name matches too: radius/balanced is named "Balanced"
    _, out, _ = cli(capsys, "models", "Balanced")
    assert "radius/balanced" in model_rows(out)


def test_models_filters_by_capability(capsys):
    _, everything, _ = cli(capsys, "models")
    _, reasoning, _ = cli(capsys, "models", "--reasoning")
    _, images, _ = cli(capsys, "models", "--images")
    _, both, _ = cli(capsys, "models", "--reasoning", "--images")
    all_rows, r_rows, i_rows, b_rows = map(
        set, map(model_rows, (everything, reasoning, images, both))
    )
    assert b_rows == r_rows & i_rows
    assert len(b_rows) < len(r_rows) < len(all_rows)
    assert len(i_rows) < len(all_rows)
    assert "groq/llama-3.3-70b-versatile" in all_rows - r_rows  # no reasoning
    assert "groq/openai/gpt-oss-20b" in r_rows - i_rows  # text only
    assert "faux/faux-1" in i_rows - r_rows
    assert " match reasoning and image input, from " in both.splitlines()[0]


def test_models_with_no_match_says_so(capsys):
    code, out, _ = cli(capsys, "models", "no-such-model-anywhere")
    assert code == 0
    assert model_rows(out) == []
    assert "no model matches" in out


def test_models_filters_by_provider_and_shows_whether_its_key_is_set(capsys, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    code, out, _ = cli(capsys, "models", "--provider", "groq")
    assert code == 0
    rows = model_rows(out)
    assert rows
    assert {row.split("/", 1)[0] for row in rows} == {"groq"}
    assert "key not set: export GROQ_API_KEY=..." in out
    monkeypatch.setenv("GROQ_API_KEY", "gsk-not-shown")
    _, out, _ = cli(capsys, "models", "--provider", "groq")
    assert "key set (GROQ_API_KEY)" in out
    assert "gsk-not-shown" not in out


def test_models_with_an_unknown_provider_exits_2_and_suggests(capsys):
    code, out, err = cli(capsys, "models", "--provider", "antropic")
    assert code == 2
    assert out == ""
    assert err == (
        "pi-trio: unknown provider 'antropic'; did you mean anthropic? "
        "`pi-trio models` lists every provider\n"
    )


# --------------------------------------------------------------------------- proxy


def test_proxy_without_tokens_explains_and_exits_2(capsys, monkeypatch):
    monkeypatch.delenv("PI_TRIO_PROXY_TOKENS", raising=False)
    code, _, err = cli(capsys, "proxy", "--port", "0")
    assert code == 2
    assert "PI_TRIO_PROXY_TOKENS" in err


def test_proxy_limits_come_from_the_flags(capsys, monkeypatch):
    monkeypatch.setenv("PI_TRIO_PROXY_TOKENS", "t0ken")
    code, _, err = cli(
        capsys, "proxy", "--port", "0", "--max-streams", "0", "--body-timeout", "5",
        "--max-bytes-in-flight", "7",
    )  # fmt: skip
    assert code == 2
    assert "got 33554432, 0, 7 and 5.0" in err


def test_proxy_without_the_extra_names_it(capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "hypercorn" else real(name)
    )
    code, _, err = cli(capsys, "proxy")
    assert code == 2
    assert "pip install 'pi-trio[proxy]'" in err


# --------------------------------------------------------------------------- calculator


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(17 + 25) * 3 / 7", "18"),
        ("0.1 + 0.2", "0.3"),
        ("2 ** 10", "1024"),
        ("-7 // 2", "-4"),
        ("7 % 3", "1"),
        ("sqrt(16) + abs(-2)", "6"),
        ("round(pi, 3)", "3.142"),
        ("max(1, 5, 3)", "5"),
    ],
)
def test_calculator_evaluates_arithmetic(expression, value):
    assert format_number(evaluate(expression)) == value


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('true')", "this function call is not allowed"),
        ("open('/etc/passwd')", "this function call is not allowed"),
        ("().__class__.__bases__", "attribute access is not allowed"),
        ("'a' * 3", "the literal 'a' is not allowed"),
        ("x + 1", "the name 'x' is not allowed"),
        ("lambda: 1", "Lambda syntax is not allowed"),
        ("[1, 2]", "List syntax is not allowed"),
        ("1 << 5", "the operator LShift is not allowed"),
        ("True + 1", "the literal True is not allowed"),
        ("9 ** 9 ** 9", "is too large"),
        ("1 / 0", "divides by zero"),
        ("1e308 * 10", "not a finite number"),
        ("sqrt(-1)", "has no value"),
        ("2 +", "is not a valid expression"),
        ("", "the expression is empty"),
        ("1" * (MAX_EXPRESSION_CHARS + 1), "the limit is 500"),
    ],
)
def test_calculator_refuses_anything_but_arithmetic(expression, message):
    with pytest.raises(CalculatorError, match=None) as info:
        evaluate(expression)
    assert message in str(info.value)


async def test_calculator_tool_errors_reach_the_model_as_error_results():
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("calculator", {"expression": "__import__('os')"})],
                stop_reason="toolUse",
            ),
            faux_assistant_message("ok"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[calculator], stream_fn=faux)
    await agent.prompt("compute")
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert result.is_error
    assert "is not allowed; the calculator accepts" in result.content[0].text


# --------------------------------------------------------------------------- read_file


async def read(tool: Any, path: str) -> str:
    result = await tool.execute("call-1", {"path": path}, None, lambda _: None)
    return "".join(block.text for block in result.content)


@pytest.mark.parametrize("path", ["../secret.txt", "sub/../../secret.txt", "./../secret.txt"])
async def test_read_file_refuses_paths_escaping_the_directory(tmp_path, path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("top secret")
    tool = make_read_file(root)
    with pytest.raises(PathEscapeError, match="is outside the working directory"):
        await read(tool, path)


def test_read_file_refuses_absolute_paths_and_symlinks_leading_outside(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    (root / "link.txt").symlink_to(outside)
    for path in (str(outside), "link.txt", "/etc/passwd", "~"):
        with pytest.raises(PathEscapeError):
            resolve_under(root, path)
    inside = root / "ok.txt"
    inside.write_text("fine")
    assert resolve_under(root, str(inside)) == inside.resolve()
    with pytest.raises(PathEscapeError, match="is not a file path"):
        resolve_under(root, "")


async def test_read_file_reads_text_under_the_directory_and_caps_the_size(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("hello\nworld\n")
    (tmp_path / "big.txt").write_text("x" * 100)
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    tool = make_read_file(tmp_path, max_bytes=10)
    assert await read(make_read_file(tmp_path), "docs/a.md") == "hello\nworld\n"
    capped = await read(tool, "big.txt")
    assert capped.startswith("x" * 10 + "\n[truncated: the file has 100 bytes")
    with pytest.raises(ValueError, match="looks like a binary file"):
        await read(tool, "blob.bin")
    with pytest.raises(FileNotFoundError, match="is not a file"):
        await read(tool, "docs")
    with pytest.raises(FileNotFoundError, match="is not a file"):
        await read(tool, "missing.txt")


def test_builtin_tools_are_time_calculator_and_read_file():
    assert [t.name for t in builtin_tools()] == ["current_time", "calculator", "read_file"]


async def test_current_time_accepts_iana_zones_and_explains_unknown_ones():
    result = await current_time.execute("c", {"timezone": "UTC"}, None, lambda _: None)
    assert "+00:00 (" in result.content[0].text
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Base'"):
        await current_time.execute("c", {"timezone": "Mars/Base"}, None, lambda _: None)


# --------------------------------------------------------------------------- Ctrl-C


def long_answer_agent() -> Agent:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("word " * 400)])
    return Agent(model=faux.get_model(), stream_fn=faux, close_timeout=1.0)


async def interrupted_run(*presses: str) -> tuple[int, Interrupts, Agent, list[str]]:
    """Run a long answer and press Ctrl-C (call ``handle``) once at the first event of each
    kind in ``presses`` (an agent event type, or the assistant event type of an update)."""
    agent = long_answer_agent()
    notes: list[str] = []
    pending = list(presses)

    async def body(interrupts: Interrupts) -> int:
        interrupts.attach(agent)

        def press(event: Any) -> None:
            kind = event.type
            if kind == "message_update":
                kind = event.assistant_message_event.type
            while pending and kind == pending[0]:
                pending.pop(0)
                interrupts.handle()

        agent.subscribe(press)
        await agent.prompt("go")
        return 0

    code, interrupts = await run_interruptible(body, notes.append, handle_signals=False)
    return code, interrupts, agent, notes


async def test_first_ctrl_c_aborts_the_run_and_keeps_the_partial_answer():
    code, interrupts, agent, notes = await interrupted_run("text_delta")
    assert code == 0
    assert interrupts.aborted
    assert not interrupts.exit_requested
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted"
    assert last.error_message
    assert last.content[0].text.startswith("word")
    assert not agent.state.is_streaming
    assert notes == ["Interrupted: aborting the run (press Ctrl-C again to exit)"]


async def test_second_ctrl_c_while_the_abort_settles_exits_with_130():
    code, interrupts, agent, notes = await interrupted_run("text_delta", "message_end")
    assert code == EXIT_INTERRUPTED
    assert interrupts.exit_requested
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert not agent.state.is_streaming
    assert notes[-1] == "Interrupted: exiting"


async def test_two_ctrl_c_at_once_still_record_the_aborted_answer():
    code, _, agent, _ = await interrupted_run("text_delta", "text_delta")
    assert code == EXIT_INTERRUPTED
    assert not agent.state.is_streaming
    assert agent.state.messages[-1].stop_reason == "aborted"


async def test_ctrl_c_while_idle_exits():
    notes: list[str] = []

    async def body(interrupts: Interrupts) -> int:
        interrupts.handle()
        await trio.sleep_forever()
        return 0

    code, interrupts = await run_interruptible(body, notes.append, handle_signals=False)
    assert code == EXIT_INTERRUPTED
    assert interrupts.exit_requested
    assert not interrupts.aborted


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_the_demo_aborts_the_act_and_goes_on_and_a_second_one_exits():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_trio", "demo", "--tokens-per-second", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )
    assert process.stdout is not None
    seen = []

    def read_until(prefix: str) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if line.startswith(prefix):
                return
        raise AssertionError(f"no line starting with {prefix!r} in {seen}")

    read_until("user: In two sentences")  # act 1 is running
    process.send_signal(signal.SIGINT)
    read_until("== 2 · parallel tools")  # the tour went on
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    output = "".join(seen) + out
    assert process.returncode == EXIT_INTERRUPTED
    assert "Interrupted: aborting the run (press Ctrl-C again to exit)" in output
    assert "[aborted] Request was aborted" in output
    assert "-- this act was aborted by Ctrl-C; the tour goes on" in output
    assert "Interrupted: exiting" in output
    assert "== 3 · abort mid-stream ==" not in output
    assert "Traceback" not in err
    assert "KeyboardInterrupt" not in err


# --------------------------------------------------------------------------- chat


async def test_chat_steers_with_lines_typed_while_the_agent_works():
    faux = FauxProvider()
    gate = trio.Event()
    tool_started = trio.Event()
    finished = trio.Event()

    from pi_trio.agent import tool

    @tool
    async def wait_for_user() -> str:
        """Wait until the user typed something."""
        tool_started.set()
        await gate.wait()
        return "waited"

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text("Working."), faux_tool_call("wait_for_user", {})],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Done, and I saw your note."),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[wait_for_user], stream_fn=faux)
    agent.subscribe(lambda event: finished.set() if event.type == "agent_end" else None)
    lines = iter(["first prompt", "  ", "and a note"])

    async def next_line(idle: bool) -> str | None:
        line = next(lines, None)
        if line == "and a note":
            await tool_started.wait()
            gate.set()
        elif line is None:
            await finished.wait()
        return line

    out = io.StringIO()
    renderer = PlainRenderer(out, show_user_messages=True)
    agent.subscribe(renderer.event)
    code, _ = await run_interruptible(
        lambda interrupts: chat_loop(agent, renderer, next_line, interrupts),
        renderer.note,
        handle_signals=False,
    )
    assert code == 0
    roles = [(m.role, getattr(m, "content", None)) for m in agent.state.messages]
    texts = [
        c if isinstance(c, str) else "".join(b.text for b in c if b.type == "text")
        for _, c in roles
    ]
    steer_at = texts.index("and a note")
    assert roles[steer_at - 1][0] == "toolResult"
    assert agent.state.messages[-1].role == "assistant"
    assert "steering queued: 'and a note'" in out.getvalue()
    assert faux.call_count == 2


async def test_chat_prompts_each_idle_line_and_stops_at_end_of_input():
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    lines = iter(["hello", "again", "/exit", "never sent"])

    async def next_line(idle: bool) -> str | None:
        await trio.lowlevel.checkpoint()
        if agent.state.is_streaming:
            await agent.wait_for_idle()
        return next(lines, None)

    renderer = PlainRenderer(io.StringIO())
    code, _ = await run_interruptible(
        lambda interrupts: chat_loop(agent, renderer, next_line, interrupts),
        renderer.note,
        handle_signals=False,
    )
    assert code == 0
    users = [m.content[0].text for m in agent.state.messages if m.role == "user"]
    assert users == ["hello", "again"]


def test_chat_with_a_missing_key_exits_2(capsys, monkeypatch):
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    code, _, err = cli(capsys, "chat", "--model", "openai/gpt-5-mini")
    assert code == 2
    assert "OPENAI_API_KEY" in err


# --------------------------------------------------------------------------- output


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_output_when_not_a_terminal_or_rich_is_missing(monkeypatch):
    assert isinstance(make_renderer(io.StringIO()), PlainRenderer)
    assert isinstance(make_renderer(_TTY()), RichRenderer)
    monkeypatch.setattr("pi_trio.cli._render.rich_available", lambda: False)
    assert isinstance(make_renderer(_TTY()), PlainRenderer)
    with pytest.raises(ValueError, match="style must be 'auto', 'rich' or 'plain'"):
        make_renderer(io.StringIO(), style="fancy")


def test_a_closed_pipe_stops_output_and_calls_back_once():
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError

    calls: list[str] = []
    out = GuardedOutput(Closed())
    out.on_broken(lambda: calls.append("abort"))
    out.write("a")
    out.writelines(["b", "c"])
    out.flush()
    assert out.broken
    assert calls == ["abort"]


def test_models_into_a_pipe_closed_early_exits_quietly(monkeypatch):
    class Head(io.StringIO):
        """A reader that goes away after a few lines, like ``| head``."""

        def write(self, text: str) -> int:
            if self.getvalue().count("\n") >= 5:
                raise BrokenPipeError
            return super().write(text)

    reader = Head()
    monkeypatch.setattr(sys, "stdout", reader)
    assert main(["models"]) == 0
    assert reader.getvalue().count("\n") == 5


def test_models_rich_style_keeps_the_plain_layout_and_dims_unserved_rows(monkeypatch):
    from pi_trio.cli._models import models_command

    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")

    plain, rich = io.StringIO(), io.StringIO()
    args = {"err": io.StringIO(), "provider": "radius"}
    assert models_command(out=plain, style="plain", **args) == 0
    assert models_command(out=rich, style="rich", **args) == 0
    assert rich.getvalue() == plain.getvalue()  # no terminal: no escape codes

    styled = _TTY()
    models_command(out=styled, style="rich", **args)
    assert "\x1b[2m  radius/" not in styled.getvalue()
    assert "\x1b[1mradius · " in styled.getvalue()
    # an api this installation has no provider for: its rows are dim
    served = [api for api in default_registry.apis() if api != "pi-messages"]
    monkeypatch.setattr(default_registry, "apis", lambda: served)
    styled = _TTY()
    models_command(out=styled, style="rich", **args)
    assert "\x1b[2m  radius/" in styled.getvalue()  # dim: api not callable yet


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_the_proxy_with_exit_130():
    pytest.importorskip("hypercorn")
    env = {**os.environ, "PI_TRIO_PROXY_TOKENS": "token1"}
    with subprocess.Popen(
        [sys.executable, "-m", "pi_trio", "proxy", "--port", "0"],
        stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
    ) as process:  # fmt: skip
        try:
            assert process.stderr is not None
            for line in process.stderr:  # hypercorn's own line comes first
                if line.startswith("pi-trio: proxy serving http://"):
                    break
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=60)
        finally:
            process.kill()
    assert (process.returncode, err.splitlines()[-1]) == (
        EXIT_INTERRUPTED,
        "pi-trio: proxy stopped",
    )
