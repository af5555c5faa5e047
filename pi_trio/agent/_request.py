"""One run's requests: what the next request is made of, and making it.

``RunRequests`` holds what a run's requests read that changes between them: the model
and the thinking level (``prepare_next_turn`` and ``prepare_request`` may replace them,
a fallback goes on with the next model of the chain). It builds a request's options
(``api_key`` from ``get_api_key``, the run's signal, its reasoning level, the registry,
the agent's identity under the options' own) and makes the request: the context through
``transform_context`` and ``convert_to_llm`` (or the incremental ``LlmView``), the
response streamed in place through the lifecycle into the transcript
(``request_once``). With compaction, ``request`` compacts first when the context is over
the threshold and asks once more after compacting a response that overflowed the context
window; ``summary_request`` is a compaction's own request. It is the ``Requester`` that
``AskAgain`` drives; the turn loop (``LoopRun``) decides when a request is made, and
calls the hooks that reshape the next one (``prepare_next_turn``, ``prepare_request``)
through it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio.lowlevel
import msgspec

from ..ai import (
    AbortSignal,
    AssistantMessage,
    Context,
    Model,
    StreamOptions,
    complete_simple,
)
from ..ai._seam import InlineStream, resolve_stream_fn
from ..ai.providers import (
    PI_TRIO_ATTRIBUTION,
    ClientIdentity,
    default_registry,
    merge_client_identity,
)
from ._again import AskAgain
from ._backend import SchedulerCalls
from ._compactor import Compactor
from ._config import AgentLoopConfig
from ._dispatch import Dispatcher
from ._hooks import coerce_result, next_turn_arguments
from ._lifecycle import RunLifecycle
from ._limits import LimitGate, RunCounters
from ._types import (
    AgentLoopTurnUpdate,
    AgentMessage,
    AgentRequestUpdate,
    AgentTurnContext,
    PrepareRequestContext,
)
from ._view import LlmView

__all__ = ["DEFAULT_AGENT_IDENTITY", "RunRequests"]

_DEFAULT_OPTIONS = StreamOptions()  # never mutated: requests get a replaced copy
DEFAULT_AGENT_IDENTITY = ClientIdentity(attribution=PI_TRIO_ATTRIBUTION)
"""The identity of an agent's requests; ``StreamOptions.identity`` overrides it field by
field."""


class RunRequests:
    """The requests of one run (see the module docstring). ``call`` is the run's hook
    call (``LoopRun.call``: the hook, then the abort check); ``gate`` (run limits),
    ``compactor`` and ``again`` (retries and fallbacks) are made here when the config
    asks for them."""

    __slots__ = (
        "_llm_view",
        "again",
        "call",
        "calls",
        "compactor",
        "config",
        "dispatcher",
        "gate",
        "identity",
        "life",
        "model",
        "signal",
        "stream_fn",
        "thinking_level",
    )

    def __init__(
        self,
        config: AgentLoopConfig,
        life: RunLifecycle,
        dispatcher: Dispatcher,
        signal: AbortSignal,
        stream_fn: Any,
        call: Callable[..., Awaitable[Any]],
        calls: SchedulerCalls,
    ) -> None:
        self.config = config
        self.life = life
        self.dispatcher = dispatcher
        self.signal = signal
        self.stream_fn = stream_fn
        self.call = call
        self.calls = calls
        self.model = config.model
        self.thinking_level = config.thinking_level
        # the agent's attribution under the request options' identity (shared, never
        # mutated, when the options have none)
        override = (config.stream_options or _DEFAULT_OPTIONS).identity
        self.identity = (
            DEFAULT_AGENT_IDENTITY
            if override is None
            else merge_client_identity(DEFAULT_AGENT_IDENTITY, override)
        )
        self._llm_view = LlmView()
        self.compactor = (
            None
            if config.compaction is None
            else Compactor(config.compaction, life, call, dispatcher.settle, self.summary_request)
        )
        self.gate: LimitGate | None = None
        if config.limits:
            self.gate = LimitGate(config.limits, config.limit_counters or RunCounters())
            life.counters = self.gate.counters
        # retries and fallbacks of a failed response
        self.again = AskAgain(config, life, self.gate) if AskAgain.wanted(config) else None

    # ------------------------------------------------------------------ the hooks that reshape

    def _apply_update(self, update: AgentLoopTurnUpdate | AgentRequestUpdate) -> None:
        if update.context is not None:
            self.life.context = update.context
        if update.model is not None:
            self.model = update.model
        if update.thinking_level is not None:
            self.thinking_level = update.thinking_level

    async def prepare_next_turn(self, turn: AgentTurnContext) -> list[AgentMessage]:
        """Call ``prepare_next_turn`` (either form); return the messages it adds."""
        hook = self.config.prepare_next_turn
        assert hook is not None
        await self.dispatcher.settle()
        raw = await self.call(hook, *next_turn_arguments(hook, turn, self.signal))
        update = coerce_result(raw, AgentLoopTurnUpdate, "prepare_next_turn")
        if update is None:
            return []
        self._apply_update(update)
        return list(update.messages or [])

    async def prepare_request(self) -> None:
        """Call ``prepare_request`` and apply its update (the loop then accepts the
        messages steered while it ran)."""
        hook = self.config.prepare_request
        assert hook is not None
        await self.dispatcher.settle()
        request = PrepareRequestContext(
            context=self.life.context, model=self.model, thinking_level=self.thinking_level
        )
        raw = await self.call(hook, request, self.signal)
        update = coerce_result(raw, AgentRequestUpdate, "prepare_request")
        if update is not None:
            self._apply_update(update)

    # ------------------------------------------------------------------ one request

    async def request(self) -> AssistantMessage:
        """The turn's request (``AskAgain`` asks again through it): compacted first when
        the context is over the threshold, and made once more after compacting when the
        response overflowed the context window (never twice)."""
        compactor = self.compactor
        if compactor is None:
            return await self.request_once()
        await compactor.before_request(self.model)
        message = await self.request_once()
        if (
            compactor.overflowed(message, self.model)
            and (self.gate is None or self.gate.allows_request())
            and await compactor.recover(message, self.model)
        ):
            message = await self.request_once()
        return message

    def recovers(self, message: AssistantMessage) -> bool:
        """Whether the failed ``message`` overflowed and compaction handles overflows: it
        is then never retried on the same model (a fallback model may take it)."""
        compactor = self.compactor
        return compactor is not None and compactor.overflowed(message, self.model)

    async def _api_key(self, model: Model) -> str | None:
        hook = self.config.get_api_key
        return None if hook is None else await self.call(hook, model.provider)

    def _options(self, api_key: str | None, level: str) -> StreamOptions:
        """The options of a request (``api_key`` from ``get_api_key``, if any)."""
        config = self.config
        base = config.stream_options or _DEFAULT_OPTIONS
        return msgspec.structs.replace(
            base,
            api_key=api_key or base.api_key,
            signal=self.signal,
            reasoning=None if level == "off" else level,
            registry=base.registry or config.registry or default_registry,
            identity=self.identity,
        )

    async def summary_request(self, model: Model, context: Context, level: str) -> AssistantMessage:
        """A compaction's summary request: the run's options and stream function, no
        prompt caching (the request is made once)."""
        options = self._options(await self._api_key(model), level)
        options = msgspec.structs.replace(options, cache_retention="none")
        if self.calls.deadline_passed():  # no request once the caller's deadline passed
            await anyio.lowlevel.checkpoint()
        return await complete_simple(
            model, context, options, stream_fn=self.stream_fn, registry=self.config.registry
        )

    async def request_once(self) -> AssistantMessage:
        """One request to ``model``: the response, in the transcript."""
        config = self.config
        messages = self.life.context.messages
        if config.transform_context is not None:
            messages = await self.call(config.transform_context, messages, self.signal)
        if config.convert_to_llm is None:
            llm_messages = self._llm_view.convert(messages)  # a new list
        else:
            llm_messages = list(await self.call(config.convert_to_llm, messages))
        api_key = None
        if config.get_api_key is not None:
            api_key = await self.call(config.get_api_key, self.model.provider)
        options = self._options(api_key, self.thinking_level)
        stream_fn, name = resolve_stream_fn(self.model, self.stream_fn, config.registry)
        life = self.life
        dispatcher = self.dispatcher
        stream = InlineStream(
            self.model,
            name,
            self.signal,
            dispatcher.ready,
            life.deliver_stream_event,
            life.send_stream_event,
        )
        if self.calls.deadline_passed():  # no request once the caller's deadline passed
            await anyio.lowlevel.checkpoint()
        life.begin_request(stream)
        final = await stream.run(stream_fn, self.model, Context(messages=llm_messages), options)
        again = self.again
        if again is not None and again.note is not None:  # a model fallen back to
            final.diagnostics = [*(final.diagnostics or []), again.take_note()]
        await life.accept_response(final, self.thinking_level)
        return final
