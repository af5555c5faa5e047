"""Anthropic message threads over a loopback server, step by step as pi 1.6 took them
(tests/fixtures/pi1x/anthropic_threads.json, recorded by tests/record_pi1x_pi16.mjs): a new
thread, a continuation with only the new message (no system, no tools), a changed prefix
sent in full as a new thread, a lost thread sent again as a new one, an endpoint without
threads sent again without (and no thread after), ``disable_continuation``, and
``cache_retention="none"``. Each request pi_trio sends, its beta header and each reply's
diagnostics are compared with pi 1.6's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.ai import Context, Model, complete_simple, from_json, messages_from_json
from pi_trio.ai.providers import ProviderRegistry, cleanup_session_resources
from pi_trio.testing import SSEReply, serve_sse

FIXTURES = Path(__file__).parent / "fixtures" / "pi1x"
RECORDED = json.loads((FIXTURES / "anthropic_threads.json").read_text())
OPTIONS = {"sessionId": "session_id", "cacheRetention": "cache_retention"}
OPTIONS |= {"disableContinuation": "disable_continuation"}


def replies() -> list[SSEReply]:
    return [SSEReply(r["body"].encode(), status=r["status"]) for r in RECORDED["replies"]]


def diagnostics(message: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in d.items() if k != "timestamp"} for d in message.get("diagnostics", [])
    ]


async def run_steps() -> tuple[list[Any], list[Any]]:
    cleanup_session_resources()  # another test's threads must not continue here
    registry = ProviderRegistry()
    answers: list[Any] = []
    async with serve_sse(replies()) as server:
        model = from_json(json.dumps({**RECORDED["model"], "baseUrl": server.url}), Model)
        try:
            for step in RECORDED["steps"]:
                options = {OPTIONS[k]: v for k, v in step["options"].items()}
                message = await complete_simple(
                    model,
                    Context(messages=messages_from_json(json.dumps(step["messages"]))),
                    registry=registry,
                    api_key="test-key",
                    **options,
                )
                answers.append(json.loads(msgspec.json.encode(message)))
        finally:
            await registry.aclose()
            cleanup_session_resources()
    return answers, server.requests


async def test_each_step_sends_what_pi16_sent() -> None:
    answers, requests = await run_steps()
    assert len(requests) == len(RECORDED["requests"])
    for ours, theirs in zip(requests, RECORDED["requests"], strict=True):
        assert ours.json() == theirs["body"]
        assert ours.headers.get("anthropic-beta") == theirs["beta"]
    for answer, step in zip(answers, RECORDED["steps"], strict=True):
        assert answer["stopReason"] == step["reply"]["stopReason"], answer.get("errorMessage")
        assert answer["responseId"] == step["reply"]["responseId"]
        assert diagnostics(answer) == diagnostics(step["reply"]), step["label"]


def test_the_threads_work_on_asyncio() -> None:
    _, requests = anyio.run(run_steps, backend="asyncio")
    assert [r.json().get("thread") for r in requests] == [
        r["body"].get("thread") for r in RECORDED["requests"]
    ]


async def test_forgetting_a_session_starts_a_new_thread() -> None:
    first = RECORDED["steps"][0]
    second = RECORDED["steps"][1]
    cleanup_session_resources()
    registry = ProviderRegistry()
    threads: list[Any] = []
    async with serve_sse(replies()[:2]) as server:
        model = from_json(json.dumps({**RECORDED["model"], "baseUrl": server.url}), Model)
        try:
            for step in (first, second):
                if step is second:
                    cleanup_session_resources("thread-session")
                await complete_simple(
                    model,
                    Context(messages=messages_from_json(json.dumps(step["messages"]))),
                    registry=registry,
                    api_key="test-key",
                    session_id="thread-session",
                )
        finally:
            await registry.aclose()
        threads = [r.json()["thread"] for r in server.requests]
    assert threads == [{"type": "create"}, {"type": "create"}]


@pytest.mark.parametrize(
    ("base_url", "compat", "threads"),
    [
        ("https://api.anthropic.com", None, True),
        ("https://gateway.example", None, False),
        ("https://gateway.example", {"supportsMessageThreads": True}, True),
        ("https://api.anthropic.com", {"supportsMessageThreads": False}, False),
    ],
)
def test_threads_are_on_for_anthropics_endpoint_unless_compat_says(
    base_url: str, compat: Any, threads: bool
) -> None:
    from pi_trio.ai.providers._anthropic_thread import thread_session  # the rule itself

    model = from_json(json.dumps({**RECORDED["model"], "baseUrl": base_url}), Model)
    model = msgspec.structs.replace(model, compat=compat)
    assert (thread_session(model, "s", "short") == "s") is threads
    assert thread_session(model, None, "short") is None
    assert thread_session(model, "s", "none") is None
