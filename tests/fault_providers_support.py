"""Every HTTP provider as the fault suite drives it: its model, its key, the header that
carries the key, a recorded answer cut into its events (SSE events, or AWS event-stream
frames for Bedrock), how it words a failed status, and garbage in its own framing."""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import msgspec
import pytest

from pi_trio.ai import Model, get_model

from . import eventstream_support as es

__all__ = ["KEY", "PROVIDERS", "Provider", "bedrock_prelude"]

FIXTURES = Path(__file__).parent / "fixtures"
KEY = "sk-fault-secret-0123456789"
SSE_TYPE = "text/event-stream"


@dataclass(frozen=True)
class Provider:
    api: str
    model: Model
    key: str  # a valid key of this provider's shape; the faults come from the server
    auth_header: str
    auth_prefix: str
    events: tuple[bytes, ...]  # a recorded answer, one SSE event or event-stream frame each
    first_text: int  # index of the first of ``events`` that carries text
    content_type: str
    status_head: Callable[[int], str]  # a failed status's text before the body shown
    closing_event: bool = True  # False: the stream may end after any event (Gemini)

    @property
    def body(self) -> bytes:
        return b"".join(self.events)

    @property
    def through_first_text(self) -> bytes:
        """The answer up to the end of its first event that carries text."""
        return b"".join(self.events[: self.first_text + 1])

    @property
    def sse(self) -> bool:
        return self.content_type == SSE_TYPE

    @property
    def lenient_chunks(self) -> bool:
        """Gemini chunks of an unknown shape are skipped (decoded leniently)."""
        return not self.closing_event

    def garbage(self, kind: str) -> bytes:
        """A body of ``kind`` garbage in this provider's framing."""
        payload = GARBAGE[kind]
        if self.sse:
            return b"".join(b"data: %s\n\n" % part for part in payload)
        if kind == "bad checksum":
            frame = bytearray(self.events[self.first_text])
            frame[-1] ^= 0xFF
            return bytes(frame)
        headers = {
            ":message-type": "event",
            ":event-type": "contentBlockDelta",
            ":content-type": "application/json",
        }
        return b"".join(es.frame(headers, part) for part in payload)


# What each kind of garbage holds: the data of one event each.
GARBAGE: dict[str, list[bytes]] = {
    "broken json": [b"{not json"],
    "deep nesting": [b"[" * 5000],
    "wrong shapes": [b"[1, 2]", b"null"],
    "invalid utf-8": [b"\xff\xfe"],
    "bad checksum": [],  # event-stream framing only
}


def sse_events(body: bytes) -> tuple[bytes, ...]:
    """``body`` cut after each blank line; the pieces join back into ``body``."""
    events = re.findall(rb".*?\r?\n\r?\n", body, re.S)
    rest = body[sum(map(len, events)) :]
    if rest.strip():
        events.append(rest)
    elif rest:
        events[-1] += rest
    return tuple(events)


def first_with(events: tuple[bytes, ...], marker: bytes) -> int:
    return next(i for i, event in enumerate(events) if marker in event)


def bedrock_prelude(total_length: int) -> bytes:
    """The prelude of an event-stream message announcing ``total_length`` bytes."""
    prelude = struct.pack(">II", total_length, 0)
    return prelude + struct.pack(">I", binascii.crc32(prelude))


def codex_token() -> str:
    """A ChatGPT access token (a JWT naming the account), carrying ``KEY`` as its
    signature."""
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct_fault"}}
    parts = [
        base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()
        for part in ({"alg": "none"}, claims)
    ]
    return ".".join([*parts, KEY])


def _catalog(provider: str, model_id: str, api: str) -> Model:
    model = get_model(provider, model_id)
    assert model is not None, (provider, model_id)
    assert model.api == api, model.api
    return model


def _status(status: int) -> str:
    return f"{status} "


def _sse_provider(
    api: str,
    model: Model,
    fixture: str,
    header: str,
    marker: bytes,
    *,
    key: str = KEY,
    status_head: Callable[[int], str] = _status,
    closing_event: bool = True,
) -> Any:
    events = sse_events((FIXTURES / fixture).read_bytes())
    provider = Provider(
        api=api,
        model=model,
        key=key,
        auth_header=header,
        auth_prefix="Bearer " if header == "authorization" else "",
        events=events,
        first_text=first_with(events, marker),
        content_type=SSE_TYPE,
        status_head=status_head,
        closing_event=closing_event,
    )
    return pytest.param(provider, id=api)


def _bedrock() -> Any:
    events = (
        es.event("messageStart", {"role": "assistant"}),
        es.text_delta(0, "Héllo "),
        es.text_delta(0, "wörld 🌍"),
        es.block_stop(0),
        es.message_stop("end_turn"),
        es.metadata(inputTokens=12, outputTokens=4, totalTokens=16),
    )
    provider = Provider(
        api="bedrock-converse-stream",
        model=_catalog("amazon-bedrock", "amazon.nova-pro-v1:0", "bedrock-converse-stream"),
        key=KEY,  # a Bedrock API key: a bearer token instead of SigV4
        auth_header="authorization",
        auth_prefix="Bearer ",
        events=events,
        first_text=1,
        content_type=es.CONTENT_TYPE,
        status_head=_status,
    )
    return pytest.param(provider, id="bedrock-converse-stream")


_GPT5_MINI = _catalog("openai", "gpt-5-mini", "openai-responses")
_AZURE = msgspec.structs.replace(
    _GPT5_MINI, api="azure-openai-responses", provider="azure-openai-responses"
)

PROVIDERS = [
    _sse_provider(
        "anthropic-messages",
        _catalog("anthropic", "claude-haiku-4-5", "anthropic-messages"),
        "anthropic/text.sse",
        "x-api-key",
        b'"text_delta"',
    ),
    _sse_provider(
        "openai-completions",
        _catalog("groq", "openai/gpt-oss-120b", "openai-completions"),
        "openai_completions/text.sse",
        "authorization",
        b'"content":"H',
    ),
    _sse_provider(
        "openai-responses",
        _GPT5_MINI,
        "openai_responses/text.sse",
        "authorization",
        b'"response.output_text.delta"',
        status_head=lambda status: f"OpenAI API error ({status}): {status} ",
    ),
    _sse_provider(
        "google-generative-ai",
        _catalog("google", "gemini-2.5-flash", "google-generative-ai"),
        "google/text.sse",
        "x-goog-api-key",
        b'"text": "H\xc3\xa9llo',
        closing_event=False,
    ),
    _sse_provider(
        "azure-openai-responses",
        _AZURE,
        "openai_responses/text.sse",
        "api-key",
        b'"response.output_text.delta"',
        status_head=lambda status: f"Azure OpenAI API error ({status}): {status} ",
    ),
    _sse_provider(
        "openai-codex-responses",
        _catalog("openai-codex", "gpt-6.2-sol", "openai-codex-responses"),
        "pi16/codex_service_tier.sse",
        "authorization",
        b'"response.output_text.delta"',
        key=codex_token(),
        status_head=lambda status: "",  # the body alone, as the Codex client words it
    ),
    _sse_provider(
        "mistral-conversations",
        _catalog("mistral", "mistral-small-latest", "mistral-conversations"),
        "pi16/mistral_text.sse",
        "authorization",
        b'"content":"Bonjour"',
        status_head=lambda status: f"Mistral API error ({status}): ",
    ),
    _sse_provider(
        "pi-messages",
        _catalog("radius", "balanced", "pi-messages"),
        "pi16/pimessages_text.sse",
        "authorization",
        b'"text_delta"',
        status_head=lambda status: f"{status} {httpx2.codes.get_reason_phrase(status)}: ",
    ),
    _sse_provider(
        "google-vertex",
        _catalog("google-vertex", "gemini-2.5-flash", "google-vertex"),
        "google/text.sse",
        "x-goog-api-key",
        b'"text": "H\xc3\xa9llo',
        closing_event=False,
    ),
    _bedrock(),
]
