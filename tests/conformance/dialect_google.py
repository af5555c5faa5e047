"""Gemini and Vertex cases, built from google-genai's types."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .case_kit import reply, sse


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
