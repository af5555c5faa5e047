"""What a server sends only to keep a connection open (sans-IO): the keep-alives that do
not count as the provider's events for ``first_event_timeout`` and ``idle_timeout``.

SSE comments (``: keep-alive``, ``: OPENROUTER PROCESSING``) and blank lines (Gemini pads
with them) make no event at all in ``_sse.SSEParser``; these are the ones that do: a
``ping`` event (Anthropic's; also ``keepalive``, ``keep-alive``, ``heartbeat``), an event
whose data is only whitespace, ``{"type": "ping"}`` sent without a name (a proxy that
drops names), and in an AWS event stream an event frame without a payload (or ``{}``) or
named like a ping.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["KEEPALIVE_DATA_MAX", "KEEPALIVE_NAMES", "is_keepalive", "is_keepalive_frame"]

KEEPALIVE_NAMES: Final = frozenset({"ping", "keepalive", "keep-alive", "heartbeat"})
_KEEPALIVE_DATA: Final = re.compile(
    r'\{\s*"type"\s*:\s*"(?:ping|keepalive|keep-alive|heartbeat)"\s*\}'
)
KEEPALIVE_DATA_MAX: Final = 48  # longer data is never a keep-alive: not looked at


def is_keepalive(name: str, data: str) -> bool:
    """Whether the SSE event ``name`` with ``data`` only keeps the connection open."""
    if name in KEEPALIVE_NAMES:
        return True
    if len(data) > KEEPALIVE_DATA_MAX:
        return False
    data = data.strip()
    return not data or _KEEPALIVE_DATA.fullmatch(data) is not None


def is_keepalive_frame(message_type: str, name: str, payload: bytes) -> bool:
    """Whether an event-stream frame only keeps the connection open."""
    if message_type != "event":
        return False
    return name in KEEPALIVE_NAMES or payload.strip() in (b"", b"{}")
