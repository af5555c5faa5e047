"""Mapper micro-benchmark: each provider's wire-to-event mapper alone (sans-IO, no HTTP,
no fold), on two recorded bodies of its tests: ``text`` (the text deltas repeated until
the stream holds ``--deltas`` of them) and ``thinking`` (the same with the thinking deltas
of the thinking-and-tools body).

    python -m benchmarks.mappers [--deltas N] [--rounds R]

Prints one JSON line: per provider, the median over ``R`` rounds of the CPU microseconds
one SSE event costs (decoding, mapping, building the events), each round a fresh builder
and mapper fed the whole stream and finished. CPU time, not wall time, so that other
processes on the machine disturb the figure less. Compare two trees by alternating runs (A B A B)
and quoting the median of the per-run ratios: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_trio.ai import Model
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._anthropic_events import AnthropicEventMapper
from pi_trio.ai.providers._google_events import GoogleEventMapper
from pi_trio.ai.providers._openai_compat import resolve_compat
from pi_trio.ai.providers._responses_events import ResponsesEventMapper
from pi_trio.ai.providers._sse import SSEEvent, SSEParser
from pi_trio.ai.providers.openai_completions import CompletionsStreamMapper

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
DELTAS = 20_000
ROUNDS = 15

# feed(event) and finish() of a fresh mapper, as the provider's HTTP shell calls them.
Feeder = tuple[Callable[[SSEEvent], Any], Callable[[], Any]]


def _model(api: str, provider: str) -> Model:
    return Model(
        id="bench",
        name="bench",
        api=api,
        provider=provider,
        base_url="http://127.0.0.1",
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        context_window=200_000,
        max_tokens=8_192,
    )


def _anthropic(builder: MessageBuilder, model: Model) -> Feeder:
    mapper = AnthropicEventMapper(builder, model)
    return (lambda e: mapper.feed(e.event, e.data)), mapper.finish


def _responses(builder: MessageBuilder, model: Model) -> Feeder:
    mapper = ResponsesEventMapper(builder, model)
    return (lambda e: mapper.feed_data(e.data)), mapper.finish


def _completions(builder: MessageBuilder, model: Model) -> Feeder:
    mapper = CompletionsStreamMapper(builder, model, resolve_compat(model))
    return mapper.feed, mapper.finish


def _google(builder: MessageBuilder, model: Model) -> Feeder:
    mapper = GoogleEventMapper(builder, model)
    return (lambda e: mapper.feed_data(e.data)), mapper.finish


# provider -> (fixture folder, model api, mapper, {stream: (fixture, is this event repeated)})
PROVIDERS: dict[str, tuple[str, str, Callable[[MessageBuilder, Model], Feeder], Any]] = {
    "anthropic": (
        "anthropic",
        "anthropic-messages",
        _anthropic,
        {
            "text": ("text.sse", lambda e: e.event == "content_block_delta"),
            "thinking": ("thinking_tools.sse", lambda e: '"thinking_delta"' in e.data),
        },
    ),
    "openai-responses": (
        "openai_responses",
        "openai-responses",
        _responses,
        {
            "text": ("text.sse", lambda e: e.event == "response.output_text.delta"),
            "thinking": (
                "reasoning_tools.sse",
                lambda e: e.event == "response.reasoning_summary_text.delta",
            ),
        },
    ),
    "openai-completions": (
        "openai_completions",
        "openai-completions",
        _completions,
        {
            "text": (
                "text.sse",
                lambda e: '"content":"' in e.data and '"content":""' not in e.data,
            ),
            "thinking": (
                "reasoning_content.sse",
                lambda e: (
                    '"reasoning_content":"' in e.data and '"reasoning_content":""' not in e.data
                ),
            ),
        },
    ),
    "google": (
        "google",
        "google-generative-ai",
        _google,
        {
            "text": ("text.sse", lambda e: '"text": "' in e.data and "finishReason" not in e.data),
            "thinking": ("thinking_tools.sse", lambda e: '"thought": true' in e.data),
        },
    ),
}


def stream(
    folder: str, fixture: str, is_repeated: Callable[[SSEEvent], bool], deltas: int
) -> list[SSEEvent]:
    """The fixture's events with each chosen event repeated, ``deltas`` of them in all."""
    parser = SSEParser()
    events = [*parser.feed((FIXTURES / folder / fixture).read_bytes()), *parser.close()]
    count = sum(1 for e in events if is_repeated(e))
    out: list[SSEEvent] = []
    for event in events:
        out.extend([event] * (deltas // count) if is_repeated(event) else [event])
    return out


def time_stream(name: str, kind: str, deltas: int, rounds: int) -> dict[str, Any]:
    folder, api, make, streams = PROVIDERS[name]
    fixture, is_repeated = streams[kind]
    events = stream(folder, fixture, is_repeated, deltas)
    model = _model(api, name)
    samples = []
    produced = 0
    for _ in range(rounds + 1):  # the first round warms up
        builder = MessageBuilder(model, timestamp=0)
        feed, finish = make(builder, model)
        gc.collect()
        t0 = time.process_time()
        out = [builder.start()]
        for event in events:
            out.extend(feed(event))
        finished = finish()
        elapsed = time.process_time() - t0
        out.extend(finished if isinstance(finished, list) else [finished])
        if out[-1].type != "done":
            raise AssertionError(f"{name} {kind}: the stream ended with {out[-1]!r}")
        produced = len(out)
        samples.append(elapsed)
    median = statistics.median(samples[1:])
    return {
        "sse_events": len(events),
        "events_out": produced,
        "us_per_sse_event": round(median / len(events) * 1e6, 3),
    }


def run(deltas: int = DELTAS, rounds: int = ROUNDS, names: Sequence[str] = ()) -> dict[str, Any]:
    chosen = list(names) or list(PROVIDERS)
    return {
        f"{name} {kind}": time_stream(name, kind, deltas, rounds)
        for name in chosen
        for kind in PROVIDERS[name][3]
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mappers")
    parser.add_argument("--deltas", type=int, default=DELTAS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("providers", nargs="*", help=f"some of {list(PROVIDERS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.providers if name not in PROVIDERS]
    if unknown:
        parser.error(f"unknown providers {unknown}; choose from {list(PROVIDERS)}")
    line = {"workload": "mappers", "impl": "pi_trio", "deltas": args.deltas}
    line.update(run(args.deltas, args.rounds, args.providers))
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
