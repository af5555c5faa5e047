"""Retrying failed responses: the policy and backoff of pi 1.6 (retry_assistant_call,
retry_delay_ms, which errors are retryable), and Agent(retry=...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pi_trio.agent import Agent, AutoRetryEndEvent, AutoRetryStartEvent
from pi_trio.ai import AbortController, RetryPolicy
from pi_trio.ai.failures import is_retryable_assistant_error, retry_assistant_call, retry_delay_ms
from pi_trio.testing import FauxProvider, faux_assistant_message

RECORDED = json.loads((Path(__file__).parent / "fixtures" / "pi16" / "retry.json").read_text())


def failed(text: str) -> Any:
    return faux_assistant_message("", stop_reason="error", error_message=text)


def test_delays_double_from_the_base_and_are_capped_as_recorded_from_pi_16() -> None:
    for case in RECORDED["delays"]:
        policy = RetryPolicy(base_delay_ms=2_000)
        assert retry_delay_ms(policy, case["attempt"]) == case["default"]
        capped = RetryPolicy(base_delay_ms=2_000, max_agent_delay_ms=10_000)
        assert retry_delay_ms(capped, case["attempt"]) == case["capped"]


def test_which_errors_are_retryable_is_as_recorded_from_pi_16() -> None:
    for case in RECORDED["errors"]:
        message = failed(case["errorMessage"])
        assert is_retryable_assistant_error(message) is case["retryable"], case


async def test_retry_assistant_call_reports_each_retry_as_pi_16_does(autojump_clock: Any) -> None:
    responses = [
        failed("529 overloaded_error: Overloaded"),
        failed("Connection closed."),
        faux_assistant_message("Recovered."),
    ]
    log: list[dict[str, Any]] = []

    async def produce() -> Any:
        return responses.pop(0)

    message = await retry_assistant_call(
        produce,
        RetryPolicy(max_retries=3, base_delay_ms=1),
        on_retry_scheduled=lambda attempt, max_attempts, delay, error: log.append(
            {
                "event": "scheduled",
                "attempt": attempt,
                "maxAttempts": max_attempts,
                "delayMs": delay,
                "errorMessage": error,
            }
        ),
        on_retry_attempt_start=lambda: log.append({"event": "attempt_start"}),
        on_retry_finished=lambda success, attempt, final=None: log.append(
            {"event": "finished", "success": success, "attempt": attempt}
            | ({"finalError": final} if final else {})
        ),
    )
    assert log == RECORDED["log"]
    assert message.content[0].text == "Recovered."


async def test_an_abort_during_the_backoff_returns_the_response_aborted(
    autojump_clock: Any,
) -> None:
    controller = AbortController()
    finished: list[Any] = []

    async def produce() -> Any:
        return failed("503 unavailable")

    def scheduled(*_: Any) -> None:
        controller.abort()

    message = await retry_assistant_call(
        produce,
        RetryPolicy(max_retries=3, base_delay_ms=1000),
        controller.signal,
        on_retry_scheduled=scheduled,
        on_retry_finished=lambda *args: finished.append(args),
    )
    assert message.stop_reason == "aborted"
    assert message.error_message is None
    assert finished == [(False, 1, "503 unavailable")]


def test_a_delay_beyond_a_safe_integer_is_capped_there_as_pi_16_does() -> None:
    policy = RetryPolicy(base_delay_ms=2_000, max_agent_delay_ms=2**60)
    assert retry_delay_ms(policy, 100) == 2**53 - 1


@pytest.mark.parametrize("field", ["max_retries", "base_delay_ms"])
def test_a_negative_policy_value_is_refused_naming_it(field: str) -> None:
    with pytest.raises(ValueError, match=rf"^RetryPolicy\({field}=-1\) must be >= 0$"):
        RetryPolicy(**{field: -1})
    assert getattr(RetryPolicy(**{field: 0}), field) == 0


async def run_retries(policy: RetryPolicy, *responses: Any) -> tuple[Any, int, list[Any]]:
    """``retry_assistant_call`` over ``responses``: the message, the calls made and the
    ``on_retry_finished`` reports."""
    queue = list(responses)
    finished: list[Any] = []

    async def produce() -> Any:
        return queue.pop(0)

    message = await retry_assistant_call(
        produce, policy, on_retry_finished=lambda *args: finished.append(args)
    )
    return message, len(responses) - len(queue), finished


async def test_retry_assistant_call_makes_max_retries_more_calls_then_gives_up(
    autojump_clock: Any,
) -> None:
    message, calls, finished = await run_retries(
        RetryPolicy(max_retries=2, base_delay_ms=1),
        *[failed(f"503 try {n}") for n in range(4)],
    )
    assert (message.error_message, calls) == ("503 try 2", 3)
    assert finished == [(False, 2, "503 try 2")]


async def test_retry_assistant_call_without_an_enabled_policy_calls_once(
    autojump_clock: Any,
) -> None:
    for policy in (None, RetryPolicy(enabled=False, max_retries=3)):
        message, calls, finished = await run_retries(policy, failed("503 a"), failed("503 b"))
        assert (message.error_message, calls, finished) == ("503 a", 1, [])


async def test_retry_assistant_call_reports_an_aborted_retry_as_unsuccessful(
    autojump_clock: Any,
) -> None:
    aborted = faux_assistant_message("", stop_reason="aborted")
    message, calls, finished = await run_retries(
        RetryPolicy(max_retries=3, base_delay_ms=1), failed("503 a"), aborted
    )
    assert (message, calls, finished) == (aborted, 2, [(False, 1)])


def agent_with(*responses: Any, policy: RetryPolicy | None = None) -> tuple[Agent, list[Any]]:
    provider = FauxProvider()
    provider.set_responses(list(responses))
    agent = Agent(model=provider.get_model(), stream_fn=provider, retry=policy)
    events: list[Any] = []
    agent.subscribe(events.append)
    return agent, events


async def test_an_agent_retries_a_transient_failure_and_the_failure_leaves_the_transcript(
    autojump_clock: Any,
) -> None:
    agent, events = agent_with(
        failed("429 Too Many Requests"),
        faux_assistant_message("fine"),
        policy=RetryPolicy(max_retries=2, base_delay_ms=500),
    )
    result = await agent.prompt("hi")
    assert result.ok
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert [m.role for m in result.messages] == ["user", "assistant"]
    kinds = [e.type for e in events if e.type != "message_update"]
    assert kinds == [
        "agent_start",
        "turn_start",
        "message_start",  # the prompt
        "message_end",
        "message_start",  # the failed response, seen whole, then withdrawn
        "message_end",
        "auto_retry_start",
        "message_start",  # the retried response
        "message_end",
        "auto_retry_end",
        "turn_end",
        "agent_end",
    ]
    start = next(e for e in events if isinstance(e, AutoRetryStartEvent))
    assert (start.attempt, start.max_attempts, start.delay_ms) == (1, 2, 500)
    assert start.error_message == "429 Too Many Requests"
    end = next(e for e in events if isinstance(e, AutoRetryEndEvent))
    assert (end.success, end.attempt, end.final_error) == (True, 1, None)


async def test_an_agent_without_a_policy_or_with_a_lasting_error_does_not_retry(
    autojump_clock: Any,
) -> None:
    for policy in (None, RetryPolicy(enabled=False, max_retries=2, base_delay_ms=10)):
        agent, events = agent_with(
            failed("429 Too Many Requests"), faux_assistant_message("never"), policy=policy
        )
        assert (await agent.prompt("hi")).error_message == "429 Too Many Requests"
        assert not any(e.type.startswith("auto_retry") for e in events)
    agent, events = agent_with(
        failed("400 invalid_request_error: prompt is too long"),
        policy=RetryPolicy(max_retries=2, base_delay_ms=10),
    )
    assert not (await agent.prompt("hi")).ok
    assert not any(e.type.startswith("auto_retry") for e in events)


async def test_when_retries_run_out_the_last_failure_stays(autojump_clock: Any) -> None:
    agent, events = agent_with(
        failed("503 one"),
        failed("503 two"),
        failed("503 three"),
        policy=RetryPolicy(max_retries=2, base_delay_ms=10),
    )
    result = await agent.prompt("hi")
    assert result.error_message == "503 three"
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    ends = [e for e in events if isinstance(e, AutoRetryEndEvent)]
    assert [(e.success, e.attempt, e.final_error) for e in ends] == [(False, 2, "503 three")]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
async def test_an_abort_during_the_backoff_ends_the_run_at_once(backend: str) -> None:
    import anyio

    async def main() -> tuple[Agent, list[Any], float]:
        agent, events = agent_with(
            failed("503 unavailable"),
            faux_assistant_message("never"),
            policy=RetryPolicy(max_retries=3, base_delay_ms=60_000),
        )
        agent.subscribe(lambda e: agent.abort() if e.type == "auto_retry_start" else None)
        start = anyio.current_time()
        await agent.prompt("hi")
        return agent, events, anyio.current_time() - start

    agent, events, elapsed = await anyio.to_thread.run_sync(
        lambda: anyio.run(main, backend=backend)
    )
    assert elapsed < 5
    assert agent.state.messages[-1].stop_reason == "aborted"
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    ends = [e for e in events if isinstance(e, AutoRetryEndEvent)]
    assert [(e.success, e.final_error) for e in ends] == [(False, "503 unavailable")]
    assert [e.type for e in events][-2:] == ["turn_end", "agent_end"]


async def test_an_abort_in_the_middle_of_the_backoff_ends_the_run_at_once(
    autojump_clock: Any,
) -> None:
    import anyio

    agent, events = agent_with(
        failed("503 unavailable"),
        faux_assistant_message("never"),
        policy=RetryPolicy(max_retries=3, base_delay_ms=60_000),
    )
    seen: list[str] = []
    agent.subscribe(lambda e: seen.append(e.type))

    async def abort_during_the_wait() -> None:
        await anyio.sleep(10)  # well inside the 60 s backoff
        assert seen[-1] == "auto_retry_start"
        agent.abort()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(abort_during_the_wait)
        start = anyio.current_time()
        result = await agent.prompt("hi")
        elapsed = anyio.current_time() - start
    assert 10 <= elapsed < 11
    assert result.final is not None
    assert result.final.stop_reason == "aborted"
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    ends = [e for e in events if isinstance(e, AutoRetryEndEvent)]
    assert [(e.success, e.attempt, e.final_error) for e in ends] == [(False, 1, "503 unavailable")]
    assert [e.type for e in events][-5:] == [
        "message_start",
        "message_end",
        "auto_retry_end",
        "turn_end",
        "agent_end",
    ]
