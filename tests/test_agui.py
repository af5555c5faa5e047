"""The AG-UI endpoint end to end over loopback: ``pi_trio.agui`` served by hypercorn, a
faux model behind it, and every streamed event read back through the ``ag-ui-protocol``
package's own models (``ag_ui.core.Event``), one by one."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import trio
import trio.lowlevel
import trio.testing
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

from pi_trio.agent import Agent, tool
from pi_trio.agui import (
    CLIENT_TOOL_TEXT,
    RUN_ERROR_CODE,
    AGUIApp,
    AguiRun,
    InputError,
    apply_patch,
    serve,
)
from pi_trio.ai import Context, Model, StreamOptions
from pi_trio.ai.transcript import get_current_system_prompt, get_current_tools
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .provider_support import UNFINISHED_BODY_WARNINGS

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@tool
def multiply(a: float, b: float) -> str:
    """Multiply two numbers."""
    return f"{a * b:g}"


class Backend:
    """A faux model, the agents the app made (in order) and the contexts the model saw."""

    def __init__(self, *, hold: bool = False) -> None:
        self.faux = FauxProvider()
        self.hold = hold  # each answer stops after its first text delta until cancelled
        self.model = self.faux.get_model()
        self.agents: list[Agent] = []
        self.runs: list[AguiRun] = []
        self.contexts: list[Context] = []
        self.cancelled = trio.Event()
        self.tools: list[Any] = [multiply]

    async def stream(
        self, model: Model, context: Context, options: StreamOptions, send: Any
    ) -> None:
        self.contexts.append(context)
        try:
            await self.faux.stream(model, context, options, _Holding(send) if self.hold else send)
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise

    def factory(self, run: AguiRun) -> Agent:
        agent = Agent(
            model=self.model,
            system_prompt="You are terse.",
            tools=self.tools,
            stream_fn=self.stream,
        )
        self.agents.append(agent)
        self.runs.append(run)
        return agent


class _Holding:
    """A stream's ``send`` that waits for ever after the first text delta: the run is then
    mid-answer for as long as a test needs."""

    def __init__(self, send: Any) -> None:
        self._send = send

    async def send(self, event: Any) -> None:
        await self._send.send(event)
        if event.type == "text_delta":
            await anyio.sleep_forever()


@pytest.fixture
def backend() -> Backend:
    return Backend()


async def start(nursery: trio.Nursery, backend: Backend, **options: Any) -> tuple[str, AGUIApp]:
    app = AGUIApp(backend.factory, path="/agui", **options)
    url = await nursery.start(partial(serve, app, "127.0.0.1", 0))
    return f"{url}/agui", app


def run_input(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "threadId": fields.pop("thread_id", "thread-1"),
        "runId": fields.pop("run_id", str(uuid.uuid4())),
        "messages": list(messages),
        "tools": fields.pop("tools", []),
        "context": fields.pop("context", []),
        "state": fields.pop("state", {}),
        "forwardedProps": {},
        **fields,
    }


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text}


@asynccontextmanager
async def open_run(url: str, body: dict[str, Any]) -> AsyncIterator[AsyncIterator[Any]]:
    """The run's events, each validated by the protocol package as it arrives."""
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"] == "text/event-stream"

        async def events() -> AsyncIterator[Any]:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    yield EVENTS.validate_json(line[6:])
                else:
                    assert line == "", f"not an SSE data line: {line!r}"

        async with aclosing(events()) as reader:
            yield reader


async def collect(url: str, body: dict[str, Any]) -> list[Any]:
    with trio.fail_after(30):
        async with open_run(url, body) as events:
            return [event async for event in events]


async def idle(app: AGUIApp) -> None:
    """The app forgets a run after its last write: once every task waits, it has."""
    await trio.testing.wait_all_tasks_blocked()
    assert app.running == {}


def types(events: list[Any]) -> list[str]:
    return [event.type.value for event in events]


async def test_a_run_streams_thinking_text_tool_calls_and_results_in_order(
    nursery: trio.Nursery, backend: Backend
) -> None:
    backend.faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("Arithmetic: use the tool."),
                    faux_text("Let me multiply."),
                    faux_tool_call("multiply", {"a": 6, "b": 7}, id="call-1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("The answer is 42."),
        ]
    )
    url, app = await start(nursery, backend)
    events = await collect(url, run_input(user("What is 6 * 7?")))

    squeezed = [t for i, t in enumerate(types(events)) if i == 0 or t != types(events)[i - 1]]
    assert squeezed == [
        "RUN_STARTED",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    started, finished = events[0], events[-1]
    assert (started.thread_id, started.run_id) == ("thread-1", finished.run_id)
    by_type: dict[str, list[Any]] = {}
    for event in events:
        by_type.setdefault(event.type.value, []).append(event)
    reasoning = "".join(e.delta for e in by_type["REASONING_MESSAGE_CONTENT"])
    assert reasoning == "Arithmetic: use the tool."
    first, second = by_type["TEXT_MESSAGE_START"]
    assert first.role == "assistant"
    assert first.message_id != second.message_id
    texts: dict[str, str] = {}
    for event in by_type["TEXT_MESSAGE_CONTENT"]:
        texts[event.message_id] = texts.get(event.message_id, "") + event.delta
    assert texts == {first.message_id: "Let me multiply.", second.message_id: "The answer is 42."}
    (call,) = by_type["TOOL_CALL_START"]
    assert (call.tool_call_id, call.tool_call_name) == ("call-1", "multiply")
    assert call.parent_message_id == first.message_id  # the text and the call: one message
    arguments = "".join(e.delta for e in by_type["TOOL_CALL_ARGS"])
    assert json.loads(arguments) == {"a": 6, "b": 7}
    (result,) = by_type["TOOL_CALL_RESULT"]
    assert (result.tool_call_id, result.content, result.role) == ("call-1", "42", "tool")
    assert result.metadata is None
    assert finished.outcome.type == "success"
    assert finished.outcome.pending_tool_call_ids is None
    assert finished.result == "The answer is 42."
    (usage,) = finished.usage
    assert usage.model == backend.model.id
    assert usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    await idle(app)


async def test_the_thread_reaches_the_model_after_the_agents_system_prompt(
    nursery: trio.Nursery, backend: Backend
) -> None:
    backend.faux.set_responses([faux_assistant_message("Still 42.")])
    url, _ = await start(nursery, backend)
    thread = [
        user("What is 6 * 7?"),
        {
            "id": "a1",
            "role": "assistant",
            "content": "Let me multiply.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
                }
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "42"},
        {"id": "r1", "role": "reasoning", "content": "the client's display only"},
        {"id": "a2", "role": "assistant", "content": "The answer is 42."},
        {"id": "u2", "role": "user", "content": [{"type": "text", "text": "Sure?"}]},
    ]
    context = [{"description": "user's timezone", "value": "Europe/Paris"}]
    events = await collect(url, run_input(*thread, context=context))
    assert types(events)[-1] == "RUN_FINISHED"

    (seen,) = backend.contexts
    prompt = get_current_system_prompt(seen.messages)
    assert prompt.startswith("You are terse.")
    assert "user's timezone: Europe/Paris" in prompt
    said = [m for m in seen.messages if m.role != "system"]
    assert [m.role for m in said] == ["user", "assistant", "toolResult", "assistant", "user"]
    call = said[1].content[1]
    assert (call.id, call.name, call.arguments) == ("c1", "multiply", {"a": 6, "b": 7})
    result = said[2]
    assert (result.tool_call_id, result.tool_name, result.content[0].text) == (
        "c1",
        "multiply",
        "42",
    )
    assert said[4].content[0].text == "Sure?"
    assert [t.name for t in get_current_tools(seen.messages)] == ["multiply"]


async def test_a_failed_model_request_ends_the_stream_with_run_error(
    nursery: trio.Nursery, backend: Backend
) -> None:
    backend.faux.set_responses(
        [faux_assistant_message("", stop_reason="error", error_message="upstream said 529")]
    )
    url, _ = await start(nursery, backend)
    events = await collect(url, run_input(user("hi")))
    assert types(events)[0] == "RUN_STARTED"
    last = events[-1]
    assert last.type == EventType.RUN_ERROR
    assert last.message == "upstream said 529"
    assert last.code == RUN_ERROR_CODE
    assert "RUN_FINISHED" not in types(events)


async def read_until(events: AsyncIterator[Any], wanted: str, seen: list[Any]) -> Any:
    async for event in events:
        seen.append(event)
        if event.type.value == wanted:
            return event
    raise AssertionError(f"the stream ended before {wanted}: {types(seen)}")


async def cancel(url: str, thread_id: str, run_id: str) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{url}/cancel", json={"threadId": thread_id, "runId": run_id})


async def test_cancel_mid_answer_closes_the_text_and_finishes_cancelled(
    nursery: trio.Nursery,
) -> None:
    backend = Backend(hold=True)
    backend.faux.set_responses([faux_assistant_message("Counting: one two three four five.")])
    url, app = await start(nursery, backend)
    body = run_input(user("count"))
    seen: list[Any] = []
    with trio.fail_after(30):
        async with open_run(url, body) as events:
            content = await read_until(events, "TEXT_MESSAGE_CONTENT", seen)
            assert list(app.running) == [("thread-1", body["runId"])]
            response = await cancel(url, "thread-1", body["runId"])
            assert (response.status_code, response.json()) == (202, {"cancelled": True})
            seen.extend([event async for event in events])
    assert types(seen)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert seen[-2].message_id == content.message_id
    assert seen[-1].outcome.type == "cancelled"
    final = backend.agents[0].state.messages[-1]
    assert final.stop_reason == "aborted"
    assert final.content[0].text == content.delta  # the answer keeps what was streamed
    assert backend.cancelled.is_set()
    await idle(app)
    response = await cancel(url, "thread-1", body["runId"])
    assert response.status_code == 404
    assert body["runId"] in response.json()["error"]


async def test_cancel_while_a_tool_runs_answers_the_call_operation_aborted(
    nursery: trio.Nursery, backend: Backend
) -> None:
    started = trio.Event()

    @tool
    async def wait_for_ever() -> str:
        """Never returns."""
        started.set()
        await trio.sleep_forever()
        return "unreachable"

    backend.tools = [wait_for_ever]
    backend.faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("wait_for_ever", {}, id="w1")], stop_reason="toolUse"
            )
        ]
    )
    url, _ = await start(nursery, backend)
    body = run_input(user("wait"))
    seen: list[Any] = []
    with trio.fail_after(30):
        async with open_run(url, body) as events:
            await read_until(events, "TOOL_CALL_END", seen)
            await started.wait()
            assert (await cancel(url, "thread-1", body["runId"])).status_code == 202
            seen.extend([event async for event in events])
    result, finished = seen[-2:]
    assert result.type == EventType.TOOL_CALL_RESULT
    assert (result.tool_call_id, result.content) == ("w1", "Operation aborted")
    assert result.metadata == {"pi": {"isError": True}}
    assert finished.type == EventType.RUN_FINISHED
    assert finished.outcome.type == "cancelled"


@UNFINISHED_BODY_WARNINGS  # httpx2's generators under the response left half-read
async def test_a_client_that_disconnects_aborts_the_run(nursery: trio.Nursery) -> None:
    backend = Backend(hold=True)
    backend.faux.set_responses([faux_assistant_message("A long answer that nobody reads.")])
    url, app = await start(nursery, backend)
    with trio.fail_after(30):
        async with open_run(url, run_input(user("talk"))) as events:
            await read_until(events, "TEXT_MESSAGE_CONTENT", [])
        # the response is closed: the server sees the client leave and aborts
        await backend.cancelled.wait()
        await idle(app)
    agent = backend.agents[0]
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert agent.state.messages[-1].error_message
    assert not agent.state.is_streaming


async def test_client_tools_are_offered_to_the_model_and_left_to_the_client(
    nursery: trio.Nursery, backend: Backend
) -> None:
    confirm = {
        "name": "confirm",
        "description": "Ask the user to confirm.",
        "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
    }
    backend.faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("multiply", {"a": 2, "b": 3}, id="m1"),
                    faux_tool_call("confirm", {"question": "Go?"}, id="c1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Confirmed, going."),
        ]
    )
    url, _ = await start(nursery, backend)
    events = await collect(url, run_input(user("go"), tools=[confirm]))
    results = [e for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert [(r.tool_call_id, r.content) for r in results] == [("m1", "6")]
    assert {e.tool_call_id for e in events if e.type == EventType.TOOL_CALL_END} == {"m1", "c1"}
    finished = events[-1]
    assert finished.outcome.type == "success"
    assert finished.outcome.pending_tool_call_ids == ["c1"]
    assert backend.faux.state.call_count == 1  # the run stopped for the client's answer
    assert {t.name for t in get_current_tools(backend.contexts[0].messages)} == {
        "multiply",
        "confirm",
    }
    placeholder = backend.agents[0].state.messages[-1]
    assert placeholder.tool_call_id == "c1"
    assert placeholder.content[0].text == CLIENT_TOOL_TEXT

    # the client answers in the next run; the placeholder never existed for it
    answered = [
        user("go"),
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "m1",
                    "type": "function",
                    "function": {"name": "multiply", "arguments": '{"a": 2, "b": 3}'},
                },
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "confirm", "arguments": '{"question": "Go?"}'},
                },
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "m1", "content": "6"},
        {"id": "t2", "role": "tool", "toolCallId": "c1", "content": "yes"},
    ]
    events = await collect(url, run_input(*answered, tools=[confirm]))
    assert events[-1].outcome.type == "success"
    last = [m for m in backend.contexts[1].messages if m.role != "system"][-1]
    assert (last.role, last.tool_name, last.content[0].text) == ("toolResult", "confirm", "yes")


async def test_a_client_tool_named_like_the_agents_own_is_the_agents(
    nursery: trio.Nursery, backend: Backend
) -> None:
    clash = {"name": "multiply", "description": "The client's multiply.", "parameters": {}}
    backend.faux.set_responses(
        [
            faux_assistant_message([faux_tool_call("multiply", {"a": 2, "b": 4}, id="m1")],
                                   stop_reason="toolUse"),
            faux_assistant_message("8."),
        ]
    )  # fmt: skip
    url, _ = await start(nursery, backend)
    events = await collect(url, run_input(user("2 * 4"), tools=[clash]))
    results = [(e.tool_call_id, e.content) for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert results == [("m1", "8")]  # run by the agent, not left to the client
    assert events[-1].outcome.pending_tool_call_ids is None
    (declared,) = get_current_tools(backend.contexts[0].messages)
    assert declared.description == "Multiply two numbers."


async def test_tools_share_state_with_the_client_as_snapshots_and_deltas(
    nursery: trio.Nursery, backend: Backend
) -> None:
    def factory(run: AguiRun) -> Agent:
        @tool
        async def add_item(item: str) -> str:
            """Add an item to the list."""
            await run.patch_state([{"op": "add", "path": "/items/-", "value": item}])
            return f"{len(run.state['items'])} items"

        @tool
        async def clear() -> str:
            """Clear the list."""
            await run.set_state({"items": []})
            return "cleared"

        backend.tools = [add_item, clear]
        return backend.factory(run)

    backend.faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("add_item", {"item": "milk"})], stop_reason="toolUse"
            ),
            faux_assistant_message([faux_tool_call("clear", {})], stop_reason="toolUse"),
            faux_assistant_message("Done."),
        ]
    )
    app = AGUIApp(factory)
    url = await nursery.start(partial(serve, app, "127.0.0.1", 0))
    events = await collect(url, run_input(user("shop"), state={"items": ["eggs"]}))
    delta, snapshot = [
        e for e in events if e.type in (EventType.STATE_DELTA, EventType.STATE_SNAPSHOT)
    ]
    assert delta.type == EventType.STATE_DELTA
    assert [op.model_dump(by_alias=True) for op in delta.delta] == [
        {"op": "add", "path": "/items/-", "value": "milk"}
    ]
    assert snapshot.snapshot == {"items": []}
    results = [e.content for e in events if e.type == EventType.TOOL_CALL_RESULT]
    assert results == ["2 items", "cleared"]
    assert backend.runs[0].input.state == {"items": ["eggs"]}  # the input itself is untouched


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "error"),
    [
        ("POST", "/agui", b"{not json", 400, "Invalid RunAgentInput"),
        ("POST", "/agui", b'{"threadId": "t"}', 400, "runId: Field required"),
        ("POST", "/agui", json.dumps(run_input()).encode(), 400, "ends with nothing"),
        (
            "POST", "/agui",
            json.dumps(run_input(user("hi"), {"id": "a", "role": "assistant", "content": "yo"})).encode(),
            400, "ends with assistant",
        ),
        (
            "POST", "/agui",
            json.dumps(run_input({"id": "u", "role": "user",
                                  "content": [{"type": "audio", "source": {"type": "url", "value": "x"}}]})).encode(),
            400, "content[0] is a 'audio' part",
        ),
        (
            "POST", "/agui",
            json.dumps(run_input({"id": "a", "role": "assistant", "toolCalls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "multiply", "arguments": "[" * 3000 + "]" * 3000}}]},
                user("hi"))).encode(),
            400, "the arguments of tool call 'c1' are not JSON (JSON nested 3000 levels deep",
        ),
        ("GET", "/agui", b"", 405, "use POST /agui"),
        ("POST", "/elsewhere", b"{}", 404, "POST /agui"),
        ("POST", "/agui/cancel", b"{}", 400, '"threadId"'),
        ("POST", "/agui/cancel", b'{"threadId": "t", "runId": "r"}', 404, "No run 'r'"),
    ],
)  # fmt: skip
async def test_requests_it_cannot_run_are_answered_with_the_reason(
    nursery: trio.Nursery,
    backend: Backend,
    method: str,
    path: str,
    body: bytes,
    status: int,
    error: str,
) -> None:
    url, _ = await start(nursery, backend)
    base = url.removesuffix("/agui")
    async with httpx2.AsyncClient() as http:
        response = await http.request(method, base + path, content=body or None)
    assert response.status_code == status
    assert error in response.json()["error"]
    assert backend.faux.state.call_count == 0


@UNFINISHED_BODY_WARNINGS
async def test_limits_bound_body_size_and_runs_at_once(nursery: trio.Nursery) -> None:
    backend = Backend(hold=True)
    backend.faux.set_responses([faux_assistant_message("slow answer")])
    url, _ = await start(nursery, backend, max_body_bytes=2000, max_runs=1)
    async with httpx2.AsyncClient() as http:
        big = await http.post(url, json=run_input(user("x" * 3000)))
        assert big.status_code == 413
        assert "limit is 2000 bytes" in big.json()["error"]
        with trio.fail_after(30):
            async with open_run(url, run_input(user("first"))) as events:
                await read_until(events, "TEXT_MESSAGE_CONTENT", [])
                busy = await http.post(url, json=run_input(user("second")))
    assert busy.status_code == 429
    assert "limit 1" in busy.json()["error"]


async def test_a_stalled_upload_is_answered_408(
    nursery: trio.Nursery, backend: Backend, autojump_clock: trio.abc.Clock
) -> None:
    url, _ = await start(nursery, backend, body_timeout=30)
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    started = trio.current_time()
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(
            b"POST /agui HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 999\r\n\r\n{"threadId": '
        )
        answer = b""
        while chunk := await stream.receive_some():
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"Request body not received within 30 s" in answer
    assert 30 <= trio.current_time() - started < 31
    assert backend.agents == []


async def test_the_agent_factory_refuses_a_request_with_input_error(
    nursery: trio.Nursery, backend: Backend
) -> None:
    def factory(run: AguiRun) -> Agent:
        raise InputError(f"thread {run.thread_id!r}: this server answers only thread 'ok'")

    app = AGUIApp(factory)
    url = await nursery.start(partial(serve, app, "127.0.0.1", 0))
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, json=run_input(user("hi")))
    assert response.status_code == 400
    assert response.json() == {"error": "thread 'thread-1': this server answers only thread 'ok'"}
    assert app.running == {}


async def test_a_client_gone_before_the_run_begins_starts_no_run(backend: Backend) -> None:
    """Driven through the ASGI interface itself: the disconnect arrives while the response
    starts, before the agent runs (abort() then has no run to stop)."""
    backend.faux.set_responses([faux_assistant_message("nobody reads this")])
    app = AGUIApp(backend.factory)
    body = json.dumps(run_input(user("hi"))).encode()
    incoming = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)
        await trio.lowlevel.checkpoint()  # the disconnect is noticed here

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    with trio.fail_after(10):
        await app(scope, receive, send)
    assert sent[0]["type"] == "http.response.start"
    assert backend.faux.state.call_count == 0
    assert [m.role for m in backend.agents[0].state.messages] == ["system", "user"]
    assert app.running == {}


def test_apply_patch_adds_removes_and_replaces_without_touching_the_original() -> None:
    original = {"items": ["a"], "n": 1, "a/b": {"~": 0}}
    patched = apply_patch(
        original,
        [
            {"op": "add", "path": "/items/-", "value": "b"},
            {"op": "add", "path": "/items/0", "value": "z"},
            {"op": "replace", "path": "/n", "value": 2},
            {"op": "remove", "path": "/a~1b/~0"},
        ],
    )
    assert patched == {"items": ["z", "a", "b"], "n": 2, "a/b": {}}
    assert original == {"items": ["a"], "n": 1, "a/b": {"~": 0}}
    assert apply_patch(original, [{"op": "add", "path": "", "value": [1]}]) == [1]
    with pytest.raises(ValueError, match=r"operation 0 is .*'move'.*send a snapshot"):
        apply_patch(original, [{"op": "move", "from": "/n", "path": "/m"}])
    with pytest.raises(ValueError, match="nothing to replace at '/missing'"):
        apply_patch(original, [{"op": "replace", "path": "/missing", "value": 1}])


def test_the_app_checks_its_arguments() -> None:
    factory: Callable[[AguiRun], Agent] = Backend().factory
    with pytest.raises(TypeError, match="function run -> Agent"):
        AGUIApp("not a function")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must start with '/'"):
        AGUIApp(factory, path="agui")
    with pytest.raises(ValueError, match="must be positive"):
        AGUIApp(factory, max_runs=0)


def test_on_asyncio_a_run_streams_and_cancel_aborts_it() -> None:
    """The app under an asyncio ASGI server (hypercorn's asyncio worker, as uvicorn or
    FastAPI would run it): a run streams, and a cancel mid-answer ends it cancelled."""
    import asyncio

    from hypercorn.asyncio import serve as serve_asyncio
    from hypercorn.config import Config

    backend = Backend(hold=True)
    backend.faux.set_responses([faux_assistant_message("An answer on asyncio.")])
    app = AGUIApp(backend.factory)

    async def scenario() -> list[Any]:
        stop = asyncio.Event()
        config = Config()
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        config.bind = [f"fd://{listener.detach()}"]  # hypercorn serves (and closes) it
        config.accesslog = None
        server = asyncio.create_task(serve_asyncio(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        url = f"http://127.0.0.1:{port}"
        seen: list[Any] = []
        body = run_input(user("hi"), run_id="asyncio-run")
        async with open_run(url, body) as events:
            await read_until(events, "TEXT_MESSAGE_CONTENT", seen)
            assert (await cancel(url, "thread-1", "asyncio-run")).status_code == 202
            seen.extend([event async for event in events])
        stop.set()
        await server
        return seen

    seen = asyncio.run(scenario())
    assert types(seen)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert seen[-1].outcome.type == "cancelled"
    assert backend.agents[0].state.messages[-1].stop_reason == "aborted"


# --------------------------------------------------------------------------- the AG-UI client

AGUI_CLIENT = "@ag-ui/client@1.0.0"

# A run through the AG-UI project's own TypeScript client, whose pipeline checks the event
# sequence (verifyEvents) and folds it into messages; "abort" calls abortRun() on the first
# text delta, which closes the request.
NODE_CLIENT = """
import { HttpAgent } from "@ag-ui/client";
const [url, mode] = [process.argv[2], process.argv[3]];
const agent = new HttpAgent({ url, threadId: "node-thread",
  initialMessages: [{ id: "u1", role: "user", content: "What is 6 * 7?" }] });
const types = [];
agent.subscribe({ onEvent: ({ event }) => {
  types.push(event.type);
  if (mode === "abort" && event.type === "TEXT_MESSAGE_CONTENT") agent.abortRun();
} });
const { result, newMessages } = await agent.runAgent({ runId: "node-run" });
console.log(JSON.stringify({ types, result, newMessages }));
"""


@pytest.fixture(scope="session")
def agui_client() -> Path:
    """``@ag-ui/client`` installed from npm (cached under benchmarks/.cache) and the script
    above. Without node or npm the tests are skipped, except in CI, where they fail."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing = "node and npm are needed to run the AG-UI TypeScript client"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    root = Path(__file__).resolve().parent.parent / "benchmarks" / ".cache" / "ag-ui-client"
    if not (root / "node_modules" / "@ag-ui" / "client" / "package.json").exists():
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(root), AGUI_CLIENT],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    script = root / "client.mjs"
    script.write_text(NODE_CLIENT)
    return script


async def run_node_client(script: Path, url: str, *mode: str) -> dict[str, Any]:
    with trio.fail_after(60):
        done = await trio.run_process(
            ["node", str(script), url, *mode], capture_stdout=True, capture_stderr=True, check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def test_the_ag_ui_typescript_client_runs_the_agent_and_folds_the_messages(
    nursery: trio.Nursery, backend: Backend, agui_client: Path
) -> None:
    backend.faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("Use the tool."),
                    faux_text("Let me multiply."),
                    faux_tool_call("multiply", {"a": 6, "b": 7}, id="call-1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("The answer is 42."),
        ]
    )
    url, _ = await start(nursery, backend)
    output = await run_node_client(agui_client, url)
    assert output["types"][0] == "RUN_STARTED"
    assert output["types"][-1] == "RUN_FINISHED"
    assert output["result"] == "The answer is 42."
    reasoning, asked, result, answer = output["newMessages"]
    assert (reasoning["role"], reasoning["content"]) == ("reasoning", "Use the tool.")
    assert asked["role"] == "assistant"
    assert asked["content"] == "Let me multiply."
    assert asked["toolCalls"] == [
        {"id": "call-1", "type": "function",
         "function": {"name": "multiply", "arguments": '{"a":6,"b":7}'}}
    ]  # fmt: skip
    assert (result["role"], result["toolCallId"], result["content"]) == ("tool", "call-1", "42")
    assert (answer["role"], answer["content"]) == ("assistant", "The answer is 42.")


async def test_abort_run_of_the_ag_ui_typescript_client_aborts_the_agent(
    nursery: trio.Nursery, agui_client: Path
) -> None:
    backend = Backend(hold=True)
    backend.faux.set_responses([faux_assistant_message("An answer the client stops.")])
    url, app = await start(nursery, backend)
    output = await run_node_client(agui_client, url, "abort")
    assert "TEXT_MESSAGE_CONTENT" in output["types"]
    assert "RUN_FINISHED" not in output["types"]
    with trio.fail_after(10):
        await backend.cancelled.wait()
    await idle(app)
    final = backend.agents[0].state.messages[-1]
    assert final.stop_reason == "aborted"
    assert final.content[0].text == output["newMessages"][-1]["content"]
