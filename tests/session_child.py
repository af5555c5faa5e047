"""The child process of the session crash test: an agent on the faux provider records
its conversation in a ``FileSessionStore`` (the path in ``argv[1]``), then waits in a tool
until the test kills it."""

from __future__ import annotations

import sys

import trio

from pi_trio.agent import Agent, tool
from pi_trio.session import FileSessionStore, record_session
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

SYSTEM_PROMPT = "You take notes."


@tool
async def note(text: str) -> str:
    """Write a note down."""
    return f"noted: {text}"


@tool
async def wait() -> str:
    """Wait for something that never happens."""
    print("waiting", flush=True)
    await trio.sleep_forever()
    return "unreachable"


TOOLS = [note, wait]


async def main(path: str) -> None:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("note", {"text": "milk"}, id="n1")], stop_reason="toolUse"
            ),
            faux_assistant_message([faux_tool_call("wait", {}, id="w1")], stop_reason="toolUse"),
        ]
    )
    store = FileSessionStore(path)
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        system_prompt=SYSTEM_PROMPT,
        tools=TOOLS,
        messages=store.load(),
    )
    record_session(agent, store)
    await agent.prompt("Note milk, then wait.")


if __name__ == "__main__":
    trio.run(main, sys.argv[1])
