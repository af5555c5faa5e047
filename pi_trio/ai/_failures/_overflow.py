"""Classifying failed responses: context overflow, and transient errors worth a retry.

Providers word "your prompt does not fit" in many ways, and some say nothing at all and
just stop (or truncate) when the prompt is over the window. ``is_context_overflow`` knows
those forms; ``is_retryable_assistant_error`` knows the transient provider and transport
failures. Callers handle overflow first: some overflow messages also look transient.
``failure_kind`` puts the two together, with quota and billing failures apart.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeAlias

from .._types import AssistantMessage

__all__ = [
    "FailureKind",
    "failure_kind",
    "get_overflow_patterns",
    "is_context_overflow",
    "is_recoverable_length",
    "is_retryable_assistant_error",
]

_OVERFLOW_SOURCES: Final = (
    r"prompt (?:is )?too long",  # Anthropic, z.ai
    r"prompt exceeds max length",  # z.ai (China endpoint)
    r"request_too_large",  # Anthropic 413
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI (Responses / Completions)
    r"input token count.*exceeds the maximum",  # Google Gemini
    r"maximum prompt length is \d+",  # xAI
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenAI-compatible servers, OpenRouter
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi
    r"too large for model with \d+ maximum context length",  # vLLM
    r"model_context_window_exceeded",  # OpenAI Codex
    r"context[_ ]length[_ ]exceeded",  # OpenAI error code, generic servers
    r"too many tokens",  # generic
    r"token limit exceeded",  # generic
    # LiteLLM
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",  # OpenRouter, Poolside
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",  # Together
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",  # DS4
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
    r"range of input length should be",  # DashScope
)
_OVERFLOW_PATTERNS: Final = [re.compile(source, re.IGNORECASE) for source in _OVERFLOW_SOURCES]

# Errors that mention tokens but are about throughput, not the window.
_NOT_OVERFLOW: Final = re.compile(
    r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE
)
# Cerebras answers an oversized prompt with a 400/413 and an empty body. One whitespace
# run per gap: two adjacent ``\s*`` would backtrack quadratically on a long run of blanks.
_CEREBRAS_NO_BODY: Final = re.compile(
    r"^4(?:00|13)\s*(?:status code\s*)?\(no body\)", re.IGNORECASE
)

# Share of the window at which a response truncated before any output counts as overflow.
_LENGTH_OVERFLOW_SHARE: Final = 0.99

# 1.6's lists (pi-ai utils/retry): limits that reset after hours, and transient failures.
# Status numbers and socket error codes count only as whole tokens (a request id such as
# req_4290abc holds no 429).
_QUOTA_OR_BILLING: Final = re.compile(
    "|".join(
        (
            "GoUsageLimitError",
            "FreeUsageLimitError",
            "Monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
            "subscription_sharing_usage_limit_exceeded",
            "subscription_sharing_workplace_individual_usage_limit_exceeded",
            r'"code"\s*:\s*"?1308(?![0-9])',
        )
    ),
    re.IGNORECASE,
)
_RETRYABLE: Final = re.compile(
    "|".join(
        (
            "overloaded",
            "server_busy",
            "servers are currently busy",
            "currently experiencing high demand",
            "model is at capacity",
            "rate.?limit",
            "too many requests",
            "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
            "service.?(?:is.?)?(?:temporarily.?)?unavailable",
            "server.?error",
            "internal.?error",
            "provider.?returned.?(?:an.?)?error",
            "exceeded request buffer limit while retrying upstream",
            "unable to forward upstream",
            "upstream.?request.?failed",
            "upstream_stream_read_error",
            "stream was interrupted",
            "http/?2 stream failed",
            "network.?error",
            "connection.?error",
            "connection.?refused",
            "connection.?lost",
            "connection.?closed",
            "other side closed",
            "fetch failed",
            r"request to \S+ failed, reason:",
            "getaddrinfo",
            "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
            "connection reset by peer",
            "ENOTFOUND",
            "EAI_AGAIN",
            "upstream.?connect",
            "reset before headers",
            "socket hang up",
            "socket connection was closed",
            "timed? out",
            "timeout",
            "terminated",
            "websocket.?closed",
            "websocket.?error",
            "websocket.?connection.?limit.?reached",
            "ended without",
            "stream ended before message_stop",
            "stream ended before a terminal response event",
            "http2 request did not get a response",
            "stream disconnected before completion",
            "cut short after the reply had begun",
            "pending stream has been canceled",
            "retry delay",
            "you can retry your request",
            "try your request again",
            "please retry your request",
            "ResourceExhausted",
            "subscription_sharing_usage_unavailable",
            "subscription_sharing_user_unavailable",
            # pi_trio's own: a stream past first_event_timeout / idle_timeout (ai/_stream/_stall)
            "no (?:first )?response event for",
        )
    ),
    re.IGNORECASE,
)


def get_overflow_patterns() -> list[re.Pattern[str]]:
    """The patterns that mark an error message as a context overflow (a fresh list)."""
    return list(_OVERFLOW_PATTERNS)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` failed (or silently truncated) because the prompt was too long.

    With ``context_window``, also detects providers that overflow without an error: a
    ``stop`` whose prompt (input + cache read) is above the window, and a ``length`` stop
    with no output whose prompt fills at least 99% of it.
    """
    if message.stop_reason == "error" and message.error_message:
        text = message.error_message
        if not _NOT_OVERFLOW.search(text) and any(p.search(text) for p in _OVERFLOW_PATTERNS):
            return True
        if message.provider == "cerebras" and _CEREBRAS_NO_BODY.search(text):
            return True
    if context_window is not None:
        prompt = message.usage.input + message.usage.cache_read
        if message.stop_reason == "stop" and prompt > context_window:
            return True
        if (
            message.stop_reason == "length"
            and message.usage.output == 0
            and prompt >= _LENGTH_OVERFLOW_SHARE * context_window
        ):
            return True
    return False


def is_recoverable_length(message: AssistantMessage, desired_max_output: int) -> bool:
    """Whether a ``length`` stop ended below the output limit the caller asked for, so
    that asking again (e.g. after compacting the prompt) can still produce that much."""
    return (
        message.stop_reason == "length"
        and desired_max_output > 0
        and message.usage.output < desired_max_output
    )


def is_retryable_assistant_error(message: AssistantMessage) -> bool:
    """Whether ``message`` failed with a transient provider or transport error.

    Quota and billing failures are never retryable. This is classification only: check
    ``is_context_overflow`` first, then apply a retry budget and backoff.
    """
    if message.stop_reason != "error" or not message.error_message:
        return False
    text = message.error_message
    if _QUOTA_OR_BILLING.search(text):
        return False
    return _RETRYABLE.search(text) is not None


FailureKind: TypeAlias = Literal["overflow", "quota", "transient", "other"]
"""What a failed response ran into (``failure_kind``)."""


def failure_kind(message: AssistantMessage) -> FailureKind | None:
    """The kind of failure of a response that ended in ``error``; ``None`` for any other
    (an aborted response is no failure of the model).

    - ``"overflow"``: the prompt did not fit the model's window (``is_context_overflow``);
    - ``"quota"``: a quota, usage or billing limit of the account: retrying soon will not
      help, another provider may;
    - ``"transient"``: overloaded, rate limited, a 5xx, a dropped or silent stream
      (``is_retryable_assistant_error``);
    - ``"other"``: the rest: authentication, a malformed request, an unknown model.
    """
    if message.stop_reason != "error":
        return None
    if is_context_overflow(message):
        return "overflow"
    text = message.error_message or ""
    if _QUOTA_OR_BILLING.search(text):
        return "quota"
    if _RETRYABLE.search(text):
        return "transient"
    return "other"
