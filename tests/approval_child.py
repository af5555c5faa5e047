"""The child process of the approval restart test: an agent on the faux provider that
records its conversation in a ``FileSessionStore``.

    python tests/approval_child.py PATH pause             # runs until the run pauses,
                                                          # prints the pending calls,
                                                          # then waits to be killed
    python tests/approval_child.py PATH resume DECISIONS  # a new process: resumes the
                                                          # run from the file

``DECISIONS`` is JSON: call id -> ``ApprovalDecision`` (``{"action": "approve"}``...).
Each tool execution appends ``<pid> <tool> <arguments>`` to ``PATH.runs``; ``resume``
prints the result (status, the roles of the transcript) as one JSON line. ``--asyncio``
runs on asyncio instead of trio.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from pi_trio.agent import Agent, ApprovalDecision, tool
from pi_trio.session import FileSessionStore, record_session
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

SYSTEM_PROMPT = "You handle refunds."
PROMPT = "Refund orders 1 and 2, and look up order 3."


def _ran(path: Path, line: str) -> None:
    with Path(f"{path}.runs").open("a", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {line}\n")


def build(path: Path) -> tuple[Agent, FileSessionStore]:
    @tool(needs_approval=lambda args: args["amount"] > 100)
    async def refund(order: int, amount: int) -> str:
        """Refund an order."""
        _ran(path, f"refund {order} {amount}")
        return f"refunded {amount} on order {order}"

    @tool
    async def lookup(order: int) -> str:
        """Look an order up."""
        _ran(path, f"lookup {order}")
        return f"order {order}: delivered"

    def answer(context: Any, options: Any, state: Any, model: Any) -> Any:
        if context.messages[-1].role == "user":
            return faux_assistant_message(
                [
                    faux_text("Let me do that."),
                    faux_tool_call("refund", {"order": 1, "amount": 500}, id="r1"),
                    faux_tool_call("refund", {"order": 2, "amount": 30}, id="r2"),
                    faux_tool_call("lookup", {"order": 3}, id="l3"),
                ],
                stop_reason="toolUse",
            )
        results = [m for m in context.messages if m.role == "toolResult"]
        summary = "; ".join(m.content[-1].text for m in results)
        return faux_assistant_message(f"Done: {summary}")

    faux = FauxProvider()
    faux.set_responses([answer] * 4)
    store = FileSessionStore(path)
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt=SYSTEM_PROMPT,
        tools=[refund, lookup],
        messages=store.load(),
    )
    record_session(agent, store)
    return agent, store


async def pause(path: Path) -> None:
    agent, _ = build(path)
    result = await agent.prompt(PROMPT)
    pending = [msgspec.to_builtins(p) for p in result.pending_approvals]
    print(json.dumps({"status": result.status, "pending": pending}), flush=True)
    await anyio.sleep_forever()  # a person takes their time; the process dies meanwhile


async def resume(path: Path, decisions: str) -> None:
    agent, _ = build(path)
    approvals = msgspec.json.decode(decisions, type=dict[str, ApprovalDecision])
    result = await agent.resume(approvals)
    print(
        json.dumps(
            {
                "status": result.status,
                "text": result.text,
                "roles": [m.role for m in agent.state.messages],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--asyncio"]
    backend = "asyncio" if "--asyncio" in sys.argv else "trio"
    target = Path(args[0])
    if args[1] == "pause":
        anyio.run(pause, target, backend=backend)
    else:
        anyio.run(resume, target, args[2], backend=backend)
