"""Durable agent runs on Temporal: ``pip install 'pi-trio[temporal]'``.

A ``TemporalAgent`` runs each prompt as a Temporal workflow: the agent loop runs in the
workflow (deterministic), every model request and every tool call is an activity whose
result Temporal records. A worker that dies halfway is replaced by another, which replays
the history without calling the model again for recorded requests, and runs a tool call
the death interrupted again only when its ``AgentTool.replay`` is ``"safe"``. Steering and
follow-ups are signals; cancelling the workflow aborts the run with the abort contract.
The Temporal SDK runs on asyncio, so these runs use pi_trio's asyncio backend.
"""

try:
    import temporalio as _temporalio  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "pi_trio.temporal runs agents on Temporal, whose SDK is not installed: "
        "pip install 'pi-trio[temporal]'"
    ) from exc

from ._activities import DELIVER_ACTIVITY as DELIVER_ACTIVITY
from ._activities import MODEL_ACTIVITY as MODEL_ACTIVITY
from ._activities import TOOL_ACTIVITY as TOOL_ACTIVITY
from ._activities import interrupted_text as interrupted_text
from ._agent import TemporalAgent as TemporalAgent
from ._listeners import TemporalEventInfo as TemporalEventInfo
from ._result import TemporalResult as TemporalResult
from ._result import TemporalRun as TemporalRun
from ._workflow import QUEUE_SIGNAL as QUEUE_SIGNAL

__all__ = [
    "DELIVER_ACTIVITY",
    "MODEL_ACTIVITY",
    "QUEUE_SIGNAL",
    "TOOL_ACTIVITY",
    "TemporalAgent",
    "TemporalEventInfo",
    "TemporalResult",
    "TemporalRun",
    "interrupted_text",
]
