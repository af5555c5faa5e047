"""The stateless entry points: ``run_agent_loop`` / ``run_agent_loop_continue`` (emit
callback) and ``agent_loop`` / ``agent_loop_continue`` (async context managers yielding
the events)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from ..ai import AbortController, AbortSignal, PiError
from ..ai._seam import raising_sole_exception
from ._config import AgentLoopConfig
from ._dispatch import Dispatcher, ListenerSet
from ._loop import LoopRun
from ._types import AgentContext, AgentEvent, AgentMessage

__all__ = [
    "AGENT_EVENT_BUFFER",
    "ContinueError",
    "AgentEventStream",
    "agent_loop",
    "agent_loop_continue",
    "run_agent_loop",
    "run_agent_loop_continue",
]

# Agent events in flight between a run and the consumer of ``agent_loop``: a slow consumer
# slows the run down instead of growing memory.
AGENT_EVENT_BUFFER = 64


class ContinueError(PiError, ValueError):
    """The transcript cannot be continued (empty, or it ends with an assistant message
    and nothing is queued); the message says which."""


def check_continuable(messages: list[AgentMessage]) -> None:
    if not messages:
        raise ContinueError("Cannot continue: no messages in context")
    role = getattr(messages[-1], "role", None)
    if role == "assistant":
        raise ContinueError("Cannot continue from message role: assistant")


async def execute_loop(
    prompts: list[AgentMessage] | None,
    context: AgentContext,
    config: AgentLoopConfig,
    dispatcher: Dispatcher,
    signal: AbortSignal,
    stream_fn: Any,
    *,
    owned: bool = False,
) -> list[AgentMessage]:
    """Run the engine with ``dispatcher`` delivering its events; every event has reached
    every listener when this returns. The run starts no task of its own (tool calls that
    wait get one, see ``_parallel``)."""
    messages = await LoopRun(context, config, dispatcher, signal, stream_fn, owned=owned).run(
        prompts
    )
    await dispatcher.settle()
    return messages


async def run_agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[AgentEvent], Any],
    signal: AbortSignal | None = None,
    stream_fn: Any = None,
) -> list[AgentMessage]:
    """Run the loop for ``prompts`` on a copy of ``context``; every event is passed to
    ``emit`` (sync or async) and awaited in order. Returns the new messages."""
    signal = signal if signal is not None else AbortController().signal
    dispatcher = Dispatcher(ListenerSet(emit), None, signal, config.close_timeout)
    return await execute_loop(list(prompts), context, config, dispatcher, signal, stream_fn)


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Callable[[AgentEvent], Any],
    signal: AbortSignal | None = None,
    stream_fn: Any = None,
) -> list[AgentMessage]:
    """Continue from ``context`` (its last message must not be an assistant message);
    ``context.messages`` is extended in place."""
    check_continuable(context.messages)
    signal = signal if signal is not None else AbortController().signal
    dispatcher = Dispatcher(ListenerSet(emit), None, signal, config.close_timeout)
    return await execute_loop(None, context, config, dispatcher, signal, stream_fn)


class AgentEventStream:
    """The events of one loop invocation; ``result()`` is the new messages once the
    run finished (after ``agent_end``)."""

    __slots__ = ("_messages", "_receive")

    def __init__(self, receive: anyio.abc.ObjectReceiveStream[AgentEvent]) -> None:
        self._receive = receive
        self._messages: list[AgentMessage] | None = None

    def __aiter__(self) -> AgentEventStream:
        return self

    async def __anext__(self) -> AgentEvent:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def result(self) -> list[AgentMessage]:
        if self._messages is None:
            raise RuntimeError(
                "result() is available once the run finished; iterate the events to the end"
            )
        return self._messages


@asynccontextmanager
async def _open_loop(
    prompts: list[AgentMessage] | None,
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None,
    stream_fn: Any,
) -> AsyncIterator[AgentEventStream]:
    run_signal = signal if signal is not None else AbortController().signal
    send, receive = anyio.create_memory_object_stream[AgentEvent](AGENT_EVENT_BUFFER)
    stream = AgentEventStream(receive)

    consumer_left = False

    async def produce() -> None:
        with send:
            dispatcher = Dispatcher(ListenerSet(send.send), None, run_signal, config.close_timeout)
            try:
                stream._messages = await execute_loop(
                    prompts, context, config, dispatcher, run_signal, stream_fn
                )
            except anyio.BrokenResourceError:
                # The consumer left the block: the run's remaining events (its closing
                # ones included) have nobody to go to.
                if not consumer_left:
                    raise

    with raising_sole_exception():
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(produce, name="agent loop")
            try:
                yield stream
            finally:
                consumer_left = True
                if stream._messages is None:
                    # Leaving before the run finished cancels it.
                    task_group.cancel_scope.cancel()
                receive.close()


def agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: Any = None,
) -> AbstractAsyncContextManager[AgentEventStream]:
    """``async with agent_loop(prompts, context, config) as events:`` — iterate the run's
    events; ``events.result()`` is the new messages. Leaving the block cancels the run."""
    return _open_loop(list(prompts), context, config, signal, stream_fn)


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: Any = None,
) -> AbstractAsyncContextManager[AgentEventStream]:
    """``agent_loop`` continuing from ``context``. Raises at once when the context cannot
    be continued (empty, or ending with an assistant message)."""
    check_continuable(context.messages)
    return _open_loop(None, context, config, signal, stream_fn)
