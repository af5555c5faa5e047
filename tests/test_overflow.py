"""Context-overflow detection and retryable-error classification of failed responses."""

from __future__ import annotations

import pytest

from pi_trio.ai import AssistantMessage, StopReason, Usage
from pi_trio.ai.failures import (
    get_overflow_patterns,
    is_context_overflow,
    is_retryable_assistant_error,
)


def response(
    stop_reason: StopReason = "error",
    error_message: str | None = None,
    *,
    provider: str = "openai",
    input_tokens: int = 0,
    cache_read: int = 0,
    output: int = 0,
) -> AssistantMessage:
    return AssistantMessage(
        content=[],
        api="openai-completions",
        provider=provider,
        model="m",
        usage=Usage(input=input_tokens, cache_read=cache_read, output=output),
        stop_reason=stop_reason,
        error_message=error_message,
        timestamp=0,
    )


# One realistic error text per provider wording.
OVERFLOW_MESSAGES = {
    "anthropic": "prompt is too long: 213462 tokens > 200000 maximum",
    "anthropic 413": (
        '413 {"type":"error","error":{"type":"request_too_large",'
        '"message":"Request exceeds the maximum size"}}'
    ),
    "z.ai": "Prompt too long for this model",
    "z.ai cn": '400 {"code":"1261","message":"Prompt exceeds max length"}',
    "bedrock": "ValidationException: Input is too long for requested model.",
    "openai": (
        "Your input exceeds the context window of this model. "
        "Please adjust your input and try again."
    ),
    "google": (
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."
    ),
    "xai": "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
    "groq": "Please reduce the length of the messages or completion.",
    "openrouter": (
        "This endpoint's maximum context length is 128000 tokens. "
        "However, you requested about 201345 tokens."
    ),
    "copilot": "prompt token count of 130512 exceeds the limit of 128000",
    "llama.cpp": "the request exceeds the available context size, try increasing it",
    "lm studio": (
        "The number of tokens to keep from the initial prompt is greater than the context length"
    ),
    "minimax": "invalid params, context window exceeds limit (2013)",
    "kimi": "Your request exceeded model token limit: 262144 (requested: 301222)",
    "vllm": (
        "Prompt contains 40000 tokens and 0 draft tokens, "
        "too large for model with 32768 maximum context length"
    ),
    "codex": "model_context_window_exceeded",
    "openai code": "Error code: 400 - {'error': {'code': 'context_length_exceeded'}}",
    "generic length": "Context length exceeded",
    "generic tokens": "Request has too many tokens for this deployment",
    "generic limit": "Token limit exceeded for this request",
    "litellm": (
        "litellm.ContextWindowExceededError: Input exceeds the model's maximum context length "
        "of 128,000 tokens"
    ),
    "litellm parens": "prompt exceeds maximum context length (32768)",
    "poolside": "Input exceeds the maximum allowed input length of 128,000 tokens",
    "together": "Input (140000 tokens) is longer than the model's context length (131072 tokens).",
    "ds4": "prompt has 140,000 tokens, but the configured context size is 131,072 tokens",
    "ollama": "prompt too long; exceeded max context length by 2048 tokens",
    "dashscope": "Range of input length should be [1, 129024]",
}


@pytest.mark.parametrize("text", OVERFLOW_MESSAGES.values(), ids=OVERFLOW_MESSAGES.keys())
def test_provider_overflow_messages_are_overflow(text: str) -> None:
    assert is_context_overflow(response("error", text))


def test_every_overflow_pattern_has_a_realistic_sample() -> None:
    for pattern in get_overflow_patterns():
        assert any(pattern.search(text) for text in OVERFLOW_MESSAGES.values()), pattern.pattern


def test_overflow_patterns_are_case_insensitive() -> None:
    assert is_context_overflow(response("error", "PROMPT IS TOO LONG"))


def test_get_overflow_patterns_returns_a_copy() -> None:
    patterns = get_overflow_patterns()
    count = len(patterns)
    patterns.clear()
    assert len(get_overflow_patterns()) == count
    assert count >= 24


@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: too many tokens in flight",
        "429 rate limit reached: too many tokens per minute",
        "Too many requests: token limit exceeded for your tier",
    ],
)
def test_throughput_errors_are_never_overflow(text: str) -> None:
    assert not is_context_overflow(response("error", text))


def test_unrelated_errors_are_not_overflow() -> None:
    assert not is_context_overflow(response("error", "500 Internal server error"))
    assert not is_context_overflow(response("error", None))
    assert not is_context_overflow(response("error", ""))


def test_overflow_text_only_counts_on_an_error_stop() -> None:
    assert not is_context_overflow(response("stop", "prompt is too long"))
    assert not is_context_overflow(response("aborted", "prompt is too long"))


@pytest.mark.parametrize(
    "text", ["400 status code (no body)", "413 status code (no body)", "400 (no body)"]
)
def test_cerebras_bodyless_400_and_413_are_overflow(text: str) -> None:
    assert is_context_overflow(response("error", text, provider="cerebras"))


def test_bodyless_400_from_other_providers_is_not_overflow() -> None:
    assert not is_context_overflow(response("error", "400 status code (no body)"))
    assert not is_context_overflow(
        response("error", "401 status code (no body)", provider="cerebras")
    )


def test_silent_overflow_when_the_prompt_exceeds_the_window() -> None:
    over = response("stop", input_tokens=90_000, cache_read=40_000)
    assert is_context_overflow(over, context_window=128_000)
    assert not is_context_overflow(over)
    at = response("stop", input_tokens=100_000, cache_read=28_000)
    assert not is_context_overflow(at, context_window=128_000)


def test_truncation_with_no_output_at_a_full_window_is_overflow() -> None:
    full = response("length", input_tokens=126_720, output=0)
    assert is_context_overflow(full, context_window=128_000)
    some_output = response("length", input_tokens=127_000, output=5)
    assert not is_context_overflow(some_output, context_window=128_000)
    roomy = response("length", input_tokens=126_719, output=0)
    assert not is_context_overflow(roomy, context_window=128_000)


# --------------------------------------------------------------------------- retryable


@pytest.mark.parametrize(
    "text",
    [
        '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        "We're currently experiencing high demand, which may cause temporary errors.",
        "Rate limit reached for gpt-5 in organization org-x on tokens per min",
        "429 Too Many Requests",
        "500 Internal Server Error",
        "502 Bad Gateway",
        "503 Service Unavailable",
        "504 Gateway Timeout",
        "520 unknown error",
        "524 a timeout occurred",
        "server_error: The server had an error while processing your request",
        "Provider returned error",
        "exceeded request buffer limit while retrying upstream",
        "Network error while streaming",
        "connect ECONNREFUSED 127.0.0.1:443 (connection refused)",
        "Connection lost",
        "other side closed",
        "TypeError: fetch failed",
        "getaddrinfo ENOTFOUND api.anthropic.com",
        "getaddrinfo EAI_AGAIN api.openai.com",
        "upstream connect error or disconnect/reset before headers",
        "socket hang up",
        "The socket connection was closed unexpectedly",
        "Request timed out.",
        "terminated",
        "WebSocket closed before completion",
        "Anthropic stream ended before message_stop",
        "OpenAI Responses stream ended before a terminal response event",
        "Stream ended without finish_reason",
        "http2 request did not get a response",
        "An error occurred. You can retry your request.",
        "Please try your request again later",
        "ResourceExhausted: model is busy",
    ],
)
def test_transient_errors_are_retryable(text: str) -> None:
    assert is_retryable_assistant_error(response("error", text))


@pytest.mark.parametrize(
    "text",
    [
        "429 You exceeded your current quota: insufficient_quota",
        "429 Quota exceeded for this month",
        "503 billing hard limit reached",
        "GoUsageLimitError: 429",
        "FreeUsageLimitError: try your request again tomorrow",
        "Monthly usage limit reached (429)",
        "Your available balance is too low (402)",
        "429 Out of budget",
    ],
)
def test_quota_and_billing_errors_are_never_retryable(text: str) -> None:
    assert not is_retryable_assistant_error(response("error", text))


def test_permanent_errors_are_not_retryable() -> None:
    assert not is_retryable_assistant_error(response("error", "401 invalid x-api-key"))
    assert not is_retryable_assistant_error(response("error", "Tool foo not found"))


def test_only_error_stops_with_a_message_are_retryable() -> None:
    assert not is_retryable_assistant_error(response("aborted", "Request timed out"))
    assert not is_retryable_assistant_error(response("stop", "overloaded"))
    assert not is_retryable_assistant_error(response("error", None))
    assert not is_retryable_assistant_error(response("error", ""))
