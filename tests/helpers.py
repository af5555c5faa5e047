"""Shared test fixtures: the mock model, scripted stream functions, the echo tool."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import anyio.lowlevel

from pi_trio.agent import AgentTool, AgentToolResult
from pi_trio.ai import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Model,
    TextContent,
    ToolCall,
    Usage,
    UserMessage,
)
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageBuilder, MessageFold, now_ms

MOCK_MODEL = Model(
    id="mock",
    name="mock",
    api="openai-responses",
    provider="openai",
    base_url="https://example.invalid",
    reasoning=False,
    input=["text"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=8192,
    max_tokens=2048,
)


def asst(content: Any, stop: str = "stop", **fields: Any) -> AssistantMessage:
    if isinstance(content, str):
        content = [TextContent(text=content)]
    return AssistantMessage(
        content=list(content),
        api=MOCK_MODEL.api,
        provider=MOCK_MODEL.provider,
        model=MOCK_MODEL.id,
        usage=Usage(),
        stop_reason=stop,  # type: ignore[arg-type]
        timestamp=now_ms(),
        **fields,
    )


def user(text: str, **fields: Any) -> UserMessage:
    return UserMessage(content=text, **fields)


def call(id: str, name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(id=id, name=name, arguments=args)


def terminal(message: AssistantMessage) -> DoneEvent | ErrorEvent:
    if message.stop_reason in ("error", "aborted"):
        return ErrorEvent(reason=message.stop_reason, error=message)  # type: ignore[arg-type]
    return DoneEvent(reason=message.stop_reason, message=message)  # type: ignore[arg-type]


class Scripted:
    """A stream function answering call k with ``answers[k]`` (the last one repeats).

    An answer is an AssistantMessage (sent as a lone terminal event), a list of events, or
    a callable ``(context, options)`` returning either (sync or async)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[Model, Any, Any]] = []

    @property
    def count(self) -> int:
        return len(self.calls)

    def contexts(self) -> list[Any]:
        return [c[1] for c in self.calls]

    def texts(self, k: int) -> list[str]:
        """User texts of request k (0-based)."""
        return [user_text(m) for m in self.calls[k][1].messages if m.role == "user"]

    async def __call__(self, model: Model, context: Any, options: Any, send: Any) -> None:
        self.calls.append((model, context, options))
        answer = self.answers[min(len(self.calls) - 1, len(self.answers) - 1)]
        await anyio.lowlevel.checkpoint()
        if callable(answer) and not isinstance(answer, AssistantMessage):
            answer = answer(context, options)
            if inspect.isawaitable(answer):
                answer = await answer
        if isinstance(answer, AssistantMessage):
            await send.send(terminal(answer))
        else:
            for event in answer:
                await send.send(event)


def user_text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if b.type == "text")


def echo_tool(
    *,
    name: str = "echo",
    executed: list[Any] | None = None,
    result: Callable[[dict[str, Any]], AgentToolResult] | None = None,
    **options: Any,
) -> AgentTool:
    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any
    ) -> Any:
        if executed is not None:
            executed.append(params["value"])
        if result is not None:
            return result(params)
        return AgentToolResult(
            content=[TextContent(text=f"echoed: {params['value']}")],
            details={"value": params["value"]},
        )

    return AgentTool(
        name=name,
        label="Echo",
        description="Echo input",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
        execute=execute,
        **options,
    )


class Recorder:
    """A listener that records every event."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def applied(builder: MessageBuilder, events: list[Any]) -> list[Any]:
    """Apply ``events`` (made by ``builder``) as a stream would, completing them; a
    ``start`` is applied first when ``events`` do not begin with one."""
    fold = MessageFold()
    if not events or events[0].type != "start":
        fold.apply(builder.start())
    for event in events:
        fold.apply(event)
    return events
