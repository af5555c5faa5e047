"""What pi_trio writes when a run pauses for approval and is resumed, as the inputs of the
check that the original 1.6 loads it (``tests/record_approval_pi16.mjs``).

    python -m tests.approval_pi16 [DIR]      # default: tests/fixtures/approval_pi16

writes ``paused.transcript.json`` (a sequential batch: one call ran, one waits for
approval, one waits behind it) and ``resumed.transcript.json`` (the same run after
``resume`` with an edit), as JSON arrays (``messages_to_json``: what the original
exports). ``transcripts()`` is what the tests compare with the committed files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from pi_trio.agent import Agent, edit, tool
from pi_trio.ai import messages_to_json
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "approval_pi16"


@tool(needs_approval=lambda args: args["amount"] > 100)
async def refund(order: int, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} on order {order}"


@tool
async def lookup(order: int) -> str:
    """Look an order up."""
    return f"order {order}: delivered"


async def _run() -> tuple[list[Any], list[Any]]:
    faux = FauxProvider(api="faux", provider="faux")
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_text("Checking, then refunding."),
                    faux_tool_call("lookup", {"order": 42}, id="call_lookup"),
                    faux_tool_call("refund", {"order": 42, "amount": 500}, id="call_refund"),
                    faux_tool_call("lookup", {"order": 43}, id="call_after"),
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("Refunded 450 on order 42."),
        ]
    )
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt="You handle refunds.",
        tools=[refund, lookup],
        tool_execution="sequential",
    )
    await agent.prompt("Refund order 42.")
    paused = list(agent.state.messages)
    await agent.resume({"call_refund": edit({"order": 42, "amount": 450})})
    return paused, list(agent.state.messages)


def transcripts() -> dict[str, bytes]:
    """The two transcripts as pi_trio writes them now."""
    paused, resumed = anyio.run(_run, backend="trio")
    return {"paused": messages_to_json(paused), "resumed": messages_to_json(resumed)}


def main(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in transcripts().items():
        (directory / f"{name}.transcript.json").write_bytes(data)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURES)
