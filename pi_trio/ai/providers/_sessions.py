"""What providers remember per session, and forgetting it when the session ends."""

from __future__ import annotations

from ._anthropic_thread import forget_threads
from ._strict_limits import forget_strict_tool_limits

__all__ = ["cleanup_session_resources"]


def cleanup_session_resources(session_id: str | None = None) -> None:
    """Forget what providers keep for ``session_id`` (every session when ``None``):
    Anthropic's message threads and the sessions whose strict tools were refused (pi
    1.6's ``cleanupSessionResources``). Both are bounded anyway; call it when a session
    ends to free them at once."""
    forget_threads(session_id)
    forget_strict_tool_limits(session_id)
