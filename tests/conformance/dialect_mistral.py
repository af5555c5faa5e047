"""Mistral conversations cases, built from mistralai's types."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .case_kit import sse


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
