"""A durable agent whose run pauses for approval, in a process of its own, for the tests
that kill the process while the run waits.

    python -m tests.durable_approval_child DIR start WORKFLOW_ID
    python -m tests.durable_approval_child DIR resume WORKFLOW_ID

``start`` starts the run and prints ``PAUSED <pending calls as JSON>`` once it waits for
approval, then waits to be killed. ``resume`` launches DBOS (which recovers the run: it
replays to the pause and waits again), prints ``WAITING`` once the run waits, and prints
the result as one JSON line when the run ends. Every model request appends
``<pid> request`` to ``DIR/calls``, every tool execution ``<pid> <tool> <args>`` to
``DIR/runs``, every new event its listener gets ``<pid> <event>`` to ``DIR/events``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from dbos import DBOS

from pi_trio.agent import Agent, tool
from pi_trio.ai import messages_to_json
from pi_trio.durable import DurableAgent, DurableRun
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

WORKDIR = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".")
PROMPT = "Pay the invoice and tell me the balance."


def _append(name: str, line: str) -> None:
    with (WORKDIR / name).open("a", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {line}\n")


@tool(needs_approval=True)
async def pay(invoice: str, amount: int) -> str:
    """Pay an invoice."""
    _append("runs", f"pay {invoice} {amount}")
    return f"paid {amount} for {invoice}"


@tool
async def balance() -> str:
    """Read the balance."""
    _append("runs", "balance")
    return "balance: 1000"


def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
    """The scripted model: what it answers depends only on the transcript."""
    _append("calls", "request")
    if context.messages[-1].role == "user":
        return faux_assistant_message(
            [
                faux_text("Paying and checking."),
                faux_tool_call("pay", {"invoice": "INV-7", "amount": 250}, id="pay-1"),
                faux_tool_call("balance", {}, id="bal-1"),
            ],
            stop_reason="toolUse",
        )
    results = [m.content[-1].text for m in context.messages if m.role == "toolResult"]
    return faux_assistant_message("; ".join(results))


def build_agent() -> Agent:
    faux = FauxProvider(api="faux-durable-approval")
    faux.set_responses([answer] * 4)
    return Agent(model=faux.get_model(), tools=[pay, balance], stream_fn=faux)


AGENT = DurableAgent("approval-crash-test", build_agent)


def _events(event: Any, info: Any) -> None:
    """The default listener: new events only (a recovered run's replayed ones are not)."""
    what = event.type
    if what.startswith("tool_execution"):
        what += f" {event.tool_call_id}"
    elif what in ("message_start", "message_end"):
        what += f" {event.message.role}"
    if what != "message_update":
        _append("events", what)


AGENT.subscribe(_events)


async def _pending(run: DurableRun) -> list[Any]:
    while True:
        pending = await run.pending_approvals()
        if pending:
            return [{"toolCallId": p.tool_call_id, "arguments": p.arguments} for p in pending]
        await asyncio.sleep(0.02)


async def main(command: str, workflow_id: str) -> None:
    DBOS(
        config={
            "name": "pi-trio-durable-approval-test",
            "system_database_url": f"sqlite:///{WORKDIR / 'dbos.sqlite'}",
            "log_level": "ERROR",
        }
    )
    DBOS.launch()
    try:
        if command == "start":
            run = await AGENT.start(PROMPT, workflow_id=workflow_id)
            print("PAUSED", json.dumps(await _pending(run)), flush=True)
            await asyncio.Event().wait()  # the person decides; this process dies meanwhile
        run = await AGENT.retrieve(workflow_id)
        await _pending(run)
        print("WAITING", flush=True)
        result = await run.result(poll_interval=0.05)
        print(
            json.dumps(
                {
                    "messages": json.loads(messages_to_json(result.messages)),
                    "stopReason": result.stop_reason,
                }
            ),
            flush=True,
        )
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[2], sys.argv[3]))
