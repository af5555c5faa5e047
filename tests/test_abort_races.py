"""Two races an abort can meet, each made to happen every time: an abort from another
thread that the event loop sees before its callbacks have run there, and an abort that
comes while a finished tool's last progress update is still being delivered."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import AbortController, TextContent, ToolResultMessage
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

BACKENDS = ("trio", "asyncio")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_callbacks_of_an_abort_from_another_thread_run_together_in_order(
    backend: str,
) -> None:
    """A run's abort check that sees the flag first runs the abort's callbacks of its own
    loop at once (the run's scope, then a sub-agent's abort with the reason), so no task
    runs between them; the thread's own call into the loop then finds nothing left."""

    async def main() -> None:
        controller = AbortController()
        signal = controller.signal
        order: list[str] = []
        signal.on_abort(lambda: order.append("the run's scope"))
        signal.on_abort(lambda: order.append(f"the sub-agent, with {signal.reason!r}"))
        gone = signal.on_abort(lambda: order.append("an unregistered callback"))
        thread = threading.Thread(target=controller.abort, args=("stop",))
        thread.start()
        while not signal.aborted:  # synchronously: this loop runs nothing meanwhile
            pass
        assert order == []  # the thread waits for this loop to run them
        gone()
        signal.run_pending_callbacks()
        assert order == ["the run's scope", "the sub-agent, with 'stop'"]
        while thread.is_alive():
            await anyio.lowlevel.checkpoint()
        assert order == ["the run's scope", "the sub-agent, with 'stop'"]  # each once
        late: list[str] = []
        signal.on_abort(lambda: late.append("registered after the abort"))
        assert late == ["registered after the abort"]

    anyio.run(main, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_finished_tool_keeps_its_result_when_a_listener_of_its_update_aborts(
    backend: str,
) -> None:
    """The tool reports progress and returns while an asynchronous listener is still
    taking that update; the listener then aborts the run (the tool's update pump is
    stopping): the call keeps its result (not ``Operation aborted``), and the run ends
    aborted."""

    async def main() -> None:
        taking = anyio.Event()
        returned = [False]

        async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            on_update(AgentToolResult(content=[TextContent(text="halfway")]))
            await taking.wait()
            returned[0] = True  # and nothing awaited until the return
            return "finished"

        faux = FauxProvider()
        faux.set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("step", {}, id="c1")], stop_reason="toolUse"
                ),
                faux_assistant_message("never asked"),
            ]
        )
        tool = AgentTool(
            name="step", description="step", parameters={"type": "object"}, execute=execute
        )
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[tool])

        async def listener(event: Any) -> None:
            if event.type == "tool_execution_update":
                taking.set()
                while not returned[0]:
                    await anyio.lowlevel.checkpoint()
                agent.abort("stop")
            await anyio.lowlevel.checkpoint()

        agent.subscribe(listener)
        result = await agent.prompt("go")
        assert result.stop_reason == "aborted"
        assert faux.call_count == 1
        [tool_result] = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
        assert tool_result.content == [TextContent(text="finished")]
        assert not tool_result.is_error

    anyio.run(main, backend=backend)
