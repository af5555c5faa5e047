"""Answers a provider finishes later (deferred responses), and the handle to fetch one.

A request whose ``StreamOptions.deferred`` (``DeferredOptions``) asks for it may end with
``stop_reason="deferred"`` and a ``DeferredHandle`` on the message; ``poll_deferred`` /
``fetch_deferred`` / ``open_deferred_stream`` bring the answer when it is ready,
``cancel_deferred`` gives it up. The provider-side callables are ``DeferredFetchFn`` and
``DeferredCancelFn``.
"""

from __future__ import annotations

from ._deferred import DEFAULT_POLL_INTERVAL_MS as DEFAULT_POLL_INTERVAL_MS
from ._deferred import cancel_deferred as cancel_deferred
from ._deferred import fetch_deferred as fetch_deferred
from ._deferred import open_deferred_stream as open_deferred_stream
from ._deferred import poll_deferred as poll_deferred
from ._stream._options import DeferredCancelFn as DeferredCancelFn
from ._stream._options import DeferredFetchFn as DeferredFetchFn
from ._stream._options import DeferredFetchOptions as DeferredFetchOptions
from ._stream._options import DeferredOptions as DeferredOptions
from ._stream._options import DeferredWindow as DeferredWindow
from ._types import DeferredHandle as DeferredHandle

__all__ = [
    "DEFAULT_POLL_INTERVAL_MS",
    "DeferredCancelFn",
    "DeferredFetchFn",
    "DeferredFetchOptions",
    "DeferredHandle",
    "DeferredOptions",
    "DeferredWindow",
    "cancel_deferred",
    "fetch_deferred",
    "open_deferred_stream",
    "poll_deferred",
]
