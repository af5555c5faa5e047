"""Embedding pi_trio in a trio service: many agent runs at once, at most --concurrency in
flight (an anyio.CapacityLimiter), each with its own deadline (anyio.move_on_after).

A run that misses its deadline is cancelled from outside; the agent still settles (its
closing events are delivered, the partial answer is kept, marked aborted) and the next
job starts. Nothing outlives the service's task group. A job whose run fails prints the
reason, and the service then exits with status 1. Ctrl-C stops the service: the runs in
flight are aborted (each agent settles) and the exit status is 130.

    python examples/trio_service.py --faux                 # offline, scripted model
    python examples/trio_service.py --model anthropic/claude-haiku-4-5 --jobs 5
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import trio

from pi_trio.agent import Agent, tool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call


@tool
async def lookup(topic: str) -> str:
    """Look a topic up in the (simulated) knowledge base."""
    await anyio.sleep(0.05)
    return f"{topic}: three short facts"


def faux_model(tokens_per_second: float) -> tuple[Any, FauxProvider]:
    """A scripted model: one tool call, then an answer whose length the prompt sets
    ("... in N words"), streamed at ``tokens_per_second``, so long answers miss the
    deadline."""
    faux = FauxProvider(tokens_per_second=tokens_per_second)

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        faux.append_responses([reply])
        last = context.messages[-1]
        if last.role == "user":
            return faux_assistant_message(
                [faux_text("Checking."), faux_tool_call("lookup", {"topic": "trio"})],
                stop_reason="toolUse",
            )
        prompt = next(m for m in reversed(context.messages) if m.role == "user")
        words = int(prompt.content[0].text.rsplit(" ", 2)[-2])
        return faux_assistant_message(" ".join(["word"] * words))

    faux.set_responses([reply])
    return faux.get_model(), faux


class Service:
    """Runs jobs under a shared concurrency limit; records the peak number in flight."""

    def __init__(self, model: Any, stream_fn: Any, concurrency: int, deadline: float) -> None:
        self.model = model
        self.stream_fn = stream_fn
        self.limiter = anyio.CapacityLimiter(concurrency)
        self.deadline = deadline
        self.in_flight = 0
        self.peak_in_flight = 0
        self.results: list[dict[str, Any]] = []

    async def handle(self, job: int, prompt: str) -> None:
        async with self.limiter:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            agent = Agent(model=self.model, tools=[lookup], stream_fn=self.stream_fn)
            started = anyio.current_time()
            result = None
            try:
                with anyio.move_on_after(self.deadline):
                    result = await agent.prompt(prompt)
            finally:
                self.in_flight -= 1
            # a missed deadline cancels prompt(): the partial answer is in the transcript
            answers = [m for m in agent.state.messages if m.role == "assistant"]
            text = (
                "".join(b.text for b in answers[-1].content if b.type == "text") if answers else ""
            )
            self.results.append(
                {
                    "job": job,
                    "status": "deadline" if result is None else result.stop_reason,
                    "error": None if result is None else result.error_message,
                    "seconds": round(anyio.current_time() - started, 3),
                    "chars": len(text),
                    "streaming_after": agent.state.is_streaming,
                }
            )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", default=bool(os.environ.get("PI_TRIO_FAUX")))
    parser.add_argument("--model", help="provider/model-id (needs its API key in the environment)")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--deadline", type=float, default=1.0, help="seconds per job")
    parser.add_argument("--tokens-per-second", type=float, default=400.0, help="faux pacing")
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
            + ("; PI_TRIO_FAUX is set" if os.environ.get("PI_TRIO_FAUX") else "")
        )
    if args.concurrency < 1:
        parser.error(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.jobs < 0:
        parser.error(f"--jobs must be 0 or more, got {args.jobs}")
    if not args.deadline > 0:
        parser.error(f"--deadline must be positive seconds, got {args.deadline}")
    if args.tokens_per_second <= 0:
        parser.error(f"--tokens-per-second must be positive, got {args.tokens_per_second}")
    if not args.faux:
        try:
            args.model = resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.faux:
        model, stream_fn = faux_model(args.tokens_per_second)
    else:
        model, stream_fn = args.model, None
    service = Service(model, stream_fn, args.concurrency, args.deadline)
    print(f"{args.jobs} jobs, at most {args.concurrency} at once (Ctrl-C stops)", flush=True)
    async with anyio.create_task_group() as group:
        for job in range(args.jobs):
            words = 20 + (job * 53) % 400  # some answers are too long for the deadline
            group.start_soon(service.handle, job, f"Job {job}: explain trio in {words} words")
    results = sorted(service.results, key=lambda r: r["job"])
    for r in results:
        line = f"job {r['job']:>3}  {r['status']:<9} {r['seconds']:>6.2f}s  {r['chars']:>5} chars"
        print(line + (f"  {r['error']}" if r["error"] else ""))
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"{len(results)} jobs, peak {service.peak_in_flight} in flight: {counts}")
    return {"results": results, "peak_in_flight": service.peak_in_flight, "counts": counts}


async def serve_until_interrupted() -> int:
    """``main`` that Ctrl-C stops: the runs in flight are cancelled from outside (each
    agent settles first) and the exit status is 130; otherwise 1 when a run failed."""
    parse_args(None)  # a usage error exits here, before anything runs
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async with anyio.create_task_group() as group:

            async def stop_on_ctrl_c() -> None:
                async for _ in signals:
                    group.cancel_scope.cancel()

            group.start_soon(stop_on_ctrl_c)
            summary = await main()
            group.cancel_scope.cancel()
            return 1 if summary["counts"].get("error") else 0
    print("interrupted; the runs in flight were aborted", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(trio.run(serve_until_interrupted))
