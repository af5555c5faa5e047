"""What a token holder may choose of a proxied call, besides the model: the request
options the server takes, each by an explicit rule (sans-IO).

The server builds the call from its own model (the model policy's answer) and from these
options only. A value the rules refuse is a 400 naming the option and the rule; options
this version does not know (another client version's, or ``apiKey``, ``env``, ``extra``)
are never decoded, so they never reach a provider.

=====================  =====================================================
option                 rule
=====================  =====================================================
``temperature``        any number
``maxTokens``          1 to the served model's ``max_tokens``
``reasoning``          a thinking level (``off`` ... ``max``)
``thinkingBudgets``    each 0 to the served model's ``max_tokens``
``cacheRetention``     ``none``, ``short`` or ``long``
``sessionId``          a string
``maxRetryDelayMs``    0 or more
``headers``            only names in ``forward_headers``; others are dropped
``metadata``           only ``user_id``, a string
``samplingParams``     only names in ``sampling_params``, each a number
=====================  =====================================================
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from ..ai import Model, StreamOptions
from ._wire import ProxyRequestOptions, proxy_options

__all__ = [
    "DEFAULT_FORWARD_HEADERS",
    "DEFAULT_SAMPLING_PARAMS",
    "METADATA_KEYS",
    "NEVER_FORWARDED",
    "check_forward_headers",
    "served_headers",
    "server_options",
]

# Headers a request may ask the provider call to send (lower case): beta switches,
# session affinity and OpenRouter's attribution. Everything else a client names is
# dropped: the request goes out with the server's key, so the server decides what
# travels with it.
DEFAULT_FORWARD_HEADERS: frozenset[str] = frozenset(
    {
        "anthropic-beta",
        "openai-beta",
        "x-session-affinity",
        "x-session-id",
        "session_id",
        "x-client-request-id",
        "http-referer",
        "x-title",
    }
)

# Headers no client may set, whatever ``forward_headers`` says: the ones carrying the
# server's key (or a proxy's), and the ones that frame the HTTP message itself.
NEVER_FORWARDED: frozenset[str] = frozenset(
    {
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cf-aig-authorization",
        "proxy-authorization",
        "cookie",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "upgrade",
        "te",
        "trailer",
        "keep-alive",
        "proxy-connection",
    }
)

# The sampling parameters a client may add to a request, by name (the providers that
# take sampling parameters, Chat Completions and Responses, add them to the body): knobs
# of how the model samples, none of which names another model, a tool, a destination or
# storage. ``create_app(sampling_params=...)`` changes the list.
DEFAULT_SAMPLING_PARAMS: frozenset[str] = frozenset(
    {
        "top_p",
        "top_k",
        "min_p",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "seed",
    }
)

# The metadata a request may carry: Anthropic's end-user id, the one key any provider
# reads from ``metadata``.
METADATA_KEYS: frozenset[str] = frozenset({"user_id"})

# Connection-level headers: never sent from any model's headers either.
_FRAMING = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
    | {"keep-alive", "proxy-connection"}
)


def check_forward_headers(names: Iterable[str]) -> frozenset[str]:
    """``names`` in lower case; ``ValueError`` when one of them is never forwarded."""
    if isinstance(names, str):
        raise TypeError(f"forward_headers must be a collection of names, got the str {names!r}")
    lowered = frozenset(name.lower() for name in names)
    refused = sorted(lowered & NEVER_FORWARDED)
    if refused:
        raise ValueError(
            f"forward_headers may not name {', '.join(map(repr, refused))}: these carry "
            "the server's key or frame the HTTP message, so no client may set them"
        )
    return lowered


def served_headers(model: Model) -> Model:
    """``model`` without connection-level headers (``Host``, ``Transfer-Encoding``...),
    which no model needs and a client-written model (under a policy that serves one) must
    not smuggle to the provider; the others (github-copilot's editor headers, nvidia's
    polling header) are kept."""
    headers = model.headers
    if not headers or not any(name.lower() in _FRAMING for name in headers):
        return model
    kept = {name: value for name, value in headers.items() if name.lower() not in _FRAMING}
    return msgspec.structs.replace(model, headers=kept or None)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _refuse_keys(option: str, given: dict[str, Any], allowed: frozenset[str]) -> str | None:
    refused = sorted(set(given) - allowed)
    if not refused:
        return None
    return (
        f"options.{option} {', '.join(map(repr, refused))} not allowed by this proxy; "
        f"it takes {', '.join(sorted(allowed)) or 'none'}"
    )


def _check(wire: ProxyRequestOptions, model: Model, sampling_params: frozenset[str]) -> str | None:
    limit = model.max_tokens
    name = f"{model.provider}/{model.id}"
    if wire.max_tokens is not None and not 1 <= wire.max_tokens <= limit:
        return f"options.maxTokens {wire.max_tokens} must be 1 to {limit} ({name}'s maxTokens)"
    budgets = msgspec.structs.asdict(wire.thinking_budgets) if wire.thinking_budgets else {}
    for level, budget in budgets.items():
        if budget is not None and not 0 <= budget <= limit:
            return (
                f"options.thinkingBudgets.{level} {budget} must be 0 to {limit} "
                f"({name}'s maxTokens)"
            )
    if wire.max_retry_delay_ms is not None and wire.max_retry_delay_ms < 0:
        return f"options.maxRetryDelayMs {wire.max_retry_delay_ms} must be 0 or more"
    metadata = wire.metadata or {}
    refusal = _refuse_keys("metadata", metadata, METADATA_KEYS)
    if refusal is not None:
        return refusal
    if "user_id" in metadata and not isinstance(metadata["user_id"], str):
        return f"options.metadata.user_id must be a string, got {metadata['user_id']!r}"
    sampling = wire.sampling_params or {}
    refusal = _refuse_keys("samplingParams", sampling, sampling_params)
    if refusal is not None:
        return refusal
    for key, value in sampling.items():
        if not _number(value):
            return f"options.samplingParams.{key} must be a number, got {value!r}"
    return None


def server_options(
    wire: ProxyRequestOptions,
    model: Model,
    *,
    sampling_params: frozenset[str],
    forward_headers: frozenset[str],
) -> StreamOptions | str:
    """The stream options a request runs with on ``model`` (the served one), or why its
    options are refused (the module docstring has the rules)."""
    refusal = _check(wire, model, sampling_params)
    if refusal is not None:
        return refusal
    headers = {
        name: value
        for name, value in (wire.headers or {}).items()
        if isinstance(value, str) and name.lower() in forward_headers
    }
    return proxy_options(msgspec.structs.replace(wire, headers=headers or None))
