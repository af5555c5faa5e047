"""OpenTelemetry under abort and failure: every span ends, and the aborted or failed ones
say so (abort during a parallel batch and while streaming on trio and asyncio, the
caller's cancellation, lost closing events, a failing listener)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from opentelemetry.trace import StatusCode

from pi_trio.agent import Agent
from pi_trio.otel import instrument
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .otel_support import BACKENDS, Pipeline, by_start, status, text_tool


def _hanging_agent(otel: Pipeline, **settings: Any) -> tuple[Agent, FauxProvider]:
    """An instrumented agent whose model calls ``hang``, a tool that never returns."""

    async def hang(value: str) -> str:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("hang", {"value": "x"}, id="h1")], stop_reason="toolUse"
            )
        ]
    )
    agent = Agent(
        model=faux.get_model(), tools=[text_tool("hang", hang)], stream_fn=faux, **settings
    )
    instrument(agent, **otel.providers)
    return agent, faux


@pytest.mark.parametrize("backend", BACKENDS)
def test_abort_during_a_parallel_batch_ends_every_span_and_marks_the_aborted_call(
    otel: Pipeline, backend: str
) -> None:
    async def hang(value: str) -> str:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("hang", {"value": "x"}, id="h1"),
                    faux_tool_call("quick", {"value": "y"}, id="q1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("never asked"),
        ]
    )

    async def main() -> None:
        agent = Agent(
            model=faux.get_model(),
            tools=[text_tool("hang", hang), text_tool("quick", lambda v: v)],
            stream_fn=faux,
        )
        instrument(agent, **otel.providers)
        agent.subscribe(
            lambda e: (
                agent.abort() if e.type == "tool_execution_end" and e.tool_name == "quick" else None
            )
        )
        await agent.prompt("go")

    anyio.run(main, backend=backend)

    assert otel.tree() == [
        (
            "invoke_agent",
            [
                (
                    "turn 1",
                    [
                        ("chat faux-1", []),
                        ("execute_tool hang h1", []),
                        ("execute_tool quick q1", []),
                    ],
                )
            ],
        )
    ]
    aborted = (StatusCode.ERROR, "aborted")
    assert status(otel.one("execute_tool hang")) == aborted
    assert otel.one("execute_tool hang").status.description == "Operation aborted"
    assert status(otel.one("execute_tool quick")) == (StatusCode.UNSET, None)
    assert status(otel.one("chat")) == (StatusCode.UNSET, None)
    assert status(otel.one("turn")) == aborted
    assert status(otel.one("invoke_agent")) == aborted
    errors = {
        p.attributes["gen_ai.operation.name"]: p.attributes.get("error.type")
        for _, p in otel.durations()
        if p.attributes.get("gen_ai.tool.name") != "quick"
    }
    assert errors == {"chat": None, "execute_tool": "aborted", "invoke_agent": "aborted"}


async def test_the_callers_cancellation_ends_every_span_as_aborted(
    otel: Pipeline, autojump_clock: Any
) -> None:
    agent, _ = _hanging_agent(otel)
    with anyio.move_on_after(5) as deadline:
        await agent.prompt("go")
    assert deadline.cancelled_caught

    assert otel.tree() == [
        ("invoke_agent", [("turn 1", [("chat faux-1", []), ("execute_tool hang h1", [])])])
    ]
    for prefix in ("execute_tool", "turn", "invoke_agent"):
        assert status(otel.one(prefix)) == (StatusCode.ERROR, "aborted"), prefix


async def test_a_listener_stuck_past_close_timeout_still_lets_every_span_end(
    otel: Pipeline, autojump_clock: Any
) -> None:
    """The stuck listener is cut at the bound (close_timeout past the deadline); the
    closing events still reach every listener, the instrumentation's included."""

    agent, _ = _hanging_agent(otel, close_timeout=1)

    async def stuck(event: Any) -> None:
        if event.type == "tool_execution_end":
            await anyio.sleep_forever()  # outlasts close_timeout

    agent.subscribe(stuck)
    start = anyio.current_time()
    with anyio.move_on_after(5):
        await agent.prompt("go")
    assert anyio.current_time() - start == pytest.approx(5 + 1)
    assert otel.tree() == [
        ("invoke_agent", [("turn 1", [("chat faux-1", []), ("execute_tool hang h1", [])])])
    ]
    for prefix in ("execute_tool", "turn", "invoke_agent"):
        assert status(otel.one(prefix)) == (StatusCode.ERROR, "aborted"), prefix


class _Interrupt(BaseException):
    """Not an ``Exception``: a listener raising it is not recorded and passed over, it
    ends the delivery (and the run) where it is, so the closing events are lost."""


async def test_a_run_that_lost_its_closing_events_is_closed_when_the_next_run_starts(
    otel: Pipeline, autojump_clock: Any
) -> None:
    agent, faux = _hanging_agent(otel)

    def interrupt(event: Any) -> None:
        if event.type == "tool_execution_start":
            raise _Interrupt

    unsubscribe = agent.subscribe(interrupt)
    with pytest.raises(_Interrupt):
        await agent.prompt("go")
    assert otel.named("invoke_agent") == []  # still open

    unsubscribe()
    faux.set_responses([faux_assistant_message("fine")])
    await agent.prompt("again")

    first, second = sorted(otel.named("invoke_agent"), key=lambda s: s.start_time)
    assert status(first) == (StatusCode.ERROR, "_OTHER")
    assert first.status.description == "the run ended without this span's closing event"
    assert status(second) == (StatusCode.UNSET, None)
    assert len(otel.spans()) == 4 + 3  # run, turn, chat, tool; then run, turn, chat


async def test_a_failing_listener_still_ends_every_span(otel: Pipeline) -> None:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("echo", {"value": "x"}, id="c1")], stop_reason="toolUse"
            ),
            faux_assistant_message("never asked"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[text_tool("echo", str)], stream_fn=faux)
    instrument(agent, **otel.providers)

    def fails(event: Any) -> None:
        if event.type == "tool_execution_end":
            raise RuntimeError("listener bug")

    agent.subscribe(fails)
    await agent.prompt("go")

    assert agent.state.error_message == "listener bug"
    assert otel.tree() == [
        (
            "invoke_agent",
            [("turn 1", [("chat faux-1", []), ("chat faux-1", []), ("execute_tool echo c1", [])])],
        )
    ]
    failure = by_start(otel.named("chat"))[1]  # the agent's error message closing the run
    assert status(failure) == (StatusCode.ERROR, "_OTHER")
    assert status(otel.one("invoke_agent")) == (StatusCode.ERROR, "_OTHER")
