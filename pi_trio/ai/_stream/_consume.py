"""The consumer side of a stream (sans-IO except for ``InlineStream``).

``MessageFold`` applies each event it accepts to one message, exactly once. Events of a
``MessageBuilder`` (announced by its ``start``) are applied to the builder's own message:
the producer describes, the consumer applies, and the message holds what was received.
Events of any other producer are replayed onto a message of the fold's own.

``StreamConsumer`` is what a consumer knows about one stream function: the fold, and how
to write an outcome from it (the aborted message, an error for a broken protocol or a
missing terminal event). ``InlineStream`` runs a stream function in the calling task
and hands each accepted event to a callback (the engine of an agent run);
``AssistantMessageStream`` (``_open``) reads them from a channel.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, get_args

import anyio
import anyio.lowlevel
import msgspec

from .._errors import StreamProtocolError
from .._events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from .._types import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    now_ms,
)
from ._abort import AbortSignal
from ._builder import BuilderStartEvent, MessageBuilder, empty_message
from ._live import LiveText, LiveThinking, LiveToolCall, open_block, seal_message
from ._options import StreamFn, StreamOptions

__all__ = ["ABORTED_TEXT", "InlineStream", "MessageFold", "StreamConsumer"]

ABORTED_TEXT = "Request was aborted"

# the classes ``apply`` reads by their exact type
_EVENT_CLASSES: Final = frozenset({*get_args(AssistantMessageEvent), BuilderStartEvent})
# the block events whose partial a producer that is no builder may have updated
_PARTIAL_BLOCK_EVENTS: Final = frozenset(
    {
        TextStartEvent,
        ThinkingStartEvent,
        ToolCallStartEvent,
        TextEndEvent,
        ThinkingEndEvent,
        ToolCallEndEvent,
    }
)

# the open block each delta event extends
_DELTA_BLOCK: dict[str, type] = {
    "text_delta": LiveText,
    "toolcall_delta": LiveToolCall,
    "thinking_delta": LiveThinking,
}
_STARTS = frozenset({"text_start", "thinking_start", "toolcall_start"})
# what a producer may set on its partial while it streams, kept in an outcome written here
_PRODUCER_METADATA = ("response_id", "response_model", "provider_thinking_level", "usage")


class MessageFold:
    """Applies received events to a message; see the module docstring.

    ``message`` is what has been received so far (``None`` before ``start``); ``result``
    is the final message once a terminal event arrived. Raises ``StreamProtocolError``
    for events that break the protocol.
    """

    __slots__ = ("_builder", "message", "result", "source")

    def __init__(self) -> None:
        self.message: AssistantMessage | None = None
        self.result: AssistantMessage | None = None
        self._builder: MessageBuilder | None = None
        # another producer's partial, as of its latest event other than a delta: where
        # the metadata it set after ``start`` (``response_id``…) is read for an outcome
        self.source: AssistantMessage | None = None

    def apply(self, event: AssistantMessageEvent) -> None:
        if self.result is not None:
            raise StreamProtocolError(
                f"received {event.type!r} after the terminal event; a stream sends "
                "exactly one terminal 'done' or 'error', last"
            )
        t = event.type
        message = self.message
        kind = _DELTA_BLOCK.get(t)
        if kind is not None:
            if message is None:
                return  # block events before ``start`` are ignored, as upstream does
            content = message.content
            index: int = event.content_index  # type: ignore[union-attr]
            if 0 <= index < len(content):
                block = content[index]
                if type(block) is kind:
                    # the hot path: ``add_part`` inlined
                    block.__dict__["parts"].append(event.delta)  # type: ignore[union-attr]
                    return
            open_block(content, index, kind, t)
            return
        # the other events, narrowed by their exact class (``type(e) is C`` costs a third
        # of an ``isinstance`` on a msgspec Struct); block events first, as most frequent
        if message is not None:
            content = message.content
            if self._builder is None and type(event) in _PARTIAL_BLOCK_EVENTS:
                self.source = event.partial  # type: ignore[union-attr]
            if (
                type(event) is TextStartEvent
                or type(event) is ThinkingStartEvent
                or type(event) is ToolCallStartEvent
            ):
                index = event.content_index
                if index != len(content):
                    raise StreamProtocolError(
                        f"received {t} for content index {index}, expected {len(content)}: "
                        "content indices are assigned in append order starting at 0"
                    )
                content.append(self._started_block(event, index, t))
                return
            if type(event) is TextEndEvent:
                index = event.content_index
                block = open_block(content, index, LiveText, t)
                if self._builder is None:
                    source = _source_block(event.partial, index, t)
                    block.text_signature = getattr(source, "text_signature", None) or (
                        block.text_signature
                    )
                    block.set_final(event.content)
                sealed = content[index] = block.sealed()
                event.content = sealed.text
                return
            if type(event) is ThinkingEndEvent:
                index = event.content_index
                block = open_block(content, index, LiveThinking, t)
                if self._builder is None:
                    source = _source_block(event.partial, index, t)
                    block.thinking_signature = getattr(source, "thinking_signature", None) or (
                        block.thinking_signature
                    )
                    block.redacted = getattr(source, "redacted", None) or block.redacted
                    block.set_final(event.content)
                sealed_t = content[index] = block.sealed()
                event.content = sealed_t.thinking
                return
            if type(event) is ToolCallEndEvent:
                index = event.content_index
                block = open_block(content, index, LiveToolCall, t)
                if self._builder is None:
                    content[index] = event.tool_call
                else:
                    sealed_call = content[index] = block.sealed(finished=True)
                    event.tool_call = sealed_call
                return
        if type(event) is BuilderStartEvent:
            builder = self._builder = event.builder
            self.message = builder.message
        elif type(event) is StartEvent:
            # A producer of its own may be ahead of this event (its partial is live), so
            # only the metadata is taken; content arrives as events.
            self.message = msgspec.structs.replace(event.partial, content=[])
            self.source = event.partial
        elif type(event) is DoneEvent:
            self._finish(event.message)
        elif type(event) is ErrorEvent:
            self._finish(event.error)
        elif type(event) not in _EVENT_CLASSES:
            raise StreamProtocolError(
                f"received a {t!r} event of class {type(event).__name__}, a subclass of "
                f"pi_trio.ai's own; send the event classes of pi_trio.ai themselves"
            )

    def _started_block(self, event: Any, index: int, t: str) -> Any:
        builder = self._builder
        if builder is not None:
            block = builder.started_block(index)
            if block is not None:
                return block
        source = _source_block(event.partial, index, t) if builder is None else None
        return _empty_live_copy(source, t)

    def _finish(self, final: AssistantMessage) -> None:
        message = self.message
        if message is not None and final.content is message.content:
            # A builder's terminal event: its message carries the metadata and shares
            # the content this fold received, which is now sealed into a list of its own.
            final.content = list(message.content)
            seal_message(final)
        self.result = final


def _source_block(partial: AssistantMessage, index: int, action: str) -> Any:
    content = partial.content
    if 0 <= index < len(content):
        return content[index]
    raise StreamProtocolError(
        f"received {action} for content index {index}, but its partial has only "
        f"{len(content)} blocks"
    )


def _empty_live_copy(block: Any, action: str) -> Any:
    """A fresh open block of the kind ``action`` starts; text and arguments arrive through
    deltas (a producer's block may already hold deltas this consumer has not received)."""
    if action == "text_start":
        if block is not None and not isinstance(block, TextContent):
            raise StreamProtocolError(f"text_start for the content block {block!r}")
        return LiveText(text="", text_signature=getattr(block, "text_signature", None))
    if action == "thinking_start":
        if block is not None and not isinstance(block, ThinkingContent):
            raise StreamProtocolError(f"thinking_start for the content block {block!r}")
        return LiveThinking(
            thinking="",
            thinking_signature=getattr(block, "thinking_signature", None),
            redacted=getattr(block, "redacted", None),
        )
    if block is not None and not isinstance(block, ToolCall):
        raise StreamProtocolError(f"toolcall_start for the content block {block!r}")
    return LiveToolCall(
        id=getattr(block, "id", ""),
        name=getattr(block, "name", ""),
        arguments={},
        thought_signature=getattr(block, "thought_signature", None),
        namespace=getattr(block, "namespace", None),
    )


class StreamConsumer:
    """What a consumer of one stream function knows: the fold of the events it accepted
    and how to write an outcome (error, aborted) from it."""

    __slots__ = (
        "_done",
        "_failure",
        "_fold",
        "_model",
        "_name",
        "_signal",
        "_started_clock",
        "_started_ms",
    )

    def __init__(self, model: Model, name: str, signal: AbortSignal | None) -> None:
        self._model = model
        self._name = name
        self._signal = signal
        self._fold = MessageFold()
        self._done = False
        self._failure: BaseException | None = None
        # the response is timed from here (``duration_ms`` of the final message)
        self._started_ms = now_ms()
        self._started_clock = time.perf_counter()

    def _time(self, message: AssistantMessage) -> None:
        """Give the final message its ``duration_ms``, unless it has one or started
        before this stream (a response forwarded from elsewhere stays untimed)."""
        if message.duration_ms is None and message.timestamp >= self._started_ms:
            elapsed = time.perf_counter() - self._started_clock
            message.duration_ms = max(0, round(elapsed * 1000))

    @property
    def message(self) -> AssistantMessage | None:
        """What was received so far (``None`` before ``start``)."""
        return self._fold.message

    @property
    def done(self) -> bool:
        """True once the terminal event was received."""
        return self._done

    def result(self) -> AssistantMessage:
        result = self._fold.result
        if result is None:
            raise RuntimeError(
                "result() is available once the terminal event was received; iterate the "
                "stream to its end first (or use complete())"
            )
        return result

    def aborted_message(self, error_message: str = ABORTED_TEXT) -> AssistantMessage:
        """The outcome of an abort: what was received so far, finished, with
        ``stop_reason="aborted"``."""
        return self._outcome("aborted", error_message)

    def record_failure(self, failure: BaseException) -> None:
        """The stream function raised (it should send an ``error`` event instead): the
        missing terminal event names it."""
        self._failure = failure

    def accept(self, event: AssistantMessageEvent) -> AssistantMessageEvent:
        """Apply ``event``; a protocol violation becomes the terminal error outcome."""
        try:
            self._fold.apply(event)
        except StreamProtocolError as exc:
            event = self._error_outcome(f"Stream function {self._name} broke the protocol: {exc}")
            self._fold.result = event.error
        if event.type == "done" or event.type == "error":
            self._done = True
            result = self._fold.result
            if result is not None:
                self._time(result)
        return event

    def missing_terminal(self) -> ErrorEvent:
        """The terminal event for a stream function that ended without one."""
        if self._signal is not None and self._signal.aborted:
            return ErrorEvent(reason="aborted", error=self._outcome("aborted", ABORTED_TEXT))
        failure = self._failure
        if failure is not None:
            text = str(failure) or type(failure).__name__
        else:
            text = f"Stream function {self._name} returned without a terminal event"
        return self._error_outcome(text)

    def _error_outcome(self, text: str) -> ErrorEvent:
        return ErrorEvent(reason="error", error=self._outcome("error", text))

    def _outcome(self, reason: Any, text: str) -> AssistantMessage:
        partial = self._fold.message
        if partial is None:
            message = empty_message(self._model, reason)
        else:
            message = seal_message(msgspec.structs.replace(partial, content=list(partial.content)))
            message.stop_reason = reason
            source = self._fold.source
            if source is not None:  # what the producer learnt after ``start``
                for name in _PRODUCER_METADATA:
                    value = getattr(source, name)
                    if value is not None:
                        setattr(message, name, value)
        message.error_message = text
        self._time(message)
        return message


class InlineStream(StreamConsumer):
    """Runs a stream function in the calling task and hands each event to the consumer as
    it is accepted: no channel and no task switch per event.

    The instance is the stream function's ``send``. ``send_nowait()`` accepts an event
    when the consumer can take it synchronously (``ready()``) and delivers it with
    ``deliver``; otherwise it raises ``anyio.WouldBlock``, as a full channel would, and
    the stream function awaits ``send()``, which delivers with ``deliver_async`` (waiting
    for the consumer: backpressure). Both raise ``anyio.BrokenResourceError`` after the
    terminal event, which stops the stream function as a closed channel would. After
    ``stop()`` (the run was aborted) no event is accepted. An exception from delivery (a
    listener failing) never reaches the stream function: it stops it, and ``run()``
    re-raises it.
    """

    __slots__ = ("_deliver", "_deliver_async", "_delivery_error", "_ready", "_stopped")

    def __init__(
        self,
        model: Model,
        name: str,
        signal: AbortSignal | None,
        ready: Callable[[], bool],
        deliver: Callable[[AssistantMessageEvent], None],
        deliver_async: Callable[[AssistantMessageEvent], Awaitable[None]],
    ) -> None:
        super().__init__(model, name, signal)
        self._ready = ready
        self._deliver = deliver
        self._deliver_async = deliver_async
        self._delivery_error: BaseException | None = None
        self._stopped = False

    def stop(self) -> None:
        """Accept no more events (sync: called when the run is aborted)."""
        self._stopped = True

    def _failed(self, exc: Exception) -> anyio.BrokenResourceError:
        self._delivery_error = exc
        self._done = True
        return anyio.BrokenResourceError()

    def _accept(self, event: AssistantMessageEvent) -> None:
        event = self.accept(event)
        try:
            self._deliver(event)
        except Exception as exc:
            raise self._failed(exc) from exc

    def send_nowait(self, event: AssistantMessageEvent) -> None:
        if self._done:
            raise anyio.BrokenResourceError
        if self._stopped or not self._ready():
            raise anyio.WouldBlock
        self._accept(event)

    async def send(self, event: AssistantMessageEvent) -> None:
        if self._done:
            raise anyio.BrokenResourceError
        if self._stopped:
            await anyio.lowlevel.checkpoint()
            raise anyio.BrokenResourceError  # cancelled above; never reached in a run
        event = self.accept(event)
        try:
            await self._deliver_async(event)
        except Exception as exc:
            raise self._failed(exc) from exc

    def close(self) -> None:
        """Stream functions need not close ``send``; the runtime owns it."""

    async def aclose(self) -> None:
        await anyio.lowlevel.checkpoint()

    def __enter__(self) -> InlineStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    async def run(
        self, stream_fn: StreamFn, model: Model, context: Context, options: StreamOptions
    ) -> AssistantMessage:
        """Await the stream function; return the final message: a missing terminal event,
        or an exception after the stream started, becomes an error outcome. A stream
        function that raises before sending anything failed to start: its exception
        propagates, as a failing hook's does."""
        try:
            await stream_fn(model, context, options, self)  # type: ignore[arg-type]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        except Exception as exc:
            if self._fold.message is None and not self._done:
                raise
            self.record_failure(exc)
        if not self._done and self._delivery_error is None:
            # the listener's own exception is raised below, not the closed channel's
            with contextlib.suppress(anyio.BrokenResourceError):
                self._accept(self.missing_terminal())  # terminal: nothing to deliver
        if self._delivery_error is not None:
            raise self._delivery_error
        return self.result()
