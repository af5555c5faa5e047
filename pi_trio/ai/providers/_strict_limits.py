"""Claude's limits on strict tools, and the sessions that ran into them (sans-IO).

Claude (on Bedrock as on Anthropic's API) refuses a request whose strict tools exceed its
limits (observed: 20 strict tools, 16 optional or union-typed parameters across them) with
one of ``STRICT_TOOL_LIMIT_MESSAGES``. A provider that sent tools which only *prefer*
constrained sampling (``strict: "prefer"``) then sends them again without ``strict``,
and remembers the session: its later requests send such tools non-strict at once, since
the tool set rarely changes between turns, and going back to strict would rewrite the
tool definitions and miss the prompt cache. At most ``MAX_REMEMBERED_SESSIONS`` sessions
are remembered (the oldest is forgotten first; a forgotten session pays one more
refusal); ``forget_strict_tool_limits`` drops one session, or all. The message of the
answered request keeps a ``<provider>_strict_tools_fallback`` diagnostic
(``record_strict_tools_fallback``).
"""

from __future__ import annotations

from typing import Final

from .._types import AssistantMessage, now_ms

__all__ = [
    "MAX_REMEMBERED_SESSIONS",
    "STRICT_TOOL_LIMIT_MESSAGES",
    "forget_strict_tool_limits",
    "has_exceeded_strict_tool_limits",
    "is_strict_tool_limit_message",
    "mark_strict_tool_limits_exceeded",
    "record_strict_tools_fallback",
]

STRICT_TOOL_LIMIT_MESSAGES: Final = (
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
)
MAX_REMEMBERED_SESSIONS: Final = 10_000

# insertion-ordered: the first key is the oldest session
_sessions: dict[str, None] = {}


def is_strict_tool_limit_message(text: str) -> bool:
    """Whether a provider's error text says the request's strict tools exceed the limits."""
    return any(message in text for message in STRICT_TOOL_LIMIT_MESSAGES)


def mark_strict_tool_limits_exceeded(session_id: str | None) -> None:
    """Remember that ``session_id``'s strict tools were refused (nothing without a session)."""
    if session_id is None:
        return
    _sessions.setdefault(session_id, None)
    while len(_sessions) > MAX_REMEMBERED_SESSIONS:
        del _sessions[next(iter(_sessions))]


def has_exceeded_strict_tool_limits(session_id: str | None) -> bool:
    """Whether an earlier request of ``session_id`` had its strict tools refused."""
    return session_id is not None and session_id in _sessions


def forget_strict_tool_limits(session_id: str | None = None) -> None:
    """Forget ``session_id`` (when it ends), or every session when ``None``."""
    if session_id is None:
        _sessions.clear()
    else:
        _sessions.pop(session_id, None)


def record_strict_tools_fallback(
    message: AssistantMessage, provider: str, error: str | None, session_id: str | None
) -> None:
    """After ``provider`` (``anthropic``, ``bedrock``) refused the strict tools with
    ``error``: remember ``session_id`` and add the ``<provider>_strict_tools_fallback``
    diagnostic to ``message``."""
    mark_strict_tool_limits_exceeded(session_id)
    diagnostic = {
        "type": f"{provider}_strict_tools_fallback",
        "timestamp": now_ms(),
        "error": {"message": error},
        "details": {"reason": "strict_tool_limits_exceeded"},
    }
    message.diagnostics = [*(message.diagnostics or []), diagnostic]
