"""OpenTelemetry spans and metrics of agent runs: the span tree of a tool run, a parallel
batch, an abort and a provider error, on trio and on asyncio (faux provider, the SDK's
in-memory exporter and metric reader)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from pi_trio.agent import Agent
from pi_trio.otel import instrument
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .otel_support import BACKENDS, Pipeline, by_start, status, text_tool


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tool_run_is_a_run_span_with_turn_request_and_tool_spans(
    otel: Pipeline, backend: str
) -> None:
    tracer = otel.tracer_provider.get_tracer("app")

    def echo(value: str) -> str:
        with tracer.start_as_current_span("inside echo"):
            return f"echoed {value}"

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("echo", {"value": "hi"}, id="c1")],
                stop_reason="toolUse",
                response_id="resp-1",
            ),
            faux_assistant_message("done"),
        ]
    )

    async def main() -> Agent:
        agent = Agent(model=faux.get_model(), tools=[text_tool("echo", echo)], stream_fn=faux)
        instrument(agent, **otel.providers)
        with tracer.start_as_current_span("app request"):
            await agent.prompt("say hi")
        return agent

    agent = anyio.run(main, backend=backend)

    assert otel.tree() == [
        (
            "app request",
            [
                (
                    "invoke_agent",
                    [
                        (
                            "turn 1",
                            [
                                ("chat faux-1", []),
                                ("execute_tool echo c1", [("inside echo", [])]),
                            ],
                        ),
                        ("turn 2", [("chat faux-1", [])]),
                    ],
                )
            ],
        )
    ]
    assert all(s.status.status_code is StatusCode.UNSET for s in otel.spans())

    answers = [m for m in agent.state.messages if m.role == "assistant"]
    chats = by_start(otel.named("chat"))
    for span, message in zip(chats, answers, strict=True):
        attributes = span.attributes or {}
        usage = message.usage
        assert span.kind is SpanKind.CLIENT
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "faux"
        assert attributes["gen_ai.request.model"] == "faux-1"
        assert attributes["gen_ai.request.stream"] is True
        assert attributes["gen_ai.response.model"] == "faux-1"
        assert attributes["gen_ai.usage.input_tokens"] == usage.input + usage.cache_read
        assert attributes["gen_ai.usage.output_tokens"] == usage.output > 0
        assert "gen_ai.input.messages" not in attributes  # content is opt-in
    assert chats[0].attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert chats[0].attributes["gen_ai.response.id"] == "resp-1"
    assert chats[1].attributes["gen_ai.response.finish_reasons"] == ("stop",)

    tool = otel.one("execute_tool")
    assert tool.kind is SpanKind.INTERNAL
    assert dict(tool.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "The echo tool",
    }

    run = otel.one("invoke_agent")
    input_total = sum(m.usage.input + m.usage.cache_read for m in answers)
    output_total = sum(m.usage.output for m in answers)
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["pi.turns"] == 2
    assert run.attributes["gen_ai.usage.input_tokens"] == input_total
    assert run.attributes["gen_ai.usage.output_tokens"] == output_total

    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum for p in otel.points("gen_ai.client.token.usage")
    }
    assert tokens == {"input": input_total, "output": output_total}
    durations: Counter[tuple[str, str]] = Counter()
    for metric, point in otel.durations():
        durations[(metric, point.attributes["gen_ai.operation.name"])] += point.count
    assert durations == {
        ("gen_ai.client.operation.duration", "chat"): 2,
        ("gen_ai.execute_tool.duration", "execute_tool"): 1,
        ("gen_ai.invoke_agent.duration", "invoke_agent"): 1,
    }
    # a run's and a tool call's duration are their spans' (the conventions ask for it)
    for metric, span in (
        ("gen_ai.execute_tool.duration", tool),
        ("gen_ai.invoke_agent.duration", run),
    ):
        [point] = otel.points(metric)
        assert span.end_time is not None
        assert span.start_time is not None
        assert point.sum == pytest.approx((span.end_time - span.start_time) / 1e9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_tool_calls_each_make_their_own_span_current(otel: Pipeline, backend: str) -> None:
    tracer = otel.tracer_provider.get_tracer("app")
    arrived: dict[str, anyio.Event] = {}

    async def meet(value: str) -> str:
        # each call waits for the other: they run at the same time
        with tracer.start_as_current_span(f"inside {value}"):
            arrived[value].set()
            await arrived["b" if value == "a" else "a"].wait()
            with tracer.start_as_current_span(f"after waiting {value}"):
                pass
        return value

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("meet", {"value": "a"}, id="ca"),
                    faux_tool_call("meet", {"value": "b"}, id="cb"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("met"),
        ]
    )

    async def main() -> None:
        arrived.update(a=anyio.Event(), b=anyio.Event())
        agent = Agent(model=faux.get_model(), tools=[text_tool("meet", meet)], stream_fn=faux)
        instrument(agent, **otel.providers)
        await agent.prompt("meet")

    anyio.run(main, backend=backend)

    assert otel.tree() == [
        (
            "invoke_agent",
            [
                (
                    "turn 1",
                    [
                        ("chat faux-1", []),
                        ("execute_tool meet ca", [("inside a", [("after waiting a", [])])]),
                        ("execute_tool meet cb", [("inside b", [("after waiting b", [])])]),
                    ],
                ),
                ("turn 2", [("chat faux-1", [])]),
            ],
        )
    ]
    first, second = by_start(otel.named("execute_tool"))
    assert first.end_time > second.start_time  # they overlapped


@pytest.mark.parametrize("backend", BACKENDS)
def test_abort_while_streaming_ends_the_request_span_as_aborted(
    otel: Pipeline, backend: str
) -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("a long answer that is cut off " * 4)])

    async def main() -> None:
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        instrument(agent, **otel.providers)

        def abort_on_first_delta(event: Any) -> None:
            if (
                event.type == "message_update"
                and event.assistant_message_event.type == "text_delta"
            ):
                agent.abort()

        agent.subscribe(abort_on_first_delta)
        await agent.prompt("talk")

    anyio.run(main, backend=backend)

    assert otel.tree() == [("invoke_agent", [("turn 1", [("chat faux-1", [])])])]
    chat = otel.one("chat")
    assert status(chat) == (StatusCode.ERROR, "aborted")
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("aborted",)
    assert chat.attributes["pi.stop_reason"] == "aborted"
    assert status(otel.one("turn")) == (StatusCode.ERROR, "aborted")
    assert status(otel.one("invoke_agent")) == (StatusCode.ERROR, "aborted")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_provider_error_fails_the_request_turn_and_run_spans(
    otel: Pipeline, backend: str
) -> None:
    faux = FauxProvider()
    faux.set_responses(
        [faux_assistant_message("", stop_reason="error", error_message="503 upstream overloaded")]
    )

    async def main() -> None:
        agent = Agent(model=faux.get_model(), stream_fn=faux)
        instrument(agent, **otel.providers)
        await agent.prompt("hello")

    anyio.run(main, backend=backend)

    assert otel.tree() == [("invoke_agent", [("turn 1", [("chat faux-1", [])])])]
    for prefix in ("chat", "turn", "invoke_agent"):
        span = otel.one(prefix)
        assert status(span) == (StatusCode.ERROR, "503"), prefix
        assert span.status.description == "503 upstream overloaded"
    assert otel.one("chat").attributes["gen_ai.response.finish_reasons"] == ("error",)
    errors = {
        p.attributes["gen_ai.operation.name"]: p.attributes.get("error.type")
        for _, p in otel.durations()
    }
    assert errors == {"chat": "503", "invoke_agent": "503"}


async def test_a_stream_function_that_raises_is_an_error_of_type_other(otel: Pipeline) -> None:
    async def broken(model: Any, context: Any, options: Any, send: Any) -> None:
        raise RuntimeError("socket closed")

    agent = Agent(model=FauxProvider().get_model(), stream_fn=broken)
    instrument(agent, **otel.providers)
    await agent.prompt("hello")

    chat = otel.one("chat")
    assert status(chat) == (StatusCode.ERROR, "_OTHER")
    assert chat.status.description == "socket closed"
    assert status(otel.one("invoke_agent")) == (StatusCode.ERROR, "_OTHER")


async def test_tool_failures_carry_their_error_type(otel: Pipeline, autojump_clock: Any) -> None:
    def raises(value: str) -> str:
        raise ValueError(f"bad value {value!r}")

    async def slow(value: str) -> str:
        await anyio.sleep(60)
        return value

    slow_tool = text_tool("slow", slow)
    slow_tool.timeout = 1
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("raises", {"value": "x"}, id="r1"),
                    faux_tool_call("slow", {"value": "y"}, id="s1"),
                    faux_tool_call("missing", {"value": "z"}, id="m1"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("noted"),
        ]
    )
    agent = Agent(
        model=faux.get_model(), tools=[text_tool("raises", raises), slow_tool], stream_fn=faux
    )
    instrument(agent, **otel.providers)
    await agent.prompt("try")

    assert status(otel.one("execute_tool raises")) == (StatusCode.ERROR, "ValueError")
    assert [e.name for e in otel.one("execute_tool raises").events] == ["exception"]
    assert status(otel.one("execute_tool slow")) == (StatusCode.ERROR, "timeout")
    assert status(otel.one("execute_tool missing")) == (StatusCode.ERROR, "tool_error")
    # tool failures are data for the model: the turn and the run went on
    assert status(otel.one("invoke_agent")) == (StatusCode.UNSET, None)
    assert len(otel.named("turn")) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tool_span_never_becomes_current_in_the_calls_beside_it(
    otel: Pipeline, backend: str
) -> None:
    # A parallel batch runs its first call in the agent's task and starts the second as a
    # task while the first waits: the second must not inherit the first call's span, also
    # when it is a tool added after instrument() (not traced until this run ends).
    tracer = otel.tracer_provider.get_tracer("app")
    released: list[anyio.Event] = []

    async def first(value: str) -> str:
        await released[0].wait()
        return value

    def second(value: str) -> str:
        with tracer.start_as_current_span("inside second"):
            released[0].set()
        return value

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("first", {"value": "x"}, id="c1"),
                    faux_tool_call("second", {"value": "y"}, id="c2"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("ok"),
        ]
    )

    async def main() -> None:
        released.append(anyio.Event())
        agent = Agent(model=faux.get_model(), tools=[text_tool("first", first)], stream_fn=faux)
        instrument(agent, **otel.providers)
        agent.state.tools.append(text_tool("second", second))
        with tracer.start_as_current_span("app request"):
            await agent.prompt("go")

    anyio.run(main, backend=backend)

    app, inside = otel.one("app request"), otel.one("inside second")
    assert inside.parent is not None
    assert inside.parent.span_id == app.context.span_id
