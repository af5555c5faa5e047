"""AG-UI: agents streamed to web front ends in the Agent-User Interaction protocol.

``create_app(factory)`` is an ASGI application (``AGUIApp``) that runs one agent per
request and streams its events as AG-UI events, on the ``ag-ui-protocol`` package's
types (the optional ``agui`` extra); ``serve`` runs it with hypercorn. The pieces:
``_translate`` (agent events into AG-UI events, sans-IO), ``_input`` (the thread, the
client's tools and state patches, sans-IO), ``_app`` (the endpoint), ``_server``.
"""

from __future__ import annotations

try:
    import ag_ui as _ag_ui  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "pi_trio.agui speaks AG-UI with the ag-ui-protocol package, which is not installed: "
        "pip install 'pi-trio[agui]'"
    ) from exc

from ._app import DEFAULT_BODY_TIMEOUT_S as DEFAULT_BODY_TIMEOUT_S
from ._app import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
from ._app import DEFAULT_MAX_RUNS as DEFAULT_MAX_RUNS
from ._app import AgentFactory as AgentFactory
from ._app import AGUIApp as AGUIApp
from ._app import AguiRun as AguiRun
from ._input import CLIENT_TOOL_TEXT as CLIENT_TOOL_TEXT
from ._input import InputError as InputError
from ._input import apply_patch as apply_patch
from ._server import serve as serve
from ._translate import RUN_ERROR_CODE as RUN_ERROR_CODE
from ._translate import EventTranslator as EventTranslator


def create_app(
    agent_factory: AgentFactory,
    *,
    path: str = "/",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_runs: int = DEFAULT_MAX_RUNS,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
) -> AGUIApp:
    """The AG-UI endpoint: ``POST <path>`` runs ``agent_factory(run)``'s agent on the
    request's thread and streams the events; ``POST <path>/cancel`` with ``{"threadId",
    "runId"}`` aborts a run. ``max_body_bytes``, ``max_runs`` (at once; 429 beyond) and
    ``body_timeout`` (seconds to send the body) bound what one client can hold."""
    return AGUIApp(
        agent_factory,
        path=path,
        max_body_bytes=max_body_bytes,
        max_runs=max_runs,
        body_timeout=body_timeout,
    )


__all__ = [
    "CLIENT_TOOL_TEXT",
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_RUNS",
    "RUN_ERROR_CODE",
    "AGUIApp",
    "AgentFactory",
    "AguiRun",
    "EventTranslator",
    "InputError",
    "apply_patch",
    "create_app",
    "serve",
]
