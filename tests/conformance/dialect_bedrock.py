"""Bedrock ConverseStream cases: payloads checked against botocore's service model,
every binary frame read back by botocore's event-stream parser."""

from __future__ import annotations

import base64
import binascii
import json
import struct
from typing import Any, ClassVar

from .case_kit import reply


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
