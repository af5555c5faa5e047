"""A durable agent in a process of its own, for the crash-and-resume tests.

    python -m tests.durable_child DIR start|resume WORKFLOW_ID [--replay never|safe]

The run: request 1 calls ``note(1)``, request 2 ``note(2)``, request 3 ``charge(3)``
(the third tool call), request 4 answers; a follow-up message gets one more answer. The
parent steers twice (while ``note(1)`` runs and while ``charge`` runs) and queues the
follow-up while ``charge`` runs. Every
model request appends a line to ``DIR/calls``, every tool execution to ``DIR/runs``; two
listeners write the events they get to ``DIR/events-new`` (the default: new events only)
and ``DIR/events-all`` (``replayed=True``). With ``start``, ``note(1)`` and ``charge``
print ``NOTE 1 STARTED`` / ``CHARGE STARTED`` on stdout and wait for a line on stdin, so
the parent can send messages at those points and then let the tool go on or kill the
process. ``resume`` launches DBOS (which resumes the run) and waits for the result. Both
print the result as one JSON line. The system database is SQLite in ``DIR`` unless
``PI_TRIO_DURABLE_URL`` names one (the tests' own Postgres).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio.to_thread
from dbos import DBOS

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import messages_to_json, to_json
from pi_trio.durable import DurableAgent
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

PROMPT = "Note 1 and 2, then charge 3."
STEER = "Also mention the weather."
LATE_STEER = "And keep it short."
FOLLOW_UP = "One more thing: say thanks."
WORKDIR = Path(os.environ.get("PI_TRIO_DURABLE_DIR", "."))
REPLAY = os.environ.get("PI_TRIO_CHARGE_REPLAY", "never")
WAIT_FOR_PARENT = os.environ.get("PI_TRIO_WAIT_FOR_PARENT") == "1"
# the system database: SQLite in DIR unless the parent names another (its Postgres)
DATABASE_URL = os.environ.get("PI_TRIO_DURABLE_URL") or f"sqlite:///{WORKDIR / 'dbos.sqlite'}"


def _append(name: str, line: str) -> None:
    with (WORKDIR / name).open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
    """The scripted model: what it answers depends only on the transcript."""
    _append("calls", f"{os.getpid()} {len(context.messages)}")
    results = sum(1 for m in context.messages if m.role == "toolResult")
    last = context.messages[-1]
    if last.role == "user" and last.content[0].text == FOLLOW_UP:
        return faux_assistant_message("You are welcome.")
    if results == 0:
        return faux_assistant_message(
            [faux_text("Noting 1."), faux_tool_call("note", {"n": 1}, id="call-1")],
            stop_reason="toolUse",
        )
    if results == 1:
        return faux_assistant_message(
            [faux_text("Noting 2."), faux_tool_call("note", {"n": 2}, id="call-2")],
            stop_reason="toolUse",
        )
    if results == 2:
        return faux_assistant_message(
            [faux_text("Charging 3."), faux_tool_call("charge", {"amount": 3}, id="call-3")],
            stop_reason="toolUse",
        )
    return faux_assistant_message("Done: noted 1 and 2, charged 3.")


async def _wait_for_parent(signal: str) -> None:
    if WAIT_FOR_PARENT:
        print(signal, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)


async def note(tool_call_id: str, params: Any) -> str:
    _append("runs", f"note {params['n']}")
    if params["n"] == 1:
        await _wait_for_parent("NOTE 1 STARTED")
    return f"noted {params['n']}"


async def charge(tool_call_id: str, params: Any) -> str:
    _append("runs", f"charge {params['amount']}")
    await _wait_for_parent("CHARGE STARTED")
    return f"charged {params['amount']}"


def _schema(name: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "integer"}}, "required": [name]}


def build_agent() -> Agent:
    faux = FauxProvider(api="faux-durable", token_size=(100_000, 100_000))
    faux.set_responses([reply] * 10)
    tools = [
        AgentTool(name="note", description="Note a number.", parameters=_schema("n"), execute=note),
        AgentTool(
            name="charge",
            description="Charge an amount.",
            parameters=_schema("amount"),
            execute=charge,
            replay="safe" if REPLAY == "safe" else "never",
        ),
    ]
    return Agent(model=faux.get_model(), tools=tools, stream_fn=faux, system_prompt="Be brief.")


AGENT = DurableAgent("crash-test", build_agent)


def _listener(name: str) -> Any:
    def write(event: Any, info: Any) -> None:
        record = {"type": event.type, "replayed": info.replayed, "pid": os.getpid()}
        if event.type.startswith("tool_execution"):
            record["call"] = event.tool_call_id
        if event.type.startswith("message"):
            record["role"] = event.message.role
        if event.type == "message_update":
            record["event"] = event.assistant_message_event.type
        _append(name, json.dumps(record))

    return write


AGENT.subscribe(_listener("events-new"))
AGENT.subscribe(_listener("events-all"), replayed=True)


def launch() -> None:
    DBOS(
        config={
            "name": "pi-trio-durable-test",
            "system_database_url": DATABASE_URL,
            "log_level": "ERROR",
        }
    )
    DBOS.launch()


async def main(command: str, workflow_id: str) -> None:
    launch()
    try:
        if command == "start":
            run = await AGENT.start(PROMPT, workflow_id=workflow_id)
        else:
            run = await AGENT.retrieve(workflow_id)
        result = await run.result(poll_interval=0.1)
        print(
            json.dumps(
                {
                    "messages": json.loads(messages_to_json(result.messages)),
                    "new": len(result.new_messages),
                    "queued": [json.loads(to_json(m)) for m in result.queued],
                    "stopReason": result.stop_reason,
                }
            ),
            flush=True,
        )
    finally:
        DBOS.destroy()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
