"""The generated model catalog: its size, the shipped data file and its generator, lazy
loading, and look-ups by name (``resolve_model``, ``Agent(model="provider/id")``).

The generator tests need the npm package ``@earendil-works/pi-ai`` (``make catalog``
installs it into ``.cache/pi-ai``; ``PI_AI_DIR`` points at another copy) and are skipped
without it."""

from __future__ import annotations

import importlib.resources
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from pi_trio.agent import Agent
from pi_trio.ai import (
    Model,
    UnknownModelError,
    from_json,
    get_model,
    get_models,
    get_providers,
    resolve_model,
    to_json,
)
from pi_trio.ai._catalog import _data
from pi_trio.ai.json import extra_fields

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "scripts" / "generate_catalog.py"
SHIPPED = importlib.resources.files("pi_trio.ai._catalog").joinpath(_data.CATALOG_FILE).read_bytes()
# Fields of Radius entries that the original's Model type does not declare either.
RADIUS_EXTRAS = {"lab", "enabled", "providers", "free"}


def _package_dir() -> Path | None:
    candidates = [os.environ.get("PI_AI_DIR"), ".cache/pi-ai/node_modules/@earendil-works/pi-ai"]
    for candidate in filter(None, candidates):
        path = REPO / candidate
        if (path / "package.json").is_file() and (path / "dist/providers/data").is_dir():
            return path
    return None


PACKAGE = _package_dir()
needs_package = pytest.mark.skipif(
    PACKAGE is None, reason="@earendil-works/pi-ai is not installed (make catalog, or PI_AI_DIR)"
)


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_catalog", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- size and data


def test_catalog_has_at_least_1500_chat_models_across_35_providers() -> None:
    providers = get_providers()
    counts = {p: len(get_models(p)) for p in providers}
    assert sum(counts.values()) >= 1500
    assert sum(1 for n in counts.values() if n) >= 35
    assert providers == sorted(providers)
    for expected in ("amazon-bedrock", "google-vertex", "mistral", "openai-codex", "azure"):
        assert counts[expected] > 0, expected  # listed although pi_trio cannot call them yet


def test_the_data_file_keeps_every_entry_of_every_kind() -> None:
    header, blocks = _data.unpack(SHIPPED)
    assert header.source == "@earendil-works/pi-ai@1.6.0"
    kinds = {k: sum(len(b.get(k, {})) for b in blocks.values()) for k in _data.KINDS}
    assert kinds["chat"] == sum(len(get_models(p)) for p in get_providers())
    assert kinds["image"] > 0
    assert kinds["classifier"] > 0
    assert sum(kinds.values()) >= 1800
    assert list(blocks) == get_providers()
    image = msgspec.json.decode(blocks["openrouter"]["image"]["black-forest-labs/flux-3-image"])
    assert image["type"] == "image"
    assert "image" in image["output"]


def test_every_chat_entry_decodes_to_a_model_with_all_its_fields() -> None:
    _, blocks = _data.unpack(SHIPPED)
    for provider, block in blocks.items():
        for model_id, raw in block.get("chat", {}).items():
            entry = msgspec.json.decode(raw)
            model = get_model(provider, model_id)
            assert model is not None
            wire = msgspec.json.decode(to_json(model))
            dropped = set(entry) - set(wire)
            assert dropped <= (RADIUS_EXTRAS if provider == "radius" else set()), model_id
            assert {k: entry[k] for k in wire} == wire, model_id


def test_every_chat_model_round_trips_and_has_sane_limits() -> None:
    for provider in get_providers():
        for model in get_models(provider):
            assert from_json(to_json(model), Model) == model
            assert get_model(provider, model.id) == model
            assert model.type == "chat"
            assert 0 < model.max_tokens <= model.context_window, model.id
            assert "text" in model.input
            assert model.cost.input >= 0
            assert model.cost.output >= 0


def test_spot_check_a_model_with_every_kind_of_field() -> None:
    model = get_model("anthropic", "claude-fable-5")
    assert model is not None
    fallback_cost = {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25}
    assert msgspec.json.decode(to_json(model)) == {
        "id": "claude-fable-5",
        "name": "Claude Fable 5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "baseUrl": "https://api.anthropic.com",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 10, "output": 50, "cacheRead": 1, "cacheWrite": 12.5},
        "contextWindow": 1_000_000,
        "maxTokens": 128_000,
        "thinkingLevelMap": {"off": None, "xhigh": "xhigh", "max": "max"},
        "compat": {
            "forceAdaptiveThinking": True,
            "supportsMidConvoSystemMessages": True,
            "supportsMidConvoToolChanges": True,
            "supportsStrictTools": True,
            "allowedFallbackModels": [
                {"provider": "anthropic", "model": "claude-opus-4-8", "cost": fallback_cost},
                {"provider": "anthropic", "model": "claude-opus-5", "cost": fallback_cost},
            ],
        },
        "promptCache": {"short": 300, "long": 3600},
        "inputLimits": {
            "maxRequestBytes": 33_554_432,
            "images": {
                "maxPerRequest": 600,
                "resize": {
                    "maxWidth": 2000,
                    "maxHeight": 2000,
                    "maxBytes": 4_718_592,
                    "jpegQuality": 80,
                },
            },
        },
        "type": "chat",
    }
    assert model.prompt_cache is not None
    assert model.prompt_cache.long == 3600
    assert model.input_limits is not None
    assert model.input_limits.images is not None
    assert model.input_limits.images.max_per_request == 600
    assert model.input_limits.images.resize is not None
    assert model.input_limits.images.resize.jpeg_quality == 80


def test_spot_check_explicit_null_levels_tiers_and_headers() -> None:
    gpt = get_model("openai", "gpt-5.1")
    gemini = get_model("google", "gemini-3.1-pro-preview")
    nvidia = get_model("nvidia", "google/gemma-3-12b-it")
    assert gpt is not None
    assert gemini is not None
    assert nvidia is not None
    assert gpt.thinking_level_map == {
        "off": "none",
        "minimal": None,
        "low": "low",
        "medium": "medium",
        "high": "high",
        "xhigh": None,
        "max": None,
    }
    assert b'"xhigh":null,"max":null' in to_json(gpt)  # nulls are data, not omitted
    assert gemini.cost.tiers is not None
    assert [(t.input_tokens_above, t.input, t.output) for t in gemini.cost.tiers] == [
        (200_000, 4, 18)
    ]
    assert nvidia.headers == {"NVCF-POLL-SECONDS": "3600"}


def test_gateway_fields_the_model_type_lacks_are_kept_through_the_model() -> None:
    _, blocks = _data.unpack(SHIPPED)
    entry = msgspec.json.decode(blocks["radius"]["chat"]["balanced"])
    assert entry["lab"] == "Moonshot AI"
    model = get_model("radius", "balanced")
    assert model is not None
    assert model.thinking_level_map is not None
    assert model.thinking_level_map["max"] == "max"
    assert msgspec.json.decode(to_json(model))["lab"] == "Moonshot AI"
    assert extra_fields(model)["lab"] == "Moonshot AI"


def test_a_damaged_data_file_is_refused_with_a_reason() -> None:
    with pytest.raises(_data.CatalogFormatError, match=r"^not a pi-trio catalog"):
        _data.unpack(b"PK\x03\x04" + SHIPPED)
    header, _ = _data.unpack(SHIPPED)
    name, start, _ = header.providers[2]
    body_start = len(SHIPPED) - header.providers[-1][2]  # the blocks end the file
    damaged = bytearray(SHIPPED)
    damaged[body_start + start + 5] ^= 0xFF
    with pytest.raises(_data.CatalogFormatError, match=f"block of {name!r} is damaged"):
        _data.unpack(bytes(damaged))


def test_pack_and_unpack_round_trip_in_provider_order() -> None:
    providers = {
        "zeta": {"chat": {"a": {"id": "a"}}},
        "alpha": {"image": {"b": {"id": "b", "type": "image"}}, "chat": {}},
    }
    header, blocks = _data.unpack(_data.pack("src@1", "2026-01-01", providers))
    assert (header.source, header.generated_at) == ("src@1", "2026-01-01")
    assert list(blocks) == ["zeta", "alpha"]
    assert {k: {i: bytes(r) for i, r in v.items()} for k, v in blocks["alpha"].items()} == {
        "image": {"b": b'{"id":"b","type":"image"}'}
    }
    with pytest.raises(_data.CatalogFormatError, match="kind \\['video'\\]"):
        _data.pack("s", "t", {"p": {"video": {}}})


# --------------------------------------------------------------------------- generator


@needs_package
def test_the_generator_reproduces_the_committed_file(generator: ModuleType) -> None:
    assert PACKAGE is not None
    built = generator.build(PACKAGE)
    assert generator.same_contents(built, SHIPPED)
    version = json.loads((PACKAGE / "package.json").read_text())["version"]
    assert _data.unpack(built)[0].source == f"@earendil-works/pi-ai@{version}"


@needs_package
def test_generator_check_mode_reports_a_stale_file(
    generator: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert PACKAGE is not None
    current = tmp_path / "current.bin"
    current.write_bytes(SHIPPED)
    assert generator.main([str(PACKAGE), "--output", str(current), "--check"]) == 0
    header, blocks = _data.unpack(SHIPPED)
    stale = {p: {k: dict(v) for k, v in b.items()} for p, b in blocks.items()}
    del stale["anthropic"]["chat"]["claude-haiku-4-5"]
    current.write_bytes(_data.pack(header.source, header.generated_at, stale))
    assert generator.main([str(PACKAGE), "--output", str(current), "--check"]) == 1
    assert "differs from @earendil-works/pi-ai@" in capsys.readouterr().err
    assert generator.main([str(PACKAGE), "--output", str(current)]) == 0
    assert generator.same_contents(current.read_bytes(), SHIPPED)


def test_generator_refuses_a_directory_that_is_not_the_package(
    generator: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generator.main([str(tmp_path)]) == 2
    assert "has no package.json" in capsys.readouterr().err
    (tmp_path / "package.json").write_text('{"name": "left-pad", "version": "1.0.0"}')
    assert generator.main([str(tmp_path)]) == 2
    assert "holds 'left-pad', not @earendil-works/pi-ai" in capsys.readouterr().err


def test_generator_stops_on_a_field_the_model_type_lacks(
    generator: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "dist" / "providers" / "data"
    data.mkdir(parents=True)
    (tmp_path / "package.json").write_text('{"name": "@earendil-works/pi-ai", "version": "9.9.9"}')
    entry = json.loads(to_json(resolve_model("groq/openai/gpt-oss-20b")))
    entry["futureField"] = {"x": 1}
    group = {"openai-completions": {f"chat:{entry['id']}": entry}}
    (data / "groq.json").write_text(json.dumps(group))
    assert generator.main([str(tmp_path), "--output", str(tmp_path / "out.bin")]) == 2
    err = capsys.readouterr().err
    assert "pi_trio.ai.Model has no field for futureField" in err
    assert not (tmp_path / "out.bin").exists()
    del entry["futureField"]
    (data / "groq.json").write_text(json.dumps(group))
    assert generator.main([str(tmp_path), "--output", str(tmp_path / "out.bin")]) == 0
    _, blocks = _data.unpack((tmp_path / "out.bin").read_bytes())
    assert msgspec.json.decode(blocks["groq"]["chat"]["openai/gpt-oss-20b"]) == entry


@needs_package
@pytest.mark.node
def test_providers_and_model_order_match_the_original(tmp_path: Path) -> None:
    """The original's own ``getProviders`` / ``getModels``, run under node."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    assert PACKAGE is not None
    script = tmp_path / "list.mjs"
    compat = (PACKAGE / "dist" / "compat.js").as_uri()
    script.write_text(
        f'import {{ getProviders, getModels }} from "{compat}";\n'
        "const out = {};\n"
        "for (const p of getProviders()) out[p] = getModels(p).map((m) => m.id);\n"
        "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    upstream = json.loads(done.stdout)
    ours = {p: [m.id for m in get_models(p)] for p in get_providers()}
    assert list(ours) == list(upstream)
    assert ours == upstream


# --------------------------------------------------------------------------- lazy loading

_LAZY_PROBE = """
import sys
opened = []
sys.addaudithook(lambda event, args: event == "open" and opened.append(str(args[0])))
import pi_trio.ai as ai
from pi_trio.ai._catalog import _data
at_import = [p for p in opened if p.endswith(_data.CATALOG_FILE)]
modules = set(sys.modules)
model = ai.get_model("anthropic", "claude-haiku-4-5")
ai.get_model("anthropic", "claude-opus-4-7")
after = [p for p in opened if p.endswith(_data.CATALOG_FILE)]
print(len(at_import), len(after), sorted(_data._shipped._blocks), model.id)
print(sorted(set(sys.modules) - modules))
"""


def test_importing_pi_trio_ai_does_not_read_the_catalog() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LAZY_PROBE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # not read at import; read once on first use; only the asked provider inflated
    first, imported = done.stdout.splitlines()
    assert first.split() == ["0", "1", "['anthropic']", "claude-haiku-4-5"]
    # and first use imports nothing (importlib.resources' readers alone cost ~3 ms)
    assert imported == "[]"


def test_the_data_file_is_small() -> None:
    _, blocks = _data.unpack(SHIPPED)
    inflated = sum(len(msgspec.json.encode(block)) for block in blocks.values())
    assert len(SHIPPED) < 150_000
    assert inflated > 10 * len(SHIPPED)


# --------------------------------------------------------------------------- look-ups by name


def test_resolve_model_takes_provider_slash_id_or_two_strings() -> None:
    haiku = get_model("anthropic", "claude-haiku-4-5")
    assert resolve_model("anthropic/claude-haiku-4-5") == haiku
    assert resolve_model("anthropic", "claude-haiku-4-5") == haiku
    # the id keeps its own slashes
    assert resolve_model("openrouter/openai/gpt-5").id == "openai/gpt-5"
    assert resolve_model("openrouter/openai/gpt-5") is not resolve_model("openrouter/openai/gpt-5")


def test_get_model_keeps_none_for_an_unknown_id_and_resolve_model_names_the_closest() -> None:
    assert get_model("anthropic", "claude-hiku-4-5") is None
    with pytest.raises(UnknownModelError) as caught:
        resolve_model("anthropic/claude-hiku-4-5")
    assert str(caught.value) == (
        "unknown model 'claude-hiku-4-5' for provider 'anthropic'; "
        "did you mean 'claude-haiku-4-5', 'claude-haiku-5-5' or 'claude-opus-4-5'?"
    )
    assert isinstance(caught.value, LookupError)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("antropic/claude-haiku-4-5", "^unknown provider 'antropic' in .*; did you mean 'anthropic'\\?$"),
        ("nobody/x", "^unknown provider 'nobody' in 'nobody/x'; get_providers\\(\\) lists"),
        ("claude-haiku-4-5", "^'claude-haiku-4-5' names no provider: .* e.g. 'anthropic/claude-haiku-4-5'"),
        ("anthropic/gpt-5", "^unknown model 'gpt-5' for provider 'anthropic'; other providers have it: 'azure/gpt-5'"),
        ("openrouter/black-forest-labs/flux-3-image", "it is a image model, and pi_trio runs chat models only$"),
        ("anthropic/", "^'anthropic/' names no model: write 'provider/model-id'"),
        ("/claude-haiku-4-5", "^'/claude-haiku-4-5' names no provider"),
        ("ANTHROPIC/claude-haiku-4-5", "did you mean 'anthropic'\\?$"),
        ("anthropic/xyzzy-qqq", "^unknown model 'xyzzy-qqq' for provider 'anthropic'; get_models\\('anthropic'\\) lists its 18 models$"),
    ],
)  # fmt: skip
def test_resolve_model_errors_teach(spec: str, message: str) -> None:
    with pytest.raises(UnknownModelError, match=message):
        resolve_model(spec)


def test_resolve_model_rejects_what_is_not_a_string() -> None:
    with pytest.raises(TypeError, match=r"^resolve_model takes 'provider/model-id'"):
        resolve_model(get_model("anthropic", "claude-haiku-4-5"))  # type: ignore[arg-type]


def test_agent_accepts_a_provider_slash_id_string() -> None:
    agent = Agent(model="anthropic/claude-haiku-4-5")
    assert agent.state.model == get_model("anthropic", "claude-haiku-4-5")


def test_agent_rejects_an_unresolvable_model_naming_the_argument() -> None:
    with pytest.raises(UnknownModelError) as caught:
        Agent(model="anthropic/claude-hiku-4-5")
    text = str(caught.value)
    assert text.startswith("Agent(model='anthropic/claude-hiku-4-5'): unknown model")
    assert "did you mean 'claude-haiku-4-5'" in text
    assert "\n" not in text
    expected = "Agent(model=...) takes a Model or 'provider/model-id', got 42"
    with pytest.raises(TypeError, match=f"^{re.escape(expected)}$"):
        Agent(model=42)  # type: ignore[arg-type]


def test_a_catalog_model_with_fields_pi_trio_does_not_type_loads_and_keeps_them() -> None:
    # Radius entries carry `lab`, `enabled`, `providers`, `free`: the catalog hands the
    # decoder a msgspec.Raw, which the unknown-field path must read as bytes.
    model = get_model("radius", "balanced")
    assert model is not None
    assert b'"lab":' in to_json(model)
