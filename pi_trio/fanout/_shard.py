"""One shard: many agent jobs on one event loop (trio or asyncio), at most ``concurrency``
at a time, results handed on in batches as they finish.

``run_shard`` is plain anyio and knows nothing of Ray: the harness runs it inside a Ray
task, the one-process baseline runs it directly. ``Shard.stop()`` (or SIGINT, when
``catch_sigint`` is set) aborts every running agent with the abort contract: each
``prompt()`` returns with its consistent transcript, which is reported with status
``aborted``; jobs not started yet are reported ``cancelled``. A job that fails (its
factory or its run raises) is reported ``failed``; the shard goes on.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..agent import Agent
from ..ai import messages_to_json
from ._job import AgentJob, JobResult

__all__ = ["RESULT_BATCH", "RESULT_BUFFER", "Shard", "run_shard"]

# Finished results waiting to be handed on. When the receiver is slower than the agents,
# jobs wait here before finishing instead of results piling up in memory.
RESULT_BUFFER = 256
# The most results handed on at once: bounds one message to the driver.
RESULT_BATCH = 512

Deliver = Callable[[list[JobResult]], Awaitable[None]]


class Shard:
    """The jobs of one shard and the agents running them."""

    def __init__(self, jobs: Sequence[AgentJob], *, concurrency: int, index: int = 0) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency!r}")
        self.jobs = jobs
        self.concurrency = concurrency
        self.index = index
        self.stopping = False
        self._running: set[Agent] = set()
        self._aborted: set[Agent] = set()
        self._pending: Iterator[AgentJob] = iter(jobs)

    @property
    def running(self) -> int:
        """How many agents are running now."""
        return len(self._running)

    def stop(self) -> None:
        """Abort every running agent and start no more jobs (sync, idempotent)."""
        self.stopping = True
        for agent in list(self._running):
            self._aborted.add(agent)
            agent.abort("the fan-out was cancelled")

    async def run(self, deliver: Deliver, *, catch_sigint: bool = False) -> None:
        """Run every job and hand the results to ``deliver`` in batches."""
        send, receive = anyio.create_memory_object_stream[JobResult](RESULT_BUFFER)
        async with anyio.create_task_group() as group:
            if catch_sigint:
                await group.start(self._watch_sigint)
            async with anyio.create_task_group() as flushing:
                flushing.start_soon(_flush, receive, deliver)
                async with send, anyio.create_task_group() as workers:
                    for _ in range(min(self.concurrency, len(self.jobs)) or 1):
                        workers.start_soon(self._work, send.clone())
            group.cancel_scope.cancel()  # only the SIGINT watcher is left

    async def _watch_sigint(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            task_status.started()
            async for _ in signals:
                self.stop()

    async def _work(self, results: MemoryObjectSendStream[JobResult]) -> None:
        async with results:
            for job in self._pending:
                await results.send(await self._run_job(job))

    async def _run_job(self, job: AgentJob) -> JobResult:
        if self.stopping:
            return JobResult(job.id, "cancelled", "[]", shard=self.index)
        started = time.perf_counter()
        agent: Agent | None = None
        status: str
        error: str | None = None
        transcript = "[]"
        try:
            agent = job.build()
            if self.stopping:
                return JobResult(job.id, "cancelled", "[]", shard=self.index)
            self._running.add(agent)
            try:
                limit = float("inf") if job.deadline is None else job.deadline
                with anyio.move_on_after(limit) as deadline:
                    await agent.prompt(job.prompt)
            finally:
                self._running.discard(agent)
            status, error = _outcome(agent, agent in self._aborted, deadline.cancelled_caught)
            transcript = messages_to_json(agent.state.messages).decode()
        except Exception as exc:
            status, error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            if agent is not None:
                self._aborted.discard(agent)
        seconds = time.perf_counter() - started
        return JobResult(job.id, status, transcript, error, seconds, self.index)


async def run_shard(
    jobs: Sequence[AgentJob],
    deliver: Deliver,
    *,
    concurrency: int = 64,
    index: int = 0,
    catch_sigint: bool = False,
) -> Shard:
    """Run ``jobs`` on the current event loop (see the module docstring)."""
    shard = Shard(jobs, concurrency=concurrency, index=index)
    await shard.run(deliver, catch_sigint=catch_sigint)
    return shard


async def _flush(receive: MemoryObjectReceiveStream[JobResult], deliver: Deliver) -> None:
    async with receive:
        async for first in receive:
            batch = [first]
            while len(batch) < RESULT_BATCH:
                try:
                    batch.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            await deliver(batch)


def _outcome(agent: Agent, aborted: bool, timed_out: bool) -> tuple[str, str | None]:
    last = next((m for m in reversed(agent.state.messages) if m.role == "assistant"), None)
    error = None if last is None else last.error_message
    if timed_out:
        return "deadline", error
    if aborted:
        return "aborted", error
    if last is None:
        return "failed", agent.state.error_message or "the run produced no answer"
    return str(last.stop_reason), error
