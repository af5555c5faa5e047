"""Run limits: Agent(policy=RunPolicy(limits=RunLimits(...))) counts each response's usage and cost (as the
provider's message reports it) and each tool call, checks before each request and before
a response's tool calls, and ends the run like an abort, every tool call answered, with an
answer that names the limit and a RunLimitExceeded from raise_for_error()."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import trio.testing

from pi_trio.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    FallbackPolicy,
    RunAbortedError,
    RunLimitExceeded,
    RunLimits,
)
from pi_trio.agent.extend import RunCounters, run_limit_details
from pi_trio.ai import AssistantMessage, RetryPolicy, TextContent, Usage, get_model
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import (
    FauxProvider,
    SSEReply,
    faux_assistant_message,
    faux_tool_call,
    serve_sse,
)

FIXTURES = Path(__file__).parent / "fixtures"


def run_on(backend: str, main: Callable[[], Awaitable[Any]]) -> Any:
    """``main()`` on ``backend``; trio on the autojump clock."""
    if backend == "trio":
        clock = trio.testing.MockClock(autojump_threshold=0)
        return anyio.run(main, backend="trio", backend_options={"clock": clock})
    return anyio.run(main, backend="asyncio")


def calls(*values: str) -> AssistantMessage:
    """A response calling ``echo`` once per value (call ids ``c-<value>``)."""
    content = [faux_tool_call("echo", {"value": v}, id=f"c-{v}") for v in values]
    return faux_assistant_message(content, stop_reason="toolUse")


def answer(text: str = "done") -> AssistantMessage:
    return faux_assistant_message(text)


class Limited:
    """A faux provider answering ``answers`` in order, the requests it got, the ``echo``
    calls run, every event, and an Agent held to ``limits``."""

    def __init__(self, *answers: Any, limits: RunLimits, **options: Any) -> None:
        self.faux = FauxProvider()
        self.faux.set_responses(list(answers))
        self.requests = 0
        self.executed: list[str] = []
        self.events: list[Any] = []
        faux = self.faux

        async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
            self.requests += 1
            await faux(model, context, options, send)

        async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
            self.executed.append(params["value"])
            return f"echoed {params['value']}"

        echo = AgentTool(
            name="echo", description="Echo.", parameters={"type": "object"}, execute=execute
        )
        self.agent = Agent(
            model=faux.get_model(), stream_fn=stream_fn, tools=[echo], limits=limits, **options
        )
        self.agent.subscribe(self.events.append)

    def roles(self) -> list[str]:
        return [m.role for m in self.agent.state.messages if m.role != "system"]

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def answers(self) -> list[AssistantMessage]:
        return [m for m in self.agent.state.messages if isinstance(m, AssistantMessage)]


def limit_of(result: Any) -> RunLimitExceeded:
    with pytest.raises(RunLimitExceeded) as caught:
        result.raise_for_error()
    return caught.value


def assert_closed_like_an_abort(limited: Limited) -> None:
    """Every turn and tool execution that started ended, the run ended last, the agent
    is idle, and every tool call has its result."""
    types = limited.types()
    assert types.count("turn_start") == types.count("turn_end")
    assert types.count("tool_execution_start") == types.count("tool_execution_end")
    assert types[-1] == "agent_end"
    assert not limited.agent.state.is_streaming
    asked = {b.id for m in limited.answers() for b in m.content if b.type == "toolCall"}
    answered = {m.tool_call_id for m in limited.agent.state.messages if m.role == "toolResult"}
    assert asked == answered


# --------------------------------------------------------------------------- max_requests


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_max_requests_ends_the_run_where_the_next_request_would_start(backend: str) -> None:
    async def main() -> tuple[Limited, Any]:
        limited = Limited(
            calls("a"), calls("b"), calls("c"), answer(), limits=RunLimits(max_requests=2)
        )
        return limited, await limited.agent.prompt("go")

    limited, result = run_on(backend, main)
    assert limited.requests == 2
    assert limited.executed == ["a", "b"]  # both responses' calls ran: the limit is on requests
    assert result.stop_reason == "aborted"
    assert not result.ok
    text = "Run limit exceeded: RunLimits(max_requests=2); 2 requests made"
    assert result.error_message == text
    # the closing turn's answer: empty, aborted, the limit in its diagnostic
    assert limited.roles() == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]
    final = result.final
    assert final.content == []
    assert final.stop_reason == "aborted"
    assert run_limit_details(final) == {"limit": "max_requests", "maximum": 2, "spent": 2}
    exc = limit_of(result)
    assert isinstance(exc, RunAbortedError)  # an abort of a kind
    assert (str(exc), exc.limit, exc.maximum, exc.spent, exc.result) == (
        text,
        "max_requests",
        2,
        2,
        result,
    )
    assert limited.types().count("turn_start") == 3
    assert_closed_like_an_abort(limited)
    assert limited.agent.state.error_message == text


async def test_a_run_within_its_limits_ends_as_it_would_without_them() -> None:
    limits = RunLimits(max_requests=3, max_tool_calls=2, max_total_tokens=10_000, max_cost=1.0)
    limited = Limited(calls("a"), calls("b"), answer(), limits=limits)
    result = await limited.agent.prompt("go")
    assert result.ok
    assert result.text == "done"
    assert limited.requests == 3
    assert limited.executed == [
        "a",
        "b",
    ]
    assert run_limit_details(result.final) is None


async def test_the_next_run_counts_from_zero() -> None:
    limited = Limited(calls("a"), calls("b"), answer("again"), limits=RunLimits(max_requests=1))
    first = await limited.agent.prompt("go")
    assert first.stop_reason == "aborted"
    second = await limited.agent.prompt("go on")  # the limit's empty answer replays fine
    assert limited.requests == 2
    assert second.stop_reason == "aborted"
    assert limited.executed == ["a", "b"]


# --------------------------------------------------------------------------- tokens


def _input(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


@pytest.mark.parametrize(
    ("limit", "spent"),
    [
        ("max_input_tokens", _input),
        ("max_output_tokens", lambda usage: usage.output),
        ("max_total_tokens", lambda usage: usage.total_tokens),
    ],
)
@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_response_past_a_token_limit_has_its_tool_calls_refused(
    backend: str, limit: str, spent: Callable[[Usage], int]
) -> None:
    async def main() -> tuple[Limited, Any]:
        limited = Limited(calls("a", "b"), answer(), limits=RunLimits(**{limit: 5}))
        return limited, await limited.agent.prompt("Please echo a and b for me")

    limited, result = run_on(backend, main)
    assert limited.requests == 1
    assert limited.executed == []  # neither call ran
    first = limited.answers()[0]
    used = spent(first.usage)
    assert used > 5
    text = f"Run limit exceeded: RunLimits({limit}=5); {used} "
    assert result.error_message.startswith(text)
    results = [m for m in limited.agent.state.messages if m.role == "toolResult"]
    assert [(r.tool_call_id, r.is_error, r.content[0].text) for r in results] == [
        ("c-a", True, result.error_message),
        ("c-b", True, result.error_message),
    ]
    ends = [e for e in limited.events if e.type == "tool_execution_end"]
    assert [e.is_error for e in ends] == [True, True]
    exc = limit_of(result)
    assert (exc.limit, exc.maximum, exc.spent) == (limit, 5, used)
    assert_closed_like_an_abort(limited)


async def test_a_final_answer_past_a_limit_is_kept_and_the_next_run_is_refused() -> None:
    """The answer has been paid for: a response without tool calls ends the run as it
    would. Counted per agent, the next run is refused before its first request."""
    limited = Limited(
        answer("a long and expensive answer"),
        answer("never"),
        limits=RunLimits(max_output_tokens=3, per="agent"),
    )
    result = await limited.agent.prompt("go")
    assert result.ok
    assert result.text == "a long and expensive answer"
    spent = limited.agent.limit_counters.output_tokens
    assert spent == result.final.usage.output > 3
    refused = await limited.agent.prompt("more")
    assert limited.requests == 1
    assert refused.error_message == (
        f"Run limit exceeded: RunLimits(max_output_tokens=3); {spent} output tokens spent"
    )
    # the refused run's prompt is in the transcript, answered by the limit
    assert [m.role for m in refused.messages] == ["user", "assistant"]
    assert refused.messages[1].content == []
    # no request: the user's message, then the limit's answer, in one turn
    assert limited.types()[-8:] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


def test_tokens_count_as_each_response_reports_them() -> None:
    counters = RunCounters()
    usage = Usage(input=10, output=7, cache_read=100, cache_write=20, total_tokens=137)
    usage.cost.total = 0.25
    message = faux_assistant_message("x")
    message.usage = usage
    counters.count_response(message)
    counters.count_response(message)
    assert counters == RunCounters(
        requests=2, input_tokens=260, output_tokens=14, total_tokens=274, cost=0.5
    )


async def test_what_a_tool_reports_it_spent_counts_too() -> None:
    """A tool that runs a model of its own (a sub-agent) reports its usage on its result:
    the run's token and cost limits count it."""
    spent = Usage(input=400, output=600, total_tokens=1000)
    spent.cost.total = 0.75

    async def delegate(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="sub-agent done")], usage=spent)

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("delegate", {}, id="d1")], stop_reason="toolUse"
            ),
            answer("never"),
        ]
    )
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        tools=[
            AgentTool(
                name="delegate", description="D.", parameters={"type": "object"}, execute=delegate
            )
        ],
        limits=RunLimits(max_cost=0.5, per="agent"),
    )
    result = await agent.prompt("go")
    assert faux.state.call_count == 1  # the faux model costs nothing: the tool's spend stops it
    assert limit_of(result).spent == 0.75
    first = next(m for m in agent.state.messages if m.role == "assistant")
    assert agent.limit_counters.output_tokens == first.usage.output + 600
    assert agent.limit_counters.tool_calls == 1


# --------------------------------------------------------------------------- tool calls


async def test_max_tool_calls_refuses_a_response_whose_calls_would_pass_it() -> None:
    limited = Limited(calls("a"), calls("b", "c"), answer(), limits=RunLimits(max_tool_calls=2))
    result = await limited.agent.prompt("go")
    # all of the second response's calls are refused, not the first of them run
    assert limited.executed == ["a"]
    assert limited.requests == 2
    assert result.error_message == (
        "Run limit exceeded: RunLimits(max_tool_calls=2); 1 tool calls run, 2 more asked for"
    )
    exc = limit_of(result)
    assert (exc.limit, exc.maximum, exc.spent) == ("max_tool_calls", 2, 1)
    assert run_limit_details(result.final)["asked"] == 2
    assert_closed_like_an_abort(limited)


# --------------------------------------------------------------------------- per agent


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_per_agent_limits_count_across_runs_until_the_counters_are_replaced(
    backend: str,
) -> None:
    async def main() -> tuple[Limited, list[Any]]:
        limited = Limited(
            calls("a"),
            answer("one"),
            calls("b"),
            answer("never"),
            limits=RunLimits(max_requests=3, per="agent"),
        )
        agent = limited.agent
        results = [await agent.prompt("first"), await agent.prompt("second")]
        results.append(await agent.prompt("third"))
        assert limited.requests == 3  # the third run made none
        agent.limit_counters = RunCounters()
        results.append(await agent.prompt("fourth"))
        return limited, results

    limited, (first, second, third, fourth) = run_on(backend, main)
    assert first.ok
    assert first.text == "one"
    assert (second.stop_reason, limit_of(second).spent) == ("aborted", 3)
    assert limited.executed == ["a", "b"]
    assert limit_of(third).limit == "max_requests"
    assert [m.role for m in third.messages] == ["user", "assistant"]
    assert fourth.ok
    assert fourth.text == "never"
    assert limited.agent.limit_counters.requests == 1


# --------------------------------------------------------------------------- composition


async def test_retries_and_fallbacks_count_as_requests_and_stop_at_the_limit(
    autojump_clock: Any,
) -> None:
    failed = [
        faux_assistant_message("", stop_reason="error", error_message=f"503 attempt {i}")
        for i in range(4)
    ]
    limited = Limited(
        *failed,
        limits=RunLimits(max_requests=2),
        retry=RetryPolicy(max_retries=5, base_delay_ms=100),
    )
    result = await limited.agent.prompt("go")
    # one retry, then the limit forbids another: the failure is the answer as it is
    assert limited.requests == 2
    assert (result.stop_reason, result.error_message) == ("error", "503 attempt 1")
    assert limited.roles() == ["user", "assistant"]
    assert limited.types().count("auto_retry_start") == 1

    faux = FauxProvider(models=[{"id": "primary"}, {"id": "backup"}])
    faux.set_responses([failed[0], answer("backup")])
    agent = Agent(
        model=faux.get_model("primary"),
        stream_fn=faux,
        fallback=FallbackPolicy(models=[faux.get_model("backup")]),  # type: ignore[list-item]
        limits=RunLimits(max_requests=1),
    )
    result = await agent.prompt("go")
    assert result.error_message == "503 attempt 0"  # no request left for the backup
    assert [m.model for m in agent.state.messages if m.role == "assistant"] == ["primary"]


async def test_an_abort_under_limits_is_an_abort_not_a_limit() -> None:
    limited = Limited(calls("a"), answer(), limits=RunLimits(max_requests=5))
    limited.agent.subscribe(
        lambda e: limited.agent.abort() if e.type == "tool_execution_start" else None
    )
    result = await limited.agent.prompt("go")
    assert result.stop_reason == "aborted"
    with pytest.raises(RunAbortedError) as caught:
        result.raise_for_error()
    assert type(caught.value) is RunAbortedError
    assert limited.requests == 1


async def test_messages_taken_for_the_refused_request_join_the_last_turn() -> None:
    limited = Limited(calls("a"), answer(), limits=RunLimits(max_requests=1))
    limited.agent.subscribe(
        lambda e: limited.agent.steer("and also this") if e.type == "tool_execution_start" else None
    )
    result = await limited.agent.prompt("go")
    assert limit_of(result).limit == "max_requests"
    assert limited.roles() == ["user", "assistant", "toolResult", "user", "assistant"]
    steered = limited.agent.state.messages[-2]
    assert steered.content[0].text == "and also this"
    assert not limited.agent.has_queued_messages()
    assert_closed_like_an_abort(limited)


# --------------------------------------------------------------------------- cost, over HTTP


@pytest.mark.parametrize(("max_cost", "limited"), [(0.001, True), (1.0, False)])
@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_max_cost_counts_the_cost_pi_computes_from_the_models_prices(
    backend: str, max_cost: float, limited: bool
) -> None:
    """Anthropic's streamed usage (cache reads and writes included) priced by the
    catalog's model: the first response costs about $0.004."""
    ran: list[str] = []

    async def main() -> tuple[Any, Agent, Any]:
        fixtures = FIXTURES / "anthropic"
        async with serve_sse(
            [
                SSEReply((fixtures / "thinking_tools.sse").read_bytes()),
                SSEReply((fixtures / "text.sse").read_bytes()),
            ]
        ) as server:
            claude = get_model("anthropic", "claude-haiku-4-5")
            assert claude is not None
            claude = msgspec.structs.replace(claude, base_url=server.url)

            async def weather(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
                ran.append(params["city"])
                return "21 C"

            tool = AgentTool(
                name="get_weather", description="W.", parameters={"type": "object"}, execute=weather
            )
            registry = ProviderRegistry()  # its own connections, closed before the server
            agent = Agent(
                model=claude,
                tools=[tool],
                registry=registry,
                get_api_key=lambda provider: "sk-ant-limits-test",
                limits=RunLimits(max_cost=max_cost, per="agent"),
            )
            try:
                result = await agent.prompt("Weather in Paris and Tokyo?")
            finally:
                await registry.aclose()
        return server, agent, result

    server, agent, result = run_on(backend, main)
    answers = [m for m in agent.state.messages if isinstance(m, AssistantMessage)]
    first_cost = answers[0].usage.cost.total
    assert 0.001 < first_cost < 0.01
    if limited:
        assert len(server.requests) == 1
        assert ran == []
        exc = limit_of(result)
        assert (exc.limit, exc.maximum, exc.spent) == ("max_cost", 0.001, first_cost)
        assert result.error_message == (
            f"Run limit exceeded: RunLimits(max_cost=0.001); ${first_cost:.4f} spent"
        )
    else:
        assert result.ok
        assert len(server.requests) == 2
        assert len(ran) == 2
        total = sum(m.usage.cost.total for m in answers)
        assert agent.limit_counters.cost == pytest.approx(total)
        assert agent.limit_counters.input_tokens == sum(_input(m.usage) for m in answers)


# --------------------------------------------------------------------------- arguments


def test_run_limits_check_their_arguments() -> None:
    with pytest.raises(ValueError, match=r"max_requests=\.\.\.\) must be a whole number .* got 0"):
        RunLimits(max_requests=0)
    with pytest.raises(ValueError, match=r"max_tool_calls=\.\.\.\) must be a whole number .*2\.5"):
        RunLimits(max_tool_calls=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"max_cost=\.\.\.\) must be dollars, more than 0"):
        RunLimits(max_cost=-1)
    with pytest.raises(ValueError, match=r"per=\.\.\.\) must be 'run' or 'agent'; got 'day'"):
        RunLimits(max_requests=1, per="day")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"RunPolicy\(limits=\.\.\.\) takes RunLimits"):
        Agent(model="openai/gpt-4o-mini", limits={"max_requests": 1})  # type: ignore[arg-type]
    assert not RunLimits()
    assert RunLimits(max_cost=0.5)


# --------------------------------------------------------------------------- telemetry


def test_a_limit_hit_is_an_event_and_an_attribute_of_the_runs_span(otel: Any) -> None:
    from pi_trio.otel import instrument

    async def main() -> None:
        limited = Limited(calls("a"), answer(), limits=RunLimits(max_requests=1))
        instrument(limited.agent, **otel.providers)
        await limited.agent.prompt("go")

    anyio.run(main, backend="trio")
    run = otel.one("invoke_agent")
    (event,) = [e for e in run.events if e.name == "pi.run_limit_exceeded"]
    assert dict(event.attributes) == {
        "pi.run_limit": "max_requests",
        "pi.run_limit.maximum": 1,
        "pi.run_limit.spent": 1,
    }
    assert run.attributes["pi.run_limit"] == "max_requests"
    # the closing turn made no request: no chat span of its own
    assert otel.tree() == [
        (
            "invoke_agent",
            [("turn 1", [("chat faux-1", []), ("execute_tool echo c-a", [])]), ("turn 2", [])],
        )
    ]
    assert run.attributes["gen_ai.response.finish_reasons"] == ("aborted",)
    assert run.attributes["error.type"] == "aborted"
    assert [p.attributes["gen_ai.operation.name"] for _, p in otel.durations()].count("chat") == 1
