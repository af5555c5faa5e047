"""An agent as a tool of another: ``agent.as_tool(name, description)``.

Each call of the tool runs a new child agent (``factory()``; for ``as_tool``, a fork of
the agent: its model, prompt, tools, hooks and settings, and a copy of its transcript) on
the task the parent's model wrote. The child's run is awaited inside the tool call, so it
is a child task of the parent's run: the parent's tool concurrency (``max_concurrent_tools``)
bounds how many children run at once, and an abort of the parent aborts the child too
(its signal's reason becomes the child's), each run ending by the abort contract, every
tool call with its one result. An external cancellation of the parent reaches the child
as one of its own caller.

What the child spent is rolled up into the parent's transcript: the tool result's
``usage`` (pi 1.6's field for what a tool execution spent itself) is the child run's usage
(its responses, its own tools, its compactions). A child cut short by the parent's abort
reports what it spent in one last progress update, and the aborted result keeps it.
With ``forward_events=True`` every event of the child reaches the parent's listeners as a
``tool_execution_update`` whose ``partial_result.details`` is the child's event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from ..ai import AbortSignal, TextContent, Usage
from ._tool import AgentTool
from ._types import AgentToolResult, ToolUpdateCallback
from ._usage import add_usage

__all__ = ["SUB_AGENT_PARAMETERS", "ChildAgent", "sub_agent_tool"]

SUB_AGENT_PARAMETERS: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The task for the sub-agent, with everything it needs to know: "
            "it sees nothing of this conversation but this text.",
        }
    },
    "required": ["task"],
}
NO_OUTPUT_TEXT: Final = "(the sub-agent gave no text)"


class ChildAgent(Protocol):
    """What a sub-agent tool uses of the agent its factory makes (an ``Agent``)."""

    async def prompt(self, message: Any) -> Any: ...

    def abort(self, reason: object = None) -> None: ...

    def subscribe(self, listener: Any) -> Callable[[], None]: ...


def sub_agent_tool(
    name: str,
    description: str,
    factory: Callable[[], ChildAgent],
    *,
    forward_events: bool = False,
    keep_messages: bool = True,
) -> AgentTool:
    """A tool whose every call runs ``factory()``'s agent on the call's ``task``.

    The result's text is the child's final answer (an error result naming how the child's
    run ended when it failed, or the calls it paused for approval: a child is never
    resumed), its ``usage`` what the child spent, its ``details`` the child's run
    (``{"messages": [...]}``, the messages it added; ``keep_messages=False`` leaves them
    out). ``forward_events`` sends each child event to the parent's listeners as a
    ``tool_execution_update`` (``partial_result.details`` is the event).
    """
    if not callable(factory):
        raise TypeError(
            f"sub_agent_tool(factory=...) takes a function making an Agent, got {factory!r}"
        )

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: ToolUpdateCallback
    ) -> AgentToolResult:
        child = factory()
        spent: list[Usage | None] = [None]  # what the child's run has spent so far

        def follow(event: Any) -> None:
            kind = event.type
            if kind == "message_end":
                usage = getattr(event.message, "usage", None)
                if isinstance(usage, Usage):
                    spent[0] = add_usage(spent[0], usage)
            elif kind == "compaction_end" and event.usage is not None:
                spent[0] = add_usage(spent[0], event.usage)
            if forward_events:
                on_update(AgentToolResult(details=event))

        unsubscribe = child.subscribe(follow)
        unregister = signal.on_abort(lambda: child.abort(signal.reason)) if signal else _noop
        try:
            result = await child.prompt(params["task"])
        except BaseException:
            # the parent's run was aborted or cancelled: the child's run has ended by the
            # contract; what it spent reaches the parent's aborted result
            on_update(AgentToolResult(usage=spent[0] or Usage()))
            raise
        finally:
            unregister()
            unsubscribe()
        details = {"messages": list(result.messages)} if keep_messages else None
        usage = result.usage
        if result.ok:
            text = result.text or NO_OUTPUT_TEXT
            return AgentToolResult(content=[TextContent(text=text)], details=details, usage=usage)
        pending = getattr(result, "pending_approvals", ())
        if pending:
            text = _paused_text(pending)
        else:
            how = "was aborted" if result.stop_reason == "aborted" else "failed"
            text = f"The sub-agent {how}: {result.error_message}"
        return AgentToolResult(
            content=[TextContent(text=text)], details=details, usage=usage, is_error=True
        )

    return AgentTool(
        name=name, description=description, parameters=SUB_AGENT_PARAMETERS, execute=execute
    )


def _paused_text(pending: Any) -> str:
    calls = ", ".join(f"{p.tool_name} ({p.tool_call_id})" for p in pending)
    return (
        f"The sub-agent stopped unfinished: its tool calls {calls} wait for approval, and "
        "a sub-agent's run is never resumed (give the sub-agent's tools no "
        "needs_approval, or put the approval on the parent's call of the sub-agent)"
    )


def _noop() -> None:
    return None
