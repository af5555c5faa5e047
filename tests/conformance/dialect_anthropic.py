"""Anthropic Messages cases, built from the anthropic SDK's types."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .case_kit import dump, reply, sse


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
