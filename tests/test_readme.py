"""Every code block of the README runs, or is checked, and shows what the README says.

Each block is named by its section and its place there (``("Quickstart (trio)", 0)``)
and has a runner below; ``test_every_block_has_a_runner`` fails when a block is added,
moved or removed without one. Blocks run as written, except for these substitutions:

- the network: blocks calling a real provider (the Quickstart, its asyncio form) run with
  the default registry's HTTP client answering from recorded Anthropic streams (a
  ``ReplayTransport``) and a placeholder ``ANTHROPIC_API_KEY``; the Quickstart also runs
  verbatim in a subprocess without a key, where it must say why it failed;
- the proxy block's server address: ``http://127.0.0.1:8787`` becomes the address of a
  proxy server the test starts on a free port, whose provider calls answer from a
  recorded Anthropic stream;
- the Temporal block's server address: ``"localhost:7233"`` becomes the address of the
  dev server the session started (``temporal_address``), and the script ends with
  ``os._exit`` (the Temporal SDK's threads may abort a finalizing interpreter);
- fragments get what they use: the deadline block runs inside a function given an
  ``agent`` on a faux provider (on a fake clock), the ``@tool`` block's tool runs in an
  agent, the SQLite store class is used on an in-memory database, and the sessions block's
  ``tempfile.mkdtemp()`` is the test's temporary directory;
- shell blocks are not run (``make test`` is this suite): the ``make`` targets are checked
  against the Makefile and every ``pi-trio`` line against the argument parser, and the
  offline ``pi-trio run ... --model faux/faux-1`` line runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import queue
import re
import shlex
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from pi_trio.ai.providers import default_registry
from pi_trio.testing import RecordedRequest, ReplayResponse, ReplayTransport, sse_body

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def readme_blocks() -> dict[tuple[str, int], tuple[str, str]]:
    """``(section, index) -> (language, code)`` for every fenced block."""
    blocks: dict[tuple[str, int], tuple[str, str]] = {}
    section = "intro"  # before the first section
    counts: dict[str, int] = {}
    for match in re.finditer(r"^## ([^\n]+)$|^```(\w*)\n(.*?)^```$", README, re.M | re.S):
        if match.group(1) is not None:
            section = match.group(1)
            continue
        index = counts.get(section, 0)
        counts[section] = index + 1
        blocks[(section, index)] = (match.group(2), match.group(3))
    return blocks


BLOCKS = readme_blocks()


def code(section: str, index: int = 0) -> str:
    return BLOCKS[(section, index)][1]


def run_code(source: str, namespace: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Execute ``source`` as a script; its output and its namespace."""
    namespace = {"__name__": "__main__"} if namespace is None else namespace
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "README.md", "exec"), namespace)
    return out.getvalue(), namespace


# --------------------------------------------------------------------------- recorded model


def anthropic_stream(*blocks: dict[str, Any], stop_reason: str) -> bytes:
    """A recorded-style Anthropic Messages stream with ``blocks`` (text or tool_use)."""
    events: list[Any] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_readme",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "claude-haiku-4-5",
                    "stop_reason": None,
                    "usage": {"input_tokens": 50, "output_tokens": 1},
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if "text" in block:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 9}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return sse_body(events)


def adding_model(request: RecordedRequest) -> ReplayResponse:
    """Claude asked 17 + 25 with the add tool: it calls the tool, then reads its result."""
    messages = request.json()["messages"]
    results = [
        part
        for message in messages
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "tool_result"
    ]
    if not results:
        call = {"id": "toolu_1", "name": "add", "input": {"a": 17, "b": 25}}
        return ReplayResponse(anthropic_stream(call, stop_reason="tool_use"))
    content = results[0]["content"]
    total = content if isinstance(content, str) else content[0]["text"]
    return ReplayResponse(anthropic_stream({"text": f"17 + 25 = {total}."}, stop_reason="end_turn"))


@pytest.fixture
def recorded_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayTransport]:
    """The default registry's HTTP client answers from ``adding_model``."""
    import httpx2

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-readme")
    transport = ReplayTransport(*[adding_model] * 8)
    clients: list[httpx2.AsyncClient] = []

    def http_client() -> httpx2.AsyncClient:
        clients.append(httpx2.AsyncClient(transport=transport))
        return clients[-1]

    monkeypatch.setattr(default_registry, "http_client", http_client)
    yield transport
    for client in clients:
        asyncio.run(client.aclose())


# --------------------------------------------------------------------------- the runners


def quickstart(recorded_anthropic: ReplayTransport) -> dict[str, Any]:
    out, namespace = run_code(code("Quickstart (trio)"))
    assert out == "17 + 25 = 42.\n"
    first = recorded_anthropic.requests[0].json()
    assert [tool["name"] for tool in first["tools"]] == ["add"]
    assert first["model"] == "claude-haiku-4-5"
    return namespace


def test_quickstart_calls_the_tool_and_streams_the_answer(recorded_anthropic):
    quickstart(recorded_anthropic)


def test_quickstart_without_a_key_says_why_it_failed():
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    done = subprocess.run(
        [sys.executable, "-c", code("Quickstart (trio)")],
        capture_output=True, text=True, env=env, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == "\n"
    assert (
        done.stderr
        == "the run failed: No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), or pass api_key / get_api_key\n"
    )


def test_quickstart_offline_block(recorded_anthropic):
    namespace = quickstart(recorded_anthropic)
    out, _ = run_code(code("Quickstart (trio)", 1), namespace)
    assert out == "17 + 25 = 42.\n"
    assert "# 17 + 25 = 42." in code("Quickstart (trio)", 1)


def test_the_quickstart_under_asyncio(recorded_anthropic):
    quickstart_code = code("Quickstart (trio)").replace("trio.run(main)\n", "")
    asyncio_code = code("The same under asyncio")
    assert "# ... the same imports, tool, listener and main() as above ..." in asyncio_code
    out, _ = run_code(quickstart_code + asyncio_code)
    assert out == "17 + 25 = 42.\n"


def test_the_deadline_block_cancels_the_run_and_the_agent_settles():
    import anyio

    from pi_trio.agent import Agent
    from pi_trio.testing import FauxProvider, faux_assistant_message

    faux = FauxProvider(tokens_per_second=1)  # some 50 s for this answer
    faux.set_responses([faux_assistant_message("A long summary. " * 50)])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    body = "async def with_deadline(agent):\n" + "".join(
        f"    {line}\n" for line in code("The same under asyncio", 1).splitlines()
    )
    _, namespace = run_code(body, {"anyio": anyio})
    clock = trio.testing.MockClock(autojump_threshold=0)
    trio.run(namespace["with_deadline"], agent, clock=clock)
    assert clock.current_time() == pytest.approx(30)
    assert not agent.state.is_streaming
    assert agent.state.messages[-1].stop_reason == "aborted"


def test_the_transcript_block_round_trips_and_names_the_broken_field():
    out, _ = run_code(code("Transcripts and JSON"))
    assert out == ("You keep notes.\nObject missing required field `timestamp` - at `$[0]`\n")
    for line, comment in (
        ("print(resumed.state.system_prompt)", "# You keep notes."),
        ("print(exc)", "# Object missing required field `timestamp` - at `$[0]`"),
    ):
        assert re.search(
            re.escape(line) + r"\s+" + re.escape(comment), code("Transcripts and JSON")
        )


def test_the_tool_decorator_block_builds_a_tool_that_reports_progress():
    from pi_trio.agent import Agent, tool
    from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

    _, namespace = run_code(code("Tools and the `tool` decorator"), {"tool": tool})
    fetch_page = namespace["fetch_page"]
    assert fetch_page.timeout == 30
    assert set(fetch_page.parameters["properties"]) == {"url", "max_bytes"}
    assert fetch_page.parameters["required"] == ["url"]
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("fetch_page", {"url": "https://example.com"})],
                stop_reason="toolUse",
            ),
            faux_assistant_message("fetched"),
        ]
    )
    agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[fetch_page])
    updates: list[str] = []
    agent.subscribe(
        lambda event: (
            updates.append(event.partial_result.content[0].text)
            if event.type == "tool_execution_update"
            else None
        )
    )
    result = trio.run(agent.prompt, "fetch it")
    assert result.ok
    assert updates == ["connecting…"]


def test_the_mcp_block_lists_the_servers_tool_and_the_agent_calls_it():
    out, _ = run_code(code("MCP tools"))
    assert out == "['weather_forecast']\nSunny in Oslo, 21 degrees\n"


def test_the_sessions_block_resumes_and_writes_a_line_per_message(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "mkdtemp", lambda: str(tmp_path))
    out, _ = run_code(code("Sessions: save and resume"))
    assert out == "['system', 'user', 'assistant', 'user', 'assistant']\n5\n"
    assert "# ['system', 'user', 'assistant', 'user', 'assistant']" in code(
        "Sessions: save and resume"
    )


APPROVAL = "Tool approval: pause, persist, resume"


def test_the_approval_block_pauses_and_resumes_with_an_edit():
    out, _ = run_code(code(APPROVAL))
    assert out == (
        "approval_pending\n"
        "call_1 refund {'order': 42, 'amount': 500}\n"
        "completed - Refunded 250 on order 42 and 20 on order 43.\n"
    )


def test_the_approval_store_block_pauses_in_one_run_and_resumes_in_another(monkeypatch, tmp_path):
    from pi_trio.agent.extend import is_approval_placeholder
    from pi_trio.session import load_messages

    monkeypatch.setattr(tempfile, "mkdtemp", lambda: str(tmp_path))
    _, namespace = run_code(code(APPROVAL))
    out, _ = run_code(code(APPROVAL, 1), namespace)
    assert out == "call_7\nDone: 900 refunded.\n"
    saved = load_messages(tmp_path / "refunds.jsonl")
    assert [m.role for m in saved] == ["system", "user", "assistant", "toolResult", "assistant"]
    assert saved[3].content[0].text == "refunded 900 on order 7"
    assert not any(is_approval_placeholder(m) for m in saved)


def test_the_sqlite_store_block_saves_and_loads_a_session():
    import sqlite3

    from pi_trio.agent import Agent
    from pi_trio.session import record_session
    from pi_trio.testing import FauxProvider, faux_assistant_message

    _, namespace = run_code(code("Sessions: save and resume", 1))
    db = sqlite3.connect(":memory:")
    store = namespace["SqliteSessionStore"](db, "s1")
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("noted")])
    agent = Agent(model=faux.get_model(), stream_fn=faux, system_prompt="notes")
    record_session(agent, store)
    trio.run(agent.prompt, "buy milk")
    loaded = namespace["SqliteSessionStore"](db, "s1").load()
    assert [m.role for m in loaded] == ["system", "user", "assistant"]
    assert loaded[-1].content[0].text == "noted"
    db.close()


def test_the_structured_output_block_prints_what_is_shown_below_it():
    out, _ = run_code(code("Structured output"))
    assert out == code("Structured output", 1)


def test_the_opentelemetry_block_prints_the_tree_shown_below_it():
    out, _ = run_code(code("OpenTelemetry"))
    assert out == code("OpenTelemetry", 1)


def test_the_pi_vocabulary_block_prints_what_is_shown_below_it():
    out, _ = run_code(code("OpenTelemetry", 2))
    assert out == code("OpenTelemetry", 3)


def test_the_deferred_block_submits_saves_and_polls():
    out, namespace = run_code(code("Background (deferred) requests"))
    assert out == code("Background (deferred) requests", 1)
    default_registry.unregister(namespace["faux"].api)


def test_the_threads_block_shows_the_requests_it_says():
    out, _ = run_code(code("Prompt and tool changes that keep the cache"))
    assert out == code("Prompt and tool changes that keep the cache", 1)


def test_the_make_targets_exist():
    makefile = (ROOT / "Makefile").read_text()
    for line in code("intro").splitlines():
        target = shlex.split(line, comments=True)[1]
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "-m pi_trio demo" in makefile
    # the demo installs what it runs on, not the test tools and every engine
    stamp = re.search(r"^demo: (\S+)$", makefile, re.M)
    assert stamp is not None
    recipe = re.search(rf"^{re.escape(stamp.group(1))}: .*?\n\n", makefile, re.M | re.S)
    assert recipe is not None
    assert "pip install --quiet -e '.[cli]'" in recipe.group(0)


def test_the_size_make_test_installs_is_the_one_the_readme_gives():
    """The environment these tests run in has what ``make test`` installs (the test extra
    pulls in every engine); its size is the README's figure, give or take a quarter."""
    claim = re.search(r"`\.venv` grows to about (\d+) MB", " ".join(README.split()))
    assert claim is not None
    size = 0
    for folder, _, files in os.walk(sys.prefix):
        for name in files:
            with contextlib.suppress(OSError):
                size += Path(folder, name).lstat().st_size
    assert 0.75 <= size / 1e6 / int(claim.group(1)) <= 1.25, f"{size / 1e6:.0f} MB"


def test_every_command_line_parses_and_the_offline_one_runs(capsys):
    from pi_trio.cli import build_parser, main

    commands: list[list[str]] = []
    for line in code("The command line").splitlines():
        words = shlex.split(line, comments=True)
        if words[0] == "pi-trio":
            commands.append(words[1:])
        else:  # a continuation of the command above
            commands[-1].extend(words)
    placeholders = {"WORDS": "claude", "F": "tokens.txt", "N": "10", "S": "5"}
    for words in commands:
        # optional parts in brackets are given; capitals are placeholders
        argv = [placeholders.get(w.strip("[]"), w.strip("[]")) for w in words]
        build_parser().parse_args(argv)  # exits (and fails the test) on a usage error
        if "faux/faux-1" in argv:
            assert main(argv) == 0
            assert "You said: hello" in capsys.readouterr().out


def test_the_proxy_block_talks_to_a_proxy_server(monkeypatch):
    pytest.importorskip("hypercorn")
    from pi_trio.proxy import serve
    from pi_trio.testing import registry_with_transport

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-server-side")
    upstream = ReplayTransport(
        ReplayResponse(anthropic_stream({"text": "Hello from Claude."}, stop_reason="end_turn"))
    )
    with proxy_server(
        partial(serve, "127.0.0.1", 0, tokens=["token1"]), upstream, registry_with_transport
    ) as url:
        block = code("The proxy: provider keys on one server")
        assert "http://127.0.0.1:8787" in block
        with client_closed_after():
            out, _ = run_code(block.replace("http://127.0.0.1:8787", url))
    assert out == "Hello from Claude.\n"
    sent = upstream.requests[0]
    assert sent.url == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-server-side"


@contextlib.contextmanager
def proxy_server(serve: Any, upstream: ReplayTransport, make_registry: Any) -> Iterator[str]:
    """``serve`` (with the registry over ``upstream``) in a thread of its own; its URL."""
    urls: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    async def server() -> None:
        registry = make_registry(upstream)
        try:
            async with trio.open_nursery() as nursery:
                urls.put(await nursery.start(partial(serve, registry=registry)))
                await trio.to_thread.run_sync(stop.wait)
                nursery.cancel_scope.cancel()
        finally:
            await registry.aclose()

    thread = threading.Thread(target=trio.run, args=(server,))
    thread.start()
    try:
        yield urls.get(timeout=30)
    finally:
        stop.set()
        thread.join(timeout=30)


@contextlib.contextmanager
def client_closed_after() -> Iterator[None]:
    """The default registry's HTTP client, which the block's client uses, is closed after."""
    try:
        yield
    finally:
        trio.run(default_registry.aclose)


def test_the_abort_block_aborts_a_running_prompt_and_shows_what_it_says():
    block = code("Abort and cancellation: the contract")
    assert block.endswith("trio.run(main)\n")
    # the same program on a fake clock: the second it waits passes at once
    clock = trio.testing.MockClock(autojump_threshold=0)
    _, namespace = run_code(block.replace("trio.run(main)\n", ""))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        trio.run(namespace["main"], clock=clock)
    shown = [line.partition("  # ")[2].partition("  (")[0] for line in block.splitlines()]
    assert out.getvalue().splitlines() == [
        comment for line, comment in zip(block.splitlines(), shown, strict=True)
        if comment and line.lstrip().startswith("print(")
    ]  # fmt: skip
    assert out.getvalue() == "aborted - Request was aborted\nCancellation, in detail.\nYes.\n"
    assert 1 <= clock.current_time() < 2  # not the half minute the whole essay takes


def anthropic_429() -> ReplayResponse:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    return ReplayResponse(body, status=429, headers={"retry-after": "2"})


def test_the_retry_block_retries_per_request_and_per_response_and_nothing_by_default(
    monkeypatch,
):
    """ "Retries are off by default": a 429 ends a default agent's run after one request;
    each of the block's two agents asks again and gets the answer."""
    import httpx2

    from pi_trio.agent import Agent

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-readme")
    claim = " ".join(README.split())
    assert "**Retries are off by default**, as in pi 1.6: `StreamOptions.max_retries` is 0" in claim
    _, namespace = run_code(code("Providers and keys"))

    def answered(agent: Agent) -> tuple[bool, int, list[str]]:
        ok = anthropic_stream({"text": "hi"}, stop_reason="end_turn")
        transport = ReplayTransport(anthropic_429(), ReplayResponse(ok))
        client = httpx2.AsyncClient(transport=transport)
        monkeypatch.setattr(default_registry, "http_client", lambda: client)
        seen: list[str] = []
        agent.subscribe(lambda event: seen.append(event.type))

        async def run() -> Any:
            try:
                return await agent.prompt("hello")
            finally:
                await client.aclose()

        result = trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))
        retries = [name for name in seen if name.startswith("auto_retry")]
        return result.ok, len(transport.requests), retries

    assert answered(Agent(model="anthropic/claude-haiku-4-5")) == (False, 1, [])
    assert answered(namespace["per_request"]) == (True, 2, [])
    assert answered(namespace["per_response"]) == (
        True, 2, ["auto_retry_start", "auto_retry_end"],
    )  # fmt: skip


def test_the_configuring_block_gives_each_group_to_the_agent():
    from pi_trio.agent import Agent, RunPolicy

    out, namespace = run_code(code("Configuring an Agent"))
    assert out == "sequential 2.0\n"
    agent = namespace["agent"]
    assert agent.hooks.before_tool_call is namespace["no_deletes"]
    assert (agent.stream_options.session_id, agent.stream_options.max_tokens) == (
        "support-42",
        1024,
    )
    assert agent.policy.retry.max_retries == 3
    assert agent.output.max_retries == 1
    prose = " ".join(README.split("## Configuring an Agent", 1)[1].split("\n## ", 1)[0].split())
    with pytest.raises(ValueError, match="tool_execution") as refused:
        RunPolicy(tool_execution="eager")  # type: ignore[arg-type]
    assert f"raises `{refused.value}`" in prose
    with pytest.raises(AttributeError) as moved:
        _ = agent.tool_execution  # type: ignore[attr-defined]
    assert f"raises `{moved.value}`" in prose
    # the hook refuses delete_file and lets the other tool run
    from pi_trio.agent import tool
    from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

    @tool
    async def delete_file(path: str) -> str:
        """Delete a file."""
        raise AssertionError("refused before it runs")

    @tool
    async def read_file(path: str) -> str:
        """Read a file."""
        return "contents"

    faux = FauxProvider()
    calls = [
        faux_tool_call("delete_file", {"path": "a"}),
        faux_tool_call("read_file", {"path": "b"}),
    ]
    faux.set_responses(
        [faux_assistant_message(calls, stop_reason="toolUse"), faux_assistant_message("ok")]
    )
    offline = Agent(
        model=faux.get_model(), stream_fn=faux, tools=[delete_file, read_file], hooks=agent.hooks
    )
    results = [m for m in trio.run(offline.prompt, "tidy up").messages if m.role == "toolResult"]
    assert [(m.tool_name, m.is_error, m.content[0].text) for m in results] == [
        ("delete_file", True, "deleting files is not allowed here"),
        ("read_file", False, "contents"),
    ]
    flat = Agent(model="anthropic/claude-haiku-4-5", tool_execution="sequential")
    assert flat.policy.tool_execution == "sequential"
    with pytest.raises(TypeError, match="transport"):
        Agent(model="anthropic/claude-haiku-4-5", transport="sse")  # type: ignore[call-arg]


def test_the_public_api_draws_the_exception_hierarchy_of_the_code():
    from pi_trio.ai import _errors

    from .test_exports import drawn_tree

    assert drawn_tree(code("The public API")) == drawn_tree(_errors.__doc__ or "")
    assert len(drawn_tree(code("The public API"))) == len(code("The public API").splitlines())


# --------------------------------------------------------------------------- claims


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_table_of_contents_links_every_section_in_order():
    outside_code = re.sub(r"^```.*?^```$", "", README, flags=re.M | re.S)
    headings = re.findall(r"^(##|###) (.+)$", outside_code, re.M)
    assert headings[0] == ("##", "Contents")
    contents = README.split("## Contents\n\n", 1)[1].split("\n\n", 1)[0]
    links = re.findall(r"^( *)- \[[^\]]+\]\(#([^)]+)\)$", contents, re.M)
    assert len(links) == len(contents.splitlines())  # every line of it is a link
    assert [(indent == "  ", anchor) for indent, anchor in links] == [
        (level == "###", github_anchor(text)) for level, text in headings[1:]
    ]


def test_json_bytes_differ_only_where_the_readme_says():
    """ "The same bytes" with ``exact=True``, except: whitespace and a lone surrogate
    escape; without it, a float outside the costs whose magnitude is in [1e-6, 1e-5) or
    from 1e21 up takes msgspec's spelling."""
    from pi_trio.ai import from_json, to_json

    claim = " ".join(README.split())
    assert "re-encodes byte for byte" in claim
    assert (
        "whitespace is not kept (the output is compact); a lone UTF-16 surrogate escape "
        '(`"\\ud83d"`) reads as U+FFFD. Numbers keep JavaScript\'s spelling (`0.000003`, '
        "`1e+21`) with `exact=True`, and in costs always; otherwise a float in free-form JSON "
        "(tool arguments, details, schemas) whose magnitude is in [1e-6, 1e-5) or from 1e21 "
        "up is written in msgspec's spelling (`3e-6`, `-1e21`): the same number."
    ) in claim

    def message(details: str, text: str = "ok", cost: str = "0.000003") -> bytes:
        return (
            '{"role":"toolResult","toolCallId":"c1","toolName":"t","content":[{"type":"text",'
            f'"text":"{text}"}}],"details":{details},"isError":false,"timestamp":1}}'
        ).encode()

    def round_trip(data: bytes) -> bytes:
        return to_json(from_json(data, exact=True))

    # what JavaScript writes comes back byte for byte: numbers, escapes, any characters
    same = message(
        '{"small":0.000015,"big":100000000000000000000,"frac":0.1,"neg":-2.5e-7,'
        '"s":"\\u0000\\n\\"\\\\é😀\u2028/"}'
    )
    assert round_trip(same) == same
    # the listed differences, and nothing else
    assert round_trip(message("{}").replace(b",", b", ")) == message("{}")
    assert round_trip(message("{}", text="\\ud83d!")) == message("{}", text="\ufffd!")
    spelled = message('{"a":0.000003,"b":1e+21,"c":0.1}')
    assert round_trip(spelled) == spelled
    assert to_json(from_json(spelled)) == message('{"a":3e-6,"b":1e21,"c":0.1}')
    negative = message('{"a":-0.000003,"b":-1e+21,"c":-0.00001}')
    assert round_trip(negative) == negative
    assert to_json(from_json(negative)) == message('{"a":-3e-6,"b":-1e21,"c":-0.00001}')
    usage = (
        b'{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":'
        b'{"input":0.000003,"output":0.000006,"cacheRead":0,"cacheWrite":0,"total":0.000009}}'
    )
    from pi_trio.ai import Usage

    assert to_json(from_json(usage, Usage, exact=True)) == usage


def test_the_leading_system_message_is_not_announced_and_a_tool_change_is():
    """What "Transcripts and JSON" says the transcript holds: the leading ``system``
    message comes from ``Agent(...)`` without ``message_start`` and outside every run's
    ``messages``; a tool change is a ``system`` message the next run adds and announces."""
    from pi_trio.agent import Agent, tool
    from pi_trio.testing import FauxProvider, faux_assistant_message

    claim = " ".join(README.split())
    assert "so no `message_start` announces it and no run's `messages` include it" in claim

    @tool
    async def first(x: int) -> str:
        """The first tool."""
        return "1"

    @tool
    async def second(x: int) -> str:
        """The second tool."""
        return "2"

    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    agent = Agent(model=faux.get_model(), stream_fn=faux, system_prompt="Be brief.", tools=[first])
    head = agent.state.messages[0]
    assert (head.role, head.content, [t.name for t in head.tools_added]) == (
        "system", "Be brief.", ["first"],
    )  # fmt: skip
    started: list[str] = []
    agent.subscribe(
        lambda event: started.append(event.message.role) if event.type == "message_start" else None
    )
    result = trio.run(agent.prompt, "hi")
    assert started == ["user", "assistant"]
    assert [m.role for m in result.messages] == ["user", "assistant"]

    agent.state.tools = [first, second]
    started.clear()
    result = trio.run(agent.prompt, "again")
    assert started == ["system", "user", "assistant"]
    assert [m.role for m in result.messages] == ["system", "user", "assistant"]
    assert [t.name for t in result.messages[0].tools_added] == ["second"]
    assert agent.state.messages[0] is head


# --------------------------------------------------------------------------- beyond one process

# Names the three sketches leave to the reader, defined offline (a faux provider, two tools).
DURABLE_PRELUDE = """
from pi_trio.agent import tool
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

faux = FauxProvider(api="readme-faux")
faux.register()
faux.set_responses([
    faux_assistant_message([faux_tool_call("lookup", {"order": 42})], stop_reason="toolUse"),
    faux_assistant_message("Refunded."),
    faux_assistant_message("Noted: a VIP."),
])
model = faux.get_model()
events = []

@tool
async def lookup(order: int) -> str:
    \"\"\"Look an order up.\"\"\"
    return f"order {order}: paid"

@tool
async def send_mail(to: str, text: str) -> str:
    \"\"\"Send a mail.\"\"\"
    return "sent"

def print_event(event):
    events.append(event.type)
"""

FANOUT_PRELUDE = """
from pi_trio.agent import Agent
from pi_trio.testing import FauxProvider, faux_assistant_message

class Task:
    def __init__(self, prompt):
        self.prompt = prompt

tasks = [Task(f"question {i}") for i in range(3)]

def make_agent(task):
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("answer to " + task.prompt)])
    return Agent(model=faux.get_model(), stream_fn=faux)

saved = {}

def save(job_id, status, transcript):
    saved[job_id] = (status, transcript is not None)
"""


def run_script(source: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", source], cwd=cwd, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_durable_block_runs_a_workflow_on_sqlite(tmp_path):
    out = run_script(
        DURABLE_PRELUDE
        + code("Beyond one process", 0)
        + "\nprint(faux.state.call_count, 'agent_end' in events)\n",
        tmp_path,
    )
    calls, ended = out.split()
    assert int(calls) >= 2  # the tool call and the answer (the steer may come too late)
    assert ended == "True"
    assert (tmp_path / "support.sqlite").exists()


def test_the_temporal_block_runs_a_workflow_on_the_dev_server(tmp_path, temporal_address):
    # the one substitution: the dev server the session started instead of the default
    # address; the process ends with os._exit, as the Temporal SDK's Rust threads may
    # abort a finalizing interpreter (temporalio/sdk-python#300)
    block = code("Beyond one process", 2)
    assert '"localhost:7233"' in block
    block = block.replace('"localhost:7233"', repr(temporal_address))
    out = run_script(
        DURABLE_PRELUDE
        + block
        + "\nprint(faux.state.call_count, events.count('agent_end'), events[-2])\n"
        + "import os, sys; sys.stdout.flush(); os._exit(0)\n",
        tmp_path,
    )
    calls, ended, before_end = out.split()
    assert int(calls) >= 2  # the tool call and the answer (the steer may come too late)
    assert ended == "1"  # the worker's listener got the run's events, each once
    assert before_end == "turn_end"


def test_the_fanout_block_runs_every_job_on_a_local_ray(tmp_path):
    # the one substitution: a small local cluster instead of the machine's default
    block = code("Beyond one process", 1).replace(
        "ray.init()", "ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)"
    )
    assert block != code("Beyond one process", 1)
    out = run_script(FANOUT_PRELUDE + block + "\nprint(sorted(saved.items()))\n", tmp_path)
    assert out.strip() == "[(0, ('stop', True)), (1, ('stop', True)), (2, ('stop', True))]"


def test_the_agui_block_serves_ag_ui_events_and_says_why_a_run_failed(tmp_path):
    """The block as written, on a free port and without a key: a request gets the run's
    AG-UI events, ending with the reason it failed."""
    import httpx2

    block = code("AG-UI: agents in the browser")
    assert '"127.0.0.1", 8000)' in block
    script = tmp_path / "agui_block.py"
    script.write_text(block.replace('"127.0.0.1", 8000)', '"127.0.0.1", 0)'))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_OAUTH_TOKEN"))}
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.fullmatch(r"AG-UI endpoint: POST (http://\S+/agui)\n", line)
        assert match, line
        body = {
            "threadId": "t", "runId": "r", "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": "u", "role": "user", "content": "6 * 7?"}],
        }  # fmt: skip
        response = httpx2.post(match.group(1), json=body, timeout=30)
        events = [json.loads(line[6:]) for line in response.text.splitlines() if line]
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert response.headers["content-type"] == "text/event-stream"
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["message"] == (
        "No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), "
        "or pass api_key / get_api_key"
    )


def test_the_compaction_block_condenses_the_transcript_and_prints_what_it_shows():
    block = code("Long conversations: compaction")
    out, namespace = run_code(block)
    assert out == (
        "compaction_start threshold\n['system', 'user', 'assistant', 'user', 'assistant']\nTrue\n"
    )
    for shown in (
        "# compaction_start threshold",
        "# ['system', 'user', 'assistant', 'user', 'assistant']",
        "# True",
    ):
        assert shown in block
    messages = namespace["agent"].state.messages
    assert "Plan a trip to Oslo." in messages[1].content[0].text
    assert messages[-2].content[0].text == "What to see?"


def test_the_sub_agent_block_delegates_twice_and_adds_up_the_usage():
    block = code("Sub-agents: an agent as a tool")
    out, namespace = run_code(block)
    assert out == "['Notes on fjords', 'Notes on trams']\nTrue\n"
    assert "# ['Notes on fjords', 'Notes on trams']" in block
    result = namespace["result"]
    results = [m for m in result.messages if m.role == "toolResult"]
    assert all(r.usage is not None and r.usage.output > 0 for r in results)
    own = sum(m.usage.output for m in result.messages if m.role == "assistant")
    assert result.usage.output == own + sum(r.usage.output for r in results)
    # the template agent never ran: each call ran a fork of it
    assert [m.role for m in namespace["researcher"].state.messages] == ["system"]


def shown_below(source: str) -> str:
    """The output a block shows in its trailing ``# ...`` comment lines."""
    lines = source.rstrip("\n").splitlines()
    shown: list[str] = []
    while lines and lines[-1].startswith("# "):
        shown.insert(0, lines.pop()[2:])
    return "\n".join(shown) + "\n"


def test_the_silent_stream_block_ends_at_its_first_event_limit(monkeypatch):
    """The block runs as written against its loopback server of keep-alives, and the
    defaults are the ones the text names."""
    from pi_trio.ai import StreamOptions

    claim = " ".join(README.split())
    assert "Both default to 300 s, as long as the HTTP read timeout" in claim
    defaults = StreamOptions()
    assert defaults.first_event_timeout == defaults.idle_timeout == 300
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    source = code("Providers and keys", 1)
    out, _ = run_code(source)
    expected = "error - No first response event for 0.5 s after sending the request\n"
    assert out == expected
    # the comment inside main() shows the same line
    assert "# error - No first response event for 0.5 s after sending the request" in source


def test_the_cassette_block_records_replays_offline_and_keeps_the_key_out():
    source = code("Recorded traffic: cassettes")
    out, namespace = run_code(source)
    assert out == shown_below(source)
    assert out.endswith("key in the file: False\n")
    assert namespace["KEY"] not in out


def test_the_fallback_and_limits_block_falls_back_and_stops_at_its_limit():
    source = code("Fallback models and run limits")
    out, namespace = run_code(source)
    assert out == shown_below(source)
    # the limit came first: the scripted final answer was never asked for
    assert namespace["faux"].state.call_count == 3


# --------------------------------------------------------------------------- coverage

RUNNERS: dict[tuple[str, int], Callable[..., Any]] = {
    ("intro", 0): test_the_make_targets_exist,
    ("Quickstart (trio)", 0): test_quickstart_calls_the_tool_and_streams_the_answer,
    ("Quickstart (trio)", 1): test_quickstart_offline_block,
    ("The same under asyncio", 0): test_the_quickstart_under_asyncio,
    ("The same under asyncio", 1): test_the_deadline_block_cancels_the_run_and_the_agent_settles,
    ("Transcripts and JSON", 0): test_the_transcript_block_round_trips_and_names_the_broken_field,
    ("Configuring an Agent", 0): test_the_configuring_block_gives_each_group_to_the_agent,
    ("The public API", 0): test_the_public_api_draws_the_exception_hierarchy_of_the_code,
    ("Tools and the `tool` decorator", 0): test_the_tool_decorator_block_builds_a_tool_that_reports_progress,
    (APPROVAL, 0): test_the_approval_block_pauses_and_resumes_with_an_edit,
    (APPROVAL, 1): test_the_approval_store_block_pauses_in_one_run_and_resumes_in_another,
    ("Structured output", 0): test_the_structured_output_block_prints_what_is_shown_below_it,
    ("Structured output", 1): test_the_structured_output_block_prints_what_is_shown_below_it,
    ("MCP tools", 0): test_the_mcp_block_lists_the_servers_tool_and_the_agent_calls_it,
    ("Sessions: save and resume", 0): test_the_sessions_block_resumes_and_writes_a_line_per_message,
    ("Sessions: save and resume", 1): test_the_sqlite_store_block_saves_and_loads_a_session,
    ("Long conversations: compaction", 0): test_the_compaction_block_condenses_the_transcript_and_prints_what_it_shows,
    ("Sub-agents: an agent as a tool", 0): test_the_sub_agent_block_delegates_twice_and_adds_up_the_usage,
    ("OpenTelemetry", 0): test_the_opentelemetry_block_prints_the_tree_shown_below_it,
    ("OpenTelemetry", 1): test_the_opentelemetry_block_prints_the_tree_shown_below_it,
    ("OpenTelemetry", 2): test_the_pi_vocabulary_block_prints_what_is_shown_below_it,
    ("OpenTelemetry", 3): test_the_pi_vocabulary_block_prints_what_is_shown_below_it,
    ("Background (deferred) requests", 0): test_the_deferred_block_submits_saves_and_polls,
    ("Background (deferred) requests", 1): test_the_deferred_block_submits_saves_and_polls,
    ("Prompt and tool changes that keep the cache", 0): test_the_threads_block_shows_the_requests_it_says,
    ("Prompt and tool changes that keep the cache", 1): test_the_threads_block_shows_the_requests_it_says,
    ("The command line", 0): test_every_command_line_parses_and_the_offline_one_runs,
    ("Abort and cancellation: the contract", 0): test_the_abort_block_aborts_a_running_prompt_and_shows_what_it_says,
    ("Providers and keys", 0): test_the_retry_block_retries_per_request_and_per_response_and_nothing_by_default,
    ("Providers and keys", 1): test_the_silent_stream_block_ends_at_its_first_event_limit,
    ("Recorded traffic: cassettes", 0): test_the_cassette_block_records_replays_offline_and_keeps_the_key_out,
    ("Fallback models and run limits", 0): (
        test_the_fallback_and_limits_block_falls_back_and_stops_at_its_limit
    ),
    ("The proxy: provider keys on one server", 0): test_the_proxy_block_talks_to_a_proxy_server,
    ("Beyond one process", 0): test_the_durable_block_runs_a_workflow_on_sqlite,
    ("Beyond one process", 1): test_the_fanout_block_runs_every_job_on_a_local_ray,
    ("Beyond one process", 2): test_the_temporal_block_runs_a_workflow_on_the_dev_server,
    ("AG-UI: agents in the browser", 0): test_the_agui_block_serves_ag_ui_events_and_says_why_a_run_failed,
}  # fmt: skip


def test_every_block_has_a_runner():
    assert set(BLOCKS) == set(RUNNERS)
