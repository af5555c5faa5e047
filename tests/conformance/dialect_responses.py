"""Responses cases (OpenAI, Azure, Codex), built from the openai SDK's types."""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar

from .case_kit import dump, reply, sse
from .dialect_completions import CompletionsDialect


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
