"""The quirks table of OpenAI-compatible Chat Completions servers (the original's
``detectCompat`` and ``getCompat``, ``src/api/openai-completions.ts``).

``resolve_compat(model)`` detects the server from ``model.provider`` and ``model.base_url``
(provider ids and URL substrings are OR-ed) and lets every field that ``model.compat``
names explicitly (camelCase, as in the JSON catalog) win over the detected value.
Detected as pi 1.6 detects them: OpenAI, OpenRouter, xAI, Cerebras, DeepSeek, z.ai,
Together, Moonshot, NVIDIA, Cloudflare, chutes, opencode, Ant Ling; any other server
(Groq, LiteLLM, Ollama, vLLM, llama.cpp, LM Studio, a custom base URL) gets the standard
quirks: ``system`` (only OpenAI's own API gets ``developer``), ``store: false``,
``max_completion_tokens`` and no ``strict`` on tools. pi_trio adds Mistral (its endpoint
rejects ``store`` and wants nine-character tool-call ids; pi 1.6 sends Mistral through
``mistral-conversations`` instead) and, for ``response_format`` only, local servers.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, TypeAlias

import msgspec

from .._types import AssistantMessage, Model
from ._common import replace_unsafe_id_chars, short_hash

__all__ = [
    "CompletionsCompat",
    "ThinkingFormat",
    "normalize_tool_call_id",
    "resolve_compat",
    "short_hash",
    "tool_call_id_normalizer",
]

ThinkingFormat: TypeAlias = Literal[
    "openai",
    "openrouter",
    "zai",
    "qwen",
    "qwen-chat-template",
    "deepseek",
    "together",
    "string-thinking",
    "chat-template",
    "ant-ling",
]

# Provider ids of local OpenAI-compatible servers, and their default ports on localhost:
# they take ``response_format`` of type ``json_schema`` (their other quirks are 1.6's
# standard ones).
_LOCAL_PROVIDERS: Final = frozenset(
    {"ollama", "vllm", "llama.cpp", "llamacpp", "llama-cpp", "lmstudio", "lm-studio"}
)
_LOCAL_URL: Final = re.compile(
    r"^https?://(localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0)(:(11434|1234|8080|8000|4000))?(/|$)"
)


class CompletionsCompat(msgspec.Struct, kw_only=True, frozen=True):
    """Resolved quirks of one Chat Completions server (the fields of the original's
    ``OpenAICompletionsCompat``, snake_case). ``supports_mid_convo_system_messages`` is
    pi_trio's: later system messages go on the wire as instruction messages when true,
    else as a ``<system_reminder>`` user turn. ``requires_mistral_tool_ids``: tool-call ids
    must be 9 alphanumerics.
    ``supports_strict_output`` (pi_trio's): the server takes ``strict: true`` on that
    ``response_format`` (unlike ``supports_strict_mode``, 1.6's flag for tools, it is
    detected: every server but Moonshot, Together, Cloudflare's gateway and NVIDIA).
    ``supports_json_schema_output`` is pi_trio's too: the server takes ``response_format``
    of type ``json_schema`` (``StreamOptions.output_format``)."""

    supports_store: bool = True
    supports_developer_role: bool = True
    supports_reasoning_effort: bool = True
    supports_usage_in_streaming: bool = True
    supports_finish_reason: bool = True
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    requires_tool_result_name: bool = False
    requires_assistant_after_tool_result: bool = False
    requires_thinking_as_text: bool = False
    requires_reasoning_content_on_assistant_messages: bool = False
    requires_mistral_tool_ids: bool = False
    thinking_format: ThinkingFormat = "openai"
    open_router_routing: dict[str, Any] | None = None
    vercel_gateway_routing: dict[str, Any] | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    chat_template_args: dict[str, Any] | None = None
    zai_tool_stream: bool = False
    thinking_token_budget_field: str | None = None
    supports_strict_mode: bool = True
    cache_control_format: Literal["anthropic"] | None = None
    send_session_affinity_headers: bool = False
    session_affinity_format: Literal["openai", "openai-nosession", "openrouter"] = "openai"
    supports_long_cache_retention: bool = True
    supports_prompt_cache_key: bool | None = None
    supports_mid_convo_system_messages: bool = False
    vllm_priority: int | None = None
    supports_json_schema_output: bool = False
    supports_strict_output: bool = True


# camelCase key in ``model.compat`` -> field name
_FIELDS: Final = {
    "".join(part.capitalize() if i else part for i, part in enumerate(name.split("_"))): name
    for name in CompletionsCompat.__struct_fields__
}


def _detect(model: Model) -> dict[str, Any]:
    provider = model.provider
    url = model.base_url
    lower_url = url.lower()

    is_zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    is_together = provider == "together" or "api.together.ai" in url or "api.together.xyz" in url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    is_nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in url
    is_ant_ling = provider == "ant-ling" or "api.ant-ling.com" in url
    is_deepseek = provider == "deepseek" or "deepseek.com" in lower_url
    is_xai = provider == "xai" or "api.x.ai" in url
    is_cerebras = provider == "cerebras" or "cerebras.ai" in url
    is_chutes = "chutes.ai" in url
    is_opencode = provider == "opencode" or "opencode.ai" in url
    is_mistral = provider == "mistral" or "mistral.ai" in url
    is_openai = provider == "openai" or "api.openai.com" in url
    is_local = provider in _LOCAL_PROVIDERS or _LOCAL_URL.match(lower_url) is not None
    is_azure = provider == "azure" or ".openai.azure.com" in lower_url

    non_standard = (
        is_nvidia
        or is_cerebras
        or is_xai
        or is_together
        or is_chutes
        or is_deepseek
        or is_zai
        or is_moonshot
        or is_opencode
        or is_cf_workers
        or is_cf_gateway
        or is_ant_ling
        or is_mistral
    )
    use_max_tokens = (
        is_chutes
        or is_deepseek
        or is_moonshot
        or is_cf_gateway
        or is_together
        or is_nvidia
        or is_ant_ling
        or is_zai
        or is_mistral
    )
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_together:
        thinking_format = "together"
    elif is_ant_ling:
        thinking_format = "ant-ling"
    elif is_openrouter:
        thinking_format = "openrouter"
    else:
        thinking_format = "openai"

    return {
        "supports_store": not non_standard,
        # the developer role is OpenAI's; other hosts' chat templates often reject it
        "supports_developer_role": is_openai,
        "supports_reasoning_effort": not (
            is_xai
            or is_zai
            or is_moonshot
            or is_together
            or is_cf_gateway
            or is_nvidia
            or is_ant_ling
            or is_mistral
        ),
        "max_tokens_field": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requires_tool_result_name": is_mistral,
        "requires_thinking_as_text": is_mistral,
        "requires_mistral_tool_ids": is_mistral,
        "requires_reasoning_content_on_assistant_messages": is_deepseek,
        "thinking_format": thinking_format,
        # OpenAI compatibility alone does not mean strict tools: a model's compat opts in
        "supports_strict_mode": False,
        "supports_strict_output": not (is_moonshot or is_together or is_cf_gateway or is_nvidia),
        "cache_control_format": (
            "anthropic" if provider == "openrouter" and model.id.startswith("anthropic/") else None
        ),
        "send_session_affinity_headers": is_openrouter,
        "session_affinity_format": "openrouter" if is_openrouter else "openai",
        "supports_long_cache_retention": not (
            is_together or is_cf_workers or is_cf_gateway or is_nvidia or is_ant_ling
        ),
        "supports_mid_convo_system_messages": False,
        # servers documented to take response_format {type: "json_schema"} for every model
        "supports_json_schema_output": (
            is_openai or is_azure or is_xai or is_cerebras or is_mistral or is_local
        ),
    }


def resolve_compat(model: Model) -> CompletionsCompat:
    """The detected quirks of ``model``'s server, overridden by ``model.compat``.

    Unknown ``compat`` keys are ignored (they may belong to another api); a known key with
    a value of the wrong type raises ``ValueError`` naming it."""
    fields = _detect(model)
    for key, value in (model.compat or {}).items():
        name = _FIELDS.get(key)
        if name is not None and value is not None:
            fields[name] = value
    if (model.compat or {}).get("supportsStrictMode") is False:
        fields["supports_strict_output"] = False  # a server that refuses strict refuses both
    if (model.compat or {}).get("supportsThinkingTokenBudget") and not fields.get(
        "thinking_token_budget_field"
    ):
        fields["thinking_token_budget_field"] = "thinking_token_budget"
    try:
        return msgspec.convert(fields, CompletionsCompat)
    except msgspec.ValidationError as exc:
        raise ValueError(
            f"invalid openai-completions compat for model {model.id!r}: {exc}; "
            f"model.compat was {model.compat!r}"
        ) from exc


# --------------------------------------------------------------------------- tool-call ids

_NON_ALNUM: Final = re.compile(r"[^a-zA-Z0-9]")
_MAX_ID_LEN: Final = 40  # OpenAI's limit on tool-call ids
_MISTRAL_ID_LEN: Final = 9


def normalize_tool_call_id(tool_call_id: str, model: Model, compat: CompletionsCompat) -> str:
    """A tool-call id from another model made acceptable to this server.

    Responses-style ``<call_id>|<item_id>`` ids become ``<call_id>_<item_id>`` (unsafe
    characters replaced by ``_``) when that fits in 40 characters, else a call-id prefix
    and an 8-character hash; Mistral needs exactly 9 alphanumerics; OpenAI ids are cut to
    40 characters; anything else is kept."""
    if compat.requires_mistral_tool_ids:
        plain = _NON_ALNUM.sub("", tool_call_id)
        if len(plain) == _MISTRAL_ID_LEN:
            return plain
        return (short_hash(tool_call_id) + "000000000")[:_MISTRAL_ID_LEN]
    if "|" in tool_call_id:
        call_id, _, item_id = tool_call_id.partition("|")
        call_id = replace_unsafe_id_chars(call_id)
        item_id = replace_unsafe_id_chars(item_id)
        combined = f"{call_id}_{item_id}" if item_id else call_id
        if len(combined) <= _MAX_ID_LEN:
            return combined
        digest = short_hash(tool_call_id)[:8]
        return f"{call_id[: max(1, _MAX_ID_LEN - len(digest) - 1)]}_{digest}"
    if model.provider == "openai":
        return tool_call_id[:_MAX_ID_LEN]
    return tool_call_id


def tool_call_id_normalizer(model: Model, compat: CompletionsCompat) -> Any:
    """``normalize(id, target_model, source_message)`` for ``transform_messages``."""

    def normalize(tool_call_id: str, _model: Model, _source: AssistantMessage) -> str:
        return normalize_tool_call_id(tool_call_id, model, compat)

    return normalize
