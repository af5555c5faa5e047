"""The deferred responses a faux provider holds: submitted with ``deferred=True``,
looked at with ``fetch_deferred``, cancelled with ``cancel_deferred`` (pi 1.6's faux)."""

from __future__ import annotations

from typing import Any

import msgspec

from pi_trio.ai import AssistantMessage, Context, Model, StreamOptions, Usage
from pi_trio.ai.deferred import DeferredHandle
from pi_trio.ai.providers import now_ms

from ._faux_blocks import random_id
from ._faux_config import FauxDeferred

__all__ = ["DeferredBook", "DeferredEntry", "deferred_message"]

# a ``FauxResponseStep`` (``_faux`` names the type; it imports this module)
Step = Any


class DeferredEntry:
    """One submitted request: its scripted response, what it was sent with, the looks
    still to answer with the handle, and the answer once a look made it."""

    __slots__ = ("cancelled", "context", "final", "handle", "model", "options", "pending", "step")

    def __init__(
        self,
        handle: DeferredHandle,
        step: Step,
        context: Context,
        options: StreamOptions,
        model: Model,
        pending: int,
    ) -> None:
        self.handle = handle
        self.step = step
        self.context = context
        self.options = options
        self.model = model
        self.pending = pending
        self.cancelled = False
        self.final: AssistantMessage | None = None

    def submission_options(self) -> StreamOptions:
        """The options the response is made with when it becomes ready: the
        submission's, without ``deferred``, its signal and its ``on_response``."""
        return msgspec.structs.replace(self.options, deferred=None, signal=None, on_response=None)


def deferred_message(model: Model, handle: DeferredHandle) -> AssistantMessage:
    """The answer to a deferred submission, and to a look before the response is ready."""
    return AssistantMessage(
        content=[],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="deferred",
        deferred=handle,
        timestamp=now_ms(),
    )


class DeferredBook:
    """The provider's deferred responses by handle id."""

    __slots__ = ("_entries", "settings")

    def __init__(self, settings: FauxDeferred) -> None:
        self.settings = settings
        self._entries: dict[str, DeferredEntry] = {}

    def submit(
        self, step: Step, model: Model, context: Context, options: StreamOptions
    ) -> AssistantMessage:
        handle = DeferredHandle(
            provider=model.provider,
            model_id=model.id,
            api=model.api,
            id=random_id("deferred"),
            poll_after_ms=self.settings.poll_after_ms,
        )
        pending = max(0, self.settings.pending_fetches)
        self._entries[handle.id] = DeferredEntry(handle, step, context, options, model, pending)
        return deferred_message(model, handle)

    def find(self, handle: DeferredHandle) -> DeferredEntry:
        """The entry of ``handle``; ``LookupError`` with pi 1.6's texts for a handle
        this provider did not give out (or of another model) and a cancelled one."""
        entry = self._entries.get(handle.id)
        if entry is None or _key(entry.handle) != _key(handle):
            raise LookupError(f"Unknown faux deferred response: {handle.id}")
        if entry.cancelled:
            raise LookupError(f"Faux deferred response was cancelled: {handle.id}")
        return entry

    def cancel(self, handle: DeferredHandle) -> None:
        entry = self._entries.get(handle.id)
        if entry is not None:
            entry.cancelled = True


def _key(handle: DeferredHandle) -> tuple[Any, ...]:
    return handle.provider, handle.model_id, handle.api
