"""The agent loop engine: turns, tools, hooks, queues and the abort outcome.

Stateless: given prompt messages, a context and a config it runs turns until nothing is
left to do, emitting agent events through a ``Dispatcher`` and returning the messages it
added. All of its work runs inside one cancel scope that the run's ``AbortSignal`` cancels;
after an abort the engine itself, outside that scope, writes the outcome: the aborted
assistant message (content so far kept) or one result per tool call of the batch, then
``turn_end`` and ``agent_end``. The provider is never called after an abort.
"""

from __future__ import annotations

import copy
import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    Context,
    StreamOptions,
    ToolCall,
    ToolResultMessage,
)
from ..ai._inline import InlineStream
from ..ai._registry import default_registry
from ..ai._stream import resolve_stream_fn
from ._batch import ToolBatch
from ._config import AgentLoopConfig, default_convert_to_llm, turn_decision
from ._declarations import ToolDeclarations
from ._dispatch import Dispatcher, checkpoint_if_aborted
from ._hooks import call_hook
from ._outcome import write_aborted_outcome
from ._parallel import ToolGroup
from ._prepare import prepare_next_turn, prepare_request
from ._types import (
    AgentContext,
    AgentEndEvent,
    AgentMessage,
    AgentStartEvent,
    AgentTurnContext,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)

__all__ = ["LoopRun"]

_DEFAULT_OPTIONS = StreamOptions()  # never mutated: requests get a replaced copy


class LoopRun:
    """One invocation of the loop. ``await run(prompts)`` (``prompts=None`` continues
    from the context) returns the new messages; see the module docstring for abort."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        stream_fn: Any = None,
        *,
        owned: bool = False,
    ) -> None:
        # ``owned``: the caller made ``context`` (and its lists) for this run alone.
        self.owned = owned
        self.context = (
            context if owned else AgentContext(messages=context.messages, tools=list(context.tools))
        )
        self.config = config
        self.dispatcher = dispatcher
        self.signal = signal
        self.stream_fn = stream_fn
        self.model = config.model
        self.thinking_level = config.thinking_level
        self.new_messages: list[AgentMessage] = []
        self.scope = anyio.CancelScope()
        # one task group for the run's parallel tool calls, opened when first needed
        self.tool_group = ToolGroup()
        # progress, read by the abort outcome
        self.agent_started = False
        self.turn_open = False
        self.stream: InlineStream | None = None
        self.placeholder = False
        self.assistant: AssistantMessage | None = None
        self.assistant_started = False
        self.assistant_ended = False
        self.batch: ToolBatch | None = None
        self.turn_results: list[ToolResultMessage] = []
        self.open_input: tuple[AgentMessage, bool] | None = None
        # prompt messages appended to the transcript whose events were not emitted yet
        self.unannounced: deque[AgentMessage] = deque()
        self.declarations = ToolDeclarations()
        self.batch_committed = False
        self.finished = False

    # ------------------------------------------------------------------ entry

    async def run(self, prompts: list[AgentMessage] | None) -> list[AgentMessage]:
        try:
            with self.scope:
                unregister = self.signal.on_abort(self._abort_requested)
                try:
                    try:
                        await self._body(prompts)
                    except BaseException as exc:
                        if not self.tool_group.opened or not await self.tool_group.close(exc):
                            raise
                    else:
                        if self.tool_group.opened:
                            await self.tool_group.close(None)
                    return self.new_messages
                finally:
                    unregister()
            # The abort scope caught the cancellation: the run was aborted.
            self.dispatcher.checkpoint_on_abort = False
            await self._write_aborted_outcome()
            # The caller may have been cancelled meanwhile (a second Ctrl-C while the
            # closing events were delivered): that takes effect here.
            await anyio.lowlevel.checkpoint_if_cancelled()
            return self.new_messages
        except anyio.get_cancelled_exc_class():
            # Cancellation escaped the abort scope: the caller's scope was cancelled
            # (perhaps on top of an abort).
            await self._close_after_external_cancel()
            raise

    def _abort_requested(self) -> None:
        self.dispatcher.defer_while_delivering(self.scope.cancel)

    async def _close_after_external_cancel(self) -> None:
        """The caller's scope was cancelled: leave the same consistent state as an abort,
        delivering the closing events within ``close_timeout``."""
        timeout = self.config.close_timeout
        self.dispatcher.checkpoint_on_abort = False
        self.dispatcher.set_close_deadline(anyio.current_time() + timeout)
        with anyio.move_on_after(timeout, shield=True):
            await self._write_aborted_outcome()

    async def _abort_now(self) -> None:
        """An abort requested during synchronous work takes effect here."""
        await checkpoint_if_aborted(self.signal, self.scope)

    async def _body(self, prompts: list[AgentMessage] | None) -> None:
        context = self.context
        if prompts is not None:
            if not self.owned:
                context.messages = list(context.messages)  # the caller's list stays as it was
            initial = self.declarations.declare(context, prompts)
            self.new_messages = list(initial)
            context.messages.extend(initial)
            self.unannounced.extend(initial)
            self.agent_started = True
            await self.dispatcher.emit(AgentStartEvent())
            self.turn_open = True
            await self.dispatcher.emit(TurnStartEvent())
            await self._announce_prompts()
        else:
            self.agent_started = True
            await self.dispatcher.emit(AgentStartEvent())
            self.turn_open = True
            await self.dispatcher.emit(TurnStartEvent())
        await self._loop()

    async def _announce_prompts(self) -> None:
        """Emit the prompt messages (already in the transcript) not emitted yet."""
        unannounced = self.unannounced
        while unannounced:
            await self._emit_input(unannounced.popleft(), append=False)

    # ------------------------------------------------------------------ the turn loop

    async def _poll(self, fn: Callable[..., Any] | None) -> list[AgentMessage]:
        if fn is None:
            return []
        if not self.dispatcher.idle:
            await self.dispatcher.settle()
        messages = fn()
        if type(messages) is not list and inspect.isawaitable(messages):
            messages = await messages
        if self.signal._aborted:
            await self._abort_now()
        return list(messages) if messages else []

    async def _loop(self) -> None:
        config = self.config
        pending = await self._poll(config.get_steering_messages)
        last_turn: AgentTurnContext | None = None
        explicit_continuation = False
        while True:
            has_more_tool_calls = True
            while has_more_tool_calls or pending:
                prepared: list[AgentMessage] = []
                if last_turn is not None:
                    if config.prepare_next_turn is not None:
                        prepared = await prepare_next_turn(self, last_turn)
                    if not pending:
                        pending = await self._poll(config.get_steering_messages)
                    await self._start_turn()
                await self._accept_input([*prepared, *pending])
                pending = []
                if config.prepare_request is not None:
                    await prepare_request(self)

                message = await self._stream_response()
                if message.stop_reason in ("error", "aborted"):
                    last_turn = self._turn_context(message, [])
                    if config.finish_turn is not None:
                        await call_hook(config.finish_turn, last_turn, self.signal)
                    await self._end_turn(message, [])
                    await self._end_run()
                    return

                tool_calls = [b for b in message.content if isinstance(b, ToolCall)]
                results: list[ToolResultMessage] = []
                has_more_tool_calls = False
                if tool_calls:
                    results, terminate = await self._run_batch(message, tool_calls)
                    has_more_tool_calls = not terminate
                last_turn = self._turn_context(message, results)
                decision = None
                if config.finish_turn is not None:
                    await self.dispatcher.settle()
                    decision = turn_decision(
                        await call_hook(config.finish_turn, last_turn, self.signal)
                    )
                    if self.signal._aborted:
                        await self._abort_now()
                await self._end_turn(message, results)
                if decision == "end":
                    await self._end_run()
                    return
                if config.should_stop_after_turn is not None:
                    stop = await call_hook(config.should_stop_after_turn, last_turn, self.signal)
                    if self.signal._aborted:
                        await self._abort_now()
                    if stop:
                        await self._end_run()
                        return
                explicit_continuation = decision == "continue"
                pending = await self._poll(config.get_steering_messages)
                if has_more_tool_calls or pending:
                    explicit_continuation = False
            follow_ups = await self._poll(config.get_follow_up_messages)
            if follow_ups:
                explicit_continuation = False
                pending = follow_ups
                continue
            if explicit_continuation:
                explicit_continuation = False
                continue
            break
        await self._end_run()

    async def _accept_input(self, pending: list[AgentMessage]) -> None:
        """Declare tool changes, then emit and append each pending message."""
        for message in self.declarations.declare(self.context, pending):
            await self._emit_input(message, append=True)

    async def _emit_input(self, message: AgentMessage, *, append: bool) -> None:
        self.open_input = (message, append)
        await self.dispatcher.emit(MessageStartEvent(message=message))
        await self._close_input()

    async def _close_input(self) -> None:
        """End the input message whose ``message_start`` was emitted (also after an
        abort: once started, a message is accepted, so events stay well nested)."""
        if self.open_input is None:
            return
        message, append = self.open_input
        self.open_input = None
        if append:
            self.context.messages.append(message)
            self.new_messages.append(message)
        await self.dispatcher.emit(MessageEndEvent(message=message))

    def _turn_context(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> AgentTurnContext:
        return AgentTurnContext(
            message=message,
            tool_results=results,
            context=self.context,
            new_messages=self.new_messages,
        )

    async def _start_turn(self) -> None:
        self.assistant = None
        self.batch_committed = False
        self.assistant_started = self.assistant_ended = False
        self.turn_results = []
        self.turn_open = True
        await self.dispatcher.emit(TurnStartEvent())

    async def _end_turn(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.turn_open = False
        await self.dispatcher.emit(TurnEndEvent(message=message, tool_results=results))

    async def _end_run(self) -> None:
        self.finished = True
        await self.dispatcher.emit(AgentEndEvent(messages=self.new_messages))

    # ------------------------------------------------------------------ one request

    async def _stream_response(self) -> AssistantMessage:
        config = self.config
        signal = self.signal
        messages = self.context.messages
        if config.transform_context is not None:
            messages = await call_hook(config.transform_context, messages, signal)
            if self.signal._aborted:
                await self._abort_now()
        if config.convert_to_llm is None:
            llm_messages = default_convert_to_llm(messages)  # a new list
        else:
            llm_messages = list(await call_hook(config.convert_to_llm, messages))
            if self.signal._aborted:
                await self._abort_now()
        base = config.stream_options or _DEFAULT_OPTIONS
        api_key = None
        if config.get_api_key is not None:
            api_key = await call_hook(config.get_api_key, self.model.provider)
            if self.signal._aborted:
                await self._abort_now()
        level = self.thinking_level
        options = msgspec.structs.replace(
            base,
            api_key=api_key or base.api_key,
            signal=signal,
            reasoning=None if level == "off" else level,
            registry=base.registry or config.registry or default_registry,
        )
        # No request is made once the run was aborted.
        if self.signal._aborted:
            await self._abort_now()
        stream_fn, name = resolve_stream_fn(self.model, self.stream_fn, config.registry)
        dispatcher = self.dispatcher
        self.placeholder = False
        self.assistant = None
        self.assistant_started = self.assistant_ended = False
        stream = self.stream = InlineStream(
            self.model,
            name,
            signal,
            self._on_stream_event,
            dispatcher.has_room,
            dispatcher.wait_for_room,
        )
        final = await stream.run(stream_fn, self.model, Context(messages=llm_messages), options)
        self.stream = None
        await self._accept_assistant(final)
        return final

    def _on_stream_event(self, event: Any) -> None:
        """Each provider event, as it is sent: the partial goes into the working
        transcript at ``start``; block events become ``message_update``s."""
        kind = event.type
        if kind == "done" or kind == "error":
            return
        stream = self.stream
        assert stream is not None
        if kind == "start":
            partial = stream.message
            self.context.messages.append(partial)
            self.placeholder = True
            self.assistant_started = True
            self.dispatcher.send_nowait(MessageStartEvent(message=copy.copy(partial)))
        elif self.placeholder:
            self.dispatcher.send_nowait(
                MessageUpdateEvent(
                    message=stream.message.__copy__(),  # type: ignore[union-attr]
                    assistant_message_event=event,
                )
            )

    async def _accept_assistant(self, final: AssistantMessage) -> None:
        final.thinking_level = self.thinking_level
        context_messages = self.context.messages
        self.assistant = final
        self.new_messages.append(final)
        if self.placeholder:
            context_messages[-1] = final
            self.placeholder = False
        else:
            context_messages.append(final)
        if not self.assistant_started:
            self.assistant_started = True
            await self.dispatcher.send(MessageStartEvent(message=copy.copy(final)))
        self.assistant_ended = True
        await self.dispatcher.emit(MessageEndEvent(message=final))

    # ------------------------------------------------------------------ tools

    async def _run_batch(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], bool]:
        batch = self._new_batch(message, calls)
        if message.stop_reason == "length":
            await batch.fail_truncated()
            terminate = False
        else:
            await batch.run()
            terminate = batch.terminates()
        results = self._commit_batch()
        return results, terminate

    def _new_batch(self, message: AssistantMessage, calls: list[ToolCall]) -> ToolBatch:
        self.batch = ToolBatch(
            message=message,
            calls=calls,
            context=self.context,
            config=self.config,
            dispatcher=self.dispatcher,
            signal=self.signal,
            tool_group=self.tool_group,
        )
        return self.batch

    def _commit_batch(self) -> list[ToolResultMessage]:
        batch = self.batch
        assert batch is not None
        self.batch = None
        self.batch_committed = True
        results = batch.result_messages()
        self.context.messages.extend(results)
        self.new_messages.extend(results)
        self.turn_results = results
        return results

    # ------------------------------------------------------------------ abort outcome

    async def _write_aborted_outcome(self) -> None:
        await write_aborted_outcome(self)
