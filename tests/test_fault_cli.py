"""The fault suite, the command line: a model that hands the calculator arithmetic meant
to hang it (a rounding to a billion digits, towers of powers), through the real CLI on a
pseudo-terminal against a loopback Chat Completions server, and Ctrl-C around the
tool's turn."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pi_trio.cli._calc import MAX_INT_BITS, MAX_ROUND_DIGITS, CalculatorError, evaluate

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")

REPO = Path(__file__).resolve().parent.parent
MODEL = "cerebras/gpt-oss-120b"  # a Chat Completions model of the catalog
ENV = {
    **{k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))},
    "CEREBRAS_API_KEY": "sk-test",
}


# --------------------------------------------------------------------------- the arithmetic


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f"round(5, -{MAX_ROUND_DIGITS + 1})", "rounds to too many digits"),
        ("round(5, 10**12)", "rounds to too many digits"),
        ("round(1.5, 2.5)", "round's digits must be a whole number"),
        ("9**9**9", "too large"),
        (f"2**{MAX_INT_BITS} * 2**{MAX_INT_BITS}", "too large"),
    ],
)
def test_arithmetic_meant_to_hang_the_calculator_is_refused(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError, match=message):
        evaluate(expression)


def test_rounding_within_the_bounds_still_works() -> None:
    assert evaluate(f"round(5, -{MAX_ROUND_DIGITS})") == 0
    assert evaluate(f"round(5, {MAX_ROUND_DIGITS})") == 5
    assert evaluate("round(12345, -2)") == 12300
    assert evaluate("round(2.675, 2)") == 2.67


# --------------------------------------------------------------------------- the CLI


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return b"data: " + json.dumps({**body, "choices": [choice]}).encode() + b"\n\n"


def _tool_call(expression: str) -> bytes:
    arguments = json.dumps({"expression": expression})
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": "calculator", "arguments": arguments}  # type: ignore[assignment]
    return (
        _chunk({"role": "assistant", "tool_calls": [call]})
        + _chunk({}, "tool_calls")
        + b"data: [DONE]\n\n"
    )


class _Model:
    """A loopback Chat Completions server: the first request gets a calculator call, the
    one after the tool result gets the result back as text (or, with ``hang_after``,
    nothing: the connection is held open)."""

    def __init__(self, expression: str, *, hang_after: bool = False) -> None:
        self.expression = expression
        self.hang_after = hang_after
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                model.requests.append(body)
                results = [m for m in body["messages"] if m.get("role") == "tool"]
                if results and model.hang_after:
                    model.release.wait(60)
                    return
                if results:
                    content = results[-1]["content"]
                    text = content if isinstance(content, str) else content[0]["text"]
                    answer = _chunk({"content": f"The tool said: {text}"}, "stop")
                    answer += b"data: [DONE]\n\n"
                else:
                    answer = _tool_call(model.expression)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Model:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def terminal() -> Iterator[Any]:
    from .pty_support import Terminal

    opened: list[Terminal] = []

    def open_terminal(*args: str) -> Terminal:
        opened.append(Terminal(*args, env=ENV, cwd=REPO))
        return opened[-1]

    yield open_terminal
    for term in opened:
        term.close()


def test_a_rounding_to_a_billion_digits_is_refused_and_the_run_goes_on(terminal: Any) -> None:
    # Before the bound, the calculator computed 10**999999999 in C: the run never ended
    # and no Ctrl-C reached it.
    with _Model("round(5, -999999999)") as model:
        term = terminal("--plain", "run", "round it", "--model", MODEL, "--base-url", model.url)
        term.wait_for("The tool said: ")
        assert term.finish() == 0
    text = term.text()
    assert "rounds to too many digits" in text
    assert len(model.requests) == 2


def test_ctrl_c_after_the_refused_calculation_aborts_the_run_and_exits(terminal: Any) -> None:
    with _Model("round(5, -999999999)", hang_after=True) as model:
        term = terminal("--plain", "run", "round it", "--model", MODEL, "--base-url", model.url)
        term.wait_for("rounds to too many digits")
        term.wait_for("waiting for")  # the request after the tool result hangs
        term.type("\x03")
        term.wait_for("Interrupted: aborting the run")
        assert term.finish() == 130
    assert "Traceback" not in term.text()
