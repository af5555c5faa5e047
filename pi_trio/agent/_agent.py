"""``Agent``: the stateful wrapper — transcript, queues, listeners and one run at a time.

A run (``prompt()`` / ``continue_()``) lives exactly as long as the awaited call: the engine
inside the run's abort scope, which reduces each event into ``agent.state`` and hands it
to the listeners (itself while they are synchronous, through a dispatcher task of the
run's task group when one is asynchronous), and a task per parallel tool call that has to
wait. ``abort()`` cancels that scope; listeners are never interrupted. The call returns after ``agent_end`` reached every
listener; then ``state.is_streaming`` is false and the agent is ready for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import anyio
import anyio.lowlevel

from ..ai import (
    AbortController,
    AbortSignal,
    ImageContent,
    Model,
    ModelCost,
    ProviderRegistry,
    StreamOptions,
    TextContent,
    ThinkingBudgets,
    UnknownModelError,
    UserMessage,
    create_initial_system_message,
    get_current_system_message,
    now_ms,
    resolve_model,
    to_tool_declaration,
)
from ..ai._errors import PiError
from ._agent_config import RequestOptions, build_loop_config
from ._dispatch import Dispatcher, ListenerSet
from ._failure import deliver_run_failure
from ._queue import PendingMessageQueue, QueueMode
from ._run import ContinueError, execute_loop
from ._state import AgentState
from ._types import (
    AgentContext,
    AgentMessage,
)

__all__ = ["Agent", "AgentBusyError", "UNKNOWN_MODEL"]

UNKNOWN_MODEL = Model(
    id="unknown",
    name="unknown",
    api="unknown",
    provider="unknown",
    base_url="",
    reasoning=False,
    input=[],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=0,
    max_tokens=0,
)

_PROMPT_BUSY = (
    "Agent is already processing a prompt. Use steer() or followUp() to queue messages, "
    "or wait for completion."
)
_CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing."
_RESET_BUSY = "Agent is already processing. Wait for completion before resetting."


class AgentBusyError(PiError, RuntimeError):
    """A run is active; the message says what to do instead."""


def _user_message(text: str, images: Sequence[ImageContent] | None = None) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    if images:
        content.extend(images)
    return UserMessage(content=content, timestamp=now_ms())


def _as_message(message: Any) -> Any:
    return _user_message(message) if isinstance(message, str) else message


class _ActiveRun:
    __slots__ = ("_idle", "controller")

    def __init__(self) -> None:
        self.controller = AbortController()
        self._idle: anyio.Event | None = None  # made when someone waits

    async def wait(self) -> None:
        if self._idle is None:
            self._idle = anyio.Event()
        await self._idle.wait()

    def finish(self) -> None:
        if self._idle is not None:
            self._idle.set()


class Agent:
    """A conversation with a model, with tools, queues and listeners.

    Keyword arguments: the initial state (``model``, ``system_prompt``, ``tools``,
    ``messages``, ``thinking_level``) and the options (``stream_fn``, hooks, modes, …),
    which are public attributes read at the start of each run. ``model`` is a ``Model`` or
    a catalog name, ``"provider/model-id"``.
    """

    def __init__(
        self,
        *,
        model: Model | str | None = None,
        system_prompt: str | None = None,
        tools: Sequence[Any] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        thinking_level: str = "off",
        stream_fn: Any = None,
        registry: ProviderRegistry | None = None,
        convert_to_llm: Callable[..., Any] | None = None,
        transform_context: Callable[..., Any] | None = None,
        get_api_key: Callable[..., Any] | None = None,
        before_tool_call: Callable[..., Any] | None = None,
        after_tool_call: Callable[..., Any] | None = None,
        finish_turn: Callable[..., Any] | None = None,
        prepare_request: Callable[..., Any] | None = None,
        prepare_next_turn: Callable[..., Any] | None = None,
        should_stop_after_turn: Callable[..., Any] | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        tool_execution: Literal["sequential", "parallel"] = "parallel",
        max_concurrent_tools: int | None = None,
        session_id: str | None = None,
        thinking_budgets: ThinkingBudgets | None = None,
        transport: Literal["sse", "websocket", "auto"] | None = "auto",
        max_retry_delay_ms: int | None = None,
        on_payload: Callable[..., Any] | None = None,
        on_response: Callable[..., Any] | None = None,
        stream_options: StreamOptions | None = None,
        close_timeout: float = 5.0,
    ) -> None:
        if isinstance(model, str):
            try:
                model = resolve_model(model)
            except UnknownModelError as exc:
                raise UnknownModelError(f"Agent(model={model!r}): {exc}") from exc
        elif model is not None and not isinstance(model, Model):
            raise TypeError(f"Agent(model=...) takes a Model or 'provider/model-id', got {model!r}")
        self.stream_fn = stream_fn
        self.registry = registry
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.get_api_key = get_api_key
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.finish_turn = finish_turn
        self.prepare_request = prepare_request
        self.prepare_next_turn = prepare_next_turn
        self.should_stop_after_turn = should_stop_after_turn
        self.tool_execution = tool_execution
        self.max_concurrent_tools = max_concurrent_tools
        self.session_id = session_id
        self.thinking_budgets = thinking_budgets
        self.transport = transport
        self.max_retry_delay_ms = max_retry_delay_ms
        self.on_payload = on_payload
        self.on_response = on_response
        self.stream_options = stream_options
        self.close_timeout = close_timeout
        self._steering = PendingMessageQueue(steering_mode)
        self._follow_up = PendingMessageQueue(follow_up_mode)
        self._listeners = ListenerSet()
        self._active: _ActiveRun | None = None
        self._skip_steering_poll = False
        self._options = RequestOptions()

        transcript = list(messages or [])
        tool_list = list(tools or [])
        if not (transcript and getattr(transcript[0], "role", None) == "system"):
            head = create_initial_system_message(
                system_prompt, [to_tool_declaration(t) for t in tool_list]
            )
            if head is not None:
                transcript.insert(0, head)
        self.state = AgentState(
            model=model or UNKNOWN_MODEL,
            thinking_level=thinking_level,
            tools=tool_list,
            messages=transcript,
        )
        self.state._on_message_end = self._accept_queued

    # ------------------------------------------------------------------ options

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        PendingMessageQueue(mode)  # validates
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        PendingMessageQueue(mode)
        self._follow_up.mode = mode

    @property
    def signal(self) -> AbortSignal | None:
        """The active run's abort signal, or ``None`` when idle."""
        active = self._active
        return active.controller.signal if active is not None else None

    # ------------------------------------------------------------------ listeners

    def subscribe(self, listener: Callable[..., Any]) -> Callable[[], None]:
        """Call ``listener(event, signal)`` (or ``listener(event)``) for every event, in
        subscription order, sync or async. Returns the function that unsubscribes."""
        entry = self._listeners.add(listener)
        return lambda: self._listeners.remove(entry)

    # ------------------------------------------------------------------ queues

    def steer(self, message: Any) -> None:
        """Queue a message for the running turn's next request (a ``str`` is a user
        message). Safe from any thread; when idle it waits for the next run."""
        self._steering.enqueue(_as_message(message))

    def follow_up(self, message: Any) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._follow_up.enqueue(_as_message(message))

    def clear_steering_queue(self) -> None:
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        self._follow_up.clear()

    def clear_all_queues(self) -> None:
        self._steering.clear()
        self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return self._steering.has_items() or self._follow_up.has_items()

    def peek_queued_messages(self) -> list[AgentMessage]:
        """The batch the next drain would deliver: steering first, else follow-up."""
        batch = self._steering.peek()
        return batch if batch else self._follow_up.peek()

    def take_queued_messages(self, predicate: Callable[[Any], bool]) -> list[AgentMessage]:
        """Remove the queued messages matching ``predicate`` (steering, then follow-up)."""
        return self._steering.take(predicate) + self._follow_up.take(predicate)

    # ------------------------------------------------------------------ runs

    async def prompt(
        self,
        message: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> None:
        """Run the agent on a new input: a text (with optional images), a message, or a
        list of messages. Returns once the run settled (``agent_end`` delivered)."""
        if self._active is not None:
            raise AgentBusyError(_PROMPT_BUSY)
        prompts: list[AgentMessage]
        if isinstance(message, str):
            prompts = [_user_message(message, images)]
        elif isinstance(message, (list, tuple)):
            prompts = list(message)
        else:
            prompts = [message]
        await self._run(prompts)

    async def continue_(self) -> None:
        """Continue from the transcript: answer a trailing user/tool-result message, or
        deliver queued steering / follow-up messages after an assistant message."""
        if self._active is not None:
            raise AgentBusyError(_CONTINUE_BUSY)
        messages = self.state.messages
        if all(getattr(m, "role", None) == "system" for m in messages):
            raise ContinueError("No messages to continue from")
        if getattr(messages[-1], "role", None) == "assistant":
            steering = self._steering.drain()
            if steering:
                await self._run(steering, skip_initial_steering_poll=True)
                return
            follow_ups = self._follow_up.drain()
            if follow_ups:
                await self._run(follow_ups)
                return
            raise ContinueError("Cannot continue from message role: assistant")
        await self._run(None)

    def abort(self, reason: object = None) -> None:
        """Abort the active run (sync, idempotent, safe from any thread; no-op when idle)."""
        active = self._active
        if active is not None:
            active.controller.abort(reason)

    async def wait_for_idle(self) -> None:
        """Return once no run is active (right away, after a checkpoint, when idle)."""
        active = self._active
        if active is None:
            await anyio.lowlevel.checkpoint()
            return
        await active.wait()

    def reset(self) -> None:
        """Forget the conversation but keep the system head (prompt, sections, declared
        tools); clear the queues and the error."""
        if self._active is not None:
            raise AgentBusyError(_RESET_BUSY)
        head = get_current_system_message(self.state.messages)
        self.state._reset([head] if head is not None else [])
        self.clear_all_queues()

    async def _run(
        self, prompts: list[AgentMessage] | None, *, skip_initial_steering_poll: bool = False
    ) -> None:
        if self._active is not None:
            raise AgentBusyError("Agent is already processing.")
        active = self._active = _ActiveRun()
        state = self.state
        state._start_run()
        signal = active.controller.signal
        try:
            self._skip_steering_poll = skip_initial_steering_poll
            config = build_loop_config(self, self._options)
            context = AgentContext(messages=list(state.messages), tools=list(state.tools))
            dispatcher = Dispatcher(self._listeners, state._reduce, signal)
            try:
                await execute_loop(
                    prompts, context, config, dispatcher, signal, self.stream_fn, owned=True
                )
            except Exception as exc:
                await deliver_run_failure(state, self._listeners, exc, signal, self.close_timeout)
        finally:
            self._steering.restore()
            self._follow_up.restore()
            state._finish_run()
            self._active = None
            active.finish()

    def _poll_steering(self) -> list[Any]:
        if self._skip_steering_poll:
            self._skip_steering_poll = False
            return []
        return self._steering.drain()

    def _accept_queued(self, message: Any) -> None:
        """A message reached its ``message_end``: it is no longer reserved by a queue."""
        self._steering.accept(message)
        self._follow_up.accept(message)
