"""``Harness``: agent jobs spread over a Ray cluster in shards, results streamed back.

Each shard is one Ray task running one event loop (``run_shard``) with many agents at
once. Results travel in batches through a small mailbox actor, so they reach the driver
as they finish, also after a shard was cancelled. Cancelling the harness (``cancel()``,
the ``deadline``, Ctrl-C while iterating, or ``ray.cancel`` on a shard task) cancels the
shard tasks; Ray interrupts a running task with a simulated SIGINT in its main thread,
which the shard's event loop receives through anyio's signal receiver (trio and asyncio
alike), so it aborts every running agent with the abort contract and still sends the
consistent partial transcripts before it ends.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Any, Literal, TextIO

import anyio
import anyio.to_thread
import ray
from ray.exceptions import RayError, TaskCancelledError

from ._job import AgentJob, JobResult
from ._progress import Progress
from ._shard import run_shard

__all__ = ["MAILBOX_LIMIT", "Harness", "run_jobs"]

# Result batches the mailbox holds before a shard's delivery waits for the driver: a slow
# driver slows the shards down instead of growing the mailbox.
MAILBOX_LIMIT = 64
# Seconds to wait for the driver's last ``take`` when the mailbox closes.
MAILBOX_CLOSE_TIMEOUT = 10.0

Backend = Literal["trio", "asyncio"]


class _Mailbox:
    """Where shards put their result batches and the driver takes them (a threaded
    actor: ``put`` waits while it is full, ``take`` while it is empty)."""

    def __init__(self, limit: int) -> None:
        self._items: deque[Any] = deque()
        self._limit = limit
        self._closed = False
        self._changed = threading.Condition()

    def put(self, item: Any) -> None:
        with self._changed:
            self._changed.wait_for(lambda: len(self._items) < self._limit)
            self._items.append(item)
            self._changed.notify_all()

    def take(self) -> list[Any]:
        """Everything waiting (at least one item, unless the mailbox is closed)."""
        with self._changed:
            self._changed.wait_for(lambda: bool(self._items) or self._closed)
            items = list(self._items)
            self._items.clear()
            self._changed.notify_all()
            return items

    def close(self) -> None:
        """Let a waiting ``take`` return what is left (perhaps nothing)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()


def _shard_task(
    index: int, jobs: list[AgentJob], concurrency: int, backend: Backend, mailbox: Any
) -> int:
    """The body of a shard's Ray task."""

    async def deliver(batch: list[JobResult]) -> None:
        ref = mailbox.put.remote(("results", index, batch))
        await anyio.to_thread.run_sync(ray.get, ref)

    async def main() -> None:
        await run_shard(jobs, deliver, concurrency=concurrency, index=index, catch_sigint=True)

    anyio.run(main, backend=backend)
    ray.get(mailbox.put.remote(("done", index, None)))
    return len(jobs)


class Harness:
    """Run ``jobs`` on the Ray cluster (``ray.init()`` first, or Ray starts a local one).

    Iterate the harness to get a ``JobResult`` for every job as it finishes. ``shards``
    Ray tasks (default: one per CPU of the cluster) each run their jobs on one ``backend``
    event loop, at most ``concurrency`` agents at a time. ``progress`` draws a progress
    line (``True``: on stderr). After ``deadline`` seconds, on ``cancel()``, on the
    first Ctrl-C while iterating (the second one raises ``KeyboardInterrupt``), or when a
    shard task is cancelled with ``ray.cancel``, running agents are aborted (status
    ``aborted``, consistent transcripts) and jobs not started are reported
    ``cancelled``; the iteration still yields every job once and then ends. ``cancelled``
    says that it was cancelled, ``interrupted`` that a Ctrl-C did it.
    """

    def __init__(
        self,
        jobs: Iterable[AgentJob],
        *,
        shards: int | None = None,
        concurrency: int = 64,
        backend: Backend = "trio",
        deadline: float | None = None,
        progress: bool | TextIO = True,
        shard_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.jobs = list(jobs)
        ids = [job.id for job in self.jobs]
        if len(set(ids)) != len(ids):
            seen: set[Hashable] = set()
            twice = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
            raise ValueError(f"job ids must be unique; {twice!r} is used more than once")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        if backend not in ("trio", "asyncio"):
            raise ValueError(f"backend must be 'trio' or 'asyncio', got {backend!r}")
        if shards is not None and shards < 1:
            raise ValueError(f"shards must be at least 1, got {shards!r}")
        self.shards = shards
        self.concurrency = concurrency
        self.backend: Backend = backend
        self.deadline = deadline
        self.progress = progress
        self.shard_options = dict(shard_options or {})
        self.shard_refs: list[Any] = []
        self.cancelled = False
        self.counts: dict[str, int] = {}
        self._started = False
        self.interrupted = False  # a Ctrl-C cancelled it
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[JobResult]:
        if self._started:
            raise RuntimeError("a Harness runs once; make a new one to run the jobs again")
        self._started = True
        return self._results()

    def run(self) -> list[JobResult]:
        """Run every job and return the results, in the order they finished."""
        return list(self)

    def cancel(self) -> None:
        """Abort the running agents and start no more jobs (safe from any thread, and
        more than once)."""
        with self._lock:
            self.cancelled = True
            refs = list(self.shard_refs)
        for ref in refs:
            ray.cancel(ref, recursive=False)

    # ------------------------------------------------------------------ the driver

    def _results(self) -> Iterator[JobResult]:
        if not ray.is_initialized():
            ray.init()
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        count = self.shards or max(1, int(resources.get("CPU", 1)))
        count = max(1, min(count, len(self.jobs)))
        parts = [self.jobs[i::count] for i in range(count)]
        owner = {job.id: i for i, part in enumerate(parts) for job in part}
        progress = self._progress()
        mailbox: Any = (
            ray.remote(_Mailbox)
            .options(num_cpus=0, max_concurrency=count + 2)
            .remote(MAILBOX_LIMIT)
        )
        task = ray.remote(max_retries=0)(_shard_task).options(**self.shard_options)
        with self._lock:
            if not self.cancelled:
                self.shard_refs = [
                    task.remote(i, part, self.concurrency, self.backend, mailbox)
                    for i, part in enumerate(parts)
                ]
        live = {ref: i for i, ref in enumerate(self.shard_refs)}  # tasks not ended yet
        open_shards = set(live.values())  # shards whose ``done`` has not arrived
        failures: dict[int, BaseException] = {}
        started = time.monotonic()
        previous_handler = self._catch_sigint()
        take = mailbox.take.remote()
        try:
            while open_shards:
                timeout = None
                if self.deadline is not None and not self.cancelled:
                    timeout = max(0.0, started + self.deadline - time.monotonic())
                ready, _ = ray.wait([take, *live], num_returns=1, timeout=timeout)
                if not ready:
                    self.cancel()  # the deadline passed
                    continue
                if ready[0] != take:
                    # A shard task ended. If it succeeded its ``done`` is in the mailbox;
                    # if it failed, nothing more comes from it.
                    index = live.pop(ready[0])
                    failure = _failure_of(ready[0])
                    if failure is not None:
                        failures[index] = failure
                        open_shards.discard(index)
                    continue
                items = ray.get(take)
                take = mailbox.take.remote()
                for kind, index, payload in items:
                    if kind == "done":
                        open_shards.discard(index)
                        continue
                    for result in payload:
                        if owner.pop(result.id, None) is not None:
                            yield self._count(result, progress)
            ray.get(mailbox.close.remote())
            last, take = ray.get(take), None
            for kind, _, payload in last:
                for result in payload if kind == "results" else ():
                    if owner.pop(result.id, None) is not None:
                        yield self._count(result, progress)
            for job_id, index in list(owner.items()):
                yield self._count(self._lost(job_id, index, failures.get(index)), progress)
        finally:
            if open_shards:  # the caller stopped iterating, or an error: stop the work
                self.cancel()
            self._restore_sigint(previous_handler)
            if take is not None:  # stopped early: leave no call to the mailbox unanswered
                with contextlib.suppress(RayError):
                    ray.get(mailbox.close.remote(), timeout=MAILBOX_CLOSE_TIMEOUT)
                    ray.get(take, timeout=MAILBOX_CLOSE_TIMEOUT)
            ray.kill(mailbox)
            if progress is not None:
                progress.close()

    def _lost(self, job_id: Hashable, shard: int, failure: BaseException | None) -> JobResult:
        """A job whose shard ended without reporting it."""
        if failure is None or isinstance(failure, TaskCancelledError):
            return JobResult(job_id, "cancelled", "[]", shard=shard)
        lines = str(failure).strip().splitlines() or [type(failure).__name__]
        return JobResult(
            job_id,
            "failed",
            "[]",
            f"shard {shard} ended without reporting this job: {lines[-1].strip()}",
            shard=shard,
        )

    def _count(self, result: JobResult, progress: Progress | None) -> JobResult:
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if progress is not None:
            progress.advance(result.status)
        return result

    def _progress(self) -> Progress | None:
        if self.progress is False:
            return None
        stream = sys.stderr if self.progress is True else self.progress
        progress = Progress(len(self.jobs), stream)
        progress.draw()
        return progress

    # ------------------------------------------------------------------ Ctrl-C

    def _catch_sigint(self) -> Any:
        """While iterating in the main thread: the first SIGINT cancels the harness,
        the second raises ``KeyboardInterrupt``."""
        if threading.current_thread() is not threading.main_thread():
            return None

        def on_sigint(signum: int, frame: Any) -> None:
            if self.interrupted:
                raise KeyboardInterrupt
            # ray.cancel is not called from inside a signal handler (the handler may run
            # in the middle of a Ray call): a thread does it
            self.interrupted = True
            threading.Thread(target=self.cancel, name="harness-cancel", daemon=True).start()

        return signal.signal(signal.SIGINT, on_sigint)

    @staticmethod
    def _restore_sigint(previous: Any) -> None:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _failure_of(ref: Any) -> RayError | None:
    """Why a finished shard task failed (``None`` when it succeeded). Ray reports a
    task that was interrupted as ``TaskCancelledError``; a ``KeyboardInterrupt`` here is
    the driver's own second Ctrl-C, and goes on."""
    try:
        ray.get(ref)
    except RayError as exc:
        return exc
    return None


def run_jobs(jobs: Iterable[AgentJob], **options: Any) -> list[JobResult]:
    """``Harness(jobs, **options).run()``."""
    return Harness(jobs, **options).run()
