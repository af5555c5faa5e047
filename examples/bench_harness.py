"""A small benchmark harness: N agent tasks on K workers, a progress bar, one JSON line per
finished task, and resumable: run it again with the same --out and it skips the tasks
already recorded (a half-written last line from a crash is dropped and redone).

Workers take task ids from a channel; one writer task owns the output file and the
progress bar, so results are appended whole, in completion order, as soon as they exist.
Failed tasks are results too: the first one's reason is printed at the end, and the exit
status is 1 only when no task succeeded (a missing key, a wrong URL). Ctrl-C stops the run
(exit status 130); everything finished so far is on disk. A results file that stops
taking writes (a full disk) ends the run with one line (exit status 1).

    python examples/bench_harness.py --faux --tasks 200 --concurrency 16 --out runs.jsonl
    python examples/bench_harness.py --model groq/openai/gpt-oss-20b --tasks 20
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio
import trio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from pi_trio.agent import Agent, tool
from pi_trio.ai import UnknownModelError, resolve_model
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

FETCH_SECONDS = 0.02


@tool
async def fetch(item: int) -> str:
    """Fetch an item by number (simulated)."""
    await anyio.sleep(FETCH_SECONDS)
    return f"item {item}: ok"


def faux_model(tokens_per_second: float | None) -> tuple[Any, FauxProvider]:
    """A scripted model with some variety: every 5th task calls ``fetch`` first, every 7th
    fails like a rate-limited provider, the rest answer directly."""
    faux = FauxProvider(tokens_per_second=tokens_per_second)

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        faux.append_responses([reply])
        prompt = next(m for m in context.messages if m.role == "user").content[0].text
        task = int(prompt.split()[1].rstrip(":"))
        if task % 7 == 3:
            return faux_assistant_message(
                [], stop_reason="error", error_message="429 rate limited (scripted)"
            )
        if task % 5 == 0 and context.messages[-1].role == "user":
            return faux_assistant_message(
                [faux_text("Fetching."), faux_tool_call("fetch", {"item": task})],
                stop_reason="toolUse",
            )
        return faux_assistant_message(f"Summary of item {task}: " + "fine " * (10 + task % 30))

    faux.set_responses([reply])
    return faux.get_model(), faux


# --------------------------------------------------------------------------- results file


class ResultsNotWritten(Exception):
    """The results file stopped taking writes (a full disk, a file size limit)."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"cannot write results to {str(path)!r}: {error.strerror or error}")


def load_done(path: Path) -> set[int]:
    """The task ids already in ``path``. A last line without its newline (the process died
    while writing it) is cut off the file, so appending starts on a fresh line. Only a
    regular file is read: a device or a pipe given as --out (/dev/null) is written only."""
    if not path.is_file():
        return set()
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with path.open("r+b") as handle:
            handle.truncate(len(complete))
    done = set()
    for line in complete.splitlines():
        try:
            done.add(int(json.loads(line)["task"]))
        except (ValueError, KeyError, TypeError):
            continue  # not one of ours; leave it alone
    return done


class Progress:
    """``[#####.....] 12/50  ok 10  failed 2``: redrawn in place on a terminal, a line
    per tenth otherwise."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO) -> None:
        self.total = total
        self.done = done
        self.ok = 0
        self.failed = 0
        self.first_error: str | None = None  # why the first failed task failed
        self.stream = stream
        self.tty = stream.isatty()
        self._last_tenth = -1

    def advance(self, error: str | None) -> None:
        """One more task finished; ``error`` says why it failed, ``None`` if it did not."""
        self.done += 1
        if error is None:
            self.ok += 1
        else:
            self.failed += 1
            self.first_error = self.first_error or error
        self.draw()

    def draw(self) -> None:
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        line = f"[{bar}] {self.done}/{self.total}  ok {self.ok}  failed {self.failed}"
        tenth = 10 * self.done // max(self.total, 1)
        if self.tty:
            self.stream.write("\r" + line)
        elif tenth != self._last_tenth:
            self.stream.write(line + "\n")
        self._last_tenth = tenth
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- runs


async def run_task(task: int, model: Any, stream_fn: Any, deadline: float) -> dict[str, Any]:
    agent = Agent(model=model, tools=[fetch], stream_fn=stream_fn)
    started = anyio.current_time()
    result = None
    with anyio.move_on_after(deadline):
        result = await agent.prompt(f"Task {task}: summarize item {task} in one line.")
    assistants = [m for m in agent.state.messages if m.role == "assistant"]
    return {
        "task": task,
        "status": "deadline" if result is None else result.stop_reason,
        "ms": round((anyio.current_time() - started) * 1000, 1),
        "requests": len(assistants),
        "input_tokens": sum(m.usage.input for m in assistants),
        "output_tokens": sum(m.usage.output for m in assistants),
        "error": "missed the deadline" if result is None else result.error_message,
        "answer": (result.text if result is not None else "")[:80],
    }


async def worker(
    ids: ObjectReceiveStream[int],
    results: ObjectSendStream[dict[str, Any]],
    model: Any,
    stream_fn: Any,
    deadline: float,
) -> None:
    async with ids, results:
        async for task in ids:
            try:
                await results.send(await run_task(task, model, stream_fn, deadline))
            except anyio.BrokenResourceError:
                return  # the writer failed; its error ends the run


async def feed(todo: list[int], ids: ObjectSendStream[int]) -> None:
    async with ids:
        for task in todo:
            await ids.send(task)


async def write_results(
    results: ObjectReceiveStream[dict[str, Any]], path: Path, progress: Progress
) -> dict[str, int]:
    counts: dict[str, int] = {}
    async with results:
        try:
            async with await anyio.open_file(path, "a", encoding="utf-8") as out:
                async for record in results:
                    await out.write(json.dumps(record) + "\n")
                    await out.flush()
                    counts[record["status"]] = counts.get(record["status"], 0) + 1
                    ok = record["status"] == "stop"
                    progress.advance(None if ok else record["error"] or record["status"])
        except OSError as exc:  # the disk is full: say so once instead of a traceback
            raise ResultsNotWritten(path, exc) from None
    return counts


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faux", action="store_true", default=bool(os.environ.get("PI_TRIO_FAUX")))
    parser.add_argument("--model", help="provider/model-id (needs its API key in the environment)")
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--deadline", type=float, default=60.0, help="seconds per task")
    parser.add_argument("--out", type=Path, default=Path("bench_results.jsonl"))
    parser.add_argument("--tokens-per-second", type=float, default=None, help="faux pacing")
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
    if args.tasks < 0:
        parser.error(f"--tasks must be 0 or more, got {args.tasks}")
    if not args.deadline > 0:
        parser.error(f"--deadline must be positive seconds, got {args.deadline}")
    if not args.faux:
        try:
            args.model = resolve_model(args.model)
        except UnknownModelError as exc:
            parser.error(f"--model: {exc}")
    try:  # a results file that cannot be written is an error now, not after the first task
        with args.out.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        parser.error(f"--out {str(args.out)!r}: {exc.strerror or exc}")
    return args


async def main(
    argv: Sequence[str] | None = None, *, progress_to: TextIO | None = None
) -> dict[str, Any]:
    args = parse_args(argv)
    if args.faux:
        model, stream_fn = faux_model(args.tokens_per_second)
    else:
        model, stream_fn = args.model, None
    done = load_done(args.out)
    todo = [task for task in range(args.tasks) if task not in done]
    progress = Progress(args.tasks, args.tasks - len(todo), progress_to or sys.stderr)
    progress.draw()
    counts: dict[str, int] = {}

    async def collect(results: ObjectReceiveStream[dict[str, Any]]) -> None:
        counts.update(await write_results(results, args.out, progress))

    ids_send, ids_receive = anyio.create_memory_object_stream[int](0)
    results_send, results_receive = anyio.create_memory_object_stream[dict[str, Any]](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(feed, todo, ids_send)
            group.start_soon(collect, results_receive)
            with ids_receive, results_send:
                for _ in range(min(args.concurrency, max(len(todo), 1))):
                    group.start_soon(
                        worker,
                        ids_receive.clone(),
                        results_send.clone(),
                        model,
                        stream_fn,
                        args.deadline,
                    )
    finally:
        progress.close()
    if progress.first_error is not None:  # the reason on the terminal, not only in the file
        print(
            f"bench_harness: {progress.failed} of {len(todo)} tasks failed; the first: "
            f"{progress.first_error}",
            file=progress.stream,
        )
    summary = {"ran": len(todo), "skipped": len(done & set(range(args.tasks))), "statuses": counts}
    print(json.dumps(summary))
    return summary


async def main_until_interrupted(argv: Sequence[str] | None = None) -> int:
    """``main`` that Ctrl-C stops: the runs in flight are cancelled (each agent settles),
    every finished result is already on disk, and the exit status is 130."""
    parse_args(argv)  # a usage error exits here, before anything runs
    interrupted = False
    summary: dict[str, Any] = {"statuses": {}}
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async with anyio.create_task_group() as group:

                async def stop_on_ctrl_c() -> None:
                    nonlocal interrupted
                    async for _ in signals:
                        interrupted = True
                        group.cancel_scope.cancel()

                group.start_soon(stop_on_ctrl_c)
                summary = await main(argv)
                group.cancel_scope.cancel()
    except ExceptionGroup as errors:
        failed, others = errors.split(ResultsNotWritten)
        if failed is None or others is not None:
            raise
        while isinstance(failed, ExceptionGroup):  # task groups nest the one error
            failed = failed.exceptions[0]
        print(f"bench_harness: {failed}", file=sys.stderr)
        return 1
    if interrupted:
        print("\ninterrupted; finished tasks are saved, run again to resume", file=sys.stderr)
        return 130
    statuses = summary["statuses"]
    return 1 if statuses and "stop" not in statuses else 0  # nothing succeeded: a failure


if __name__ == "__main__":
    sys.exit(trio.run(main_until_interrupted))
