"""Model requests and tool executions as DBOS steps.

``durable_stream_fn`` wraps the agent's stream function: each request is a step that
streams the events on as they arrive and records the final assistant message as pi JSON.
When a resumed run reaches a recorded request, the model is not called: the recorded
message is sent again as events (``replay_events``).

``durable_tool`` wraps a tool: each call draws two step ids together before either runs,
so that parallel calls get the same step ids on every execution. The first step only
records that the call started; the second runs the tool and records its result. A resumed
run that finds the first recorded but not the second knows the call was interrupted: it
reports the interruption to the model without repeating the call. A tool whose ``replay``
is ``"safe"`` runs again after an interruption whatever was recorded, so its calls skip
the first step (its id stays drawn, and unused): one recorded operation instead of two.
The marker cannot share a step with an earlier write: between the model's answer and the
call's start come the hooks (an approval may wait for hours), validation and the calls
before it in a sequential batch, and a crash there must not count as an interrupted call.

The steps after which a turn may end also record the mark of the last message sent to the
run (``_queue``), read at the end of the step, so the run knows after which turns to take
messages: every tool call's result step, and a request whose answer calls no tool.
"""

from __future__ import annotations

import copy
from typing import Any

import anyio
import anyio.lowlevel
import msgspec
from dbos import DBOS
from dbos import error as dbos_error

from ..agent import AgentTool, AgentToolResult
from ..agent.extend import as_tool_result, call_hook
from ..ai import (
    AssistantMessage,
    Context,
    Model,
    StartEvent,
    StreamOptions,
    TextContent,
    ToolCall,
    from_json,
    open_stream_simple,
    to_json,
)
from ..ai.providers import StreamFn, replay_events
from ._execution import UNKNOWN_MARK, Execution
from ._queue import last_sent

__all__ = [
    "MODEL_STEP",
    "TOOL_STARTED_STEP",
    "TOOL_STEP",
    "durable_stream_fn",
    "durable_tool",
    "interrupted_text",
]

MODEL_STEP = "pi_trio.model_request"
TOOL_STARTED_STEP = "pi_trio.tool_started"
TOOL_STEP = "pi_trio.tool"


def interrupted_text(name: str) -> str:
    """The result a ``replay="never"`` call gets when a crash interrupted it."""
    return (
        f'Tool "{name}" was interrupted: the process running it stopped before the call '
        'finished, and the call was not repeated because the tool\'s replay policy is "never". '
        "It may or may not have taken effect."
    )


# What a request whose answer calls tools saw: no mark, it did not read one.
NOT_LOOKED = object()


class _Request(msgspec.Struct, omit_defaults=True):
    """What a model request step records: the final message and the sender's mark, or
    ``looked=False`` when the answer calls tools (their steps read the mark)."""

    message: msgspec.Raw
    sent: str | msgspec.UnsetType | None = msgspec.UNSET
    looked: bool = True


def _mark(sent: str | msgspec.UnsetType | None) -> object:
    return UNKNOWN_MARK if sent is msgspec.UNSET else sent


def _decode_request(recorded: str) -> tuple[AssistantMessage, object]:
    """The recorded message and the mark the step saw (``NOT_LOOKED``: it did not read)."""
    try:
        request = msgspec.json.decode(recorded, type=_Request)
    except msgspec.ValidationError:
        # recorded by a version that stored the message alone
        return from_json(recorded, AssistantMessage), UNKNOWN_MARK
    mark = _mark(request.sent) if request.looked else NOT_LOOKED
    return from_json(bytes(request.message), AssistantMessage), mark


def durable_stream_fn(inner: StreamFn | None, execution: Execution) -> StreamFn:
    """A stream function that makes each request of ``inner`` (the registry's provider
    when ``None``) a DBOS step recording the final message."""

    async def stream(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
        ran = False

        async def request() -> str:
            nonlocal ran
            ran = True
            execution.mark_live()
            forwarding = True
            async with open_stream_simple(
                model, context, options, registry=options.registry, stream_fn=inner
            ) as events:
                async for event in events:
                    if event.type == "start":
                        # ``events`` has applied the provider's events to its message;
                        # the agent gets them as from a producer of its own, which it
                        # replays onto a message of its own
                        event = StartEvent(partial=event.partial)
                    if forwarding:
                        try:
                            await send.send(event)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            # a listener failed; the agent reports that, while the
                            # request itself is still recorded as it ends
                            forwarding = False
                final = events.result()
            recorded = _Request(msgspec.Raw(to_json(final)))
            if any(isinstance(block, ToolCall) for block in final.content):
                recorded.looked = False  # the calls' steps read the mark, later
            else:
                recorded.sent = await last_sent(execution.workflow_id)
            return msgspec.json.encode(recorded).decode()

        try:
            recorded = await DBOS.run_step_async({"name": MODEL_STEP, "preemptible": True}, request)
        except dbos_error.DBOSWorkflowCancelledError:
            await execution.stop_for_cancel()
            return
        message, mark = _decode_request(recorded)
        if mark is not NOT_LOOKED:
            execution.saw(mark)
        if not ran:
            for event in replay_events(message, model):
                await send.send(event)

    return stream


class _Recorded(msgspec.Struct, omit_defaults=True):
    """What the result step of a tool call records: the result, or the text of the
    failure the agent reports (an exception or a timeout); and the sender's mark."""

    result: AgentToolResult | None = None
    failure: str | None = None
    sent: str | msgspec.UnsetType | None = msgspec.UNSET


class ToolCallFailed(Exception):
    """A recorded tool failure, raised again so the agent reports it as it did then."""


def durable_tool(tool: AgentTool, execution: Execution) -> AgentTool:
    """``tool`` with each execution recorded as DBOS steps (see the module docstring)."""
    name = tool.name
    timeout = tool.timeout
    replay = tool.replay
    inner = tool.execute

    async def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        # A parallel batch starts its calls as tasks when the first one waits; waiting
        # here, before any step, gives those tasks the workflow's context (not a step's)
        # and draws every call's step ids in source order.
        await anyio.lowlevel.checkpoint()
        started_step = DBOS.reserve_step()
        result_step = DBOS.reserve_step()
        started_now = False

        async def mark_started() -> bool:
            nonlocal started_now
            started_now = True
            execution.mark_live()
            return True

        ran = False

        async def outcome() -> _Recorded:
            if not started_now and replay != "safe":
                interrupted = AgentToolResult(
                    content=[TextContent(text=interrupted_text(name))],
                    details={"interrupted": True},
                    is_error=True,
                )
                return _Recorded(result=interrupted)
            try:
                with anyio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
                    value = await call_hook(inner, tool_call_id, params, signal, on_update)
                if scope.cancelled_caught:
                    return _Recorded(failure=f'Tool "{name}" timed out after {timeout:g}s')
                return _Recorded(result=as_tool_result(name, value))
            except Exception as exc:
                return _Recorded(failure=str(exc) or type(exc).__name__)

        async def run_once() -> str:
            nonlocal ran
            ran = True
            execution.mark_live()
            recorded = await outcome()
            recorded.sent = await last_sent(execution.workflow_id)
            try:
                return _encode(recorded)
            except (TypeError, msgspec.EncodeError) as exc:
                recorded.result = None
                recorded.failure = (
                    f"Tool {name} returned a result a durable run cannot record "
                    f"as JSON ({exc}); return JSON-serialisable content and details"
                )
                return _encode(recorded)

        try:
            if replay != "safe":
                await started_step.run_async({"name": f"{TOOL_STARTED_STEP}:{name}"}, mark_started)
            raw = await result_step.run_async(
                {"name": f"{TOOL_STEP}:{name}", "preemptible": True}, run_once
            )
        except dbos_error.DBOSWorkflowCancelledError:
            await execution.stop_for_cancel()
            raise AssertionError("unreachable: the abort cancels this call") from None
        if not ran:
            execution.replayed_calls.add(tool_call_id)
        recorded = msgspec.json.decode(raw, type=_Recorded)
        execution.saw(_mark(recorded.sent))
        if recorded.failure is not None:
            raise ToolCallFailed(recorded.failure)
        return recorded.result

    # every other field as the tool has it (its output schema, its label, ...); the
    # timeout is applied inside the step, so the agent's own is off
    durable = copy.copy(tool)
    durable.execute = execute
    durable.timeout = None
    return durable


def _encode(recorded: _Recorded) -> str:
    return msgspec.json.encode(recorded).decode()
