"""What every API's cases share: body helpers, the conversations, and the families of
cases every API has (``base_cases``); see ``generate_cases.py``."""

from __future__ import annotations

import base64
import json
from typing import Any


def dump(model_type: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` validated as ``model_type`` (a vendor SDK's pydantic type) and dumped as
    the wire has it: the fields given, under their wire names."""
    value = model_type.model_validate(data)
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


def sse(events: list[tuple[str | None, dict[str, Any] | str]], newline: str = "\n") -> str:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        head = f"event: {name}{newline}" if name else ""
        out.append(f"{head}data: {payload}{newline}{newline}")
    return "".join(out)


def reply(
    body: str | bytes,
    *,
    status: int = 200,
    chunk: int = 0,
    reset: bool = False,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"status": status, "headers": headers or {}}
    if isinstance(body, bytes):
        out["bodyBase64"] = base64.b64encode(body).decode()
    else:
        out["body"] = body
    if chunk:
        out["chunk"] = chunk
    if reset:
        out["reset"] = True
    return out


def cut(body: str | bytes, fraction: float = 0.6) -> str | bytes:
    """The first part of ``body``: a connection that drops in the middle of an event."""
    return body[: int(len(body) * fraction)]


TS = 1767225000000
ADD = {
    "name": "add",
    "description": "Add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}


def user(text: str, n: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": TS + n}


def ctx(
    *messages: dict[str, Any],
    system: str | None = "You are terse.",
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"messages": list(messages) or [user("Hi")]}
    if system is not None:
        out["systemPrompt"] = system
    if tools:
        out["tools"] = tools
    return out


TOOLS_CTX = ctx(user("What is 2 + 3, and the weather in Paris?"), tools=[ADD, WEATHER])
SYSTEMS_CTX = {
    "systemPrompt": "You are terse.",
    "messages": [
        {"role": "system", "content": "Answer in French.", "timestamp": TS},
        user("Hi", 1),
        {"role": "system", "content": "From now on, answer in German.", "timestamp": TS + 2},
        user("And now?", 3),
    ],
}
# the original's own assistant turns, from these recorded cases, replayed into every API
REPLAY_SOURCES = [
    "anthropic-messages/thinking",
    "anthropic-messages/redacted_thinking",
    "openai-responses/tools_several",
    "google-generative-ai/thinking",
    "bedrock-converse-stream/tool_one",
    "openai-completions/tools_several",
]
HTTP_429_HEADERS = {"retry-after": "0", "retry-after-ms": "0"}


def base_cases(api: str, d: Any) -> list[dict[str, Any]]:
    """The families every API has; ``d`` is the API's dialect."""
    cases: list[dict[str, Any]] = []

    def add(
        name: str,
        family: str,
        description: str,
        replies: list[dict[str, Any]],
        context: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        model: dict[str, Any] | None = None,
        **more: Any,
    ) -> None:
        case = {
            "name": name,
            "family": family,
            "description": description,
            "model": model or d.model,
            "context": context or ctx(),
            "options": {**d.options, **(options or {})},
            "replies": replies,
            **more,
        }
        cases.append(case)

    add("text", "text", "text in several deltas, usage", [reply(d.text_body())])
    if d.has_thinking:
        add(
            "thinking",
            "thinking",
            "thinking with its signature, then text",
            [reply(d.thinking_body())],
            options={"reasoning": "medium"},
        )
    if d.has_redacted:
        add(
            "redacted_thinking",
            "thinking",
            "redacted thinking, thinking, text",
            [reply(d.redacted_body())],
            options={"reasoning": "high"},
        )
    add(
        "tool_one",
        "tools",
        "one tool call, the body cut into 23-byte pieces",
        [reply(d.tools_body(1), chunk=23)],
        context=TOOLS_CTX,
    )
    add(
        "tools_several",
        "tools",
        "text and two tool calls, the body cut into 23-byte pieces",
        [reply(d.tools_body(2), chunk=23)],
        context=TOOLS_CTX,
    )
    whole = d.text_body()
    add(
        "cut_connection",
        "transport",
        "the connection resets in the middle of the stream",
        [reply(cut(whole), reset=True)],
    )
    add(
        "eof_no_terminal",
        "transport",
        "a clean end of the body without the terminal event",
        [reply(d.no_terminal_body())],
    )
    add(
        "whole_then_cut",
        "transport",
        "the whole body, terminal event included, then a reset",
        [reply(whole, reset=True)],
    )
    status, body, headers = d.http_error(400)
    add(
        "http_400",
        "http",
        "HTTP 400 with the vendor's error body",
        [reply(body, status=status, headers=headers)],
    )
    for name, description, body in d.refusal_bodies():
        add(name, "refusal", description, [reply(body)])
    add("length", "length", "the output token limit cut the answer", [reply(d.length_body())])
    if d.has_cache:
        add(
            "cache_usage",
            "usage",
            "cache reads and writes (5m/1h split where the vendor has it)",
            [reply(d.cache_body())],
            options={"cacheRetention": "long", "sessionId": "sess-cache"},
        )
    for name, description, body in d.stream_errors():
        add(name, "stream_error", description, [reply(body)])
    status, body, headers = d.http_error(429)
    add(
        "http_429",
        "http",
        "HTTP 429 (three times: a client that retries by itself meets it again), no retries asked for",
        [reply(body, status=status, headers={**headers, **HTTP_429_HEADERS})] * 3,
    )
    add(
        "http_429_retry",
        "http",
        "HTTP 429 twice, then the answer (maxRetries 2)",
        [reply(body, status=status, headers={**headers, **HTTP_429_HEADERS})] * 2
        + [reply(d.text_body())],
        options={"maxRetries": 2},
    )
    add(
        "session",
        "request",
        "a session id with the default cache retention",
        [reply(d.text_body())],
        options={"sessionId": "sess-1234"},
    )
    add(
        "parameters",
        "request",
        "temperature, max tokens, a reasoning level and a header",
        [reply(d.text_body())],
        options={
            "temperature": 0.25,
            "maxTokens": 777,
            "reasoning": "low",
            "headers": {"x-conformance": "yes"},
        },
    )
    add(
        "system_messages",
        "request",
        "system messages after the first, mid-conversation",
        [reply(d.text_body())],
        context=SYSTEMS_CTX,
    )
    add(
        "replay",
        "replay",
        "the original's own assistant turns from other APIs, replayed",
        [reply(d.text_body())],
        context=ctx(user("Again, please.", 9), tools=[ADD, WEATHER]),
        replayFrom=REPLAY_SOURCES,
    )
    for reason in d.finish_reasons():
        add(
            f"finish_{reason}",
            "finish_reason",
            f"the vendor's finish reason {reason!r}",
            [reply(d.finish_body(reason))],
        )
    for extra in d.extra_cases():
        add(**extra)
    return cases
