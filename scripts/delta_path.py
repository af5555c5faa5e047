"""Which modules one streamed text delta runs code in, from the socket to a listener.

An ``Agent`` streams an Anthropic response from a loopback SSE server (one text delta per
HTTP chunk) to one synchronous listener, under a profiler that records every function
call (a coroutine resumed is not a call). Between two consecutive ``text_delta`` updates
reaching the listener, the calls made are those of one delta; the script prints the
modules they ran in, in order of first call, and how many of them are pi_trio's::

    python scripts/delta_path.py

The count depends on the provider (each has its own mapper and wire types) but not on the
machine; ARCHITECTURE.md ("The path of one streamed text delta") quotes it.
"""

from __future__ import annotations

import json
import sys
from types import FrameType
from typing import Any

import msgspec
import trio

from pi_trio.agent import Agent
from pi_trio.ai import StreamOptions, get_model
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import SSEReply, serve_sse

DELTAS = 12
_OUTSIDE = ("httpx2", "httpcore2", "h11")  # the HTTP client's own layers, shown by package
_MARK = "<listener>"


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _chunks() -> list[bytes]:
    message = {"id": "m", "type": "message", "role": "assistant", "content": []}
    message |= {"model": "claude-sonnet-4-5", "usage": {"input_tokens": 1, "output_tokens": 1}}
    block = {"type": "text", "text": ""}
    return [
        _event("message_start", {"type": "message_start", "message": message}),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        *(
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": f"w{i} "},
                },
            )
            for i in range(DELTAS)
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]


async def _record() -> list[tuple[str, str]]:
    calls: list[tuple[str, str]] = []
    frames: dict[int, FrameType] = {}  # kept alive, so that an id is never reused

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and id(frame) not in frames:
            frames[id(frame)] = frame
            calls.append((frame.f_globals.get("__name__", "?"), frame.f_code.co_name))

    def listener(event: Any) -> None:
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            calls.append((_MARK, ""))

    async with serve_sse([SSEReply(_chunks())]) as server:
        sonnet = get_model("anthropic", "claude-sonnet-4-5")
        assert sonnet is not None
        registry = ProviderRegistry()
        agent = Agent(
            model=msgspec.structs.replace(sonnet, base_url=server.url),
            registry=registry,
            stream_options=StreamOptions(api_key="sk-ant-loopback"),
        )
        agent.subscribe(listener)
        sys.setprofile(profile)
        try:
            await agent.prompt("hi")
        finally:
            sys.setprofile(None)
            await registry.aclose()
    return calls


def main() -> None:
    calls = trio.run(_record)
    marks = [i for i, (module, _) in enumerate(calls) if module == _MARK]
    if len(marks) != DELTAS:
        raise SystemExit(f"the listener saw {len(marks)} text deltas, expected {DELTAS}")
    middle = len(marks) // 2
    order: dict[str, set[str]] = {}
    for module, function in calls[marks[middle - 1] + 1 : marks[middle]]:
        package = module.split(".")[0]
        if module.startswith("pi_trio.testing") or not module.startswith(("pi_trio", *_OUTSIDE)):
            continue  # the loopback server, the event loop, the standard library
        order.setdefault(module if package == "pi_trio" else package, set()).add(function)
    for module, functions in order.items():
        print(f"{module}: {', '.join(sorted(functions))}")
    print(f"{sum(m.startswith('pi_trio') for m in order)} pi_trio modules")


if __name__ == "__main__":
    main()
