"""The built-in model catalog, as data.

Figures are the providers' published ones (models.dev-style): prices in dollars per million
tokens, ``context`` the context window, ``max_out`` the maximum output tokens. Only
``_models`` reads this module; it turns the rows into ``Model`` structs.

Each provider has one api and one base URL; each row is

    (id, name, reasoning, image input, $input, $output, $cache read, $cache write, context, max_out)

and ``EXTRAS`` adds the per-model fields that few models need (price tiers, thinking-level
maps, compat quirks), keyed by ``(provider, id)`` and spelled as in the JSON catalog.
"""

from __future__ import annotations

from typing import Any, TypeAlias

Row: TypeAlias = tuple[str, str, bool, bool, float, float, float, float, int, int]

PROVIDERS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic-messages", "https://api.anthropic.com"),
    "openai": ("openai-responses", "https://api.openai.com/v1"),
    "google": ("google-generative-ai", "https://generativelanguage.googleapis.com/v1beta"),
    "groq": ("openai-completions", "https://api.groq.com/openai/v1"),
    "cerebras": ("openai-completions", "https://api.cerebras.ai/v1"),
    "xai": ("openai-completions", "https://api.x.ai/v1"),
    "mistral": ("openai-completions", "https://api.mistral.ai/v1"),
    "deepseek": ("openai-completions", "https://api.deepseek.com"),
    "openrouter": ("openai-completions", "https://openrouter.ai/api/v1"),
}

T, F = True, False

# fmt: off
MODELS: dict[str, tuple[Row, ...]] = {
    "anthropic": (
        # id                   name                 think img  $in    $out   $cr     $cw    context    max_out
        ("claude-opus-4-7",    "Claude Opus 4.7",   T,    T,   5,     25,    0.5,    6.25,  1_000_000, 128_000),
        ("claude-opus-4-6",    "Claude Opus 4.6",   T,    T,   5,     25,    0.5,    6.25,  1_000_000, 128_000),
        ("claude-opus-4-5",    "Claude Opus 4.5",   T,    T,   5,     25,    0.5,    6.25,  200_000,   64_000),
        ("claude-opus-4-1",    "Claude Opus 4.1",   T,    T,   15,    75,    1.5,    18.75, 200_000,   32_000),
        ("claude-sonnet-4-6",  "Claude Sonnet 4.6", T,    T,   3,     15,    0.3,    3.75,  1_000_000, 64_000),
        ("claude-sonnet-4-5",  "Claude Sonnet 4.5", T,    T,   3,     15,    0.3,    3.75,  200_000,   64_000),
        ("claude-haiku-4-5",   "Claude Haiku 4.5",  T,    T,   1,     5,     0.1,    1.25,  200_000,   64_000),
    ),
    "openai": (
        ("gpt-5.5",            "GPT-5.5",           T,    T,   5,     30,    0.5,    0,     1_050_000, 128_000),
        ("gpt-5.4",            "GPT-5.4",           T,    T,   2.5,   15,    0.25,   0,     1_050_000, 128_000),
        ("gpt-5.2",            "GPT-5.2",           T,    T,   1.75,  14,    0.175,  0,     400_000,   128_000),
        ("gpt-5.1",            "GPT-5.1",           T,    T,   1.25,  10,    0.125,  0,     400_000,   128_000),
        ("gpt-5",              "GPT-5",             T,    T,   1.25,  10,    0.125,  0,     400_000,   128_000),
        ("gpt-5-mini",         "GPT-5 Mini",        T,    T,   0.25,  2,     0.025,  0,     400_000,   128_000),
        ("gpt-5-nano",         "GPT-5 Nano",        T,    T,   0.05,  0.4,   0.005,  0,     400_000,   128_000),
        ("gpt-4.1",            "GPT-4.1",           F,    T,   2,     8,     0.5,    0,     1_047_576, 32_768),
        ("gpt-4o",             "GPT-4o",            F,    T,   2.5,   10,    1.25,   0,     128_000,   16_384),
        ("o3",                 "o3",                T,    T,   2,     8,     0.5,    0,     200_000,   100_000),
        ("o4-mini",            "o4-mini",           T,    T,   1.1,   4.4,   0.275,  0,     200_000,   100_000),
    ),
    "google": (
        ("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", T, T, 2,  12,    0.2,    0,     1_048_576, 65_536),
        ("gemini-3-pro-preview",   "Gemini 3 Pro Preview",   T, T, 2,  12,    0.2,    0,     1_048_576, 65_536),
        ("gemini-3-flash-preview", "Gemini 3 Flash Preview", T, T, 0.5, 3,    0.05,   0,     1_048_576, 65_536),
        ("gemini-2.5-pro",         "Gemini 2.5 Pro",         T, T, 1.25, 10,  0.125,  0,     1_048_576, 65_536),
        ("gemini-2.5-flash",       "Gemini 2.5 Flash",       T, T, 0.3, 2.5,  0.03,   0,     1_048_576, 65_536),
        ("gemini-2.5-flash-lite",  "Gemini 2.5 Flash-Lite",  T, T, 0.1, 0.4,  0.01,   0,     1_048_576, 65_536),
    ),
    "groq": (
        ("openai/gpt-oss-120b",     "GPT OSS 120B",          T, F, 0.15, 0.6,  0.075,  0,     131_072,   65_536),
        ("openai/gpt-oss-20b",      "GPT OSS 20B",           T, F, 0.075, 0.3, 0.0375, 0,     131_072,   65_536),
        ("qwen/qwen3-32b",          "Qwen3 32B",             T, F, 0.29, 0.59, 0,      0,     131_072,   40_960),
        ("llama-3.3-70b-versatile", "Llama 3.3 70B Versatile", F, F, 0.59, 0.79, 0,    0,     131_072,   32_768),
    ),
    "cerebras": (
        ("gpt-oss-120b",       "GPT OSS 120B",      T,    F,   0.35,  0.75,  0,      0,     131_072,   32_768),
        ("zai-glm-4.7",        "Z.AI GLM-4.7",      T,    F,   2.25,  2.75,  0,      0,     131_072,   40_000),
    ),
    "xai": (
        ("grok-4",             "Grok 4",            T,    F,   3,     15,    0.75,   0,     256_000,   8_192),
        ("grok-4-1-fast",      "Grok 4.1 Fast",     T,    T,   0.2,   0.5,   0.05,   0,     2_000_000, 30_000),
        ("grok-code-fast-1",   "Grok Code Fast 1",  T,    F,   0.2,   1.5,   0.02,   0,     256_000,   10_000),
        ("grok-3-mini",        "Grok 3 Mini",       T,    F,   0.3,   0.5,   0.075,  0,     131_072,   8_192),
    ),
    "mistral": (
        ("mistral-large-latest",   "Mistral Large (latest)",   F, T, 0.5, 1.5,  0,    0,     262_144,   262_144),
        ("mistral-small-latest",   "Mistral Small (latest)",   F, T, 0.1, 0.3,  0,    0,     128_000,   16_384),
        ("devstral-medium-latest", "Devstral 2 (latest)",      F, F, 0.4, 2,    0,    0,     262_144,   262_144),
        ("codestral-latest",       "Codestral (latest)",       F, F, 0.3, 0.9,  0.03, 0,     128_000,   128_000),
    ),
    "deepseek": (
        ("deepseek-chat",      "DeepSeek Chat",     F,    F,   0.28,  0.42,  0.028,  0,     128_000,   8_192),
        ("deepseek-reasoner",  "DeepSeek Reasoner", T,    F,   0.28,  0.42,  0.028,  0,     128_000,   65_536),
    ),
    "openrouter": (
        ("anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5", T, T, 3, 15, 0.3,  3.75, 1_000_000, 64_000),
        ("openai/gpt-5",                "OpenAI: GPT-5",                T, T, 1.25, 10, 0.125, 0, 400_000,  128_000),
        ("google/gemini-2.5-pro",       "Google: Gemini 2.5 Pro",       T, T, 1.25, 10, 0.125, 0.375, 1_048_576, 65_536),
        ("deepseek/deepseek-v3.2",      "DeepSeek: DeepSeek V3.2",      T, F, 0.28, 0.4, 0,  0,    163_840,   65_536),
        ("moonshotai/kimi-k2.5",        "MoonshotAI: Kimi K2.5",        T, T, 0.4, 1.9, 0.09, 0,    262_144,   65_536),
    ),
}
# fmt: on

# Models whose thinking cannot be switched off.
_ALWAYS_THINKS: dict[str, Any] = {"thinkingLevelMap": {"off": None}}
# OpenAI models with an "xhigh" reasoning effort.
_XHIGH: dict[str, Any] = {"thinkingLevelMap": {"xhigh": "xhigh"}}


def _tier(
    above: int, inp: float, out: float, cache_read: float, cache_write: float
) -> dict[str, Any]:
    return {
        "inputTokensAbove": above,
        "input": inp,
        "output": out,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
    }


EXTRAS: dict[tuple[str, str], dict[str, Any]] = {
    ("anthropic", "claude-opus-4-7"): {
        "thinkingLevelMap": {"xhigh": "xhigh"},
        "compat": {"forceAdaptiveThinking": True, "supportsTemperature": False},
    },
    ("anthropic", "claude-opus-4-6"): {
        "thinkingLevelMap": {"xhigh": "max"},
        "compat": {"forceAdaptiveThinking": True},
    },
    ("openai", "gpt-5.5"): {**_XHIGH, "tiers": [_tier(272_000, 10, 45, 1, 0)]},
    ("openai", "gpt-5.4"): {**_XHIGH, "tiers": [_tier(272_000, 5, 22.5, 0.5, 0)]},
    ("openai", "gpt-5.2"): _XHIGH,
    ("openai", "gpt-5.1"): {"thinkingLevelMap": {"minimal": "low"}},
    ("openai", "gpt-5"): _ALWAYS_THINKS,
    ("openai", "gpt-5-mini"): _ALWAYS_THINKS,
    ("openai", "gpt-5-nano"): _ALWAYS_THINKS,
    ("openai", "o3"): {"thinkingLevelMap": {"off": None, "minimal": "low"}},
    ("openai", "o4-mini"): {"thinkingLevelMap": {"off": None, "minimal": "low"}},
    ("google", "gemini-3.1-pro-preview"): {
        **_ALWAYS_THINKS,
        "tiers": [_tier(200_000, 4, 18, 0.4, 0)],
    },
    ("google", "gemini-3-pro-preview"): {
        **_ALWAYS_THINKS,
        "tiers": [_tier(200_000, 4, 18, 0.4, 0)],
    },
    ("google", "gemini-2.5-pro"): {
        **_ALWAYS_THINKS,
        "tiers": [_tier(200_000, 2.5, 15, 0.25, 0)],
    },
    ("groq", "qwen/qwen3-32b"): {
        "thinkingLevelMap": {
            "off": "none",
            "minimal": "default",
            "low": "default",
            "medium": "default",
            "high": "default",
        },
    },
    ("deepseek", "deepseek-reasoner"): _ALWAYS_THINKS,
    ("openrouter", "anthropic/claude-sonnet-4.5"): {
        "tiers": [_tier(200_000, 6, 22.5, 0.6, 7.5)],
    },
}
