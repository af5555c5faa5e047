"""The three activities of a Temporal agent: a model request, a tool call, the delivery of
a run's last events.

Each first delivers the events the workflow handed it (``Carried``), on its first attempt
only: a later attempt runs because an earlier one was interrupted after it had started, and
so (almost always) after it had delivered them; listeners get each event at most once.

The model activity streams the answer and delivers its events as they arrive, then returns
the final message as pi JSON (the workflow records it). When the workflow asks it to stop
(the run was cancelled) it aborts the request and returns what it received so far, ended
with ``stop_reason="aborted"``: the run's transcript keeps the partial answer.

The tool activity runs the tool. A later attempt of a call whose tool says
``replay="never"`` (the default) does not run it again: the call gets an error result
saying it was interrupted. Both heartbeat while they run, which is how a worker that died
is noticed (after ``heartbeat_timeout``) and how a cancellation reaches them.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio
import msgspec
from temporalio import activity

from ..agent import (
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionUpdateEvent,
)
from ..agent.extend import as_tool_result, call_hook
from ..ai import (
    AbortController,
    Context,
    Model,
    TextContent,
    from_json,
    open_stream_simple,
    to_json,
)
from ._codec import DeliverRequest, ModelRequest, ToolRequest, decode, decode_options, encode
from ._core import AgentCore
from ._listeners import RunTarget

__all__ = [
    "DELIVER_ACTIVITY",
    "MODEL_ACTIVITY",
    "TOOL_ACTIVITY",
    "Recorded",
    "build_activities",
    "interrupted_text",
]

MODEL_ACTIVITY = "pi_trio.model_request"
TOOL_ACTIVITY = "pi_trio.tool"
DELIVER_ACTIVITY = "pi_trio.deliver"

CANCELLED_REASON = "The Temporal workflow was cancelled"

T = TypeVar("T")


def interrupted_text(name: str) -> str:
    """The result a ``replay="never"`` call gets when the worker running it died."""
    return (
        f'Tool "{name}" was interrupted: the worker running it stopped before the call '
        'finished, and the call was not repeated because the tool\'s replay policy is "never". '
        "It may or may not have taken effect."
    )


class Recorded(msgspec.Struct, omit_defaults=True):
    """What the tool activity returns: the result, or the text of the failure the agent
    reports (an exception or a timeout)."""

    result: AgentToolResult | None = None
    failure: str | None = None


def _target(owner: AgentCore) -> RunTarget:
    info = activity.info()
    return owner.listeners.target(info.workflow_id or "", info.workflow_run_id or "")


async def _with_heartbeats(work: Callable[[], Awaitable[T]]) -> T:
    """``await work()`` while heartbeating, a third of the heartbeat timeout apart."""
    timeout = activity.info().heartbeat_timeout
    interval = timeout.total_seconds() / 3 if timeout else 10.0
    result: list[T] = []

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await anyio.sleep(interval)

    async with anyio.create_task_group() as group:
        group.start_soon(beat)
        result.append(await work())
        group.cancel_scope.cancel()
    return result[0]


async def _abort_on_cancel_request(work: Coroutine[Any, Any, T], abort: Callable[[], None]) -> T:
    """``await work``, turning a cancellation the workflow requested into ``abort()``:
    the work then ends by itself with an aborted outcome, which is returned. Any other
    cancellation (the worker shutting down, a timeout) cancels the work and propagates:
    Temporal runs the activity again elsewhere.

    Temporal cancels an activity's task (asyncio's ``Task.cancel``), so the work runs in
    a task of its own, which this one owns and always awaits."""
    task = asyncio.ensure_future(work)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            details = activity.cancellation_details()
            if task.done():
                return task.result()
            if details is None or not details.cancel_requested:
                task.cancel()
                await asyncio.wait([task])
                raise
            abort()
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()


def build_activities(owner: AgentCore) -> list[Callable[..., Any]]:
    """The activities of ``owner``, named after it."""

    @activity.defn(name=f"{MODEL_ACTIVITY}:{owner.name}")
    async def model_request(payload: str) -> str:
        request = decode(payload, ModelRequest)
        target = _target(owner)
        if activity.info().attempt == 1:
            await target.deliver_carried(request.events)
        agent = owner.worker_agent()
        model = from_json(bytes(request.model), Model)
        context = from_json(bytes(request.context), Context)
        base = agent.stream_options
        api_key = None
        if agent.hooks.get_api_key is not None:
            api_key = await call_hook(agent.hooks.get_api_key, model.provider)
        controller = AbortController()
        options = msgspec.structs.replace(
            decode_options(request.options, base),
            api_key=api_key or base.api_key,
            signal=controller.signal,
        )

        async def stream() -> str:
            started = False
            async with open_stream_simple(
                model, context, options, registry=agent.registry, stream_fn=agent.stream_fn
            ) as events:
                async for event in events:
                    activity.heartbeat()
                    if event.type == "start":
                        started = True
                        await target.deliver(MessageStartEvent(message=event.partial))
                    elif event.type != "done" and event.type != "error":
                        await target.deliver(
                            MessageUpdateEvent(message=event.partial, assistant_message_event=event)
                        )
                final = events.result()
            final.thinking_level = request.thinking_level
            if not started:
                await target.deliver(MessageStartEvent(message=final))
            await target.deliver(MessageEndEvent(message=final))
            return to_json(final).decode()

        return await _abort_on_cancel_request(
            _with_heartbeats(stream), lambda: controller.abort(CANCELLED_REASON)
        )

    @activity.defn(name=f"{TOOL_ACTIVITY}:{owner.name}")
    async def tool_call(payload: str) -> str:
        request = decode(payload, ToolRequest)
        target = _target(owner)
        attempt = activity.info().attempt
        if attempt == 1:
            await target.deliver_carried(request.events)
        name = request.tool_name
        tool = next((t for t in owner.worker_agent().state.tools if t.name == name), None)
        if tool is None:
            return encode(Recorded(failure=f"Tool {name} not found"))
        if attempt > 1 and tool.replay != "safe":
            interrupted = AgentToolResult(
                content=[TextContent(text=interrupted_text(name))],
                details={"interrupted": True},
                is_error=True,
            )
            return encode(Recorded(result=interrupted))
        params = msgspec.json.decode(request.params)
        return await _with_heartbeats(lambda: _run_tool(tool, request, params, target))

    @activity.defn(name=f"{DELIVER_ACTIVITY}:{owner.name}")
    async def deliver(payload: str) -> None:
        if activity.info().attempt == 1:
            await _target(owner).deliver_carried(decode(payload, DeliverRequest).events)

    return [model_request, tool_call, deliver]


async def _run_tool(tool: Any, request: ToolRequest, params: Any, target: RunTarget) -> str:
    """Run ``tool`` once, its progress delivered while it runs; the result recorded."""
    name = tool.name
    timeout = tool.timeout
    controller = AbortController()
    # ``on_update`` is synchronous: its updates wait here until the listeners took them
    # (as in a run in one process, a tool is not slowed by its listeners)
    updates: deque[AgentToolResult] = deque()
    more = anyio.Event()

    def on_update(partial: Any) -> None:
        updates.append(as_tool_result(name, partial))
        more.set()

    async def pump() -> None:
        nonlocal more
        while True:
            await more.wait()
            more = anyio.Event()
            await flush()

    async def flush() -> None:
        while updates:
            partial = updates.popleft()
            await target.deliver(
                ToolExecutionUpdateEvent(
                    tool_call_id=request.tool_call_id,
                    tool_name=name,
                    args=params,
                    partial_result=partial,
                )
            )

    async def execute() -> Recorded:
        with anyio.move_on_after(math.inf if timeout is None else timeout) as scope:
            value = await call_hook(
                tool.execute, request.tool_call_id, params, controller.signal, on_update
            )
        if scope.cancelled_caught:
            return Recorded(failure=f'Tool "{name}" timed out after {timeout:g}s')
        return Recorded(result=as_tool_result(name, value))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            try:
                recorded = await execute()
            except Exception as exc:
                recorded = Recorded(failure=str(exc) or type(exc).__name__)
            group.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        # the run was aborted (or the worker stops): cooperative code sees the signal
        controller.abort(CANCELLED_REASON)
        raise
    await flush()
    try:
        return encode(recorded)
    except (TypeError, msgspec.EncodeError) as exc:
        return encode(
            Recorded(
                failure=f"Tool {name} returned a result a Temporal run cannot record as JSON "
                f"({exc}); return JSON-serialisable content and details"
            )
        )
