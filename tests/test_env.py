"""API keys from environment variables: names, precedence, empty values, ambient markers."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pi_trio.ai import get_providers
from pi_trio.ai.providers import env_api_key_names, find_env_keys, get_env_api_key

_CREDENTIAL_VAR = re.compile(
    r"(_API_KEY|_TOKEN|_OAUTH_TOKEN)$|^(AWS_|GOOGLE_|GCLOUD_)|^HF_TOKEN$|^HOME$"
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No real credentials leak in, and HOME points at an empty directory."""
    for name in list(os.environ):
        if _CREDENTIAL_VAR.search(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("azure", "AZURE_OPENAI_API_KEY"),
        ("azure-openai-responses", "AZURE_OPENAI_API_KEY"),
        ("google", "GEMINI_API_KEY"),
        ("groq", "GROQ_API_KEY"),
        ("cerebras", "CEREBRAS_API_KEY"),
        ("xai", "XAI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
        ("zai", "ZAI_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
        ("minimax", "MINIMAX_API_KEY"),
        ("minimax-cn", "MINIMAX_CN_API_KEY"),
        ("huggingface", "HF_TOKEN"),
        ("opencode", "OPENCODE_API_KEY"),
        ("opencode-go", "OPENCODE_API_KEY"),
        ("kimi-coding", "KIMI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("nvidia", "NVIDIA_API_KEY"),
        ("fireworks", "FIREWORKS_API_KEY"),
        ("together", "TOGETHER_API_KEY"),
        ("baseten", "BASETEN_API_KEY"),
        ("moonshotai", "MOONSHOT_API_KEY"),
        ("moonshotai-cn", "MOONSHOT_API_KEY"),
        ("zai-coding-cn", "ZAI_CODING_CN_API_KEY"),
        ("cloudflare-workers-ai", "CLOUDFLARE_API_KEY"),
        ("cloudflare-ai-gateway", "CLOUDFLARE_API_KEY"),
        ("xiaomi", "XIAOMI_API_KEY"),
        ("xiaomi-token-plan-cn", "XIAOMI_TOKEN_PLAN_CN_API_KEY"),
        ("xiaomi-token-plan-ams", "XIAOMI_TOKEN_PLAN_AMS_API_KEY"),
        ("xiaomi-token-plan-sgp", "XIAOMI_TOKEN_PLAN_SGP_API_KEY"),
        ("ant-ling", "ANT_LING_API_KEY"),
        ("radius", "RADIUS_API_KEY"),
        ("typesafe", "TYPESAFE_API_KEY"),
        ("meta", "META_API_KEY"),
        ("coralbricks", "CORALBRICKS_API_KEY"),
        ("github-copilot", "COPILOT_GITHUB_TOKEN"),
        ("google-vertex", "GOOGLE_CLOUD_API_KEY"),
    ],
)
def test_each_provider_reads_its_variable(
    monkeypatch: pytest.MonkeyPatch, provider: str, variable: str
) -> None:
    assert get_env_api_key(provider) is None
    monkeypatch.setenv(variable, "from-process")
    assert get_env_api_key(provider) == "from-process"
    assert find_env_keys(provider) == [variable]
    assert env_api_key_names(provider) == [variable]


@pytest.mark.parametrize(
    ("provider", "own", "shared"),
    [
        ("qwen-token-plan", "QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
        ("qwen-token-plan-cn", "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
        (
            "qwen-token-plan-individual",
            "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
            "QWEN_TOKEN_PLAN_API_KEY",
        ),
        (
            "qwen-token-plan-individual-cn",
            "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
            "QWEN_TOKEN_PLAN_CN_API_KEY",
        ),
    ],
)
def test_qwen_token_plans_prefer_their_own_variable_over_the_shared_one(
    monkeypatch: pytest.MonkeyPatch, provider: str, own: str, shared: str
) -> None:
    assert env_api_key_names(provider) == [own, shared]
    monkeypatch.setenv(shared, "shared")
    assert get_env_api_key(provider) == "shared"
    monkeypatch.setenv(own, "own")
    assert get_env_api_key(provider) == "own"
    assert find_env_keys(provider) == [own, shared]


def test_every_catalog_provider_has_a_key_variable_unless_it_uses_ambient_or_oauth() -> None:
    without = [p for p in get_providers() if not env_api_key_names(p)]
    assert without == ["amazon-bedrock", "openai-codex"]


def test_unknown_provider_has_no_key_and_no_names() -> None:
    env = {"OPENAI_API_KEY": "k"}
    assert get_env_api_key("no-such-provider", env) is None
    assert find_env_keys("no-such-provider", env) == []
    assert env_api_key_names("no-such-provider") == []


def test_oauth_only_provider_has_no_env_key() -> None:
    assert get_env_api_key("openai-codex", {"OPENAI_API_KEY": "k"}) is None


def test_env_overrides_take_precedence_over_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-process")
    assert get_env_api_key("openai", {"OPENAI_API_KEY": "from-options"}) == "from-options"
    assert get_env_api_key("openai", {"UNRELATED": "x"}) == "from-process"
    assert get_env_api_key("openai", {}) == "from-process"


def test_empty_values_count_as_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "")
    assert get_env_api_key("groq") is None
    assert find_env_keys("groq") == []
    monkeypatch.setenv("GROQ_API_KEY", "from-process")
    assert get_env_api_key("groq", {"GROQ_API_KEY": ""}) == "from-process"
    assert get_env_api_key("groq", {"GROQ_API_KEY": "from-options"}) == "from-options"


def test_anthropic_prefers_the_oauth_token_over_the_api_key() -> None:
    both = {"ANTHROPIC_OAUTH_TOKEN": "oauth", "ANTHROPIC_API_KEY": "key"}
    assert get_env_api_key("anthropic", both) == "oauth"
    assert get_env_api_key("anthropic", {"ANTHROPIC_API_KEY": "key"}) == "key"


def test_anthropic_auth_token_is_discovered_but_never_returned_as_the_key() -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "bearer"}
    assert get_env_api_key("anthropic", env) is None
    assert find_env_keys("anthropic", env) == ["ANTHROPIC_AUTH_TOKEN"]
    every = {**env, "ANTHROPIC_OAUTH_TOKEN": "o", "ANTHROPIC_API_KEY": "k"}
    assert find_env_keys("anthropic", every) == [
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_OAUTH_TOKEN",
        "ANTHROPIC_API_KEY",
    ]


def test_anthropic_suggests_the_api_key_variable_first() -> None:
    assert env_api_key_names("anthropic") == ["ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN"]


def test_copilot_no_longer_reads_generic_github_tokens() -> None:
    assert get_env_api_key("github-copilot", {"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}) is None


def test_find_env_keys_returns_names_never_values() -> None:
    found = find_env_keys("openai", {"OPENAI_API_KEY": "sk-secret"})
    assert found == ["OPENAI_API_KEY"]
    assert "sk-secret" not in repr(found)


@pytest.mark.parametrize(
    "credentials",
    [
        {"AWS_PROFILE": "default"},
        {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"},
        {"AWS_BEARER_TOKEN_BEDROCK": "token"},
        {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials"},
        {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.2/creds"},
        {"AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token"},
    ],
)
def test_bedrock_reports_ambient_aws_credentials_as_authenticated(
    credentials: dict[str, str],
) -> None:
    assert get_env_api_key("amazon-bedrock", credentials) == "<authenticated>"
    assert find_env_keys("amazon-bedrock", credentials) == []


def test_bedrock_needs_both_halves_of_an_access_key() -> None:
    assert get_env_api_key("amazon-bedrock", {"AWS_ACCESS_KEY_ID": "id"}) is None
    assert get_env_api_key("amazon-bedrock", {"AWS_SECRET_ACCESS_KEY": "s"}) is None
    assert get_env_api_key("amazon-bedrock", {"AWS_PROFILE": ""}) is None
    assert env_api_key_names("amazon-bedrock") == []


def _vertex_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    adc = tmp_path / "adc.json"
    adc.write_text("{}")
    return {
        "GOOGLE_APPLICATION_CREDENTIALS": str(adc),
        "GOOGLE_CLOUD_PROJECT": "proj",
        "GOOGLE_CLOUD_LOCATION": "us-central1",
        **extra,
    }


def test_vertex_with_adc_file_project_and_location_is_authenticated(tmp_path: Path) -> None:
    env = _vertex_env(tmp_path)
    assert get_env_api_key("google-vertex", env) == "<authenticated>"
    assert find_env_keys("google-vertex", env) == []


def test_vertex_accepts_gcloud_project_instead_of_google_cloud_project(tmp_path: Path) -> None:
    env = _vertex_env(tmp_path, GOOGLE_CLOUD_PROJECT="", GCLOUD_PROJECT="proj")
    assert get_env_api_key("google-vertex", env) == "<authenticated>"


@pytest.mark.parametrize("missing", ["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"])
def test_vertex_without_project_or_location_is_not_configured(tmp_path: Path, missing: str) -> None:
    env = _vertex_env(tmp_path, **{missing: ""})
    assert get_env_api_key("google-vertex", env) is None


def test_vertex_with_missing_credentials_file_is_not_configured(tmp_path: Path) -> None:
    env = _vertex_env(tmp_path, GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "absent.json"))
    assert get_env_api_key("google-vertex", env) is None


def test_vertex_falls_back_to_the_default_adc_path_under_home(tmp_path: Path) -> None:
    home = tmp_path / "user"
    env = {
        "HOME": str(home),
        "GOOGLE_CLOUD_PROJECT": "proj",
        "GOOGLE_CLOUD_LOCATION": "europe-west4",
    }
    assert get_env_api_key("google-vertex", env) is None
    adc = home / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text("{}")
    assert get_env_api_key("google-vertex", env) == "<authenticated>"


def test_vertex_api_key_wins_over_ambient_credentials(tmp_path: Path) -> None:
    env = _vertex_env(tmp_path, GOOGLE_CLOUD_API_KEY="vertex-key")
    assert get_env_api_key("google-vertex", env) == "vertex-key"
    assert find_env_keys("google-vertex", env) == ["GOOGLE_CLOUD_API_KEY"]


async def test_a_missing_key_error_names_the_variable_to_set_as_the_cli_does() -> None:
    # the original's words first, then what the CLI's one line says: the variable to set
    from pi_trio.agent import Agent
    from pi_trio.ai import Context, UserMessage, complete, get_model

    agent = Agent(model="anthropic/claude-haiku-4-5")
    result = await agent.prompt("hi")
    assert result.error_message == (
        "No API key for provider: anthropic; set ANTHROPIC_API_KEY (or ANTHROPIC_OAUTH_TOKEN), "
        "or pass api_key / get_api_key"
    )
    model = get_model("groq", "openai/gpt-oss-20b")
    assert model is not None
    message = await complete(model, Context(messages=[UserMessage(content="hi", timestamp=0)]))
    assert message.error_message == (
        "No API key for provider: groq; set GROQ_API_KEY, or pass api_key / get_api_key"
    )
