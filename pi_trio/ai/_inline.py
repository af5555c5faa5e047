"""``InlineStream``: running a stream function in the calling task.

The engine of a run awaits the provider's stream function itself and takes each event as
it is sent, instead of reading it from a channel fed by another task: no task switch per
event. The stream-function contract is the same as under ``open_stream``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel

from ._abort import AbortSignal
from ._events import AssistantMessageEvent
from ._options import StreamFn, StreamOptions
from ._stream import _StreamState
from ._types import AssistantMessage, Context, Model

__all__ = ["InlineStream"]


class InlineStream(_StreamState):
    """Runs a stream function in the calling task and hands each event to ``deliver``
    as it is sent: no channel and no task switch per event.

    The instance is the stream function's ``send``: ``send()`` waits for room (as a
    bounded channel would), ``send_nowait()`` raises ``anyio.WouldBlock`` instead, and
    both raise ``anyio.BrokenResourceError`` after the terminal event, which stops the
    stream function as a closed channel would. An exception from ``deliver`` (a listener
    failing) never reaches the stream function: it stops it, and ``run()`` re-raises it.
    """

    __slots__ = ("_deliver", "_delivery_error", "_has_room", "_wait_for_room")

    def __init__(
        self,
        model: Model,
        name: str,
        signal: AbortSignal | None,
        deliver: Callable[[AssistantMessageEvent], None],
        has_room: Callable[[], bool],
        wait_for_room: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(model, name, signal)
        self._deliver = deliver
        self._has_room = has_room
        self._wait_for_room = wait_for_room
        self._delivery_error: BaseException | None = None

    def _accept(self, event: AssistantMessageEvent) -> None:
        event = self._fold_event(event)
        try:
            self._deliver(event)
        except Exception as exc:
            self._delivery_error = exc
            self._done = True
            raise anyio.BrokenResourceError from exc

    def send_nowait(self, event: AssistantMessageEvent) -> None:
        if self._done:
            raise anyio.BrokenResourceError
        signal = self._signal
        if (signal is not None and signal._aborted) or not self._has_room():
            raise anyio.WouldBlock
        self._accept(event)

    async def send(self, event: AssistantMessageEvent) -> None:
        if self._done:
            raise anyio.BrokenResourceError
        signal = self._signal
        if signal is not None and signal._aborted:
            await anyio.lowlevel.checkpoint()
        while not self._has_room():
            await self._wait_for_room()
        self._accept(event)

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
        """Await the stream function; return the final message (always one: a missing
        terminal event or an exception becomes an error outcome)."""
        try:
            await stream_fn(model, context, options, self)  # type: ignore[arg-type]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        except Exception as exc:
            self._failure = exc
        if not self._done and self._delivery_error is None:
            # the listener's own exception is raised below, not the closed channel's
            with contextlib.suppress(anyio.BrokenResourceError):
                self._accept(self._missing_terminal())
        if self._delivery_error is not None:
            raise self._delivery_error
        return self.result()
