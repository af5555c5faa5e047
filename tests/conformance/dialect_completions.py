"""Chat Completions cases, built from the openai SDK's types."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .case_kit import ADD, ctx, dump, reply, sse, user


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
