"""The model catalog, cost accounting and thinking-level support."""

from __future__ import annotations

import msgspec
import pytest

from pi_trio.ai import (
    Cost,
    Model,
    Usage,
    calculate_cost,
    get_model,
    get_models,
    get_providers,
    to_json,
)
from pi_trio.ai.models import (
    CostTier,
    ModelCost,
    clamp_thinking_level,
    get_supported_thinking_levels,
    models_are_equal,
)

ALL_MODELS = [model for provider in get_providers() for model in get_models(provider)]


def make_model(
    *,
    reasoning: bool = True,
    thinking_level_map: dict[str, str | None] | None = None,
    cost: ModelCost | None = None,
    model_id: str = "m",
    provider: str = "p",
) -> Model:
    return Model(
        id=model_id,
        name=model_id,
        api="openai-completions",
        provider=provider,
        base_url="http://localhost",
        reasoning=reasoning,
        input=["text"],
        cost=cost or ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=1000,
        max_tokens=100,
        thinking_level_map=thinking_level_map,
    )


def catalog_model(provider: str, model_id: str) -> Model:
    model = get_model(provider, model_id)
    assert model is not None, f"{provider}/{model_id} missing from the catalog"
    return model


# --------------------------------------------------------------------------- catalog
# The generated catalog itself (size, data file, generator, look-ups) is tested in
# test_catalog.py; these pin catalog entries that other behaviour here depends on.


@pytest.mark.parametrize(
    ("provider", "apis", "base_urls"),
    [
        ("anthropic", {"anthropic-messages"}, {"https://api.anthropic.com"}),
        ("openai", {"openai-responses"}, {"https://api.openai.com/v1"}),
        (
            "google",
            {"google-generative-ai"},
            {"https://generativelanguage.googleapis.com/v1beta"},
        ),
        ("groq", {"openai-completions"}, {"https://api.groq.com/openai/v1"}),
        ("cerebras", {"openai-completions"}, {"https://api.cerebras.ai/v1"}),
        ("xai", {"openai-responses"}, {"https://api.x.ai/v1"}),
        ("mistral", {"mistral-conversations"}, {"https://api.mistral.ai"}),
        ("deepseek", {"openai-completions"}, {"https://api.deepseek.com"}),
        (
            "openrouter",
            {"openai-completions", "anthropic-messages"},
            {"https://openrouter.ai/api/v1", "https://openrouter.ai/api"},
        ),
    ],
)
def test_each_provider_uses_its_apis_and_base_urls(
    provider: str, apis: set[str], base_urls: set[str]
) -> None:
    models = get_models(provider)
    assert models
    assert {m.api for m in models} == apis
    assert {m.base_url for m in models} == base_urls
    assert {m.provider for m in models} == {provider}


def test_catalog_ids_are_unique_per_provider() -> None:
    for provider in get_providers():
        ids = [m.id for m in get_models(provider)]
        assert len(ids) == len(set(ids)), provider


def test_unknown_model_or_provider_is_none_or_empty() -> None:
    assert get_model("anthropic", "claude-nonexistent") is None
    assert get_model("no-such-provider", "gpt-5") is None
    assert get_models("no-such-provider") == []


def test_lookups_return_independent_copies() -> None:
    model = catalog_model("anthropic", "claude-sonnet-4-5")
    model.base_url = "http://127.0.0.1:9"
    assert model.compat is not None
    model.compat["supportsStrictTools"] = False
    again = catalog_model("anthropic", "claude-sonnet-4-5")
    assert again.base_url == "https://api.anthropic.com"
    assert again.compat == {"supportsStrictTools": True}


def test_anthropic_adaptive_thinking_entries_match_upstream() -> None:
    opus_46 = catalog_model("anthropic", "claude-opus-4-6")
    opus_47 = catalog_model("anthropic", "claude-opus-4-7")
    sonnet_45 = catalog_model("anthropic", "claude-sonnet-4-5")
    assert opus_46.compat == {"forceAdaptiveThinking": True, "supportsStrictTools": True}
    assert opus_46.thinking_level_map == {"max": "max"}
    assert opus_47.compat == {
        "forceAdaptiveThinking": True,
        "supportsTemperature": False,
        "supportsStrictTools": True,
    }
    assert opus_47.thinking_level_map == {"xhigh": "xhigh", "max": "max"}
    assert sonnet_45.compat == {"supportsStrictTools": True}
    assert sonnet_45.thinking_level_map is None


def test_catalog_model_json_uses_upstream_keys() -> None:
    model = catalog_model("google", "gemini-2.5-pro")
    wire = msgspec.json.decode(msgspec.json.encode(model))
    assert wire["baseUrl"] == "https://generativelanguage.googleapis.com/v1beta"
    assert wire["contextWindow"] == 1_048_576
    assert wire["maxTokens"] == 65_536
    assert wire["cost"]["tiers"] == [
        {
            "inputTokensAbove": 200_000,
            "input": 2.5,
            "output": 15,
            "cacheRead": 0.25,
            "cacheWrite": 0,
        }
    ]
    assert wire["inputLimits"]["maxRequestBytes"] == 20_971_520
    assert wire["type"] == "chat"
    assert "thinkingLevelMap" not in wire
    assert "headers" not in wire


def test_at_least_one_catalog_model_has_price_tiers() -> None:
    assert any(m.cost.tiers for m in ALL_MODELS)


def test_models_are_equal_compares_id_and_provider_only() -> None:
    a = make_model(model_id="x", provider="p")
    b = make_model(model_id="x", provider="p", reasoning=False)
    assert models_are_equal(a, b)
    assert not models_are_equal(a, make_model(model_id="x", provider="q"))
    assert not models_are_equal(a, make_model(model_id="y", provider="p"))
    assert not models_are_equal(a, None)
    assert not models_are_equal(None, a)
    assert not models_are_equal(None, None)


# --------------------------------------------------------------------------- cost


def test_cost_is_rate_per_million_times_tokens() -> None:
    model = make_model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = Usage(input=1000, output=500, cache_read=2000, cache_write=400)
    cost = calculate_cost(model, usage)
    assert cost is usage.cost
    assert cost.input == pytest.approx(0.003)
    assert cost.output == pytest.approx(0.0075)
    assert cost.cache_read == pytest.approx(0.0006)
    assert cost.cache_write == pytest.approx(0.0015)
    assert cost.total == pytest.approx(0.003 + 0.0075 + 0.0006 + 0.0015)


def test_cost_mutates_the_usage_cost_in_place() -> None:
    model = make_model(cost=ModelCost(input=1, output=2, cache_read=0, cache_write=0))
    original = Cost()
    usage = Usage(input=1_000_000, output=1_000_000, cost=original)
    returned = calculate_cost(model, usage)
    assert returned is original
    assert original.total == 3


def test_whole_costs_stay_integers_so_json_matches_the_original() -> None:
    model = make_model(cost=ModelCost(input=2, output=8, cache_read=0.5, cache_write=0))
    usage = Usage(input=1_000_000, output=0)
    calculate_cost(model, usage)
    assert msgspec.json.encode(usage.cost) == (
        b'{"input":2,"output":0,"cacheRead":0,"cacheWrite":0,"total":2,"totalFromProvider":false}'
    )


def test_cost_is_the_same_float_as_the_originals() -> None:
    # 1.6 sums the token-weighted cache-write rates before dividing: 0.001125, where
    # dividing first gives 0.0011250000000000001
    model = make_model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = Usage(input=1, output=0, cache_write=300, total_tokens=301)
    calculate_cost(model, usage)
    assert usage.cost.cache_write == 0.001125
    assert usage.cost.total == 0.0011279999999999999
    assert usage.cost.total_from_provider is False
    # the bytes of 1.6's JSON.stringify for the same usage
    assert to_json(usage) == (
        b'{"input":1,"output":0,"cacheRead":0,"cacheWrite":300,"totalTokens":301,"cost":'
        b'{"input":0.000003,"output":0,"cacheRead":0,"cacheWrite":0.001125,'
        b'"total":0.0011279999999999999,"totalFromProvider":false}}'
    )


TIERED = ModelCost(
    input=1,
    output=10,
    cache_read=0.1,
    cache_write=1.25,
    tiers=[
        CostTier(input_tokens_above=200_000, input=2, output=20, cache_read=0.2, cache_write=2.5),
        CostTier(input_tokens_above=500_000, input=4, output=40, cache_read=0.4, cache_write=5),
    ],
)


@pytest.mark.parametrize(
    ("prompt_tokens", "input_rate"),
    [(200_000, 1), (200_001, 2), (500_000, 2), (500_001, 4)],
)
def test_tier_applies_only_above_its_threshold(prompt_tokens: int, input_rate: float) -> None:
    model = make_model(cost=TIERED)
    usage = Usage(input=prompt_tokens, output=1_000_000)
    cost = calculate_cost(model, usage)
    assert cost.input == pytest.approx(input_rate * prompt_tokens / 1_000_000)
    assert cost.output == pytest.approx(input_rate * 10)


def test_tier_threshold_counts_cache_reads_and_writes_and_reprices_every_component() -> None:
    model = make_model(cost=TIERED)
    usage = Usage(input=100_000, output=1_000_000, cache_read=60_000, cache_write=40_001)
    cost = calculate_cost(model, usage)
    assert cost.input == pytest.approx(2 * 0.1)
    assert cost.output == pytest.approx(20)
    assert cost.cache_read == pytest.approx(0.2 * 0.06)
    assert cost.cache_write == pytest.approx(2.5 * 0.040001)


def test_tiers_are_picked_by_highest_threshold_not_list_order() -> None:
    reversed_tiers = ModelCost(
        input=1, output=1, cache_read=0, cache_write=0, tiers=list(reversed(TIERED.tiers or []))
    )
    cost = calculate_cost(make_model(cost=reversed_tiers), Usage(input=600_000))
    assert cost.input == pytest.approx(4 * 0.6)


def test_one_hour_cache_writes_cost_twice_the_input_rate() -> None:
    model = make_model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = Usage(cache_write=1_000_000, cache_write_1h=400_000)
    cost = calculate_cost(model, usage)
    assert cost.cache_write == pytest.approx(3.75 * 0.6 + 3 * 2 * 0.4)
    assert cost.total == pytest.approx(cost.cache_write)


def test_one_hour_cache_writes_use_the_tier_input_rate() -> None:
    model = make_model(cost=TIERED)
    usage = Usage(input=300_000, cache_write=100_000, cache_write_1h=100_000)
    cost = calculate_cost(model, usage)
    assert cost.cache_write == pytest.approx(2 * 2 * 0.1)


def test_zero_usage_costs_nothing() -> None:
    model = catalog_model("anthropic", "claude-opus-4-7")
    cost = calculate_cost(model, Usage())
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write, cost.total) == (0,) * 5


def test_gemini_25_pro_long_prompts_use_the_published_tier() -> None:
    model = catalog_model("google", "gemini-2.5-pro")
    short = calculate_cost(model, Usage(input=200_000, output=1000))
    long = calculate_cost(model, Usage(input=200_001, output=1000))
    assert short.output == pytest.approx(0.01)
    assert long.output == pytest.approx(0.015)


# --------------------------------------------------------------------------- thinking


def test_a_model_without_reasoning_supports_only_off() -> None:
    model = make_model(reasoning=False, thinking_level_map={"xhigh": "xhigh"})
    assert get_supported_thinking_levels(model) == ["off"]
    assert clamp_thinking_level(model, "high") == "off"


def test_a_reasoning_model_without_map_supports_off_to_high() -> None:
    model = make_model()
    assert get_supported_thinking_levels(model) == ["off", "minimal", "low", "medium", "high"]


def test_xhigh_and_max_are_supported_only_when_mapped_to_a_string() -> None:
    assert get_supported_thinking_levels(make_model(thinking_level_map={"xhigh": "max"}))[-1] == (
        "xhigh"
    )
    both = make_model(thinking_level_map={"xhigh": "xhigh", "max": "max"})
    assert get_supported_thinking_levels(both)[-2:] == ["xhigh", "max"]
    nulled = make_model(thinking_level_map={"xhigh": None, "max": None})
    assert get_supported_thinking_levels(nulled)[-1] == "high"


def test_levels_mapped_to_none_are_unsupported() -> None:
    model = make_model(thinking_level_map={"off": None, "minimal": None})
    assert get_supported_thinking_levels(model) == ["low", "medium", "high"]


def test_catalog_thinking_levels_follow_the_upstream_maps() -> None:
    opus_46 = catalog_model("anthropic", "claude-opus-4-6")
    opus_47 = catalog_model("anthropic", "claude-opus-4-7")
    sonnet = catalog_model("anthropic", "claude-sonnet-4-5")
    gpt = catalog_model("openai", "gpt-5.4")
    assert get_supported_thinking_levels(opus_46)[-2:] == ["high", "max"]  # max, not xhigh
    assert get_supported_thinking_levels(opus_47)[-2:] == ["xhigh", "max"]
    assert get_supported_thinking_levels(sonnet)[-1] == "high"
    # gpt-5.4 maps off to "none", minimal and max to null
    assert get_supported_thinking_levels(gpt) == ["off", "low", "medium", "high", "xhigh"]
    assert clamp_thinking_level(opus_46, "xhigh") == "max"
    assert clamp_thinking_level(gpt, "max") == "xhigh"


def test_clamp_keeps_a_supported_level() -> None:
    assert clamp_thinking_level(make_model(), "medium") == "medium"


def test_clamp_searches_upward_first() -> None:
    always_thinks = make_model(thinking_level_map={"off": None})
    assert clamp_thinking_level(always_thinks, "off") == "minimal"
    gap = make_model(thinking_level_map={"low": None})
    assert clamp_thinking_level(gap, "low") == "medium"


def test_clamp_falls_back_downward_when_nothing_above_is_supported() -> None:
    assert clamp_thinking_level(make_model(), "max") == "high"
    assert clamp_thinking_level(make_model(), "xhigh") == "high"
    only_low = make_model(
        thinking_level_map={"off": None, "minimal": None, "medium": None, "high": None}
    )
    assert clamp_thinking_level(only_low, "high") == "low"


def test_clamp_with_every_level_unsupported_gives_off() -> None:
    levels = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
    model = make_model(thinking_level_map=dict.fromkeys(levels))
    assert get_supported_thinking_levels(model) == []
    assert clamp_thinking_level(model, "medium") == "off"


def test_clamp_rejects_an_unknown_level_naming_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown thinking level 'extreme'; expected one of off"):
        clamp_thinking_level(make_model(), "extreme")
