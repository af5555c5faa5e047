"""A run's scheduler calls (``agent/_backend.py``): trio's own functions in a trio task,
anyio's elsewhere, and the same behaviour from both, on both backends."""

from __future__ import annotations

import math
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import trio

from pi_trio.agent import Agent
from pi_trio.agent._backend import ANYIO_CALLS, TRIO_CALLS, SchedulerCalls, scheduler_calls

from .helpers import MOCK_MODEL, Scripted, asst


def test_trio_task_gets_trios_own_calls_and_asyncio_gets_anyios() -> None:
    async def which() -> SchedulerCalls:
        return scheduler_calls()

    assert trio.run(which) is TRIO_CALLS
    assert anyio.run(which, backend="asyncio") is ANYIO_CALLS
    assert scheduler_calls() is ANYIO_CALLS  # no event loop: the portable calls


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_the_calls_read_the_deadline_and_the_cancellation(backend: str) -> None:
    seen: list[Any] = []

    async def main() -> None:
        calls = scheduler_calls()
        assert calls.current_effective_deadline() == math.inf
        assert not calls.deadline_passed()
        await calls.checkpoint_if_cancelled()  # not cancelled: returns
        now = calls.current_time()
        assert abs(now - anyio.current_time()) < 1.0
        with anyio.CancelScope(deadline=now + 1000) as scope:
            assert calls.current_effective_deadline() == pytest.approx(now + 1000)
            assert not calls.deadline_passed()
            scope.deadline = calls.current_time() - 1  # passed, no scheduler pass yet
            assert calls.deadline_passed()
            seen.append("before")
            await anyio.lowlevel.checkpoint()  # what the run does when it has passed
            seen.append("not reached")
        assert scope.cancelled_caught
        with anyio.CancelScope() as scope:
            scope.cancel()
            assert calls.deadline_passed()  # cancelled: the deadline is -inf
            await calls.checkpoint_if_cancelled()
            seen.append("not reached")
        assert scope.cancelled_caught

    anyio.run(main, backend=backend)
    assert seen == ["before"]


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_deadline_set_by_a_listener_stops_the_run_before_the_next_request(
    backend: str,
) -> None:
    """The run's own use: a deadline that a synchronous listener moved into the past is
    seen before the request, with no scheduler pass in between."""
    requests: list[int] = []

    async def main() -> None:
        scripted = Scripted(asst("one"))
        agent = Agent(model=MOCK_MODEL, stream_fn=scripted)
        with anyio.CancelScope() as scope:

            def listener(event: Any) -> None:
                if event.type == "message_end" and event.message.role == "user":
                    requests.append(scripted.count)
                    scope.deadline = anyio.current_time() - 1

            agent.subscribe(listener)
            await agent.prompt("hi")
        assert scope.cancelled_caught
        assert scripted.count == 0
        assert requests == [0]
        assert agent.state.messages[-1].stop_reason == "aborted"

    anyio.run(main, backend=backend)


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_the_cancel_scope_shields_a_listener_as_anyios_does(backend: str) -> None:
    """Event delivery's shielded scope (trio's own under trio): a listener inside it runs
    past its caller's deadline, which takes effect at the next checkpoint after it."""

    async def main() -> None:
        calls = scheduler_calls()
        finished = []
        with anyio.move_on_after(0.01) as outer:
            with calls.cancel_scope(shield=True, deadline=math.inf):
                await anyio.sleep(0.05)  # past the caller's deadline: shielded
                finished.append(True)
            await calls.checkpoint_if_cancelled()
            finished.append(False)  # unreachable: the caller's deadline passed
        assert outer.cancelled_caught
        assert finished == [True]

    anyio.run(main, backend=backend)
    expected = trio.CancelScope if backend == "trio" else anyio.CancelScope
    assert (TRIO_CALLS if backend == "trio" else ANYIO_CALLS).cancel_scope is expected
