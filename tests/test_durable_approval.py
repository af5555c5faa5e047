"""Durable runs that pause for approval, in one process on DBOS with SQLite: the run
announces the calls it waits for, takes the decisions as a DBOS message, and goes on;
cancellation and abort while it waits; messages that do not fit. Process death while
waiting is in ``test_durable_approval_crash``."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from dbos import DBOS

from pi_trio.agent import Agent, PendingApproval, ResumeError, approve, deny, edit, tool
from pi_trio.agent.extend import is_approval_placeholder
from pi_trio.durable import (
    APPROVAL_TOPIC,
    APPROVED_STEP,
    TOOL_STEP,
    DurableAgent,
    DurableRun,
)
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

_names = itertools.count()
SCENARIO_TIMEOUT_S = 60.0


@pytest.fixture(scope="module", autouse=True)
def dbos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    path = tmp_path_factory.mktemp("dbos") / "dbos.sqlite"
    DBOS(
        config={
            "name": "pi-trio-durable-approval-tests",
            "system_database_url": f"sqlite:///{path}",
            "log_level": "ERROR",
        }
    )
    DBOS.launch()
    yield
    DBOS.destroy()


def on_asyncio(fn: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(fn(), SCENARIO_TIMEOUT_S)

    return asyncio.run(bounded())


async def paused(run: DurableRun) -> tuple[PendingApproval, ...]:
    """The calls the run waits for, once it waits (polled: the run announces them)."""
    while True:
        pending = await run.pending_approvals()
        if pending:
            return pending
        await asyncio.sleep(0.02)


def refunds(ran: list[str]) -> Callable[[], Agent]:
    @tool(needs_approval=lambda args: args["amount"] > 100)
    async def refund(order: int, amount: int) -> str:
        """Refund an order."""
        ran.append(f"refund {order} {amount}")
        return f"refunded {amount}"

    def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
        # from the transcript alone: a resumed workflow replays its recorded requests
        # without asking the model
        if context.messages[-1].role == "toolResult":
            return faux_assistant_message("Done.")
        return faux_assistant_message(
            [
                faux_text("Refunding."),
                faux_tool_call("refund", {"order": 1, "amount": 500}, id="r1"),
                faux_tool_call("refund", {"order": 2, "amount": 50}, id="r2"),
                faux_tool_call("refund", {"order": 3, "amount": 300}, id="r3"),
            ],
            stop_reason="toolUse",
        )

    def build() -> Agent:
        faux = FauxProvider(api=f"faux-approval-{next(_names)}")
        faux.set_responses([answer] * 4)
        return Agent(model=faux.get_model(), tools=[refund], stream_fn=faux)

    return build


def test_a_paused_run_waits_for_the_decisions_and_goes_on_with_them() -> None:
    ran: list[str] = []
    agent = DurableAgent(f"approval-{next(_names)}", refunds(ran))

    async def scenario() -> Any:
        run = await agent.start("Refund 1, 2 and 3.")
        pending = await paused(run)
        assert [(p.tool_call_id, p.arguments) for p in pending] == [
            ("r1", {"order": 1, "amount": 500}),
            ("r3", {"order": 3, "amount": 300}),
        ]
        assert ran == ["refund 2 50"]
        assert await run.status() == "PENDING"
        assert agent.abort(run.workflow_id) is False  # nothing runs while it waits
        with pytest.raises(ResumeError, match=r"'r9' is not waiting for approval"):
            await agent.resume(run.workflow_id, {"r9": approve()})
        with pytest.raises(ResumeError, match=r"no decision for 'r3'"):
            await agent.resume(run.workflow_id, {"r1": approve()})
        await agent.resume(
            run.workflow_id, {"r1": edit({"order": 1, "amount": 400}), "r3": deny("no")}
        )
        result = await run.result(poll_interval=0.05)
        assert await run.pending_approvals() == ()
        with pytest.raises(ResumeError, match=r"is not waiting for approval"):
            await agent.resume(run.workflow_id, {"r1": approve()})
        steps = await DBOS.list_workflow_steps_async(run.workflow_id)
        return result, [s["function_name"] for s in steps]

    result, steps = on_asyncio(scenario)
    assert ran == ["refund 2 50", "refund 1 400"]
    assert result.stop_reason == "stop"
    results = [m for m in result.messages if m.role == "toolResult"]
    assert [m.tool_call_id for m in results] == ["r1", "r2", "r3"]
    assert not any(is_approval_placeholder(m) for m in result.messages)
    assert results[2].content[0].text == "no"
    # each executed call is a step; the waiting ones never were
    assert steps.count(f"{TOOL_STEP}:refund") == 2
    assert "DBOS.recv" in steps
    assert APPROVED_STEP in steps


def test_cancel_while_waiting_ends_the_run_with_the_paused_transcript_and_resume_continues_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []
    agent = DurableAgent(f"approval-{next(_names)}", refunds(ran))

    async def scenario() -> Any:
        run = await agent.start("Refund.")
        await paused(run)
        await agent.cancel(run.workflow_id)
        cancelled = await run.result(poll_interval=0.05)
        # resumed: it replays to the same pause and waits again
        await DBOS.resume_workflow_async(run.workflow_id)
        run = await agent.retrieve(run.workflow_id)
        pending = await paused(run)
        # a message for another pause, or with other ids, is left aside
        await DBOS.send_async(run.workflow_id, '{"pause":7,"approvals":{}}', APPROVAL_TOPIC)
        await DBOS.send_async(run.workflow_id, "not json", APPROVAL_TOPIC)
        deep = "[" * 100_000 + "]" * 100_000  # beyond any decoder's stack
        edited = f'{{"action":"edit","arguments":{{"x":{deep}}}}}'
        await DBOS.send_async(
            run.workflow_id, f'{{"pause":1,"approvals":{{"r1":{edited}}}}}', APPROVAL_TOPIC
        )
        await agent.resume(run.workflow_id, {p.tool_call_id: approve() for p in pending})
        return cancelled, await run.result(poll_interval=0.05)

    with caplog.at_level(logging.WARNING, logger="pi_trio.durable"):
        cancelled, result = on_asyncio(scenario)
    assert cancelled.cancelled
    assert [is_approval_placeholder(m) for m in cancelled.messages if m.role == "toolResult"] == [
        True,
        False,
        True,
    ]
    assert result.stop_reason == "stop"
    assert ran[0] == "refund 2 50"  # before the pause; the two approved ran in parallel
    assert sorted(ran[1:]) == ["refund 1 500", "refund 3 300"]
    warnings = [r.getMessage() for r in caplog.records]
    assert any("it answers pause 7, and the run waits at pause 1" in w for w in warnings)
    malformed = [w for w in warnings if "ignored a malformed decision" in w]
    assert len(malformed) == 2, warnings
    assert "recursion" in malformed[1], malformed


def test_a_cancellation_made_elsewhere_is_seen_at_the_next_recheck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pi_trio.durable import _approvals

    monkeypatch.setattr(_approvals, "APPROVAL_RECHECK_S", 0.3)
    ran: list[str] = []
    agent = DurableAgent(f"approval-{next(_names)}", refunds(ran))

    async def scenario() -> Any:
        run = await agent.start("Refund.")
        await paused(run)
        # what another process's cancel_workflow does: no wake-up in this one
        await DBOS.cancel_workflow_async(run.workflow_id)
        while True:  # the wait ends at its next recheck
            if run.workflow_id not in agent._waiting:
                return await run.result(poll_interval=0.05)
            await asyncio.sleep(0.05)

    result = on_asyncio(scenario)
    assert result.cancelled
    assert ran == ["refund 2 50"]
