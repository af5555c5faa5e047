"""Generate the conformance cases: vendor-shaped streamed answers for each of the ten APIs.

    python tests/conformance/generate_cases.py            # writes tests/conformance/cases/

Every event is built through the vendor's own SDK types (anthropic, openai, google-genai,
mistralai; Bedrock's payloads are checked against botocore's service model and every
binary frame is read back by botocore's event-stream parser), so the bodies have the
shapes the vendors' servers send. The SDKs are installed by this script alone, into a
scratch virtual environment of its own (``.cache/conformance-venv``, or ``--venv DIR``);
``make test`` needs none of them: it reads the committed case files.

A case is one call: the model (the original's JSON, ``basePath`` appended to the loopback
server's address), the context and the options as pi 1.6's ``streamSimple`` takes them,
and the replies the loopback server gives, one per request: a status, headers, the body
(text, or ``bodyBase64`` for binary), ``chunk`` (send the body in pieces of that many
bytes) and ``reset`` (reset the connection after the body instead of ending it).
A ``replayFrom`` list names cases whose final messages, as pi 1.6 produced them, become
the context's assistant turns (the recorder resolves it and records the context it used).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The vendor SDKs, pinned so that generating twice gives the same bodies.
VENDOR_SDKS = (
    "anthropic==2.17.0",
    "openai==3.63.0",
    "google-genai==3.6.1",
    "mistralai==3.7.0",
    "botocore==1.44.18",
)
_MARKER = "PI_TRIO_CONFORMANCE_VENV"


def _ensure_vendor_venv(venv: Path) -> None:
    """Re-run this script inside a scratch venv that has the vendor SDKs."""
    if os.environ.get(_MARKER) == str(venv):
        return
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    stamp = venv / ".vendor-sdks"
    if not stamp.exists() or stamp.read_text() != "\n".join(VENDOR_SDKS):
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *VENDOR_SDKS], check=True)
        stamp.write_text("\n".join(VENDOR_SDKS))
    env = dict(os.environ, **{_MARKER: str(venv)})
    os.execve(str(python), [str(python), __file__, *sys.argv[1:]], env)


# --------------------------------------------------------------------------- shared


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


# --------------------------------------------------------------------------- Anthropic


class AnthropicDialect:
    has_thinking = True
    has_redacted = True
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "claude-sonnet-4-5",
        "name": "Claude Sonnet 4.5 (latest)",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "basePath": "",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000,
        "maxTokens": 64000,
        "compat": {"supportsStrictTools": True},
    }
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        import anthropic.types as t

        self.t = t

    def ev(self, kind: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        t = self.t
        types = {
            "message_start": t.RawMessageStartEvent,
            "content_block_start": t.RawContentBlockStartEvent,
            "content_block_delta": t.RawContentBlockDeltaEvent,
            "content_block_stop": t.RawContentBlockStopEvent,
            "message_delta": t.RawMessageDeltaEvent,
            "message_stop": t.RawMessageStopEvent,
        }
        return kind, dump(types[kind], {"type": kind, **data})

    def start(self, usage: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return self.ev(
            "message_start",
            {
                "message": {
                    "id": "msg_01ConformanceA",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage or {"input_tokens": 25, "output_tokens": 1},
                }
            },
        )

    def text_block(self, index: int, parts: list[str]) -> list[tuple[str, dict[str, Any]]]:
        out = [
            self.ev(
                "content_block_start",
                {"index": index, "content_block": {"type": "text", "text": ""}},
            )
        ]
        out += [
            self.ev(
                "content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": p}}
            )
            for p in parts
        ]
        out.append(self.ev("content_block_stop", {"index": index}))
        return out

    def end(self, reason: str | None, output: int = 12) -> list[tuple[str, dict[str, Any]]]:
        return [
            self.ev(
                "message_delta",
                {
                    "delta": {"stop_reason": reason, "stop_sequence": None},
                    "usage": {"output_tokens": output},
                },
            ),
            self.ev("message_stop", {}),
        ]

    def text_body(self) -> str:
        return sse(
            [self.start(), *self.text_block(0, ["Hello", ", wor", "ld 🌍!"]), *self.end("end_turn")]
        )

    def no_terminal_body(self) -> str:
        return sse([self.start(), *self.text_block(0, ["Hello", ", wor"])])

    def thinking_events(self, index: int) -> list[tuple[str, dict[str, Any]]]:
        return [
            self.ev(
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            ),
            self.ev(
                "content_block_delta",
                {"index": index, "delta": {"type": "thinking_delta", "thinking": "Let me think"}},
            ),
            self.ev(
                "content_block_delta",
                {"index": index, "delta": {"type": "thinking_delta", "thinking": " about it."}},
            ),
            self.ev(
                "content_block_delta",
                {
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": "EqQBCkYIBxgCKkDsig=="},
                },
            ),
            self.ev("content_block_stop", {"index": index}),
        ]

    def thinking_body(self) -> str:
        return sse(
            [
                self.start(),
                *self.thinking_events(0),
                *self.text_block(1, ["Done."]),
                *self.end("end_turn"),
            ]
        )

    def redacted_body(self) -> str:
        redacted = self.ev(
            "content_block_start",
            {
                "index": 0,
                "content_block": {
                    "type": "redacted_thinking",
                    "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
                },
            },
        )
        return sse(
            [
                self.start(),
                redacted,
                self.ev("content_block_stop", {"index": 0}),
                *self.thinking_events(1),
                *self.text_block(2, ["Fine."]),
                *self.end("end_turn"),
            ]
        )

    def tool_block(
        self, index: int, call_id: str, name: str, args: str
    ) -> list[tuple[str, dict[str, Any]]]:
        out = [
            self.ev(
                "content_block_start",
                {
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
        ]
        for i in range(0, len(args), 9):
            out.append(
                self.ev(
                    "content_block_delta",
                    {
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": args[i : i + 9]},
                    },
                )
            )
        out.append(self.ev("content_block_stop", {"index": index}))
        return out

    def tools_body(self, n: int) -> str:
        events = [self.start()]
        index = 0
        if n > 1:
            events += self.text_block(0, ["Checking both."])
            index = 1
        events += self.tool_block(index, "toolu_01A", "add", '{"a": 2, "b": 3}')
        if n > 1:
            events += self.tool_block(
                index + 1, "toolu_01B", "get_weather", '{"city": "Paris", "unit": "c"}'
            )
        return sse(events + self.end("tool_use", 40))

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        kind = {400: "invalid_request_error", 429: "rate_limit_error"}[status]
        message = {
            400: "max_tokens: Field required",
            429: "Number of request tokens has exceeded your per-minute rate limit",
        }[status]
        body = dump(
            self.t.ErrorResponse,
            {
                "type": "error",
                "error": {"type": kind, "message": message},
                "request_id": "req_011CConf",
            },
        )
        return status, json.dumps(body), {"request-id": "req_011CConf"}

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        return [
            (
                "refusal",
                "the model refuses (stop_reason refusal)",
                sse([self.start(), *self.text_block(0, ["I can't"]), *self.end("refusal")]),
            )
        ]

    def length_body(self) -> str:
        return sse([self.start(), *self.text_block(0, ["Once upon"]), *self.end("max_tokens")])

    def cache_body(self) -> str:
        usage = {
            "input_tokens": 10,
            "output_tokens": 1,
            "cache_read_input_tokens": 2000,
            "cache_creation_input_tokens": 1500,
            "cache_creation": {"ephemeral_5m_input_tokens": 500, "ephemeral_1h_input_tokens": 1000},
        }
        return sse([self.start(usage), *self.text_block(0, ["Cached."]), *self.end("end_turn")])

    def stream_errors(self) -> list[tuple[str, str, str]]:
        error = dump(
            self.t.ErrorResponse,
            {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
                "request_id": None,
            },
        )
        error.pop("request_id", None)
        return [
            (
                "stream_error",
                "an in-stream error event after some text",
                sse([self.start(), *self.text_block(0, ["Partial"]), ("error", error)]),
            )
        ]

    def finish_reasons(self) -> list[str]:
        import typing

        return list(typing.get_args(self.t.StopReason))

    def finish_body(self, reason: str) -> str:
        return sse([self.start(), *self.text_block(0, ["Ok."]), *self.end(reason)])

    def extra_cases(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "cache_no_split",
                "family": "usage",
                "description": "cache writes without the cache_creation split",
                "replies": [
                    reply(
                        sse(
                            [
                                self.start(
                                    {
                                        "input_tokens": 10,
                                        "output_tokens": 1,
                                        "cache_read_input_tokens": 0,
                                        "cache_creation_input_tokens": 300,
                                    }
                                ),
                                *self.text_block(0, ["Ok."]),
                                *self.end("end_turn"),
                            ]
                        )
                    )
                ],
            }
        ]


# --------------------------------------------------------------------------- Chat Completions


class CompletionsDialect:
    has_thinking = True
    has_redacted = False
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "gpt-5-mini",
        "name": "GPT-5 mini",
        "api": "openai-completions",
        "provider": "openai",
        "basePath": "/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.25, "output": 2, "cacheRead": 0.025, "cacheWrite": 0},
        "contextWindow": 400000,
        "maxTokens": 128000,
    }
    options: ClassVar[dict[str, Any]] = {}
    ID = "chatcmpl-Conf0001"

    def __init__(self) -> None:
        from openai.types.chat import ChatCompletionChunk

        self.Chunk = ChatCompletionChunk

    def chunk(
        self,
        delta: dict[str, Any] | None,
        finish: str | None = None,
        usage: dict[str, Any] | None = None,
        choices: bool = True,
    ) -> tuple[None, dict[str, Any]]:
        data: dict[str, Any] = {
            "id": self.ID,
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": "gpt-5-mini-2025-08-07",
            "choices": [],
        }
        if choices:
            data["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
        if usage is not None:
            data["usage"] = usage
        return None, dump(self.Chunk, data)

    def usage(
        self, prompt: int = 25, completion: int = 12, cached: int | None = None
    ) -> dict[str, Any]:
        u: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if cached is not None:
            u["prompt_tokens_details"] = {"cached_tokens": cached}
        return u

    def done(self) -> tuple[None, str]:
        return None, "[DONE]"

    def finish(self, reason: str, completion: int = 12, cached: int | None = None) -> list[Any]:
        return [
            self.chunk({}, reason),
            self.chunk(None, usage=self.usage(completion=completion, cached=cached), choices=False),
            self.done(),
        ]

    def texts(self, parts: list[str]) -> list[Any]:
        first = [self.chunk({"role": "assistant", "content": ""})]
        return first + [self.chunk({"content": p}) for p in parts]

    def text_body(self) -> str:
        return sse([*self.texts(["Hello", ", wor", "ld 🌍!"]), *self.finish("stop")])

    def no_terminal_body(self) -> str:
        return sse(self.texts(["Hello", ", wor"]))

    def thinking_body(self) -> str:
        return sse(
            [
                self.chunk(
                    {"role": "assistant", "content": None, "reasoning_content": "Let me think"}
                ),
                self.chunk({"reasoning_content": " about it."}),
                self.chunk({"content": "Done."}),
                *self.finish("stop"),
            ]
        )

    def tools_body(self, n: int) -> str:
        events = [self.chunk({"role": "assistant", "content": "Checking both." if n > 1 else None})]
        calls = [
            ("call_A1", "add", '{"a": 2, "b": 3}'),
            ("call_B2", "get_weather", '{"city": "Paris", "unit": "c"}'),
        ][:n]
        for i, (cid, name, args) in enumerate(calls):
            events.append(
                self.chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": cid,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for j in range(0, len(args), 7):
                events.append(
                    self.chunk(
                        {"tool_calls": [{"index": i, "function": {"arguments": args[j : j + 7]}}]}
                    )
                )
        return sse(events + self.finish("tool_calls", 40))

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        from openai.types.shared import ErrorObject

        message, kind, code = {
            400: (
                "Unsupported value: 'temperature' does not support 0.25 with this model.",
                "invalid_request_error",
                "unsupported_value",
            ),
            429: (
                "Rate limit reached for gpt-5-mini in organization org-x on tokens per min (TPM).",
                "tokens",
                "rate_limit_exceeded",
            ),
        }[status]
        error = dump(ErrorObject, {"message": message, "type": kind, "param": None, "code": code})
        return status, json.dumps({"error": error}), {"x-request-id": "req_conf"}

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        return [
            (
                "content_filter",
                "the content filter stopped the answer",
                sse([*self.texts(["I can"]), *self.finish("content_filter")]),
            ),
            (
                "refusal",
                "a refusal delta",
                sse(
                    [
                        self.chunk(
                            {
                                "role": "assistant",
                                "content": None,
                                "refusal": "I can't help with that.",
                            }
                        ),
                        *self.finish("stop"),
                    ]
                ),
            ),
        ]

    def length_body(self) -> str:
        return sse([*self.texts(["Once upon"]), *self.finish("length")])

    def cache_body(self) -> str:
        return sse([*self.texts(["Cached."]), *self.finish("stop", cached=20)])

    def stream_errors(self) -> list[tuple[str, str, str]]:
        return [
            (
                "stream_error",
                "an error object in the stream after some text",
                sse(
                    [
                        *self.texts(["Partial"]),
                        (
                            None,
                            {
                                "error": {
                                    "message": "The server had an error while processing your request.",
                                    "type": "server_error",
                                    "param": None,
                                    "code": None,
                                }
                            },
                        ),
                    ]
                ),
            )
        ]

    def finish_reasons(self) -> list[str]:
        import typing

        from openai.types.chat.chat_completion_chunk import Choice

        args = typing.get_args(Choice.model_fields["finish_reason"].annotation)
        return [r for a in args for r in typing.get_args(a)]

    def finish_body(self, reason: str) -> str:
        return sse([*self.texts(["Ok."]), *self.finish(reason)])

    def extra_cases(self) -> list[dict[str, Any]]:
        out = []
        servers = [
            ("litellm", "LiteLLM gateway", "openai/gpt-4o-mini"),
            ("ollama", "Ollama", "llama3.2"),
            ("vllm", "vLLM", "Qwen/Qwen3-8B"),
            ("lmstudio", "LM Studio", "qwen3-8b"),
            ("groq", "Groq", "llama-3.3-70b-versatile"),
        ]
        for provider, label, model_id in servers:
            model = {
                "id": model_id,
                "name": model_id,
                "api": "openai-completions",
                "provider": provider,
                "basePath": "/v1",
                "reasoning": False,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 128000,
                "maxTokens": 8192,
            }
            out.append(
                {
                    "name": f"compat_{provider}",
                    "family": "compat",
                    "description": f"a {label} server: system role, tools, max tokens and store as pi 1.6 sends them",
                    "model": model,
                    "context": ctx(user("What is 2 + 3?"), tools=[ADD]),
                    "options": {"maxTokens": 500},
                    "replies": [reply(self.text_body())],
                }
            )
        return out


# --------------------------------------------------------------------------- Responses (OpenAI, Azure, Codex)


class ResponsesDialect:
    has_thinking = True
    has_redacted = False
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "gpt-5.4",
        "name": "GPT-5.4",
        "api": "openai-responses",
        "provider": "openai",
        "basePath": "/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 2.5, "output": 15, "cacheRead": 0.25, "cacheWrite": 0},
        "contextWindow": 272000,
        "maxTokens": 128000,
        "thinkingLevelMap": {
            "off": "none",
            "minimal": None,
            "low": "low",
            "medium": "medium",
            "high": "high",
            "xhigh": "xhigh",
            "max": None,
        },
        "compat": {
            "supportsStrictMode": True,
            "supportsOpenAIGrammarTools": True,
            "supportsMidConvoSystemMessages": True,
        },
    }
    options: ClassVar[dict[str, Any]] = {}
    RID = "resp_conf0001"
    terminal_done = False  # Codex's backend may end with response.done

    def __init__(self) -> None:
        import typing

        import openai.types.responses as r

        self.r = r
        self.seq = 0
        union = typing.get_args(r.ResponseStreamEvent)[0]
        self.event_types = {
            typing.get_args(member.model_fields["type"].annotation)[0]: member
            for member in typing.get_args(union)
        }

    def ev(self, data: dict[str, Any]) -> tuple[None, dict[str, Any]]:
        self.seq += 1
        data = {**data, "sequence_number": self.seq}
        return None, dump(self.event_types[data["type"]], data)

    def response(
        self,
        status: str,
        output: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        **more: Any,
    ) -> dict[str, Any]:
        out = {
            "id": self.RID,
            "object": "response",
            "created_at": 1767225600,
            "model": "gpt-5.4-2026-03-05",
            "status": status,
            "output": output or [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            **more,
        }
        if usage is not None:
            out["usage"] = usage
        return out

    def usage(self, output: int = 12, cached: int = 0) -> dict[str, Any]:
        return {
            "input_tokens": 25,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 25 + output,
        }

    def created(self) -> list[Any]:
        self.seq = 0
        return [self.ev({"type": "response.created", "response": self.response("in_progress")})]

    def message(self, index: int, parts: list[str], mid: str = "msg_conf1") -> list[Any]:
        text = "".join(parts)
        out = [
            self.ev(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "status": "in_progress",
                        "content": [],
                    },
                }
            ),
            self.ev(
                {
                    "type": "response.content_part.added",
                    "output_index": index,
                    "item_id": mid,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            ),
        ]
        out += [
            self.ev(
                {
                    "type": "response.output_text.delta",
                    "output_index": index,
                    "item_id": mid,
                    "content_index": 0,
                    "delta": p,
                    "logprobs": [],
                }
            )
            for p in parts
        ]
        out += [
            self.ev(
                {
                    "type": "response.output_text.done",
                    "output_index": index,
                    "item_id": mid,
                    "content_index": 0,
                    "text": text,
                    "logprobs": [],
                }
            ),
            self.ev(
                {
                    "type": "response.content_part.done",
                    "output_index": index,
                    "item_id": mid,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": text, "annotations": []},
                }
            ),
            self.ev(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": self.message_item(mid, text),
                }
            ),
        ]
        return out

    def message_item(self, mid: str, text: str) -> dict[str, Any]:
        return {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    def completed(
        self, output: list[dict[str, Any]], out_tokens: int = 12, cached: int = 0
    ) -> list[Any]:
        kind = "response.done" if self.terminal_done else "response.completed"
        return (
            [
                self.ev(
                    {
                        "type": "response.completed",
                        "response": self.response(
                            "completed", output, self.usage(out_tokens, cached)
                        ),
                    }
                )
            ]
            if kind == "response.completed"
            else [
                (
                    None,
                    {
                        **self.ev(
                            {
                                "type": "response.completed",
                                "response": self.response(
                                    "completed", output, self.usage(out_tokens, cached)
                                ),
                            }
                        )[1],
                        "type": "response.done",
                    },
                )
            ]
        )

    def text_body(self) -> str:
        parts = ["Hello", ", wor", "ld 🌍!"]
        return sse(
            [
                *self.created(),
                *self.message(0, parts),
                *self.completed([self.message_item("msg_conf1", "".join(parts))]),
            ]
        )

    def no_terminal_body(self) -> str:
        return sse([*self.created(), *self.message(0, ["Hello", ", wor"])])

    def reasoning(self, index: int) -> tuple[list[Any], dict[str, Any]]:
        item = {
            "id": "rs_conf1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Let me think about it."}],
            "encrypted_content": "gAAAAB-conformance",
        }
        return [
            self.ev(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {"id": "rs_conf1", "type": "reasoning", "summary": []},
                }
            ),
            self.ev(
                {
                    "type": "response.reasoning_summary_part.added",
                    "output_index": index,
                    "item_id": "rs_conf1",
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""},
                }
            ),
            self.ev(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "output_index": index,
                    "item_id": "rs_conf1",
                    "summary_index": 0,
                    "delta": "Let me think",
                }
            ),
            self.ev(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "output_index": index,
                    "item_id": "rs_conf1",
                    "summary_index": 0,
                    "delta": " about it.",
                }
            ),
            self.ev(
                {
                    "type": "response.reasoning_summary_text.done",
                    "output_index": index,
                    "item_id": "rs_conf1",
                    "summary_index": 0,
                    "text": "Let me think about it.",
                }
            ),
            self.ev(
                {
                    "type": "response.reasoning_summary_part.done",
                    "output_index": index,
                    "item_id": "rs_conf1",
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": "Let me think about it."},
                }
            ),
            self.ev({"type": "response.output_item.done", "output_index": index, "item": item}),
        ], item

    def thinking_body(self) -> str:
        created = self.created()
        events, item = self.reasoning(0)
        return sse(
            [
                *created,
                *events,
                *self.message(1, ["Done."], "msg_conf2"),
                *self.completed([item, self.message_item("msg_conf2", "Done.")]),
            ]
        )

    def call(
        self, index: int, call_id: str, fid: str, name: str, args: str
    ) -> tuple[list[Any], dict[str, Any]]:
        item = {
            "id": fid,
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": args,
            "status": "completed",
        }
        out = [
            self.ev(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                }
            )
        ]
        for i in range(0, len(args), 7):
            out.append(
                self.ev(
                    {
                        "type": "response.function_call_arguments.delta",
                        "output_index": index,
                        "item_id": fid,
                        "delta": args[i : i + 7],
                    }
                )
            )
        out += [
            self.ev(
                {
                    "type": "response.function_call_arguments.done",
                    "output_index": index,
                    "item_id": fid,
                    "name": name,
                    "arguments": args,
                }
            ),
            self.ev({"type": "response.output_item.done", "output_index": index, "item": item}),
        ]
        return out, item

    def tools_body(self, n: int) -> str:
        events = self.created()
        output = []
        index = 0
        if n > 1:
            events += self.message(0, ["Checking both."])
            output.append(self.message_item("msg_conf1", "Checking both."))
            index = 1
        e, item = self.call(index, "call_A1", "fc_A1", "add", '{"a":2,"b":3}')
        events += e
        output.append(item)
        if n > 1:
            e, item = self.call(
                index + 1, "call_B2", "fc_B2", "get_weather", '{"city":"Paris","unit":"c"}'
            )
            events += e
            output.append(item)
        return sse(events + self.completed(output, 40))

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        return CompletionsDialect.http_error(self, status)  # type: ignore[arg-type]

    def incomplete(self, reason: str, parts: list[str]) -> str:
        events = self.created() + self.message(0, parts)
        item = self.message_item("msg_conf1", "".join(parts))
        events.append(
            self.ev(
                {
                    "type": "response.incomplete",
                    "response": self.response(
                        "incomplete", [item], self.usage(), incomplete_details={"reason": reason}
                    ),
                }
            )
        )
        return sse(events)

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        events = self.created()
        mid = "msg_ref1"
        events += [
            self.ev(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "status": "in_progress",
                        "content": [],
                    },
                }
            ),
            self.ev(
                {
                    "type": "response.content_part.added",
                    "output_index": 0,
                    "item_id": mid,
                    "content_index": 0,
                    "part": {"type": "refusal", "refusal": ""},
                }
            ),
            self.ev(
                {
                    "type": "response.refusal.delta",
                    "output_index": 0,
                    "item_id": mid,
                    "content_index": 0,
                    "delta": "I can't help",
                }
            ),
            self.ev(
                {
                    "type": "response.refusal.done",
                    "output_index": 0,
                    "item_id": mid,
                    "content_index": 0,
                    "refusal": "I can't help",
                }
            ),
            self.ev(
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "refusal", "refusal": "I can't help"}],
                    },
                }
            ),
        ]
        refusal = sse(
            events
            + self.completed(
                [
                    {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "refusal", "refusal": "I can't help"}],
                    }
                ]
            )
        )
        return [
            (
                "content_filter",
                "incomplete for the content filter",
                self.incomplete("content_filter", ["I can"]),
            ),
            ("refusal", "a refusal content part", refusal),
        ]

    def length_body(self) -> str:
        return self.incomplete("max_output_tokens", ["Once upon"])

    def cache_body(self) -> str:
        parts = ["Cached."]
        return sse(
            [
                *self.created(),
                *self.message(0, parts),
                *self.completed([self.message_item("msg_conf1", "Cached.")], cached=20),
            ]
        )

    def stream_errors(self) -> list[tuple[str, str, str]]:
        error = self.created() + self.message(0, ["Partial"])
        error.append(
            self.ev(
                {
                    "type": "error",
                    "code": "rate_limit_exceeded",
                    "message": "Rate limit reached for gpt-5.4 in organization org-x on tokens per min (TPM).",
                    "param": None,
                }
            )
        )
        failed = self.created() + self.message(0, ["Partial"])
        failed.append(
            self.ev(
                {
                    "type": "response.failed",
                    "response": self.response(
                        "failed",
                        [],
                        self.usage(1),
                        error={
                            "code": "server_error",
                            "message": "The model failed to generate a response.",
                        },
                    ),
                }
            )
        )
        return [
            ("stream_error", "an in-stream error event after some text", sse(error)),
            ("response_failed", "response.failed with the vendor's error", sse(failed)),
        ]

    def finish_reasons(self) -> list[str]:
        import typing

        from openai.types.responses.response import IncompleteDetails

        statuses = [
            s
            for a in typing.get_args(self.r.Response.model_fields["status"].annotation)
            for s in typing.get_args(a)
        ]
        reasons = [
            s
            for a in typing.get_args(IncompleteDetails.model_fields["reason"].annotation)
            for s in typing.get_args(a)
        ]
        return [f"status_{s}" for s in statuses if s not in ("incomplete", "failed")] + [
            f"incomplete_{r}" for r in reasons
        ]

    def finish_body(self, reason: str) -> str:
        kind, _, value = reason.partition("_")
        if kind == "incomplete":
            return self.incomplete(value, ["Ok."])
        events = self.created() + self.message(0, ["Ok."])
        item = self.message_item("msg_conf1", "Ok.")
        events.append(
            self.ev(
                {
                    "type": "response.completed",
                    "response": self.response(value, [item], self.usage()),
                }
            )
        )
        return sse(events)

    def extra_cases(self) -> list[dict[str, Any]]:
        return []


class AzureDialect(ResponsesDialect):
    model: ClassVar[dict[str, Any]] = {
        "id": "gpt-5.4",
        "name": "GPT-5.4",
        "api": "azure-openai-responses",
        "provider": "azure",
        "basePath": "/openai/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 2.5, "output": 15, "cacheRead": 0.25, "cacheWrite": 0},
        "contextWindow": 1050000,
        "maxTokens": 128000,
        "thinkingLevelMap": {"off": None, "xhigh": "xhigh"},
        "compat": {"supportsOpenAIGrammarTools": True},
    }


def _codex_token() -> str:
    parts = [
        {"alg": "none", "typ": "JWT"},
        {"https://api.openai.com/auth": {"chatgpt_account_id": "acct_conf"}, "exp": 1893456000},
    ]
    enc = [
        base64.urlsafe_b64encode(json.dumps(p, separators=(",", ":")).encode())
        .rstrip(b"=")
        .decode()
        for p in parts
    ]
    return ".".join([*enc, "signature"])


class CodexDialect(ResponsesDialect):
    model: ClassVar[dict[str, Any]] = {
        "id": "gpt-5.6-luna",
        "name": "GPT-5.6 Luna",
        "api": "openai-codex-responses",
        "provider": "openai-codex",
        "basePath": "/backend-api",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.2, "output": 1.2, "cacheRead": 0.02, "cacheWrite": 0.25},
        "contextWindow": 272000,
        "maxTokens": 128000,
        "thinkingLevelMap": {"xhigh": "xhigh", "max": "max", "minimal": "low"},
        "compat": {
            "supportsOpenAIGrammarTools": True,
            "supportsAdditionalTools": True,
            "supportsToolSearch": True,
            "supportsMidConvoSystemMessages": True,
        },
    }
    options: ClassVar[dict[str, Any]] = {"apiKey": _codex_token(), "transport": "sse"}

    def extra_cases(self) -> list[dict[str, Any]]:
        saved = self.terminal_done
        self.terminal_done = True
        body = self.text_body()
        self.terminal_done = saved
        return [
            {
                "name": "response_done",
                "family": "text",
                "description": "the backend's response.done terminal",
                "replies": [reply(body)],
            }
        ]


# --------------------------------------------------------------------------- Google


class GoogleDialect:
    has_thinking = True
    has_redacted = False
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "gemini-2.5-flash",
        "name": "Gemini 2.5 Flash",
        "api": "google-generative-ai",
        "provider": "google",
        "basePath": "/v1beta",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0},
        "contextWindow": 1048576,
        "maxTokens": 65536,
    }
    options: ClassVar[dict[str, Any]] = {}
    vertex = False

    def __init__(self) -> None:
        from google.genai import types

        self.g = types

    def chunk(
        self,
        parts: list[dict[str, Any]] | None,
        finish: str | None = None,
        usage: dict[str, Any] | None = None,
        **more: Any,
    ) -> tuple[None, dict[str, Any]]:
        candidate: dict[str, Any] = {"index": 0}
        if parts is not None:
            candidate["content"] = {"role": "model", "parts": parts}
        if finish:
            candidate["finishReason"] = finish
        data: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "resp-gconf-1",
            **more,
        }
        if usage:
            data["usageMetadata"] = usage
        value = self.g.GenerateContentResponse.model_validate(data)
        dumped = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        dumped.pop("sdkHttpResponse", None)
        return None, dumped

    def usage(
        self, out: int = 12, cached: int | None = None, thoughts: int | None = None
    ) -> dict[str, Any]:
        u: dict[str, Any] = {
            "promptTokenCount": 25,
            "candidatesTokenCount": out,
            "totalTokenCount": 25 + out + (thoughts or 0),
        }
        if cached is not None:
            u["cachedContentTokenCount"] = cached
        if thoughts is not None:
            u["thoughtsTokenCount"] = thoughts
        return u

    def body(self, events: list[Any]) -> str:
        return sse(events, newline="\r\n")

    def text_body(self) -> str:
        return self.body(
            [
                self.chunk([{"text": "Hello"}]),
                self.chunk([{"text": ", wor"}]),
                self.chunk([{"text": "ld 🌍!"}], "STOP", self.usage()),
            ]
        )

    def no_terminal_body(self) -> str:
        return self.body([self.chunk([{"text": "Hello"}]), self.chunk([{"text": ", wor"}])])

    def thinking_body(self) -> str:
        return self.body(
            [
                self.chunk([{"text": "Let me think", "thought": True}]),
                self.chunk(
                    [
                        {
                            "text": " about it.",
                            "thought": True,
                            "thoughtSignature": "c2lnLXRob3VnaHQ=",
                        }
                    ]
                ),
                self.chunk([{"text": ""}]),
                self.chunk([{"text": "Done."}], "STOP", self.usage(thoughts=30)),
            ]
        )

    def tools_body(self, n: int) -> str:
        events = []
        if n > 1:
            events.append(self.chunk([{"text": "Checking both."}]))
        events.append(
            self.chunk(
                [
                    {
                        "functionCall": {"name": "add", "args": {"a": 2, "b": 3}, "id": "fc-add-1"},
                        "thoughtSignature": "c2lnLWNhbGw=",
                    }
                ]
            )
        )
        if n > 1:
            events.append(
                self.chunk(
                    [
                        {
                            "functionCall": {
                                "name": "get_weather",
                                "args": {"city": "Paris", "unit": "c"},
                            }
                        }
                    ]
                )
            )
        events.append(self.chunk(None, "STOP", self.usage(40)))
        return self.body(events)

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        message, kind = {
            400: (
                'Invalid JSON payload received. Unknown name "foo": Cannot find field.',
                "INVALID_ARGUMENT",
            ),
            429: ("Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED"),
        }[status]
        return (
            status,
            json.dumps({"error": {"code": status, "message": message, "status": kind}}, indent=2),
            {},
        )

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        blocked = self.body(
            [
                (
                    None,
                    {
                        "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
                        "usageMetadata": {"promptTokenCount": 25, "totalTokenCount": 25},
                        "modelVersion": "gemini-2.5-flash",
                        "responseId": "resp-gconf-1",
                    },
                )
            ]
        )
        return [
            (
                "safety",
                "the answer stopped for safety",
                self.body(
                    [self.chunk([{"text": "I can"}]), self.chunk(None, "SAFETY", self.usage(2))]
                ),
            ),
            ("prompt_blocked", "the prompt was blocked (promptFeedback, no candidate)", blocked),
        ]

    def length_body(self) -> str:
        return self.body([self.chunk([{"text": "Once upon"}], "MAX_TOKENS", self.usage())])

    def cache_body(self) -> str:
        return self.body([self.chunk([{"text": "Cached."}], "STOP", self.usage(cached=20))])

    def stream_errors(self) -> list[tuple[str, str, str]]:
        error = {
            "error": {
                "code": 500,
                "message": "An internal error has occurred.",
                "status": "INTERNAL",
            }
        }
        return [
            (
                "stream_error",
                "an error object in the stream after some text",
                self.body([self.chunk([{"text": "Partial"}]), (None, error)]),
            )
        ]

    def finish_reasons(self) -> list[str]:
        return [reason.value for reason in self.g.FinishReason]

    def finish_body(self, reason: str) -> str:
        return self.body([self.chunk([{"text": "Ok."}]), self.chunk(None, reason, self.usage())])

    def extra_cases(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "empty_text_deltas",
                "family": "text",
                "description": "empty text parts between texts",
                "replies": [
                    reply(
                        self.body(
                            [
                                self.chunk([{"text": "A"}]),
                                self.chunk([{"text": ""}]),
                                self.chunk([{"text": "B"}], "STOP", self.usage()),
                            ]
                        )
                    )
                ],
            }
        ]


class VertexDialect(GoogleDialect):
    model: ClassVar[dict[str, Any]] = {
        "id": "gemini-2.5-flash",
        "name": "Gemini 2.5 Flash",
        "api": "google-vertex",
        "provider": "google-vertex",
        "basePath": "/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.3, "output": 2.5, "cacheRead": 0.03, "cacheWrite": 0},
        "contextWindow": 1048576,
        "maxTokens": 65536,
    }


# --------------------------------------------------------------------------- Mistral


class MistralDialect:
    has_thinking = True
    has_redacted = False
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "mistral-small-latest",
        "name": "Mistral Small (latest)",
        "api": "mistral-conversations",
        "provider": "mistral",
        "basePath": "",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 0.15, "output": 0.6, "cacheRead": 0.015, "cacheWrite": 0},
        "contextWindow": 262144,
        "maxTokens": 256000,
        "thinkingLevelMap": {
            "off": "none",
            "minimal": None,
            "low": None,
            "medium": None,
            "high": "high",
            "xhigh": None,
            "max": None,
        },
    }
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        import mistralai.client.models as m

        self.m = m

    def chunk(
        self, delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
    ) -> tuple[None, dict[str, Any]]:
        data: dict[str, Any] = {
            "id": "cmpl-conf0001",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": "mistral-small-2603",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            data["usage"] = usage
        value = self.m.CompletionChunk.model_validate(data)
        dumped = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        # pydantic keeps the explicit null of finish_reason; the server sends it too
        return None, dumped

    def usage(self, out: int = 12, cached: int | None = None) -> dict[str, Any]:
        u: dict[str, Any] = {
            "prompt_tokens": 25,
            "completion_tokens": out,
            "total_tokens": 25 + out,
        }
        if cached is not None:
            u["prompt_tokens_details"] = {"cached_tokens": cached}
        return u

    def end(self, reason: str, out: int = 12, cached: int | None = None) -> list[Any]:
        return [self.chunk({"content": ""}, reason, self.usage(out, cached)), (None, "[DONE]")]

    def texts(self, parts: list[str]) -> list[Any]:
        return [self.chunk({"role": "assistant", "content": ""})] + [
            self.chunk({"content": p}) for p in parts
        ]

    def text_body(self) -> str:
        return sse([*self.texts(["Hello", ", wor", "ld 🌍!"]), *self.end("stop")])

    def no_terminal_body(self) -> str:
        return sse(self.texts(["Hello", ", wor"]))

    def thinking_body(self) -> str:
        def think(text):
            return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}

        return sse(
            [
                self.chunk({"role": "assistant", "content": ""}),
                self.chunk(think("Let me think")),
                self.chunk(think(" about it.")),
                self.chunk({"content": [{"type": "text", "text": "Done."}]}),
                *self.end("stop"),
            ]
        )

    def tools_body(self, n: int) -> str:
        events = [self.chunk({"role": "assistant", "content": "Checking both." if n > 1 else ""})]
        events.append(
            self.chunk(
                {
                    "tool_calls": [
                        {
                            "id": "Xb2mK9pQr",
                            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                            "index": 0,
                        }
                    ]
                }
            )
        )
        if n > 1:
            events.append(
                self.chunk(
                    {
                        "tool_calls": [
                            {
                                "id": "Wq7LmN3sT",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": '{"city": "Paris", "unit": "c"}',
                                },
                                "index": 1,
                            }
                        ]
                    }
                )
            )
        return sse(events + self.end("tool_calls", 40))

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        body = {
            400: {
                "object": "error",
                "message": "Invalid model: mistral-smal",
                "type": "invalid_model",
                "param": None,
                "code": "1500",
            },
            429: {
                "object": "error",
                "message": "Requests rate limit exceeded",
                "type": "rate_limited",
                "param": None,
                "code": "1300",
            },
        }[status]
        return status, json.dumps(body), {}

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        return []  # Mistral's stream has no refusal or content-filter reason

    def length_body(self) -> str:
        return sse([*self.texts(["Once upon"]), *self.end("length")])

    def cache_body(self) -> str:
        return sse([*self.texts(["Cached."]), *self.end("stop", cached=20)])

    def stream_errors(self) -> list[tuple[str, str, str]]:
        return [
            (
                "stream_error",
                "finish reason error after some text",
                sse([*self.texts(["Partial"]), *self.end("error")]),
            )
        ]

    def finish_reasons(self) -> list[str]:
        import typing

        return [
            r
            for a in typing.get_args(self.m.CompletionResponseStreamChoiceFinishReason)
            for r in typing.get_args(a)
        ]

    def finish_body(self, reason: str) -> str:
        return sse([*self.texts(["Ok."]), *self.end(reason)])

    def extra_cases(self) -> list[dict[str, Any]]:
        return []


# --------------------------------------------------------------------------- Bedrock


def _frame(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + bytes([7]) + struct.pack(">H", len(v.encode())) + v.encode()
        for k, v in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


class BedrockDialect:
    has_thinking = True
    has_redacted = True
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "name": "Claude Sonnet 4.5 (US)",
        "api": "bedrock-converse-stream",
        "provider": "amazon-bedrock",
        "basePath": "",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3.3, "output": 16.5, "cacheRead": 0.33, "cacheWrite": 4.125},
        "contextWindow": 200000,
        "maxTokens": 64000,
        "compat": {"supportsStrictMode": True},
    }
    # a bearer token (Bedrock API key) keeps the request headers free of SigV4's clock
    options: ClassVar[dict[str, Any]] = {
        "apiKey": "bedrock-api-key-conformance",
        "env": {"AWS_REGION": "us-east-1", "AWS_BEDROCK_FORCE_HTTP1": "1"},
    }

    def __init__(self) -> None:
        import botocore.session
        from botocore.validate import ParamValidator

        self.service = botocore.session.get_session().get_service_model("bedrock-runtime")
        self.validator = ParamValidator()
        self.stream_shape = self.service.shape_for("ConverseStreamOutput")

    def ev(self, kind: str, data: dict[str, Any]) -> bytes:
        shape = self.stream_shape.members[kind]
        report = self.validator.validate(data, shape)
        if report.has_errors():
            raise ValueError(report.generate_report())
        headers = {
            ":event-type": kind,
            ":content-type": "application/json",
            ":message-type": "event",
        }
        return self.check(
            _frame(headers, json.dumps(data, separators=(",", ":")).encode()), kind, data
        )

    def check(self, frame: bytes, kind: str, data: dict[str, Any]) -> bytes:
        """Read the frame back with botocore's own event-stream parser."""
        from botocore.eventstream import EventStreamBuffer
        from botocore.parsers import EventStreamJSONParser

        buffer = EventStreamBuffer()
        buffer.add_data(frame)
        (message,) = list(buffer)
        parsed = EventStreamJSONParser().parse(message.to_response_dict(), self.stream_shape)
        if kind in self.stream_shape.members and message.headers[":message-type"] == "event":
            assert kind in parsed, (kind, parsed)
        return frame

    def exception(self, kind: str, message: str) -> bytes:
        headers = {
            ":exception-type": kind,
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        frame = _frame(headers, json.dumps({"message": message}).encode())
        return self.check(frame, kind, {})

    def start(self) -> bytes:
        return self.ev("messageStart", {"role": "assistant"})

    def text_block(self, index: int, parts: list[str]) -> bytes:
        return b"".join(
            self.ev("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}})
            for p in parts
        ) + self.ev("contentBlockStop", {"contentBlockIndex": index})

    def end(self, reason: str, out: int = 12, cache: dict[str, int] | None = None) -> bytes:
        usage = {"inputTokens": 25, "outputTokens": out, "totalTokens": 25 + out, **(cache or {})}
        return self.ev("messageStop", {"stopReason": reason}) + self.ev(
            "metadata", {"usage": usage, "metrics": {"latencyMs": 420}}
        )

    def text_body(self) -> bytes:
        return (
            self.start() + self.text_block(0, ["Hello", ", wor", "ld 🌍!"]) + self.end("end_turn")
        )

    def no_terminal_body(self) -> bytes:
        return self.start() + self.text_block(0, ["Hello", ", wor"])

    def thinking(self, index: int) -> bytes:
        def d(r):
            return self.ev(
                "contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": r}}
            )

        return (
            d({"text": "Let me think"})
            + d({"text": " about it."})
            + d({"signature": "EqQBCkYIBxgCKkDsig=="})
            + self.ev("contentBlockStop", {"contentBlockIndex": index})
        )

    def thinking_body(self) -> bytes:
        return (
            self.start() + self.thinking(0) + self.text_block(1, ["Done."]) + self.end("end_turn")
        )

    def redacted_body(self) -> bytes:
        redacted = (
            self.ev(
                "contentBlockDelta",
                {
                    "contentBlockIndex": 0,
                    "delta": {"reasoningContent": {"redactedContent": b"EmwKAhgBEgy3va3p"}},
                },
            )
            if False
            else _frame(
                {
                    ":event-type": "contentBlockDelta",
                    ":content-type": "application/json",
                    ":message-type": "event",
                },
                json.dumps(
                    {
                        "contentBlockIndex": 0,
                        "delta": {
                            "reasoningContent": {
                                "redactedContent": base64.b64encode(b"EmwKAhgBEgy3va3p").decode()
                            }
                        },
                    }
                ).encode(),
            )
        )
        redacted = self.check(redacted, "contentBlockDelta", {})
        return (
            self.start()
            + redacted
            + self.ev("contentBlockStop", {"contentBlockIndex": 0})
            + self.thinking(1)
            + self.text_block(2, ["Fine."])
            + self.end("end_turn")
        )

    def tool(self, index: int, call_id: str, name: str, args: str) -> bytes:
        out = self.ev(
            "contentBlockStart",
            {
                "contentBlockIndex": index,
                "start": {"toolUse": {"toolUseId": call_id, "name": name}},
            },
        )
        for i in range(0, len(args), 9):
            out += self.ev(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"toolUse": {"input": args[i : i + 9]}}},
            )
        return out + self.ev("contentBlockStop", {"contentBlockIndex": index})

    def tools_body(self, n: int) -> bytes:
        body = self.start()
        index = 0
        if n > 1:
            body += self.text_block(0, ["Checking both."])
            index = 1
        body += self.tool(index, "tooluse_A1", "add", '{"a": 2, "b": 3}')
        if n > 1:
            body += self.tool(
                index + 1, "tooluse_B2", "get_weather", '{"city": "Paris", "unit": "c"}'
            )
        return body + self.end("tool_use", 40)

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        kind, message = {
            400: ("ValidationException", "The provided model identifier is invalid."),
            429: ("ThrottlingException", "Too many requests, please wait before trying again."),
        }[status]
        return (
            status,
            json.dumps({"message": message}),
            {
                "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                "x-amzn-requestid": "req-bedrock-conf",
                "content-type": "application/json",
            },
        )

    def refusal_bodies(self) -> list[tuple[str, str, bytes]]:
        return [
            (
                "content_filter",
                "content filtered",
                self.start() + self.text_block(0, ["I can"]) + self.end("content_filtered"),
            ),
            (
                "guardrail",
                "a guardrail intervened",
                self.start() + self.text_block(0, ["I can"]) + self.end("guardrail_intervened"),
            ),
        ]

    def length_body(self) -> bytes:
        return self.start() + self.text_block(0, ["Once upon"]) + self.end("max_tokens")

    def cache_body(self) -> bytes:
        return (
            self.start()
            + self.text_block(0, ["Cached."])
            + self.end(
                "end_turn", cache={"cacheReadInputTokens": 2000, "cacheWriteInputTokens": 1500}
            )
        )

    def stream_errors(self) -> list[tuple[str, str, bytes]]:
        return [
            (
                "stream_error",
                "a modelStreamErrorException after some text",
                self.start()
                + self.text_block(0, ["Partial"])
                + self.exception("modelStreamErrorException", "The model stream failed."),
            ),
            (
                "throttling_in_stream",
                "a throttlingException frame after some text",
                self.start()
                + self.text_block(0, ["Partial"])
                + self.exception(
                    "throttlingException", "Too many tokens, please wait before trying again."
                ),
            ),
        ]

    def finish_reasons(self) -> list[str]:
        return list(self.service.shape_for("StopReason").enum)

    def finish_body(self, reason: str) -> bytes:
        return self.start() + self.text_block(0, ["Ok."]) + self.end(reason)

    def extra_cases(self) -> list[dict[str, Any]]:
        status, body, headers = self.http_error(429)
        return [
            {
                "name": "http_429_default",
                "family": "http",
                "description": "HTTP 429 twice then the answer, default options (no maxRetries)",
                "replies": [reply(body, status=status, headers=headers)] * 2
                + [reply(self.text_body())],
            }
        ]


# --------------------------------------------------------------------------- pi-messages


class PiMessagesDialect:
    """pi's own protocol: no vendor SDK; the events are pi 1.6's assistant events."""

    has_thinking = True
    has_redacted = True
    has_cache = True
    model: ClassVar[dict[str, Any]] = {
        "id": "balanced",
        "name": "Balanced",
        "api": "pi-messages",
        "provider": "radius",
        "basePath": "/v1",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 0},
        "contextWindow": 1048576,
        "maxTokens": 262144,
        "thinkingLevelMap": {
            "off": None,
            "minimal": None,
            "low": "low",
            "medium": None,
            "high": "high",
            "xhigh": None,
            "max": "max",
        },
    }
    options: ClassVar[dict[str, Any]] = {}

    def usage(self, out: int = 12, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
        return {
            "input": 25,
            "output": out,
            "cacheRead": cache_read,
            "cacheWrite": cache_write,
            "totalTokens": 25 + out + cache_read + cache_write,
            "cost": {
                "input": 0.000075,
                "output": 0.00018,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": 0.000255,
            },
        }

    def body(self, events: list[dict[str, Any]]) -> str:
        return sse([(None, e) for e in events])

    def text_events(self, index: int, parts: list[str]) -> list[dict[str, Any]]:
        return (
            [{"type": "text_start", "contentIndex": index}]
            + [{"type": "text_delta", "contentIndex": index, "delta": p} for p in parts]
            + [{"type": "text_end", "contentIndex": index, "content": "".join(parts)}]
        )

    def done(self, reason: str = "stop", **usage: Any) -> dict[str, Any]:
        return {
            "type": "done",
            "reason": reason,
            "usage": self.usage(**usage),
            "responseId": "pim-conf-1",
            "responseModel": "moonshotai/kimi-k2.6",
        }

    def text_body(self) -> str:
        return self.body(
            [{"type": "start"}, *self.text_events(0, ["Hello", ", wor", "ld 🌍!"]), self.done()]
        )

    def no_terminal_body(self) -> str:
        return self.body([{"type": "start"}, *self.text_events(0, ["Hello", ", wor"])[:-1]])

    def thinking_events(self, index: int) -> list[dict[str, Any]]:
        return [
            {"type": "thinking_start", "contentIndex": index},
            {"type": "thinking_delta", "contentIndex": index, "delta": "Let me think"},
            {"type": "thinking_delta", "contentIndex": index, "delta": " about it."},
            {
                "type": "thinking_end",
                "contentIndex": index,
                "content": "Let me think about it.",
                "contentSignature": "sig_pim",
            },
        ]

    def thinking_body(self) -> str:
        return self.body(
            [
                {"type": "start"},
                *self.thinking_events(0),
                *self.text_events(1, ["Done."]),
                self.done(),
            ]
        )

    def redacted_body(self) -> str:
        return self.body(
            [
                {"type": "start"},
                {"type": "thinking_start", "contentIndex": 0},
                {
                    "type": "thinking_end",
                    "contentIndex": 0,
                    "content": "",
                    "contentSignature": "enc_redacted",
                    "redacted": True,
                },
                *self.thinking_events(1),
                *self.text_events(2, ["Fine."]),
                self.done(),
            ]
        )

    def tool_events(
        self, index: int, call_id: str, name: str, args: dict[str, Any]
    ) -> list[dict[str, Any]]:
        text = json.dumps(args)
        return (
            [{"type": "toolcall_start", "contentIndex": index, "id": call_id, "toolName": name}]
            + [
                {"type": "toolcall_delta", "contentIndex": index, "delta": text[i : i + 7]}
                for i in range(0, len(text), 7)
            ]
            + [
                {
                    "type": "toolcall_end",
                    "contentIndex": index,
                    "toolCall": {
                        "type": "toolCall",
                        "id": call_id,
                        "name": name,
                        "arguments": args,
                    },
                }
            ]
        )

    def tools_body(self, n: int) -> str:
        events: list[dict[str, Any]] = [{"type": "start"}]
        index = 0
        if n > 1:
            events += self.text_events(0, ["Checking both."])
            index = 1
        events += self.tool_events(index, "call_A1", "add", {"a": 2, "b": 3})
        if n > 1:
            events += self.tool_events(
                index + 1, "call_B2", "get_weather", {"city": "Paris", "unit": "c"}
            )
        return self.body([*events, self.done("toolUse", out=40)])

    def http_error(self, status: int) -> tuple[int, str, dict[str, str]]:
        message, code = {
            400: ("model 'balanced' does not accept tool_choice", "invalid_request"),
            429: ("Too many requests", "rate_limited"),
        }[status]
        return status, json.dumps({"error": {"message": message, "code": code}}), {}

    def refusal_bodies(self) -> list[tuple[str, str, str]]:
        return []  # refusals arrive as ordinary stop reasons in pi's protocol

    def length_body(self) -> str:
        return self.body(
            [{"type": "start"}, *self.text_events(0, ["Once upon"]), self.done("length")]
        )

    def cache_body(self) -> str:
        return self.body(
            [
                {"type": "start"},
                *self.text_events(0, ["Cached."]),
                self.done(cache_read=2000, cache_write=1500),
            ]
        )

    def stream_errors(self) -> list[tuple[str, str, str]]:
        error = {
            "type": "error",
            "reason": "error",
            "usage": self.usage(1),
            "errorMessage": "upstream overloaded",
            "responseId": "pim-conf-1",
        }
        return [
            (
                "stream_error",
                "the backend's error event after some text",
                self.body([{"type": "start"}, *self.text_events(0, ["Partial"]), error]),
            )
        ]

    def finish_reasons(self) -> list[str]:
        return ["stop", "length", "toolUse"]

    def finish_body(self, reason: str) -> str:
        return self.body([{"type": "start"}, *self.text_events(0, ["Ok."]), self.done(reason)])

    def extra_cases(self) -> list[dict[str, Any]]:
        return []


DIALECTS = {
    "anthropic-messages": AnthropicDialect,
    "openai-completions": CompletionsDialect,
    "openai-responses": ResponsesDialect,
    "azure-openai-responses": AzureDialect,
    "openai-codex-responses": CodexDialect,
    "google-generative-ai": GoogleDialect,
    "google-vertex": VertexDialect,
    "mistral-conversations": MistralDialect,
    "bedrock-converse-stream": BedrockDialect,
    "pi-messages": PiMessagesDialect,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=str(ROOT / ".cache" / "conformance-venv"))
    parser.add_argument("--out", default=str(HERE / "cases"))
    args = parser.parse_args()
    _ensure_vendor_venv(Path(args.venv).resolve())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for api, dialect in DIALECTS.items():
        cases = base_cases(api, dialect())
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names)), names
        (out / f"{api}.json").write_text(
            json.dumps({"api": api, "cases": cases}, indent=1, ensure_ascii=False) + "\n"
        )
        total += len(cases)
        print(f"{api}: {len(cases)} cases")
    print(f"{total} cases")


if __name__ == "__main__":
    main()
