"""Embedding pi_trio in an asyncio web app: agent events streamed to a browser over SSE.

The whole app is the standard library's asyncio streams (no web framework): GET / serves
a page whose EventSource opens GET /events?prompt=...; that handler runs an Agent
(pi_trio is written against anyio, so it runs natively on asyncio) and writes every agent
event as one SSE message: "event: <type>" and "data: <the original runtime's JSON>".
When the browser goes away, the run is aborted at once.

    python examples/asyncio_sse_app.py --faux              # then open http://127.0.0.1:8000
    python examples/asyncio_sse_app.py --model openai/gpt-5-mini --port 8080
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio

from pi_trio.agent import Agent, tool
from pi_trio.ai import UnknownModelError, resolve_model, to_json
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

MAX_REQUEST_HEAD = 16 * 1024  # request line + headers; SSE requests carry no body

PAGE = """<!doctype html>
<meta charset="utf-8"><title>pi_trio over SSE</title>
<form id="f"><input id="q" size="60" value="What is 6 * 7?"> <button>Ask</button></form>
<pre id="out" style="white-space: pre-wrap"></pre>
<script>
const out = document.getElementById("out");
document.getElementById("f").onsubmit = (e) => {
  e.preventDefault(); out.textContent = "";
  const source = new EventSource("/events?prompt=" + encodeURIComponent(q.value));
  source.addEventListener("message_update", (m) => {
    const ev = JSON.parse(m.data).assistantMessageEvent;
    if (ev.type === "text_delta" || ev.type === "thinking_delta") out.textContent += ev.delta;
  });
  source.addEventListener("tool_execution_end", (m) => {
    const ev = JSON.parse(m.data);
    out.textContent += `\\n[${ev.toolName}: ${ev.result.content[0].text}]\\n`;
  });
  source.addEventListener("message_end", (m) => {  // a failed or aborted answer says why
    const message = JSON.parse(m.data).message;
    if (message.role === "assistant" && message.errorMessage)
      out.textContent += `\\n[${message.stopReason}: ${message.errorMessage}]\\n`;
  });
  source.addEventListener("agent_end", () => source.close());
  source.onerror = () => {  // the server went away before the run ended: no retry
    source.close(); out.textContent += "\\n[the connection to the server was lost]\\n";
  };
};
</script>
"""


@tool
def multiply(a: float, b: float) -> str:
    """Multiply two numbers."""
    return f"{a * b:g}"


def faux_stream() -> tuple[Any, FauxProvider]:
    """A scripted model: think, call ``multiply``, then answer."""
    faux = FauxProvider()

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        faux.append_responses([reply])
        last = context.messages[-1]
        if last.role == "toolResult":
            return faux_assistant_message(f"The answer is {last.content[0].text}.")
        return faux_assistant_message(
            [
                faux_thinking("Arithmetic: use the tool."),
                faux_text("Let me multiply."),
                faux_tool_call("multiply", {"a": 6, "b": 7}),
            ],
            stop_reason="toolUse",
        )

    faux.set_responses([reply])
    return faux.get_model(), faux


def sse_message(event: Any) -> bytes:
    """One SSE message; the JSON is one line, so one ``data:`` field suffices."""
    return b"event: " + event.type.encode() + b"\ndata: " + to_json(event) + b"\n\n"


class App:
    """The request handler. ``outcomes`` collects each finished run's stop reason (its
    ``RunResult``'s: ``"aborted"`` also when the browser left between two turns) and
    ``settled`` is set after each one (for tests and metrics)."""

    def __init__(self, model: Any, stream_fn: Any) -> None:
        self.model = model
        self.stream_fn = stream_fn
        self.outcomes: list[str] = []
        self.settled = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        url = urlsplit(target)
        try:
            if method == "GET" and url.path == "/":
                await self.respond(writer, "200 OK", "text/html; charset=utf-8", PAGE.encode())
            elif method == "GET" and url.path == "/events":
                prompt = parse_qs(url.query).get("prompt", [""])[0]
                await self.stream_events(reader, writer, prompt or "Hello")
            else:
                await self.respond(writer, "404 Not Found", "text/plain", b"not found\n")
        except ConnectionError:
            pass  # the client went away while we answered; the run (if any) was aborted
        finally:
            writer.close()

    async def respond(
        self, writer: asyncio.StreamWriter, status: str, content_type: str, body: bytes
    ) -> None:
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()

    async def stream_events(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, prompt: str
    ) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            b"Connection: close\r\n\r\n"
        )
        agent = Agent(model=self.model, tools=[multiply], stream_fn=self.stream_fn)
        gone = False

        async def forward(event: Any) -> None:
            nonlocal gone
            if gone:
                return
            try:
                writer.write(sse_message(event))
                await writer.drain()  # a slow browser slows the agent instead of growing memory
            except ConnectionError:
                gone = True
                agent.abort()

        async def watch_disconnect() -> None:
            with contextlib.suppress(ConnectionError):  # a reset says the same as EOF
                await reader.read()  # the client sends nothing more; EOF means it went away
            agent.abort()

        agent.subscribe(forward)
        async with anyio.create_task_group() as group:
            group.start_soon(watch_disconnect)
            result = await agent.prompt(prompt)
            group.cancel_scope.cancel()
        # the run's outcome, not the transcript's last message: a run aborted between two
        # turns ends with a tool result, which has no stop reason
        self.outcomes.append(result.stop_reason)
        if not result.ok:
            print(f"run {result.stop_reason}: {result.error_message}", flush=True)
        self.settled.set()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", default=bool(os.environ.get("PI_TRIO_FAUX")))
    parser.add_argument("--model", help="provider/model-id (needs its API key in the environment)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
            + ("; PI_TRIO_FAUX is set" if os.environ.get("PI_TRIO_FAUX") else "")
        )
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0-65535, got {args.port}")
    if not args.faux:
        try:
            args.model = resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


async def serve(
    app: App,
    host: str,
    port: int,
    *,
    started: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve ``app`` until ``stop`` is set (or forever); ``started(url)`` gets the base URL."""
    server = await asyncio.start_server(app.handle, host, port, limit=MAX_REQUEST_HEAD)
    bound_host, bound_port = server.sockets[0].getsockname()[:2]
    url = f"http://{bound_host}:{bound_port}"
    print(f"serving {url} (Ctrl-C stops)", flush=True)
    if started is not None:
        started(url)
    async with server:
        if stop is None:
            await server.serve_forever()
        else:
            await stop.wait()


async def main(
    argv: Sequence[str] | None = None,
    *,
    started: Callable[[str], None] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    args = parse_args(argv)
    model, stream_fn = faux_stream() if args.faux else (args.model, None)
    await serve(App(model, stream_fn), args.host, args.port, started=started, stop=stop)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # Ctrl-C stops the server, with the shell's status for it
        print("asyncio_sse_app: stopped", file=sys.stderr)
        sys.exit(130)
    except OSError as exc:  # the port is taken, the host unknown, ...
        raise SystemExit(f"asyncio_sse_app: cannot serve: {exc}") from None
