"""Sessions: every finished message is appended as it happens, a process killed mid-run
loses none of them, an agent resumes from the store, and a broken file is reported by
file, line and field."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.agent import Agent
from pi_trio.ai import (
    MessageDecodeError,
    MessageValidationError,
    PiError,
    RetryPolicy,
    UserMessage,
    from_json,
    messages_to_json,
    to_json,
)
from pi_trio.ai.json import extra_fields, messages_to_jsonl
from pi_trio.session import (
    FileSessionStore,
    SessionError,
    SessionStore,
    load_messages,
    record_session,
)
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .session_child import SYSTEM_PROMPT, TOOLS

CHILD = Path(__file__).resolve().parent / "session_child.py"


def roles(messages: list[Any]) -> list[str]:
    return [m.role for m in messages]


def faux_agent(store: FileSessionStore, *answers: Any) -> tuple[Agent, FauxProvider]:
    faux = FauxProvider()
    faux.set_responses(list(answers))
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt=SYSTEM_PROMPT,
        tools=TOOLS,
        messages=store.load(),
    )
    return agent, faux


def user(text: str) -> UserMessage:
    return UserMessage(content=text, timestamp=1)


# --------------------------------------------------------------------------- recording


async def test_each_message_is_in_the_file_when_its_message_end_reaches_listeners(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    store = FileSessionStore(path)
    agent, _ = faux_agent(
        store,
        faux_assistant_message(
            [faux_tool_call("note", {"text": "eggs"}, id="n1")], stop_reason="toolUse"
        ),
        faux_assistant_message("Noted."),
    )
    record_session(agent, store)
    assert roles(load_messages(path)) == ["system"]  # the agent's system prompt, at once

    seen: list[tuple[str, int]] = []
    agent.subscribe(  # subscribed after the recorder: runs after it, in order
        lambda e: (
            seen.append((e.message.role, len(path.read_bytes().splitlines())))
            if e.type == "message_end"
            else None
        )
    )
    await agent.prompt("Note eggs.")
    assert seen == [("user", 2), ("assistant", 3), ("toolResult", 4), ("assistant", 5)]
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)
    assert to_json(store.load()) == to_json(agent.state.messages)


async def test_an_aborted_answer_is_saved_and_the_next_run_resumes_from_the_file(
    tmp_path: Path, autojump_clock: Any
) -> None:
    path = tmp_path / "chat.jsonl"
    store = FileSessionStore(path)
    faux = FauxProvider(tokens_per_second=10)
    faux.set_responses([faux_assistant_message("one two three four five six seven eight")])
    agent = Agent(model=faux.get_model(), stream_fn=faux, messages=store.load())
    record_session(agent, store)
    agent.subscribe(lambda e: agent.abort() if e.type == "message_update" else None)
    await agent.prompt("Count.")
    assert agent.state.messages[-1].stop_reason == "aborted"

    resumed_store = FileSessionStore(path)
    faux.set_responses([faux_assistant_message("Nine.")])
    resumed = Agent(model=faux.get_model(), stream_fn=faux, messages=resumed_store.load())
    assert to_json(resumed.state.messages) == to_json(agent.state.messages)
    record_session(resumed, resumed_store)
    await resumed.prompt("Go on.")
    saved = load_messages(path)
    assert roles(saved) == ["user", "assistant", "user", "assistant"]
    assert saved[1].stop_reason == "aborted"
    assert to_json(saved) == to_json(resumed.state.messages)


@pytest.mark.parametrize("retries", [1, 0])
async def test_a_response_withdrawn_for_a_retry_is_not_saved_a_lasting_failure_is(
    tmp_path: Path, autojump_clock: Any, retries: int
) -> None:
    path = tmp_path / "chat.jsonl"
    store = FileSessionStore(path)
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message("", stop_reason="error", error_message="503 unavailable"),
            faux_assistant_message("Fine."),
        ]
    )
    policy = RetryPolicy(max_retries=retries, base_delay_ms=1000)
    agent = Agent(model=faux.get_model(), stream_fn=faux, retry=policy)
    record_session(agent, store)
    await agent.prompt("Hi.")
    saved = load_messages(path)
    assert to_json(saved) == to_json(agent.state.messages)
    assert [m.stop_reason for m in saved if m.role == "assistant"] == (
        ["stop"] if retries else ["error"]
    )


def test_a_process_killed_mid_run_keeps_every_finished_message_and_resumes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == "waiting\n"  # inside the second tool call
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()
        child.stdout.close()

    saved = load_messages(path)
    assert roles(saved) == ["system", "user", "assistant", "toolResult", "assistant"]
    assert saved[3].content[0].text == "noted: milk"
    assert saved[4].content[0].name == "wait"  # the call that never finished
    assert path.read_bytes() == messages_to_jsonl(saved)

    sent: list[str] = []

    def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
        sent.extend(roles(context.messages))
        return faux_assistant_message("Back again.")

    async def resume() -> Agent:
        store = FileSessionStore(path)
        agent, _ = faux_agent(store, answer)
        record_session(agent, store)
        await agent.prompt("Where were we?")
        return agent

    agent = anyio.run(resume, backend="trio")
    assert sent == ["system", "user", "assistant", "toolResult", "assistant", "user"]
    assert roles(agent.state.messages)[5:] == ["user", "assistant"]
    assert to_json(load_messages(path)) == to_json(agent.state.messages)


def test_recording_and_resuming_work_on_asyncio(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"

    async def turn(text: str) -> Agent:
        store = FileSessionStore(path)
        agent, _ = faux_agent(store, faux_assistant_message(f"Noted: {text}"))
        record_session(agent, store)
        await agent.prompt(text)
        return agent

    anyio.run(turn, "one", backend="asyncio")
    agent = anyio.run(turn, "two", backend="asyncio")
    assert roles(agent.state.messages) == ["system", "user", "assistant", "user", "assistant"]
    assert path.read_bytes() == messages_to_jsonl(agent.state.messages)


def test_a_line_cut_short_by_a_crash_is_left_out_and_replaced_by_the_next_append(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.jsonl"
    kept = [user("one"), user("two")]
    path.write_bytes(messages_to_jsonl(kept) + to_json(user("three"))[:17])
    assert to_json(load_messages(path)) == to_json(kept)

    store = FileSessionStore(path)
    store.append(user("four"))
    assert path.read_bytes() == messages_to_jsonl([*kept, user("four")])

    # a whole last message that only lacks its newline is kept, and gets the newline
    path.write_bytes(messages_to_jsonl(kept)[:-1])
    assert to_json(load_messages(path)) == to_json(kept)
    FileSessionStore(path).append(user("three"))
    assert path.read_bytes() == messages_to_jsonl([*kept, user("three")])


def test_a_database_store_is_two_methods() -> None:
    class Memory:
        def __init__(self) -> None:
            self.rows: list[bytes] = []

        def append(self, message: Any) -> None:
            self.rows.append(to_json(message))

        def load(self) -> list[Any]:
            return [from_json(row) for row in self.rows]

    assert isinstance(Memory(), SessionStore)
    assert isinstance(FileSessionStore("x.jsonl"), SessionStore)


async def test_record_session_refuses_a_store_that_is_not_the_agents_history(
    tmp_path: Path,
) -> None:
    store = FileSessionStore(tmp_path / "chat.jsonl")
    store.append(user("from another chat"))
    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux, system_prompt="Hi.")
    with pytest.raises(
        SessionError, match=r"holds 1 messages that are not the start of the agent's 1;"
    ):
        record_session(agent, store)

    array = tmp_path / "export.json"
    array.write_bytes(messages_to_json([user("a")]))
    with pytest.raises(SessionError, match="holds a JSON array transcript"):
        FileSessionStore(array).append(user("b"))
    assert roles(load_messages(array)) == ["user"]  # a JSON array loads

    refused: list[str] = []

    def attach_mid_run(event: Any) -> None:
        if event.type == "message_update":
            with pytest.raises(SessionError, match=r"call it before prompt\(\)") as caught:
                record_session(agent, FileSessionStore(tmp_path / "late.jsonl"))
            refused.append(str(caught.value))
            agent.abort()

    faux.set_responses([faux_assistant_message("a long answer")])
    agent.subscribe(attach_mid_run)
    await agent.prompt("hello")
    assert len(refused) == 1
    assert not (tmp_path / "late.jsonl").exists()


# --------------------------------------------------------------------------- broken files


def broken(tmp_path: Path, name: str, data: bytes) -> MessageDecodeError:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(MessageDecodeError) as caught:
        load_messages(path)
    return caught.value


def test_a_broken_jsonl_file_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    good = to_json(user("fine"))
    error = broken(
        tmp_path,
        "chat.jsonl",
        good + b"\n" + good + b'\n{"role":"user","content":5,"timestamp":1}\n' + good + b"\n",
    )
    assert isinstance(error, MessageValidationError)
    assert isinstance(error, PiError)
    assert isinstance(error, msgspec.ValidationError)
    assert str(error) == (
        f"{tmp_path / 'chat.jsonl'}, line 3: Expected `str | array`, got `int` - at `$.content`"
    )
    assert (error.source, error.line, error.path) == (str(tmp_path / "chat.jsonl"), 3, "$.content")

    error = broken(tmp_path, "role.jsonl", good + b'\n\n{"role":"bot","content":"x"}\n')
    assert str(error).endswith(", line 3: Invalid value 'bot' - at `$.role`")

    # a field pi_trio does not know (a newer writer's) is kept, not an error
    newer = tmp_path / "field.jsonl"
    newer.write_bytes(b'{"role":"user","content":"x","timestamp":1,"mood":1}\n')
    [message] = load_messages(newer)
    assert extra_fields(message) == {"mood": 1}

    # malformed JSON before the last line is not a cut-short write: it is an error
    error = broken(tmp_path, "bad.jsonl", good + b'\n{"role":"user",,}\n' + good + b"\n")
    assert not isinstance(error, MessageValidationError)
    assert str(error) == (
        f"{tmp_path / 'bad.jsonl'}, line 2, column 16: JSON is malformed: "
        "object keys must be strings (byte 15)"
    )
    # so is a last line that ends with its newline
    error = broken(tmp_path, "end.jsonl", good + b'\n{"role":\n')
    assert (error.line, error.reason) == (2, "Input data was truncated")


def test_a_broken_json_array_file_names_the_file_the_line_and_the_path(tmp_path: Path) -> None:
    error = broken(
        tmp_path,
        "chat.json",
        b'[{"role":"user","content":"x","timestamp":1},\n {"role":"user","content":[{"type":"img"}]}]',
    )
    assert isinstance(error, MessageValidationError)
    assert str(error) == (
        f"{tmp_path / 'chat.json'}, line 2, column 36: "
        "Invalid value 'img' - at `$[1].content[0].type`"
    )
    assert (error.line, error.column, error.path) == (2, 36, "$[1].content[0].type")

    # what JSON.stringify(messages, null, 2) writes: the line of the wrong value
    messages = [
        {"role": "user", "content": 'a "quoted" [text] {x}', "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "fine"}],
            "api": "faux",
            "provider": "faux",
            "model": "m",
            "usage": {"input": 1, "output": "two", "cacheRead": 0, "cacheWrite": 0},
            "stopReason": "stop",
            "timestamp": 2,
        },
    ]
    pretty = json.dumps(messages, indent=2).encode()
    error = broken(tmp_path, "pretty.json", pretty)
    lines = pretty.decode().splitlines()
    assert error.path == "$[1].usage.output"
    assert error.line is not None
    assert error.column is not None
    assert lines[error.line - 1][error.column - 1 :] == '"two",'
    assert str(error).startswith(f"{tmp_path / 'pretty.json'}, line {error.line}, column 17: ")

    # a message that is not an object at all: its own line
    error = broken(
        tmp_path, "five.json", b'[\n  {"role":"user","content":"x","timestamp":1},\n  5\n]'
    )
    assert (error.line, error.column, error.path) == (3, 3, "$[1]")

    error = broken(tmp_path, "cut.json", b'[{"role":"user",\n "content":"x",\n "timestamp":1')
    assert str(error) == f"{tmp_path / 'cut.json'}: Input data was truncated"
    error = broken(tmp_path, "comma.json", b'[{"role":"user",\n  "content":"x",,\n}]')
    assert (error.line, error.column) == (2, 17)  # the second comma
