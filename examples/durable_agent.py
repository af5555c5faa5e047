"""A durable agent on DBOS: kill it halfway through, run the same command again, and it
finishes the run where it stopped, without asking the model again.

    python examples/durable_agent.py --faux --db durable.sqlite
    # kill it (Ctrl-C, kill -9) while "fetch" runs, then run the same command again

The run's id is fixed (``--run-id``), so running the command again either resumes the
interrupted run (DBOS does it on launch) or, once it finished, prints its recorded result.
Every line the listener prints says whether the event is new or replayed from the
database. Needs ``pip install 'pi-trio[dbos]'``; the same code runs on Postgres by
pointing ``--db`` at ``postgresql://user:password@host:5432/dbname``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from dbos import DBOS

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.durable import DurableAgent, DurableEventInfo
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

# What the factory builds; set from the command line before DBOS launches (and resumes).
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
    """A scripted model that answers from the transcript (a resumed run makes a new one)."""
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


AGENT = DurableAgent("status-checker", build_agent)


def show(event: Any, info: DurableEventInfo) -> None:
    mark = "replayed" if info.replayed else "new"
    if event.type == "tool_execution_end":
        print(f"  [{mark}] {event.tool_name} -> {event.result.content[0].text}", flush=True)
    elif event.type == "message_end" and event.message.role == "assistant":
        text = "".join(b.text for b in event.message.content if b.type == "text")
        print(f"  [{mark}] assistant: {text}", flush=True)


AGENT.subscribe(show, replayed=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", help="the scripted model (no key)")
    parser.add_argument("--model", help="provider/model-id (needs its API key)")
    parser.add_argument("--db", default="durable.sqlite", help="SQLite file or Postgres URL")
    parser.add_argument("--run-id", default="status-check-1")
    parser.add_argument("--tool-seconds", type=float, default=3.0, help="how long fetch takes")
    args = parser.parse_args(argv)
    if not args.faux and not args.model:
        parser.error("choose --faux (offline) or --model provider/model-id")
    if args.faux and args.model:  # one of them would be ignored
        parser.error(
            "--faux and --model exclude each other: --faux is the offline scripted "
            "model, --model a real one"
        )
    if not args.faux:
        try:  # a misspelt model is refused now, with the closest names
            resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    return args


def database_url(db: str) -> str:
    return db if "://" in db else f"sqlite:///{os.path.abspath(db)}"


async def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    SETTINGS.update(model=None if args.faux else args.model, tool_seconds=args.tool_seconds)
    DBOS(
        config={
            "name": "pi-trio-durable-example",
            "system_database_url": database_url(args.db),
            "log_level": "ERROR",
        }
    )
    DBOS.launch()  # resumes an interrupted run of this database
    try:
        run = await AGENT.start("Is the status page green?", workflow_id=args.run_id)
        result = await run.result(poll_interval=0.1)
    finally:
        DBOS.destroy()
    answer = next(m for m in reversed(result.messages) if m.role == "assistant")
    if answer.stop_reason in ("error", "aborted"):  # no key, a network error: say why
        sys.exit(f"durable_agent: the run failed: {answer.error_message}")
    text = "".join(b.text for b in answer.content if b.type == "text")
    print(f"answer: {text}", flush=True)
    return text


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # the run stays in the database; the same command resumes it
        print("durable_agent: interrupted; run the same command again to resume", file=sys.stderr)
        sys.exit(130)
