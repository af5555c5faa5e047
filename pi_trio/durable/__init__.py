"""Durable agent runs on DBOS: ``pip install 'pi-trio[dbos]'``.

A ``DurableAgent`` runs each prompt as a DBOS workflow in which every model request and
every tool execution is a step checkpointed to SQLite or Postgres. A process that dies
halfway resumes the run on its next ``DBOS.launch()``: recorded steps are replayed without
calling the model or running a tool again, and a tool call the crash interrupted is run
again only when its ``AgentTool.replay`` is ``"safe"``. A run that pauses for approval
waits for a DBOS message with the decisions (``DurableAgent.resume``), across restarts.
DBOS runs async workflows on asyncio, so durable runs use pi_trio's asyncio backend.
"""

try:
    import dbos as _dbos  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "pi_trio.durable runs agents on DBOS, which is not installed: pip install 'pi-trio[dbos]'"
    ) from exc

from ..ai.providers import replay_events as replay_events
from ._agent import APPROVED_STEP as APPROVED_STEP
from ._agent import DurableAgent as DurableAgent
from ._approvals import APPROVAL_EVENT as APPROVAL_EVENT
from ._approvals import APPROVAL_RECHECK_S as APPROVAL_RECHECK_S
from ._approvals import APPROVAL_TOPIC as APPROVAL_TOPIC
from ._listeners import DurableEventInfo as DurableEventInfo
from ._queue import LOOK_STEP as LOOK_STEP
from ._queue import QUEUE_TOPIC as QUEUE_TOPIC
from ._result import DurableResult as DurableResult
from ._result import DurableRun as DurableRun
from ._result import RunCancelledError as RunCancelledError
from ._steps import MODEL_STEP as MODEL_STEP
from ._steps import TOOL_STARTED_STEP as TOOL_STARTED_STEP
from ._steps import TOOL_STEP as TOOL_STEP
from ._steps import interrupted_text as interrupted_text

__all__ = [
    "APPROVAL_EVENT",
    "APPROVAL_RECHECK_S",
    "APPROVAL_TOPIC",
    "APPROVED_STEP",
    "LOOK_STEP",
    "MODEL_STEP",
    "QUEUE_TOPIC",
    "TOOL_STARTED_STEP",
    "TOOL_STEP",
    "DurableAgent",
    "DurableEventInfo",
    "DurableResult",
    "DurableRun",
    "RunCancelledError",
    "interrupted_text",
    "replay_events",
]
