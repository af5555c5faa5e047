"""The seam: what ``pi_trio.ai`` offers the layers built on it, beyond its public API.

``agent``, ``proxy`` and ``cli`` import from ``ai`` the public names of ``pi_trio.ai`` (and
the public provider modules) and the names below, nothing else: no other private module of
``ai``. The extras (``mcp``, ``session``, ``otel``, ``durable``, ``fanout``, ``agui``…) and
``testing`` use the public API alone. ``tests/test_architecture.py`` holds every layer to
this.

The names here are internal: they change with pi_trio's own layers, not for users. Adding
one is a decision about the layers (say why on the architecture page); a name users need
belongs in ``pi_trio.ai`` instead. This module only re-exports.
"""

from ._catalog._models import THINKING_LEVELS as THINKING_LEVELS
from ._http_body import ERROR_BODY_READ_LIMIT as ERROR_BODY_READ_LIMIT
from ._http_body import read_body_prefix as read_body_prefix
from ._json._depth import BoundedDecoder as BoundedDecoder
from ._json._depth import check_json_depth as check_json_depth
from ._json._depth import decode_checked as decode_checked
from ._json._depth import decode_json as decode_json
from ._keys._secrets import clean_api_key as clean_api_key
from ._keys._secrets import redact as redact
from ._moved import moved_name_error as moved_name_error
from ._stream._builder import empty_message as empty_message
from ._stream._consume import ABORTED_TEXT as ABORTED_TEXT
from ._stream._consume import InlineStream as InlineStream
from ._stream._groups import raising_sole_exception as raising_sole_exception
from ._stream._groups import sole_exception as sole_exception
from ._stream._open import AFTER_TERMINAL_GRACE_S as AFTER_TERMINAL_GRACE_S
from ._stream._open import resolve_stream_fn as resolve_stream_fn
from ._stream._options import OnPayload as OnPayload
from ._stream._options import OnProviderStreamEvent as OnProviderStreamEvent
from ._stream._options import OnResponse as OnResponse
from ._stream._registry import HTTP_READ_TIMEOUT_S as HTTP_READ_TIMEOUT_S
from ._stream._stall import StallTimer as StallTimer
from ._stream._stall import stall_timer as stall_timer
from ._stream._stall import watching as watching
from ._transcript._system import replay_tool_declarations as replay_tool_declarations
from ._types import CacheRetention as CacheRetention

__all__ = [
    # running a stream function outside open_stream (the agent's engine, the proxy client)
    "InlineStream",
    "empty_message",
    "resolve_stream_fn",
    "ABORTED_TEXT",
    "AFTER_TERMINAL_GRACE_S",
    # the request options' callback and field types, which the Agent's options repeat
    "OnPayload",
    "OnProviderStreamEvent",
    "OnResponse",
    "CacheRetention",
    # task groups that are an implementation detail: the caller sees its own exception
    "sole_exception",
    "raising_sole_exception",
    # what the layers above check, or offer as choices
    "THINKING_LEVELS",
    "replay_tool_declarations",
    # HTTP and JSON from outside, as the providers do them (the proxy client is one more)
    "HTTP_READ_TIMEOUT_S",
    "ERROR_BODY_READ_LIMIT",
    "read_body_prefix",
    "clean_api_key",
    "redact",
    "decode_checked",
    "decode_json",
    "BoundedDecoder",
    "check_json_depth",
    # the error for a name that left pi_trio.agent's top level, as for pi_trio.ai's
    "moved_name_error",
    # the limits on the wait for a stream's events, which the proxy client keeps as the
    # providers do
    "StallTimer",
    "stall_timer",
    "watching",
]
