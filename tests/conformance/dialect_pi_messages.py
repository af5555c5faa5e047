"""pi-messages cases: pi's own protocol (no vendor SDK), pi 1.6's assistant events."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .case_kit import sse


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
