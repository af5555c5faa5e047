"""A durable agent on DBOS: kill it halfway through, resume it, and it finishes the run
where it stopped, without asking the model again.

    python examples/durable_agent.py --faux --db durable.sqlite
    # kill it (Ctrl-C, kill -9) while "fetch" runs; its first line named the run, so
    python examples/durable_agent.py --faux --db durable.sqlite --resume status-check-…

Every invocation starts a new run, with a new id, unless ``--resume RUN_ID`` asks for an
earlier one: an interrupted run then finishes (DBOS resumes it on launch), a finished one
prints its recorded result, and the first line says which of the two happened. Every line
the listener prints says whether the event is new or replayed from the database. Needs
``pip install 'pi-trio[dbos]'``; the same code runs on Postgres by pointing ``--db`` at
``postgresql://user:password@host:5432/dbname``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import uuid
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
from dbos import DBOS
from dbos import error as dbos_error
from sqlalchemy.exc import SQLAlchemyError

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.durable import DurableAgent, DurableEventInfo
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

# What the factory builds; set from the command line before DBOS launches (and resumes).
SETTINGS: dict[str, Any] = {"model": None, "tool_seconds": 3.0, "resume": None}


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
    parser.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="finish the interrupted run RUN_ID (or show its result) instead of a new run",
    )
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


def shown_database(db: str) -> str:
    """The database as the user gave it, without the password of a URL."""
    url = urlsplit(db)
    if url.password is None:
        return db
    netloc = url.netloc.replace(f":{url.password}@", ":***@", 1)
    return urlunsplit(url._replace(netloc=netloc))


def resume_command(args: argparse.Namespace, run_id: str) -> str:
    engine = "--faux" if args.faux else f"--model {args.model}"
    return f"python {sys.argv[0]} {engine} --db {shown_database(args.db)} --resume {run_id}"


def launch(args: argparse.Namespace, run_id: str) -> None:
    """Start DBOS on the database; a database it cannot open is one line and exit 1.

    The run's id is DBOS's executor id too, and launching resumes the interrupted runs of
    its executor: so a new run resumes nothing, and ``--resume`` resumes that run alone."""
    try:
        DBOS(
            config={
                "name": "pi-trio-durable-example",
                "system_database_url": database_url(args.db),
                "executor_id": run_id,
                "log_level": "ERROR",
            }
        )
        dbos_log = logging.getLogger("dbos")
        level = dbos_log.level
        dbos_log.setLevel(logging.CRITICAL)  # a failed launch is reported below, in one line
        try:
            DBOS.launch()
        finally:
            dbos_log.setLevel(level)
    except (SQLAlchemyError, dbos_error.DBOSInitializationError, ValueError) as exc:
        DBOS.destroy()
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        reason = reason.removeprefix("DBOS Error 3: Error initializing DBOS Transact: ")
        sys.exit(f"durable_agent: cannot open the database {shown_database(args.db)!r}: {reason}")


async def main(argv: Sequence[str] | None = None) -> str:
    args = parse_args(argv)
    SETTINGS.update(model=None if args.faux else args.model, tool_seconds=args.tool_seconds)
    run_id = args.resume or f"status-check-{uuid.uuid4().hex[:8]}"
    SETTINGS["resume"] = resume_command(args, run_id)
    launch(args, run_id)
    try:
        if args.resume is None:
            print(f"run {run_id}: a new run (interrupted, it resumes with --resume {run_id})")
        else:
            status = await DBOS.get_workflow_status_async(run_id)
            if status is None:  # a usage error: exit status 2
                print(
                    f"durable_agent: no run {run_id!r} in the database "
                    f"{shown_database(args.db)!r}; leave out --resume to start a new one",
                    file=sys.stderr,
                )
                sys.exit(2)
            if status.status in ("SUCCESS", "ERROR"):
                print(f"run {run_id}: finished earlier; its recorded result:", flush=True)
            else:
                print(f"run {run_id}: resuming from the database (recorded steps are replayed)")
        run = await AGENT.start("Is the status page green?", workflow_id=run_id)
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
    except KeyboardInterrupt:  # the run stays in the database; --resume finishes it
        print(
            f"durable_agent: interrupted; to finish the run: {SETTINGS['resume']}", file=sys.stderr
        )
        sys.exit(130)
