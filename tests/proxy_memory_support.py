"""Request bodies shaped to cost the proxy server the most memory per byte, and an
upstream that reads a request and throws it away, for measuring what a body costs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from pi_trio.ai import Model, to_json

__all__ = ["SHAPES", "body_of", "serve_discarding"]

_USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def _user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


def _call(arguments: Any) -> list[dict[str, Any]]:
    call = {"type": "toolCall", "id": "c1", "name": "f", "arguments": arguments}
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "f",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
        "timestamp": 1,
    }
    assistant = {
        "role": "assistant",
        "content": [call],
        "api": "x",
        "provider": "x",
        "model": "x",
        "usage": _USAGE,
        "stopReason": "toolUse",
        "timestamp": 1,
    }
    return [_user("go"), assistant, result]


def _tools(count: int) -> list[dict[str, Any]]:
    parameters = {"type": "object", "properties": {f"p{i}": {} for i in range(count)}}
    system = {
        "role": "system",
        "content": "s",
        "toolsAdded": [{"name": "f", "description": "d", "parameters": parameters}],
        "timestamp": 1,
    }
    return [system, _user("go")]


# Transcripts of about ``size`` bytes, each the worst of its kind: text held at one and at
# four bytes a character, JSON values at their smallest (empty blocks, empty objects: empty
# lists, short strings and numbers cost less), many messages, a tool schema, and the slow
# decoding path a lone surrogate escape takes.
SHAPES: dict[str, Callable[[int], list[Any]]] = {
    "ascii text": lambda size: [_user("a" * size)],
    "text beyond the BMP": lambda size: [_user("a" * size + "\U0001f600")],
    "empty text blocks": lambda size: [_user([{"type": "text", "text": ""}] * (size // 26))],
    "empty objects in arguments": lambda size: _call({"a": [{}] * (size // 3)}),
    "many messages": lambda size: [_user("")] * (size // 40),
    "a tool schema": lambda size: _tools(size // 10),
    "a lone surrogate and empty blocks": lambda size: [
        _user([{"type": "text", "text": "\ud800"}] + [{"type": "text", "text": ""}] * (size // 26))
    ],
    "a lone surrogate and empty objects": lambda size: [
        _user("\ud800"),
        *_call({"a": [{}] * (size // 3)}),
    ],
}


def body_of(model: Model, messages: list[Any]) -> bytes:
    """A proxy request body for ``messages``; lone surrogates written as escapes."""
    sent = {"model": json.loads(to_json(model)), "context": {"messages": messages}}
    return json.dumps(sent, separators=(",", ":")).encode()


@asynccontextmanager
async def serve_discarding() -> AsyncIterator[str]:
    """An upstream on a free loopback port that reads each request, keeps none of it and
    answers 400; yields its URL."""

    async def serve(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            head, _, rest = head.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            remaining = length - len(rest)
            while remaining > 0:
                remaining -= len(await stream.receive())
            body = b'{"error":{"message":"no"}}'
            reply = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
            await stream.send(reply + b"content-length: %d\r\n\r\n" % len(body) + body)

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, serve)
        yield f"http://127.0.0.1:{port}"
        group.cancel_scope.cancel()
