"""Transcript JSON: decoding and encoding a large transcript, and what keeping unknown
fields or the key order costs.

``python -m benchmarks.wire_json`` times, on a 6 000-message transcript (~2.5 MB) in
pi_trio's own field order: ``messages_from_json`` and ``messages_to_json`` (the common
path: every field known), decoding the same transcript with an unknown field in every
message (the slow path that keeps them), and decoding with ``exact=True``. Each figure is
the median of ``--repeat`` timings in one process.

``--against DIR`` compares with another checkout of pi_trio (say, the parent commit
exported with ``git archive``): the common-path figures of both run in fresh processes,
alternating A B A B … for ``--runs`` rounds so the ratio survives a busy machine, and the
medians and ratios are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MESSAGES = 6000
REPEAT = 15


def _usage(i: int) -> dict[str, Any]:
    cost = {
        "input": round(0.0003 + i * 1e-7, 9),
        "output": round(0.00015 + i * 1e-8, 9),
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": round(0.00045 + i * 1.1e-7, 9),
    }
    return {
        "input": 100 + i,
        "output": 20,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 120 + i,
        "cost": cost,
    }


def transcript(unknown: bool = False, messages_count: int = MESSAGES) -> bytes:
    """A transcript in pi_trio's field order; ``unknown`` adds a field pi_trio does not
    know to every message."""
    extra = {"trace": {"span": "s", "n": 1}} if unknown else {}
    messages: list[dict[str, Any]] = []
    for i in range(messages_count // 3):
        messages.append(
            {
                "role": "user",
                "content": f"question {i} " * 20,
                **extra,
                "timestamp": 1_730_000_000_000 + i,
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "consider " * 10},
                    {"type": "text", "text": "answer " * 40},
                    {
                        "type": "toolCall",
                        "id": f"c{i}",
                        "name": "calc",
                        "arguments": {"expression": "1+2", "n": i},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "responseId": f"msg_{i}",
                "usage": _usage(i),
                "stopReason": "toolUse",
                **extra,
                "timestamp": 1_730_000_000_000 + i,
            }
        )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "toolName": "calc",
                "content": [{"type": "text", "text": "3"}],
                "details": {"result": 3},
                "isError": False,
                **extra,
                "durationMs": 3,
                "timestamp": 1_730_000_000_000 + i,
            }
        )
    return json.dumps(messages, separators=(",", ":"), ensure_ascii=False).encode()


def _median_time(run: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(
    repeat: int = REPEAT, *, common_only: bool = False, messages_count: int = MESSAGES
) -> dict[str, Any]:
    from pi_trio.ai import messages_from_json, messages_to_json

    data = transcript(messages_count=messages_count)
    decoded = messages_from_json(data)
    assert messages_to_json(decoded) == data, "the transcript is not in pi_trio's order"
    result: dict[str, Any] = {
        "bytes": len(data),
        "decode_ms": round(_median_time(lambda: messages_from_json(data), repeat) * 1000, 3),
        "encode_ms": round(_median_time(lambda: messages_to_json(decoded), repeat) * 1000, 3),
    }
    if common_only:
        return result
    future = transcript(unknown=True, messages_count=messages_count)
    kept = messages_from_json(future)
    assert messages_to_json(kept) == future
    result["decode_unknown_fields_ms"] = round(
        _median_time(lambda: messages_from_json(future), max(3, repeat // 3)) * 1000, 3
    )
    result["encode_unknown_fields_ms"] = round(
        _median_time(lambda: messages_to_json(kept), max(3, repeat // 3)) * 1000, 3
    )
    result["decode_exact_ms"] = round(
        _median_time(lambda: messages_from_json(data, exact=True), repeat) * 1000, 3
    )
    return result


def _run_in(root: Path, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import wire_json; "
        "print(json.dumps(wire_json.measure(int(sys.argv[2]), common_only=True)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(HERE), str(repeat)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def paired(other: Path, runs: int, repeat: int) -> None:
    here = HERE.parent
    rows: dict[str, dict[str, list[float]]] = {"this": {}, "other": {}}
    for round_ in range(runs + 1):  # the first round warms up
        for label, root in (("this", here), ("other", other)):
            line = _run_in(root, repeat)
            print(json.dumps({"round": round_, "tree": label, **line}), flush=True)
            if round_ == 0:
                continue
            for key in ("decode_ms", "encode_ms"):
                rows[label].setdefault(key, []).append(line[key])
    summary = {}
    for key in ("decode_ms", "encode_ms"):
        a = statistics.median(rows["this"][key])
        b = statistics.median(rows["other"][key])
        summary[key] = {"this": a, "other": b, "this/other": round(a / b, 3)}
    print(json.dumps({"paired_medians": summary, "runs": runs, "other": str(other)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another pi_trio checkout to compare with")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=REPEAT)
    args = parser.parse_args()
    if args.against is not None:
        paired(args.against.resolve(), args.runs, args.repeat)
    else:
        print(json.dumps({"workload": "wire_json", **measure(args.repeat)}))


if __name__ == "__main__":
    main()
