"""Many agent jobs over a Ray cluster: shards of concurrent agents, one JSON line per
finished job on stdout, a progress line on stderr, the transcripts in a JSONL file.

    python examples/ray_fanout.py --faux --jobs 1000 --shards 2 --concurrency 64
    python examples/ray_fanout.py --model groq/openai/gpt-oss-20b --jobs 20 --address auto

Ctrl-C (or ``--deadline``) aborts the agents still running: their transcripts, cut off
consistently by the abort contract, are written like the others, and the run ends with a
summary and exit status 130. A second Ctrl-C exits at once. ``--block-every N`` makes every Nth faux job wait
in a tool until it is aborted, to see that happen. A job that fails (no key, a network
error) says why on its line, and the exit status is then 1. Needs
``pip install 'pi-trio[ray]'``.
"""

from __future__ import annotations

import argparse
import functools
import json
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import ray

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.fanout import AgentJob, Harness
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

CONNECT_TIMEOUT = 5.0  # seconds for --address to answer at all
INTERRUPTED = "ray_fanout: interrupted; the jobs in flight were aborted (exit status 130)"
NO_CLUSTER = "start one with `ray start --head` there, or leave out --address for a local one"


def lookup_tool(block: bool) -> AgentTool:
    async def lookup(tool_call_id: str, params: Any) -> str:
        if block:
            await anyio.sleep_forever()  # until the harness is cancelled
        return f"record {params['key']}: ok"

    return AgentTool(
        name="lookup",
        description="Look a record up.",
        parameters={"type": "object", "properties": {"key": {"type": "integer"}}},
        execute=lookup,
        replay="safe",
    )


def faux_agent(job: int, block: bool) -> Agent:
    """Built in the Ray worker: a scripted model that looks a record up and answers."""
    faux = FauxProvider(api="faux-fanout")
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_text(f"Looking up {job}."), faux_tool_call("lookup", {"key": job})],
                stop_reason="toolUse",
            ),
            faux_assistant_message(f"Record {job} is ok."),
        ]
    )
    return Agent(model=faux.get_model(), tools=[lookup_tool(block)], stream_fn=faux)


def model_agent(model_name: str) -> Agent:
    return Agent(model=resolve_model(model_name), tools=[lookup_tool(False)])


def make_jobs(args: argparse.Namespace) -> list[AgentJob]:
    jobs = []
    for job in range(args.jobs):
        if args.faux:
            block = bool(args.block_every) and job % args.block_every == 0
            factory = functools.partial(faux_agent, job, block)
        else:
            factory = functools.partial(model_agent, args.model)
        prompt = f"Look up record {job} and say whether it is ok."
        jobs.append(AgentJob(job, prompt, factory, deadline=args.job_deadline))
    return jobs


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", help="the scripted model (no key)")
    parser.add_argument("--model", help="provider/model-id (needs its API key)")
    parser.add_argument("--jobs", type=int, default=100)
    parser.add_argument("--shards", type=int, default=None, help="default: one per CPU")
    parser.add_argument("--concurrency", type=int, default=64, help="agents per shard")
    parser.add_argument("--backend", choices=["trio", "asyncio"], default="trio")
    parser.add_argument("--deadline", type=float, default=None, help="seconds for all jobs")
    parser.add_argument("--job-deadline", type=float, default=None, help="seconds per job")
    parser.add_argument("--block-every", type=int, default=0, help="faux: every Nth job waits")
    parser.add_argument("--out", type=Path, default=None, help="JSONL file of transcripts")
    parser.add_argument("--address", default=None, help="a Ray cluster to join ('auto')")
    args = parser.parse_args(argv)
    args.cluster = None  # (host, port) of --address, checked before Ray starts
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
        )
    if not args.faux:
        try:  # a misspelt model is refused now, not in every job
            resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    # every mistake is refused here, before Ray starts (which takes seconds)
    for name, value, least in (
        ("--jobs", args.jobs, 0),
        ("--shards", args.shards, 1),
        ("--concurrency", args.concurrency, 1),
        ("--block-every", args.block_every, 0),
    ):
        if value is not None and value < least:
            parser.error(f"{name} must be at least {least}, got {value}")
    for name, seconds in (("--deadline", args.deadline), ("--job-deadline", args.job_deadline)):
        if seconds is not None and not seconds > 0:
            parser.error(f"{name} must be positive seconds, got {seconds}")
    if args.out is not None:
        try:  # a transcripts file that cannot be written is an error now, not after the jobs
            with args.out.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            parser.error(f"--out {str(args.out)!r}: {exc.strerror or exc}")
    if args.address not in (None, "auto", "local"):
        host, _, port = args.address.removeprefix("ray://").rpartition(":")
        if not host or not port.isdigit():
            parser.error(
                f"--address takes host:port, ray://host:port or auto, got {args.address!r}"
            )
        args.cluster = (host.strip("[]"), int(port))
    return args


def reach_cluster(host: str, port: int) -> None:
    """Refuse an address where nothing answers, within ``CONNECT_TIMEOUT`` seconds: Ray
    itself would keep trying for minutes."""
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        if isinstance(exc, TimeoutError):
            reason = f"no answer within {CONNECT_TIMEOUT:g} s"
        else:
            reason = exc.strerror or str(exc)
        sys.exit(
            f"ray_fanout: cannot reach a Ray cluster at {host}:{port} ({reason}); {NO_CLUSTER}"
        )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.cluster is not None:
        reach_cluster(*args.cluster)
    if not ray.is_initialized():
        try:
            ray.init(address=args.address, include_dashboard=False)
        except ConnectionError as exc:  # no cluster for "auto", or what answers is not Ray
            sys.exit(f"ray_fanout: --address {args.address}: {exc}")
    harness = Harness(
        make_jobs(args),
        shards=args.shards,
        concurrency=args.concurrency,
        backend=args.backend,
        deadline=args.deadline,
    )
    out = args.out.open("w", encoding="utf-8") if args.out else None
    try:
        for result in harness:
            line = {"id": result.id, "status": result.status, "seconds": round(result.seconds, 3)}
            if result.error:
                line["error"] = result.error
            print(json.dumps(line), flush=True)
            if out is not None:
                transcript = json.loads(result.transcript)
                out.write(json.dumps({**line, "messages": transcript}) + "\n")
    finally:
        if out is not None:
            out.close()
    summary = {"jobs": len(harness.jobs), "cancelled": harness.cancelled, "counts": harness.counts}
    print(json.dumps({"summary": summary}), flush=True)
    if harness.interrupted:  # the summary is out; exit as a command ended by Ctrl-C does
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    return summary


if __name__ == "__main__":
    try:
        counts = main()["counts"]
    except KeyboardInterrupt:  # the second Ctrl-C: at once
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    failed = counts.get("error", 0) + counts.get("failed", 0)
    if failed:  # each job's line above says why
        sys.exit(f"ray_fanout: {failed} of {sum(counts.values())} jobs failed")
