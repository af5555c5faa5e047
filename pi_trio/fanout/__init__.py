"""Fan-out over Ray: many agent jobs on a cluster, ``pip install 'pi-trio[ray]'``.

``Harness(jobs)`` splits ``AgentJob``s into shards, runs each shard as one Ray task with
one event loop (trio or asyncio) holding many agents at once, and yields a ``JobResult``
(the transcript as pi JSON) for every job as it finishes. ``run_shard`` is the shard
loop on its own, for one process.
"""

try:
    import ray as _ray  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "pi_trio.fanout spreads agents over Ray, which is not installed: pip install 'pi-trio[ray]'"
    ) from exc

from ._harness import MAILBOX_LIMIT as MAILBOX_LIMIT
from ._harness import Harness as Harness
from ._harness import run_jobs as run_jobs
from ._job import STATUSES as STATUSES
from ._job import AgentJob as AgentJob
from ._job import JobResult as JobResult
from ._shard import RESULT_BATCH as RESULT_BATCH
from ._shard import RESULT_BUFFER as RESULT_BUFFER
from ._shard import Shard as Shard
from ._shard import run_shard as run_shard

__all__ = [
    "MAILBOX_LIMIT",
    "RESULT_BATCH",
    "RESULT_BUFFER",
    "STATUSES",
    "AgentJob",
    "Harness",
    "JobResult",
    "Shard",
    "run_jobs",
    "run_shard",
]
