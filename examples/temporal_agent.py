"""A durable agent on Temporal: kill its worker halfway through, run the same command
again, and a new worker finishes the run where it stopped, without asking the model again.

    temporal server start-dev --db-filename temporal.db     # in another terminal
    python examples/temporal_agent.py --faux
    # kill it (Ctrl-C, kill -9) while "fetch" runs, then run the same command again

The process is both a worker and the client that starts the run. The run's id is fixed
(``--run-id``), so running the command again either finds the interrupted run (the new
worker finishes it once the dead one's activity times out, ``--heartbeat-seconds``) or,
once it finished, prints its recorded result. Every line the listener prints says whether
the event is new or replayed from the history. Needs ``pip install 'pi-trio[temporal]'``,
which installs the ``temporal`` command too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import anyio
from temporalio.client import Client

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.temporal import TemporalAgent, TemporalEventInfo
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

# What the factory builds; set from the command line before the worker starts.
SETTINGS: dict[str, Any] = {"model": None, "tool_seconds": 3.0}


async def fetch(tool_call_id: str, params: Any) -> str:
    print(f"  fetch {params['url']} started", flush=True)
    await anyio.sleep(SETTINGS["tool_seconds"])
    return f"<html>{params['url']}: all systems nominal</html>"


FETCH = AgentTool(
    name="fetch",
    description="Fetch a web page.",
    parameters={"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
    execute=fetch,
    replay="safe",  # reading a page twice is harmless; an interrupted fetch runs again
)


def faux_reply(context: Any, options: Any, state: Any, model: Any) -> Any:
    """A scripted model that answers from the transcript (a new worker makes a new one)."""
    if context.messages[-1].role == "user":
        return faux_assistant_message(
            [faux_text("Let me look."), faux_tool_call("fetch", {"url": "status.example"})],
            stop_reason="toolUse",
        )
    return faux_assistant_message("The status page says all systems are nominal.")


def build_agent() -> Agent:
    if SETTINGS["model"] is None:
        faux = FauxProvider(api="faux-example")
        faux.set_responses([faux_reply] * 4)
        return Agent(model=faux.get_model(), tools=[FETCH], stream_fn=faux)
    return Agent(model=resolve_model(SETTINGS["model"]), tools=[FETCH])


def show(event: Any, info: TemporalEventInfo) -> None:
    mark = "replayed" if info.replayed else "new"
    if event.type == "tool_execution_end":
        print(f"  [{mark}] {event.tool_name} -> {event.result.content[0].text}", flush=True)
    elif event.type == "message_end" and event.message.role == "assistant":
        text = "".join(b.text for b in event.message.content if b.type == "text")
        print(f"  [{mark}] assistant: {text}", flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", help="the scripted model (no key)")
    parser.add_argument("--model", help="provider/model-id (needs its API key)")
    parser.add_argument("--address", default="localhost:7233", help="the Temporal server")
    parser.add_argument("--run-id", default="status-check-1")
    parser.add_argument("--task-queue", default="pi-trio-example", help="where workers poll")
    parser.add_argument("--tool-seconds", type=float, default=3.0, help="how long fetch takes")
    parser.add_argument(
        "--heartbeat-seconds",
        type=float,
        default=2.0,
        help="how soon a dead worker's activity goes to another worker",
    )
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if not args.faux:
        try:  # a misspelt model is refused now, with the closest names
            resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


async def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    SETTINGS.update(model=None if args.faux else args.model, tool_seconds=args.tool_seconds)
    agent = TemporalAgent(
        "status-checker",
        build_agent,
        task_queue=args.task_queue,
        heartbeat_timeout=timedelta(seconds=args.heartbeat_seconds),
    )
    agent.subscribe(show, replayed=True)
    try:
        client = await Client.connect(args.address)
    except RuntimeError as exc:
        sys.exit(f"temporal_agent: no Temporal server at {args.address} ({exc}); start one "
                 "with `temporal server start-dev` or give --address")  # fmt: skip
    # a killed worker's cached workflow goes to another worker after this long
    sticky = timedelta(seconds=args.heartbeat_seconds)
    async with agent.worker(client, sticky_queue_schedule_to_start_timeout=sticky):
        run = await agent.start(client, "Is the status page green?", workflow_id=args.run_id)
        result = await run.result()
    answer = next(m for m in reversed(result.messages) if m.role == "assistant")
    if answer.stop_reason in ("error", "aborted"):  # no key, a network error: say why
        sys.exit(f"temporal_agent: the run failed: {answer.error_message}")
    text = "".join(b.text for b in answer.content if b.type == "text")
    print(f"answer: {text}", flush=True)
    return text


def _exit(code: int) -> None:
    # The Temporal SDK's Rust threads may call into Python while the interpreter
    # finalizes, which aborts the process (temporalio/sdk-python#300); all is written.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # the run stays in Temporal; the same command finishes it
        print("temporal_agent: interrupted; run the same command again to resume", file=sys.stderr)
        _exit(130)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
            _exit(1)
        _exit(exc.code or 0)
    _exit(0)
