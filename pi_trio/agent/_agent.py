"""``Agent``: the stateful wrapper — transcript, queues, listeners and one run at a time.

A run (``prompt()`` / ``continue_()``) lives exactly as long as the awaited call: the engine
runs in the caller's task inside the run's abort scope, reduces each event into
``agent.state`` and hands it to the listeners itself (awaiting asynchronous ones), and a
parallel tool call that has to wait gets a task. ``abort()`` cancels that scope; listeners
are never interrupted. The call returns after ``agent_end`` reached every listener; then
``state.is_streaming`` is false and the agent is ready for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar, Unpack, overload

import anyio
import anyio.lowlevel
import msgspec

from ..ai import (
    AbortController,
    AbortSignal,
    ImageContent,
    Model,
    PiError,
    StreamOptions,
    TextContent,
    UserMessage,
)
from ..ai.providers import ProviderRegistry, StreamFn, now_ms
from ..ai.transcript import (
    create_initial_system_message,
    get_current_system_message,
)
from ._approval import ApprovalDecision
from ._checks import check_message, check_messages, check_run_settings, check_tools
from ._config import AgentHooks, AgentListener, AgentLoopConfig
from ._created import CreatedHooks
from ._declarations import shared_declaration
from ._dispatch import Dispatcher, ListenerSet
from ._fallback import model_chain
from ._hooks import call_hook
from ._limits import RunCounters
from ._loop import LoopRun
from ._options import (
    AgentFlatKeywords,
    check_group,
    group_flat_keywords,
    install_moved_attributes,
)
from ._outcomes import failed_run_events
from ._output import OutputRun
from ._queue import PendingMessageQueue
from ._result import RunResult
from ._resume import ResumePlan, check_edits, pending_approvals, plan_resume
from ._run import ContinueError
from ._settings import DEFAULT_OUTPUT, DEFAULT_POLICY, OutputSettings, RunPolicy
from ._state import AgentState, StateReducer
from ._subagent import sub_agent_tool
from ._tool import AgentTool
from ._types import (
    AgentContext,
    AgentMessage,
)
from ._view import Transcript

__all__ = ["Agent", "AgentBusyError", "AgentCreatedHook", "on_agent_created"]

T = TypeVar("T")

_PROMPT_BUSY = (
    "Agent is already processing a prompt. Use steer() or followUp() to queue messages, "
    "or wait for completion."
)
_NO_HOOKS = AgentHooks()  # what a run reads when no hook was ever set; never mutated
_CONTINUE_BUSY = "Agent is already processing. Wait for completion before continuing."
_RESUME_BUSY = "Agent is already processing. Wait for completion before resuming."
_RESET_BUSY = "Agent is already processing. Wait for completion before resetting."


class AgentBusyError(PiError, RuntimeError):
    """A run is active; the message says what to do instead."""


def _user_message(text: str, images: Sequence[ImageContent] | None = None) -> UserMessage:
    content: list[TextContent | ImageContent] = [TextContent(text=text)]
    if images:
        content.extend(images)
    return UserMessage(content=content, timestamp=now_ms())


def _as_message(message: Any, where: str) -> Any:
    if isinstance(message, str):
        return _user_message(message)
    check_message(message, where)
    return message


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
    ``messages``, ``thinking_level``), where requests go (``stream_fn``, ``registry``) and
    four groups of settings, each a public attribute read at the start of each run:

    - ``hooks=AgentHooks(...)``: the hooks (``before_tool_call``, ``finish_turn``…);
    - ``stream_options=StreamOptions(...)``: the options of every request;
    - ``policy=RunPolicy(...)``: tool execution, concurrency, close timeout, retries,
      context compaction, fallback models, run limits, queue modes;
    - ``output=OutputSettings(...)``: the typed answer every run asks for (``type``,
      ``mode``, ``max_retries``).

    ``model`` (required) is a ``Model`` or a catalog name, ``"provider/model-id"``; a
    list ``[primary, fallback, ...]`` is short for the first with
    ``RunPolicy(fallback=FallbackPolicy(models=[the rest]))``. A wrong argument is an
    error here, naming the argument, not a failed run later. Under
    ``RunLimits(per="agent")`` what all runs spend is counted in ``limit_counters``.

    Compatibility: each hook, the request options ``session_id``, ``thinking_budgets``,
    ``max_retry_delay_ms``, ``on_payload``, ``on_response``,
    ``on_provider_stream_event``, the policy's fields and ``output_type``,
    ``output_mode``, ``max_output_retries`` are also taken as keywords of their own
    (``Agent(tool_execution="sequential")``) and land in their group.
    """

    __slots__ = (
        "__weakref__",
        "_active",
        "_follow_up",
        "_hooks",
        "_listeners",
        "_output",
        "_policy",
        "_reducer",
        "_skip_steering_poll",
        "_steering",
        "_stream_options",
        "limit_counters",
        "registry",
        "state",
        "stream_fn",
    )

    def __init__(
        self,
        *,
        model: Model | str | Sequence[Model | str] | None = None,
        system_prompt: str | None = None,
        tools: Sequence[Any] | None = None,
        messages: Sequence[AgentMessage] | None = None,
        thinking_level: str = "off",
        stream_fn: StreamFn | None = None,
        registry: ProviderRegistry | None = None,
        hooks: AgentHooks | None = None,
        stream_options: StreamOptions | None = None,
        policy: RunPolicy | None = None,
        output: OutputSettings | None = None,
        **flat: Unpack[AgentFlatKeywords],
    ) -> None:
        check_run_settings(messages=messages, system_prompt=system_prompt, stream_fn=stream_fn)
        if flat:  # the compatibility spelling: each keyword lands in its group
            hooks, stream_options, policy, output = group_flat_keywords(
                (hooks, stream_options, policy, output), flat
            )
        self.stream_fn = stream_fn
        self.registry = registry
        # the hooks and request options are the agent's own copies (``agent.hooks.x = f``
        # changes this agent only), made on first read when none are given
        self._hooks: AgentHooks | None = None
        self._stream_options: StreamOptions | None = None
        if hooks is not None:
            check_group("hooks", hooks)
            self._hooks = msgspec.structs.replace(hooks)
        if stream_options is not None:
            check_group("stream_options", stream_options)
            self._stream_options = msgspec.structs.replace(stream_options)
        if policy is None:
            policy = DEFAULT_POLICY  # frozen: shared by every agent that gives none
        else:
            check_group("policy", policy)
        primary, fallback = model_chain(model, policy.fallback)
        if fallback is not policy.fallback:  # model=[primary, *fallbacks]
            policy = msgspec.structs.replace(policy, fallback=fallback)
        self._policy = policy
        if output is None:
            output = DEFAULT_OUTPUT
        else:
            check_group("output", output)
        self._output = output
        self.limit_counters = RunCounters()
        self._steering = PendingMessageQueue(policy.steering_mode)
        self._follow_up = PendingMessageQueue(policy.follow_up_mode)
        self._listeners = ListenerSet()
        self._active: _ActiveRun | None = None
        self._skip_steering_poll = False

        transcript = list(messages or [])
        tool_list = check_tools(tools)
        if not (transcript and getattr(transcript[0], "role", None) == "system"):
            head = create_initial_system_message(
                system_prompt, [shared_declaration(t) for t in tool_list]
            )
            if head is not None:
                transcript.insert(0, head)
        self.state = AgentState(
            model=primary,
            thinking_level=thinking_level,
            where="Agent",
            tools=tool_list,
            messages=transcript,
        )
        self._reducer = StateReducer(self.state, self._accept_queued)
        _created_hooks.notify(self)  # on_agent_created: e.g. instrumenting every agent

    # ------------------------------------------------------------------ settings

    @property
    def hooks(self) -> AgentHooks:
        """The Agent's hooks (its own copy), read at the start of each run."""
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = AgentHooks()
        return hooks

    @hooks.setter
    def hooks(self, hooks: AgentHooks) -> None:
        check_group("hooks", hooks)
        self._hooks = hooks

    @property
    def stream_options(self) -> StreamOptions:
        """The request options (its own copy), read at the start of each run."""
        options = self._stream_options
        if options is None:
            options = self._stream_options = StreamOptions()
        return options

    @stream_options.setter
    def stream_options(self, options: StreamOptions) -> None:
        check_group("stream_options", options)
        self._stream_options = options

    @property
    def policy(self) -> RunPolicy:
        """How runs go (``RunPolicy``, frozen): read at the start of each run; change it
        by assigning a new one, e.g. ``msgspec.structs.replace(agent.policy, ...)``."""
        return self._policy

    @policy.setter
    def policy(self, policy: RunPolicy) -> None:
        check_group("policy", policy)
        self._policy = policy
        self._steering.mode = policy.steering_mode
        self._follow_up.mode = policy.follow_up_mode

    @property
    def output(self) -> OutputSettings:
        """The typed answer every run asks for (``OutputSettings``, frozen); assign a
        new one to change it."""
        return self._output

    @output.setter
    def output(self, output: OutputSettings) -> None:
        check_group("output", output)
        self._output = output

    @property
    def signal(self) -> AbortSignal | None:
        """The active run's abort signal, or ``None`` when idle."""
        active = self._active
        return active.controller.signal if active is not None else None

    # ------------------------------------------------------------------ forks and sub-agents

    def fork(self) -> Agent:
        """A new, idle Agent with this one's model, thinking level, tools, its four groups
        of settings (its own copies of ``hooks`` and ``stream_options``; ``policy`` and
        ``output`` are frozen and shared: fallback models, limits, compaction), and a copy
        of its transcript (its listeners, queued messages and ``limit_counters`` stay here: the
        fork counts from zero)."""
        state = self.state
        return Agent(
            model=state.model,
            thinking_level=state.thinking_level,
            tools=list(state.tools),
            messages=list(state.messages),
            stream_fn=self.stream_fn,
            registry=self.registry,
            hooks=self._hooks,
            stream_options=self._stream_options,
            policy=self._policy,
            output=self._output,
        )

    def as_tool(
        self,
        name: str,
        description: str,
        *,
        forward_events: bool = False,
        keep_messages: bool = True,
    ) -> AgentTool:
        """This agent as a tool of another: each call runs a fork of it (``fork()``, made
        when the call starts) on the ``task`` the calling model writes, as a child of the
        call (an abort of the caller aborts it), and answers with its final text; the
        result's ``usage`` is what it spent, its ``details`` the messages it added
        (``keep_messages``). ``forward_events`` sends its events to the caller's
        listeners as ``tool_execution_update``s (``partial_result.details``)."""
        return sub_agent_tool(
            name,
            description,
            self.fork,
            forward_events=forward_events,
            keep_messages=keep_messages,
        )

    # ------------------------------------------------------------------ listeners

    def subscribe(self, listener: AgentListener) -> Callable[[], None]:
        """Call ``listener(event, signal)`` (or ``listener(event)``) for every event, in
        subscription order, sync or async. Returns the function that unsubscribes."""
        if not callable(listener):
            raise TypeError(
                "Agent.subscribe() takes a function called as listener(event) or "
                f"listener(event, signal), got {listener!r}"
            )
        entry = self._listeners.add(listener)
        return lambda: self._listeners.remove(entry)

    # ------------------------------------------------------------------ queues

    def steer(self, message: Any) -> None:
        """Queue a message for the running turn's next request (a ``str`` is a user
        message). Safe from any thread; when idle it waits for the next run."""
        self._steering.enqueue(_as_message(message, "Agent.steer()"))

    def follow_up(self, message: Any) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._follow_up.enqueue(_as_message(message, "Agent.follow_up()"))

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

    @overload
    async def prompt(
        self,
        message: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
        *,
        output_type: None = None,
    ) -> RunResult[Any]: ...

    @overload
    async def prompt(
        self,
        message: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
        *,
        output_type: type[T],
    ) -> RunResult[T]: ...

    async def prompt(
        self,
        message: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
        *,
        output_type: Any = None,
    ) -> RunResult[Any]:
        """Run the agent on a new input: a text (with optional images), a message, or a
        list of messages. Returns once the run settled (``agent_end`` delivered): the
        run's new messages and how it ended (``result.raise_for_error()`` raises if it
        failed). ``output_type`` (default: the Agent's) asks for a typed answer,
        ``result.output``."""
        if self._active is not None:
            raise AgentBusyError(_PROMPT_BUSY)
        prompts: list[AgentMessage]
        if isinstance(message, str):
            prompts = [_user_message(message, images)]
        elif isinstance(message, (list, tuple)):
            prompts = list(message)
            check_messages(prompts, "Agent.prompt([...])", "; give a str alone, not in a list")
        else:
            check_message(message, "Agent.prompt()")
            prompts = [message]
        return await self._run(prompts, output_type=output_type)

    @overload
    async def continue_(self, *, output_type: None = None) -> RunResult[Any]: ...

    @overload
    async def continue_(self, *, output_type: type[T]) -> RunResult[T]: ...

    async def continue_(self, *, output_type: Any = None) -> RunResult[Any]:
        """Continue from the transcript: answer a trailing user/tool-result message, or
        deliver queued steering / follow-up messages after an assistant message.
        ``output_type`` as for ``prompt()``."""
        if self._active is not None:
            raise AgentBusyError(_CONTINUE_BUSY)
        messages = self.state.messages
        if all(getattr(m, "role", None) == "system" for m in messages):
            raise ContinueError("No messages to continue from")
        if getattr(messages[-1], "role", None) == "assistant":
            steering = self._steering.drain()
            if steering:
                return await self._run(
                    steering, skip_initial_steering_poll=True, output_type=output_type
                )
            follow_ups = self._follow_up.drain()
            if follow_ups:
                return await self._run(follow_ups, output_type=output_type)
            raise ContinueError("Cannot continue from message role: assistant")
        return await self._run(None, output_type=output_type)

    async def resume(
        self, approvals: Mapping[str, ApprovalDecision], *, output_type: Any = None
    ) -> RunResult[Any]:
        """Continue a run that paused for approval: ``approvals`` maps the id of every
        pending call (``result.pending_approvals``) to ``approve()``, ``deny(reason)``
        or ``edit(arguments)``. Approved calls run, denied ones get an error result with
        the reason, edited ones run with the new arguments; each result takes its
        placeholder's place, and the run goes on as after any tool batch. Works from the
        transcript alone (another process, a restored session). Raises ``ResumeError``
        when nothing waits or the decisions do not fit (an edit whose arguments the
        tool's schema refuses, too), ``TranscriptChangedError`` when the transcript
        changed since the pause."""
        if self._active is not None:
            raise AgentBusyError(_RESUME_BUSY)
        await check_edits(plan_resume(self.state.messages, approvals), self.state.tools)
        # planned again: another run may have changed the transcript while the edits
        # were checked (from here to the run's start nothing waits)
        plan = plan_resume(self.state.messages, approvals)
        return await self._run(None, output_type=output_type, resume=plan)

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
        self._reducer.reset([head] if head is not None else [])
        self.clear_all_queues()

    async def _run(
        self,
        prompts: list[AgentMessage] | None,
        *,
        skip_initial_steering_poll: bool = False,
        output_type: Any = None,
        resume: ResumePlan | None = None,
    ) -> RunResult[Any]:
        if self._active is not None:
            raise AgentBusyError("Agent is already processing.")
        active = self._active = _ActiveRun()
        state = self.state
        self._reducer.start_run()
        signal = active.controller.signal
        try:
            # a type msgspec cannot describe fails here, before any event
            settings = self._output
            output = OutputRun.start(
                settings.type if output_type is None else output_type,
                settings.mode,
                settings.max_retries,
                state.model,
                self.stream_fn,
                state.tools,
            )
            self._skip_steering_poll = skip_initial_steering_poll
            config = self._loop_config()
            context = AgentContext(messages=Transcript(state.messages), tools=list(state.tools))
            if output is not None:
                config = output.configure(config, context)
            reduce = (
                self._reducer.reduce if resume is None else self._reducer.resuming(resume.slots)
            )
            dispatcher = Dispatcher(self._listeners, reduce, signal, self._policy.close_timeout)
            run: LoopRun | None = None
            try:
                # ``execute_loop`` inlined: one coroutine frame less per run in flight
                run = LoopRun(context, config, dispatcher, signal, self.stream_fn, owned=True)
                messages = await run.run(prompts, resume)
                await dispatcher.settle()
            except Exception as exc:
                events = failed_run_events(
                    state.messages, state.pending_tool_calls, state.model, exc, signal.aborted
                )
                await dispatcher.deliver_final(events)
                messages = events[-1].messages
            aborted = signal.aborted
            spent = run.compactor.usage if run is not None and run.compactor else None
            pending = pending_approvals(state.messages)
            if output is None:
                return RunResult(messages, aborted=aborted, spent=spent, pending_approvals=pending)
            return output.result(messages, aborted=aborted, spent=spent, pending_approvals=pending)
        finally:
            self._steering.restore()
            self._follow_up.restore()
            self._reducer.finish_run()
            self._active = None
            active.finish()

    def _loop_config(self) -> AgentLoopConfig:
        """The loop configuration of one run. Messages steered while the
        ``prepare_request`` hook runs join that same request."""
        hooks = self._hooks if self._hooks is not None else _NO_HOOKS
        steering = self._steering
        prepare_request = hooks.prepare_request
        get_request_steering_messages = None
        if prepare_request is not None:
            user_hook = prepare_request
            request_mark = [steering.enqueued]

            async def prepare_request(request: Any, signal: AbortSignal) -> Any:
                request_mark[0] = steering.enqueued
                return await call_hook(user_hook, request, signal)

            def get_request_steering_messages() -> list[Any]:
                if steering.enqueued == request_mark[0]:
                    return []
                request_mark[0] = steering.enqueued
                return steering.drain()

        state = self.state
        policy = self._policy
        limits = policy.limits
        counters = None
        if limits is not None and limits.per == "agent":
            counters = self.limit_counters
        return AgentLoopConfig(
            model=state.model,
            thinking_level=state.thinking_level,
            stream_options=self._stream_options,
            registry=self.registry,
            convert_to_llm=hooks.convert_to_llm,
            transform_context=hooks.transform_context,
            get_api_key=hooks.get_api_key,
            get_steering_messages=self._poll_steering,
            get_follow_up_messages=self._follow_up.drain,
            tool_execution=policy.tool_execution,
            max_concurrent_tools=policy.max_concurrent_tools,
            before_tool_call=hooks.before_tool_call,
            after_tool_call=hooks.after_tool_call,
            prepare_next_turn=hooks.prepare_next_turn,
            prepare_request=prepare_request,
            get_request_steering_messages=get_request_steering_messages,
            finish_turn=hooks.finish_turn,
            should_stop_after_turn=hooks.should_stop_after_turn,
            close_timeout=policy.close_timeout,
            retry=policy.retry,
            compaction=policy.compaction,
            fallback=policy.fallback,
            limits=limits,
            limit_counters=counters,
        )

    def _poll_steering(self) -> list[Any]:
        if self._skip_steering_poll:
            self._skip_steering_poll = False
            return []
        return self._steering.drain()

    def _accept_queued(self, message: Any) -> None:
        """A message reached its ``message_end``: it is no longer reserved by a queue."""
        self._steering.accept(message)
        self._follow_up.accept(message)


install_moved_attributes(Agent)


AgentCreatedHook: TypeAlias = Callable[[Agent], None]
"""``hook(agent)``: called with each new ``Agent``, synchronously, in the constructing
thread; what it raises propagates out of ``Agent(...)``."""

_created_hooks: CreatedHooks[Agent] = CreatedHooks()


def on_agent_created(hook: AgentCreatedHook) -> Callable[[], None]:
    """Call ``hook(agent)`` with every ``Agent`` constructed from now on, as the last
    step of ``Agent(...)`` (the agent fully set up), in the order the hooks were
    registered. Agents that exist already are not seen. Returns the function that removes
    the hook again. ``pi_trio.otel.instrument()`` uses it to instrument every new agent."""
    return _created_hooks.add(hook, "on_agent_created()")
