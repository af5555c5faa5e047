"""The core run, abort and queue behaviour also holds under asyncio (through anyio)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import TextContent, TextStartEvent
from pi_trio.ai.providers import MessageBuilder
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

from .helpers import MOCK_MODEL, Recorder, Scripted, asst, call, user_text


def on_asyncio(fn: Any) -> Any:
    return anyio.run(fn, backend="asyncio")


def test_a_run_with_parallel_tools_completes_on_asyncio() -> None:
    async def main() -> None:
        async def add(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            await anyio.lowlevel.checkpoint()
            on_update(AgentToolResult(content=[TextContent(text="half")]))
            return str(params["a"] + params["b"])

        tool = AgentTool(
            name="add",
            description="add",
            execute=add,
            parameters={
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            },
        )
        faux = FauxProvider(token_size=(1, 2))
        faux.set_responses(
            [
                faux_assistant_message(
                    [
                        faux_text("adding"),
                        faux_tool_call("add", {"a": 1, "b": 2}, id="x"),
                        faux_tool_call("add", {"a": 3, "b": 4}, id="y"),
                    ],
                    stop_reason="toolUse",
                ),
                faux_assistant_message("3 and 7"),
            ]
        )
        agent = Agent(model=faux.get_model(), tools=[tool], stream_fn=faux)
        rec = Recorder()
        agent.subscribe(rec)
        await agent.prompt("add")
        results = [user_text(m) for m in agent.state.messages if m.role == "toolResult"]
        assert results == ["3", "7"]
        assert len(rec.of("tool_execution_update")) == 2
        assert rec.types[-1] == "agent_end"
        assert not agent.state.is_streaming

    on_asyncio(main)


def test_abort_while_streaming_keeps_the_partial_on_asyncio() -> None:
    async def main() -> None:
        async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
            b = MessageBuilder(model)
            await send.send(b.start())
            start = b.text_start()
            await send.send(TextStartEvent(content_index=start.content_index, partial=b.message))
            await send.send(b.text_delta(0, "kept"))
            await anyio.sleep_forever()

        agent = Agent(model=MOCK_MODEL, stream_fn=stream_fn)
        agent.subscribe(
            lambda e: (
                agent.abort()
                if e.type == "message_update" and e.assistant_message_event.type == "text_delta"
                else None
            )
        )
        await agent.prompt("go")
        last = agent.state.messages[-1]
        assert last.stop_reason == "aborted"
        assert last.content[0].text == "kept"
        assert not agent.state.is_streaming

    on_asyncio(main)


def test_abort_during_a_tool_gives_it_one_result_and_keeps_queued_steering_on_asyncio() -> None:
    async def main() -> None:
        started = anyio.Event()

        async def wait(*args: Any) -> Any:
            started.set()
            await anyio.sleep_forever()

        tool = AgentTool(name="wait", description="w", parameters={"type": "object"}, execute=wait)
        agent = Agent(
            model=MOCK_MODEL,
            tools=[tool],
            stream_fn=Scripted(asst([call("w1", "wait", {})], "toolUse"), asst("next")),
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent.prompt, "go")
            await started.wait()
            agent.steer("later")
            agent.abort()
        results = [m for m in agent.state.messages if m.role == "toolResult"]
        assert [(r.tool_call_id, r.is_error, user_text(r)) for r in results] == [
            ("w1", True, "Operation aborted")
        ]
        assert agent.has_queued_messages()
        await agent.continue_()
        assert "later" in [user_text(m) for m in agent.state.messages if m.role == "user"]

    on_asyncio(main)


def test_external_cancellation_leaves_a_consistent_agent_on_asyncio() -> None:
    async def main() -> None:
        started = anyio.Event()

        async def slow(model: Any, context: Any, options: Any, send: Any) -> None:
            started.set()
            await anyio.sleep_forever()

        agent = Agent(model=MOCK_MODEL, stream_fn=slow)
        rec = Recorder()
        agent.subscribe(rec)
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def cancel_when_started() -> None:
                    await started.wait()
                    scope.cancel()

                tg.start_soon(cancel_when_started)
                await agent.prompt("go")
        assert rec.types[-1] == "agent_end"
        assert not agent.state.is_streaming
        agent.stream_fn = Scripted(asst("again"))
        await agent.prompt("next")
        assert user_text(agent.state.messages[-1]) == "again"

    on_asyncio(main)
