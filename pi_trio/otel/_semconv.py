"""The OpenTelemetry GenAI semantic conventions as pi_trio uses them: attribute and metric
names, and the mapping of pi's values (providers, APIs, stop reasons, failures) onto
the conventions' well-known values.

Names follow the GenAI conventions, which now live in their own repository
(open-telemetry/semantic-conventions-genai): ``gen_ai.provider.name``, which replaced
``gen_ai.system``; cache and reasoning token counts; ``gen_ai.input.messages`` /
``gen_ai.output.messages`` as JSON strings on spans; ``gen_ai.client.operation.duration``
for model requests and the agent-level ``gen_ai.invoke_agent.duration`` and
``gen_ai.execute_tool.duration`` for runs and tool calls (these two are newer than the
``opentelemetry-semantic-conventions`` package, which lists the rest).
Attributes the conventions have no name for are ``pi.*``.
"""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "AGENT_NAME",
    "CONVERSATION_ID",
    "ERROR_ABORTED",
    "ERROR_OTHER",
    "ERROR_TIMEOUT",
    "ERROR_TOOL",
    "ERROR_TYPE",
    "EXCEPTION_TYPE",
    "EXECUTE_TOOL_DURATION",
    "INPUT_MESSAGES",
    "INVOKE_AGENT_DURATION",
    "OPERATION_CHAT",
    "OPERATION_DURATION",
    "OPERATION_DURATION_BUCKETS",
    "OPERATION_EXECUTE_TOOL",
    "OPERATION_INVOKE_AGENT",
    "OPERATION_NAME",
    "OUTPUT_MESSAGES",
    "PI_COST",
    "PI_FALLBACKS",
    "PI_FALLBACK_EVENT",
    "PI_FALLBACK_FROM",
    "PI_FALLBACK_KIND",
    "PI_FALLBACK_TO",
    "PI_RUN_LIMIT",
    "PI_RUN_LIMIT_EVENT",
    "PI_RUN_LIMIT_MAXIMUM",
    "PI_RUN_LIMIT_SPENT",
    "PI_STOP_REASON",
    "PI_TURN_INDEX",
    "PI_TURNS",
    "PROVIDER_NAME",
    "REQUEST_MAX_TOKENS",
    "REQUEST_MODEL",
    "REQUEST_STREAM",
    "REQUEST_TEMPERATURE",
    "RESPONSE_FINISH_REASONS",
    "RESPONSE_ID",
    "RESPONSE_MODEL",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "SYSTEM_INSTRUCTIONS",
    "TIME_TO_FIRST_CHUNK",
    "TOKEN_TYPE",
    "TOKEN_USAGE",
    "TOKEN_USAGE_BUCKETS",
    "TOOL_CALL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_CALL_RESULT",
    "TOOL_DEFINITIONS",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "TOOL_TYPE",
    "USAGE_CACHE_CREATION_INPUT_TOKENS",
    "USAGE_CACHE_READ_INPUT_TOKENS",
    "USAGE_INPUT_TOKENS",
    "USAGE_OUTPUT_TOKENS",
    "USAGE_REASONING_OUTPUT_TOKENS",
    "error_type_of_message",
    "finish_reason",
    "operation_of_api",
    "provider_name",
    "server_attributes",
]

# --------------------------------------------------------------------------- attributes

OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_STREAM = "gen_ai.request.stream"  # pi always streams
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
TOKEN_TYPE = "gen_ai.token.type"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
# opt-in content (``capture_content=True``), JSON strings on spans
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
EXCEPTION_TYPE = "exception.type"  # of an ``exception`` event, the only attribute without content
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
# pi's own
PI_COST = "pi.usage.cost"  # US dollars, from the model's prices (``Usage.cost.total``)
PI_STOP_REASON = "pi.stop_reason"  # pi's value: stop, length, toolUse, error, aborted
PI_TURN_INDEX = "pi.turn.index"  # 1-based, within the run
PI_TURNS = "pi.turns"  # turns in the run
# a fallback to the next model (``model_fallback``): an event on the turn's span, and
# how many the run had on its span
PI_FALLBACK_EVENT = "pi.model_fallback"
PI_FALLBACK_FROM = "pi.fallback.from_model"  # "provider/model-id"
PI_FALLBACK_TO = "pi.fallback.to_model"
PI_FALLBACK_KIND = "pi.fallback.kind"  # transient, quota, overflow, other
PI_FALLBACKS = "pi.fallbacks"
# a run limit that ended the run: an event on the run's span, and the limit's name on it
PI_RUN_LIMIT_EVENT = "pi.run_limit_exceeded"
PI_RUN_LIMIT = "pi.run_limit"  # max_requests, max_cost, ...
PI_RUN_LIMIT_MAXIMUM = "pi.run_limit.maximum"
PI_RUN_LIMIT_SPENT = "pi.run_limit.spent"

OPERATION_INVOKE_AGENT = "invoke_agent"
OPERATION_CHAT = "chat"
OPERATION_EXECUTE_TOOL = "execute_tool"

# --------------------------------------------------------------------------- metrics

TOKEN_USAGE = "gen_ai.client.token.usage"
OPERATION_DURATION = "gen_ai.client.operation.duration"  # one model request
INVOKE_AGENT_DURATION = "gen_ai.invoke_agent.duration"  # one run, as long as its span
EXECUTE_TOOL_DURATION = "gen_ai.execute_tool.duration"  # one tool call's execution
# The buckets the conventions advise for the token and the duration histograms.
TOKEN_USAGE_BUCKETS = (
    1,
    4,
    16,
    64,
    256,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
    67108864,
)
OPERATION_DURATION_BUCKETS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)

# --------------------------------------------------------------------------- error.type

ERROR_ABORTED = "aborted"  # abort() or the caller's cancellation ended the operation
ERROR_TIMEOUT = "timeout"  # a tool ran past its ``timeout``
ERROR_TOOL = "tool_error"  # a tool reported a failure (is_error) without raising
ERROR_OTHER = "_OTHER"  # a provider failure without an HTTP status

# --------------------------------------------------------------------------- values

# pi provider ids whose well-known GenAI name differs; others are used as they are.
_PROVIDERS = {
    "google": "gcp.gemini",
    "google-gemini-cli": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "xai": "x_ai",
    "mistral": "mistral_ai",
    "amazon-bedrock": "aws.bedrock",
    "azure-openai-responses": "azure.ai.openai",
}

# APIs whose operation is Gemini's ``generateContent``; every other pi API is a chat.
_GENERATE_CONTENT_APIS = frozenset({"google-generative-ai", "google-vertex", "google-gemini-cli"})

_FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_call",
    "error": "error",
    "aborted": "aborted",
}

# Provider failures are written ``"<status> <message>"`` (see ai/providers/_http.py).
_HTTP_STATUS = re.compile(r"([1-5]\d\d)\b")


def provider_name(provider: str) -> str:
    return _PROVIDERS.get(provider, provider)


def operation_of_api(api: str) -> str:
    return "generate_content" if api in _GENERATE_CONTENT_APIS else OPERATION_CHAT


def finish_reason(stop_reason: str) -> str:
    return _FINISH_REASONS.get(stop_reason, stop_reason)


def error_type_of_message(message: Any) -> str | None:
    """``error.type`` of an assistant message: ``None`` unless it ended in ``error`` or
    ``aborted``; the HTTP status of a failed request (``"429"``), else ``_OTHER``."""
    reason = message.stop_reason
    if reason == "aborted":
        return ERROR_ABORTED
    if reason != "error":
        return None
    match = _HTTP_STATUS.match(message.error_message or "")
    return match.group(1) if match else ERROR_OTHER


@functools.lru_cache(maxsize=64)  # a process talks to a handful of base URLs
def server_attributes(base_url: str) -> tuple[tuple[str, Any], ...]:
    """``server.address`` and ``server.port`` of a model's ``base_url`` (none when it is
    empty or has no host)."""
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return ()
    if not host:
        return ()
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme)
    if port is None:
        return ((SERVER_ADDRESS, host),)
    return ((SERVER_ADDRESS, host), (SERVER_PORT, port))
