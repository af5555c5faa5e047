"""``FauxProvider``: a scripted provider for tests, with the original runtime's behaviour.

Responses are queued (``set_responses`` / ``append_responses``); each call takes the next
one, counts itself in ``state.call_count`` and streams the response in token-sized chunks,
optionally paced at ``tokens_per_second`` (so it runs on trio's autojump clock). Usage is
estimated from the prompt text, with a per-session prompt-cache simulation.
"""

from __future__ import annotations

import copy
import inspect
import random
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, Union

import anyio
import anyio.lowlevel
import msgspec

from pi_trio.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    DoneEvent,
    ErrorEvent,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Usage,
)
from pi_trio.ai.deferred import DeferredFetchOptions, DeferredHandle
from pi_trio.ai.providers import (
    ApiProvider,
    MessageBuilder,
    ProviderRegistry,
    ResponseInfo,
    default_registry,
    now_ms,
)

from ._faux_blocks import random_id
from ._faux_config import (
    DEFAULT_TOKEN_SIZE,
    FauxDeferred,
    FauxModel,
    FauxState,
    faux_deferred,
    faux_models,
    normalize_token_size,
)
from ._faux_deferred import DeferredBook, deferred_message
from ._faux_prompt import PromptMeasure
from ._faux_usage import (
    assistant_text,
    compact_json,
    estimate_tokens,
    split_by_token_size,
)

if TYPE_CHECKING:
    from anyio.abc import ObjectSendStream

__all__ = [
    "FauxDeferred",
    "FauxModel",
    "FauxProvider",
    "FauxResponseFactory",
    "FauxResponseStep",
    "FauxState",
]

NO_MORE_RESPONSES = "No more faux responses queued"
NO_STOP_REASON = "Faux response ended without a stop reason"
ABORTED = "Request was aborted"

FauxResponseFactory: TypeAlias = Callable[
    [Context, StreamOptions, FauxState, Model],
    "AssistantMessage | Awaitable[AssistantMessage]",
]
"""``factory(context, options, state, model)`` returns (or resolves to) the response."""

FauxResponseStep: TypeAlias = Union[AssistantMessage, FauxResponseFactory]  # noqa: UP007 (a typing.Union takes a docstring)
FauxResponseStep.__doc__ = """One scripted response of a ``FauxProvider``: an ``AssistantMessage``
(``faux_assistant_message(...)``), streamed as it is, or a factory
``factory(context, options, state, model)`` that returns one (or an awaitable of one),
called when the request comes in."""


def _check_step(step: object) -> FauxResponseStep:
    if isinstance(step, AssistantMessage) or callable(step):
        return step
    raise TypeError(
        "a faux response is an AssistantMessage (e.g. faux_assistant_message('hi')) or a "
        f"factory(context, options, state, model) returning one, got {step!r}"
    )


def _check_steps(steps: object, where: str) -> list[FauxResponseStep]:
    """``steps`` as a list of responses; a single response (or a str) is refused with the
    fix, instead of being iterated."""
    if isinstance(steps, (str, AssistantMessage)) or callable(steps):
        raise TypeError(
            f"FauxProvider.{where}() takes a list of responses, got {steps!r}; wrap it: "
            f"{where}([faux_assistant_message(...)])"
        )
    if not isinstance(steps, Iterable):
        raise TypeError(f"FauxProvider.{where}() takes a list of responses, got {steps!r}")
    return [_check_step(step) for step in steps]


class FauxProvider:
    """A scripted provider. Pass the instance as ``stream_fn=`` or ``register()`` it.

    ``api`` defaults to a unique ``faux:<ms>:<random>``; ``models`` to one model
    ``faux-1``. ``token_size`` is the (min, max) number of tokens (4 characters each) per
    streamed chunk; ``tokens_per_second`` paces the chunks (unset: one checkpoint per
    chunk); ``rng`` draws the chunk sizes. Response factories are called as
    ``factory(context, options, state, model)`` with the context as the caller passed it.

    A request with ``deferred=True`` is answered at once with a ``"deferred"`` message
    and a handle; the scripted response is made when a look (``fetch_deferred``) finds
    it ready, after ``deferred.pending_fetches`` looks that return the handle again
    (``FauxDeferred``; ``state.deferred_fetch_count`` counts the looks,
    ``state.cancelled_deferred`` lists what ``cancel_deferred`` was given).
    """

    def __init__(
        self,
        *,
        api: str | None = None,
        provider: str = "faux",
        models: Sequence[FauxModel | Mapping[str, Any]] | None = None,
        tokens_per_second: float | None = None,
        token_size: tuple[int | None, int | None] = DEFAULT_TOKEN_SIZE,
        rng: random.Random | None = None,
        deferred: FauxDeferred | Mapping[str, Any] | None = None,
    ) -> None:
        if tokens_per_second is not None and (
            not isinstance(tokens_per_second, (int, float)) or isinstance(tokens_per_second, bool)
        ):
            raise TypeError(
                f"tokens_per_second must be a number or None, got {tokens_per_second!r}"
            )
        self.api: str = random_id("faux") if api is None else api
        self.provider = provider
        self.models: list[Model] = faux_models(models, self.api, provider)
        self.tokens_per_second = tokens_per_second
        self.token_size: tuple[int, int] = normalize_token_size(token_size)
        self.state = FauxState()
        self._rng = random.Random() if rng is None else rng
        self._responses: deque[FauxResponseStep] = deque()
        self._usage = PromptMeasure()
        self._deferred = DeferredBook(faux_deferred(deferred))
        self.api_provider = ApiProvider(
            api=self.api,
            stream=self.stream,
            stream_simple=self.stream_simple,
            fetch_deferred=self.fetch_deferred,
            cancel_deferred=self.cancel_deferred,
        )

    def __repr__(self) -> str:
        return (
            f"<FauxProvider api={self.api!r} calls={self.state.call_count} "
            f"pending={len(self._responses)}>"
        )

    # ------------------------------------------------------------------ models & queue

    def get_model(self, id: str | None = None) -> Model | None:
        """The first model, or the model with ``id`` (``None`` if there is none)."""
        if id is None:
            return self.models[0]
        return next((model for model in self.models if model.id == id), None)

    @property
    def call_count(self) -> int:
        return self.state.call_count

    def set_responses(self, steps: Iterable[FauxResponseStep]) -> None:
        """Replace the queue with ``steps``."""
        self._responses = deque(_check_steps(steps, "set_responses"))

    def append_responses(self, steps: Iterable[FauxResponseStep]) -> None:
        self._responses.extend(_check_steps(steps, "append_responses"))

    @property
    def pending_response_count(self) -> int:
        return len(self._responses)

    def get_pending_response_count(self) -> int:
        return len(self._responses)

    # ------------------------------------------------------------------ registration

    def register(self, registry: ProviderRegistry | None = None) -> Callable[[], None]:
        """Register under ``self.api`` (in ``registry`` or the default registry); returns
        a function that removes the registration again."""
        target = default_registry if registry is None else registry
        source_id = random_id("faux-source")
        target.register(self.api_provider, source_id)

        def unregister() -> None:
            target.unregister_source(source_id)

        return unregister

    # ------------------------------------------------------------------ streaming

    async def stream(
        self,
        model: Model,
        context: Context,
        options: StreamOptions | None,
        send: ObjectSendStream[AssistantMessageEvent],
        /,
    ) -> None:
        """The stream function: the response is taken from the queue and the call
        counted before the first checkpoint."""
        step = self._responses.popleft() if self._responses else None
        self.state.call_count += 1
        if options is None:
            options = StreamOptions()
        try:
            await self._respond(model, options)
            if step is not None and options.deferred:
                prepared: AssistantMessage | ErrorEvent = self._deferred.submit(
                    step, model, context, options
                )
            else:
                prepared = await self._prepare(step, model, context, options)
        except Exception as exc:
            # Scripted failures (a raising factory or on_response) are request failures.
            text = str(exc) or type(exc).__name__
            await send.send(ErrorEvent(reason="error", error=self._error_message(model, text)))
            return
        if isinstance(prepared, ErrorEvent):
            await send.send(prepared)
        else:
            await self._stream_message(prepared, model, options, send)

    stream_simple = stream
    __call__ = stream

    async def fetch_deferred(
        self,
        model: Model,
        handle: DeferredHandle,
        options: DeferredFetchOptions | None,
        send: ObjectSendStream[AssistantMessageEvent],
        /,
    ) -> None:
        """One look at a deferred response: the handle again while looks are pending,
        then the scripted response (made once, on the first look that finds it ready)."""
        self.state.deferred_fetch_count += 1
        if options is None:
            options = DeferredFetchOptions()
        try:
            await self._respond(model, options)
            entry = self._deferred.find(handle)
            if entry.pending > 0:
                entry.pending -= 1
                prepared = deferred_message(model, entry.handle)
            else:
                if entry.final is None:
                    try:
                        made = await self._prepare(
                            entry.step, entry.model, entry.context, entry.submission_options()
                        )
                    except Exception as exc:
                        made = self._error_message(entry.model, str(exc) or type(exc).__name__)
                    assert isinstance(made, AssistantMessage)  # the step is never None
                    entry.final = made
                prepared = copy.deepcopy(entry.final)  # each look streams its own copy
        except Exception as exc:
            text = str(exc.args[0]) if isinstance(exc, LookupError) else str(exc)
            await send.send(ErrorEvent(reason="error", error=self._error_message(model, text)))
            return
        await self._stream_message(prepared, model, options, send)

    async def cancel_deferred(
        self, model: Model, handle: DeferredHandle, options: StreamOptions | None, /
    ) -> None:
        """Record the handle in ``state.cancelled_deferred``; later looks fail."""
        self.state.cancelled_deferred.append(copy.deepcopy(handle))
        self._deferred.cancel(handle)
        await self._respond(model, options or StreamOptions())

    async def _respond(self, model: Model, options: StreamOptions) -> None:
        on_response = options.on_response
        if on_response is not None:
            result = on_response(ResponseInfo(200, {}), model)
            if inspect.isawaitable(result):
                await result

    async def _prepare(
        self,
        step: FauxResponseStep | None,
        model: Model,
        context: Context,
        options: StreamOptions,
    ) -> AssistantMessage | ErrorEvent:
        if step is None:
            message = self._error_message(model, NO_MORE_RESPONSES)
            message.usage = self._estimate(context, options, message)
            return ErrorEvent(reason="error", error=message)
        if isinstance(step, AssistantMessage):
            scripted: object = step
        else:
            scripted = step(context, options, self.state, model)
            if inspect.isawaitable(scripted):
                scripted = await scripted
            if not isinstance(scripted, AssistantMessage):
                raise TypeError(
                    f"a faux response factory must return an AssistantMessage (e.g. "
                    f"faux_assistant_message(...)), got {scripted!r}"
                )
        message = msgspec.json.decode(msgspec.json.encode(scripted), type=AssistantMessage)
        message.api = self.api
        message.provider = self.provider
        message.model = model.id
        message.usage = self._estimate(context, options, message)
        return message

    def _estimate(
        self, context: Context, options: StreamOptions, message: AssistantMessage
    ) -> Usage:
        return self._usage.usage(
            context,
            assistant_text(message.content),
            session_id=options.session_id,
            cache_retention=options.cache_retention,
        )

    def _error_message(self, model: Model, text: str) -> AssistantMessage:
        return AssistantMessage(
            content=[],
            api=self.api,
            provider=self.provider,
            model=model.id,
            usage=Usage(),
            stop_reason="error",
            error_message=text,
            timestamp=now_ms(),
        )

    async def _pace(self, chunk: str) -> None:
        tokens_per_second = self.tokens_per_second
        if tokens_per_second is None or tokens_per_second <= 0:
            await anyio.lowlevel.checkpoint()
        else:
            await anyio.sleep(estimate_tokens(chunk) / tokens_per_second)

    def _chunks(self, text: str) -> list[str]:
        return split_by_token_size(text, *self.token_size, self._rng)

    async def _stream_message(
        self,
        message: AssistantMessage,
        model: Model,
        options: StreamOptions,
        send: ObjectSendStream[AssistantMessageEvent],
    ) -> None:
        signal = options.signal
        if signal is not None and signal.aborted:
            aborted = msgspec.structs.replace(
                message,
                content=[],
                stop_reason="aborted",
                error_message=ABORTED,
                timestamp=now_ms(),
            )
            await send.send(ErrorEvent(reason="aborted", error=aborted))
            return
        # Cancellation (abort) propagates from any checkpoint below; the runtime that owns
        # the cancel scope writes the aborted outcome from what was received.
        builder = MessageBuilder(model)
        builder.message = msgspec.structs.replace(message, content=[], stop_reason="pending")
        await send.send(builder.start())
        for block in message.content:
            if isinstance(block, ThinkingContent):
                start = builder.thinking_start()
                await send.send(start)
                for chunk in self._chunks(block.thinking):
                    await self._pace(chunk)
                    await send.send(builder.thinking_delta(start.content_index, chunk))
                await send.send(builder.thinking_end(start.content_index))
            elif isinstance(block, TextContent):
                start_t = builder.text_start()
                await send.send(start_t)
                for chunk in self._chunks(block.text):
                    await self._pace(chunk)
                    await send.send(builder.text_delta(start_t.content_index, chunk))
                await send.send(builder.text_end(start_t.content_index))
            else:
                start_c = builder.toolcall_start(block.id, block.name)
                await send.send(start_c)
                for chunk in self._chunks(compact_json(block.arguments)):
                    await self._pace(chunk)
                    await send.send(builder.toolcall_delta(start_c.content_index, chunk))
                end = builder.toolcall_end(
                    start_c.content_index,
                    arguments=block.arguments,
                    arguments_error=block.arguments_error,
                )
                await send.send(end)
        match message.stop_reason:
            case "pending":
                await send.send(
                    ErrorEvent(reason="error", error=self._error_message(model, NO_STOP_REASON))
                )
            case "error" | "aborted" as failed:
                await send.send(ErrorEvent(reason=failed, error=message))
            case "stop" | "length" | "toolUse" | "deferred" as reason:
                await send.send(DoneEvent(reason=reason, message=message))
