"""The google-vertex provider: its addresses, API keys and placeholders, Application
Default Credentials from a real google-auth service-account key (an RSA key made here)
whose token endpoint is a loopback server, Gemini's body and chunk mapping on Vertex,
HTTP errors, retries, abort, and catalog models through the registry."""

from __future__ import annotations

import json
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pi_trio.ai import (
    Context,
    Model,
    ProviderError,
    StreamOptions,
    TextContent,
    UserMessage,
    complete,
    complete_simple,
    get_model,
    get_models,
)
from pi_trio.ai.providers import ProviderRegistry, default_registry
from pi_trio.ai.providers._google_request import build_google_body
from pi_trio.ai.providers.vertex import MISSING_EXTRA_TEXT, vertex_url
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing._replay import ReplayResponse, ReplayTransport, registry_with_transport
from pi_trio.testing._sse_server import ServedRequest, SSEReply, serve_sse

from .provider_support import UNFINISHED_BODY_WARNINGS, abort_at_first_text_delta, replay_stream

pytestmark = UNFINISHED_BODY_WARNINGS

FIXTURES = Path(__file__).parent / "fixtures" / "google"
FLASH = get_model("google-vertex", "gemini-2.5-flash")
assert FLASH is not None
KEY = "AQ.vertex-express-key-0123"
ADC_ENV = {"GOOGLE_CLOUD_PROJECT": "my-proj", "GOOGLE_CLOUD_LOCATION": "us-central1"}
PROJECT_URL = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/"
    "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
)


@pytest.fixture(autouse=True)
def _no_ambient_google(monkeypatch):
    for name in (
        "GOOGLE_CLOUD_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ):
        monkeypatch.delenv(name, raising=False)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def ctx(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(content=text)])


def at(base_url: str, model: Model = FLASH, **changes: Any) -> Model:
    return msgspec.structs.replace(model, base_url=base_url, **changes)


# =========================================================================== addresses


def test_addresses_per_mode_and_location():
    assert vertex_url(FLASH) == (
        "https://aiplatform.googleapis.com/v1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert vertex_url(FLASH, project="my-proj", location="us-central1") == PROJECT_URL
    assert vertex_url(FLASH, project="p", location="global").startswith(
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/"
    )
    assert vertex_url(FLASH, project="p", location="eu").startswith(
        "https://aiplatform.eu.rep.googleapis.com/v1/projects/p/locations/eu/publishers/"
    )


def test_custom_base_urls_and_model_paths():
    assert vertex_url(at("https://proxy.example/vertex/"), project="p", location="l") == (
        "https://proxy.example/vertex/v1/publishers/google/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert vertex_url(at("https://proxy.example/v1beta1")).startswith(
        "https://proxy.example/v1beta1/publishers/google/models/"
    )
    claude = at(FLASH.base_url, id="anthropic/claude-x")
    assert "/publishers/anthropic/models/claude-x:" in vertex_url(claude)
    tuned = at(FLASH.base_url, id="projects/p/locations/l/endpoints/9")
    assert vertex_url(tuned).endswith(
        "/v1/projects/p/locations/l/endpoints/9:streamGenerateContent?alt=sse"
    )
    with pytest.raises(ProviderError, match=r"'\.\./x' cannot be sent .* '\.\.' path segment"):
        vertex_url(at(FLASH.base_url, id="../x"))


# =========================================================================== API key


async def replay(*replies: Any, model: Model = FLASH, **options: Any):
    options.setdefault("api_key", KEY)
    return await replay_stream(model, ctx(), *replies, key=options.pop("api_key"), **options)


async def test_an_api_key_uses_the_express_endpoint_and_gemini_wire_format():
    events, transport = await replay(ReplayResponse(fixture("thinking_tools.sse")))
    request = transport.requests[0]
    assert request.url == vertex_url(FLASH)
    assert request.headers["x-goog-api-key"] == KEY
    assert "authorization" not in request.headers
    assert request.json() == build_google_body(FLASH, normalize_context(ctx()), StreamOptions())
    message = events[-1].message
    assert message.api == "google-vertex"
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]
    assert message.stop_reason == "toolUse"
    assert message.usage.cost.total > 0


async def test_the_api_key_is_cleaned_before_it_is_sent():
    events, transport = await replay(ReplayResponse(fixture("text.sse")), api_key=f"  {KEY}\n")
    assert events[-1].type == "done"
    assert transport.requests[0].headers["x-goog-api-key"] == KEY
    events, transport = await replay(ReplayResponse(fixture("text.sse")), api_key="AQ.vertex key")
    assert not transport.requests
    text = events[-1].error.error_message
    assert text.startswith(
        "The API key for provider 'google-vertex' contains a space at position 9"
    )
    assert "AQ.vertex key" not in text


async def test_simple_options_map_thinking_as_for_gemini():
    transport = ReplayTransport(ReplayResponse(fixture("text.sse")))
    registry = registry_with_transport(transport)
    try:
        await complete_simple(FLASH, ctx(), registry=registry, api_key=KEY, reasoning="medium")
    finally:
        await registry.aclose()
    config = transport.requests[0].json()["generationConfig"]
    assert config["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 8192}


async def test_http_errors_retries_and_secrets():
    error = b'{"error":{"code":429,"message":"Quota exceeded for key AQ.vertex-express-key-0123"}}'
    events, transport = await replay(
        ReplayResponse(error, status=429, headers={"retry-after": "0"}),
        ReplayResponse(fixture("text.sse")),
        max_retries=1,
    )
    assert events[-1].type == "done"
    assert len(transport.requests) == 2
    events, _ = await replay(ReplayResponse(error, status=429))
    assert events[-1].error.error_message == "429 Quota exceeded for key [redacted]"


async def test_placeholders_mean_adc_and_adc_needs_project_and_location():
    for placeholder in ("<authenticated>", "gcp-vertex-credentials"):
        events, transport = await replay(api_key=placeholder)
        assert events[-1].error.error_message.startswith("Vertex AI requires a project ID.")
        assert transport.requests == []
    events, _ = await replay(api_key=None, env={"GCLOUD_PROJECT": "p"})
    assert events[-1].error.error_message.startswith("Vertex AI requires a location.")


# =========================================================================== ADC


@pytest.fixture(scope="module")
def private_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def key_file(tmp_path: Path, pem: str, token_uri: str) -> Path:
    path = tmp_path / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "my-proj",
                "private_key_id": "key-1",
                "private_key": pem,
                "client_email": "runner@my-proj.iam.gserviceaccount.com",
                "client_id": "1234",
                "token_uri": token_uri,
            }
        )
    )
    return path


def token_reply(expires_in: int, token: str = "ya29.test-token") -> SSEReply:
    body = json.dumps({"access_token": token, "expires_in": expires_in, "token_type": "Bearer"})
    return SSEReply(body.encode(), headers={"content-type": "application/json"})


def assertion_of(request: ServedRequest) -> dict[str, Any]:
    form = urllib.parse.parse_qs(request.content.decode())
    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    return form


async def test_adc_from_a_service_account_key_with_a_cached_token(tmp_path, private_key_pem):
    async with serve_sse([token_reply(3600)]) as tokens:
        path = key_file(tmp_path, private_key_pem, f"{tokens.url}/token")
        env = {**ADC_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(path)}
        transport = ReplayTransport(
            ReplayResponse(fixture("text.sse")), ReplayResponse(fixture("text.sse"))
        )
        registry = registry_with_transport(transport)
        try:
            for _ in range(2):
                message = await complete(FLASH, ctx(), registry=registry, env=env)
                assert message.stop_reason == "stop"
        finally:
            await registry.aclose()
        assert len(tokens.requests) == 1  # the token is reused until it expires
        assertion_of(tokens.requests[0])
    request = transport.requests[0]
    assert request.url == PROJECT_URL
    assert request.headers["authorization"] == "Bearer ya29.test-token"
    assert "x-goog-api-key" not in request.headers


async def test_a_token_near_its_expiry_is_refreshed(tmp_path, private_key_pem):
    async with serve_sse([token_reply(60, "ya29.one"), token_reply(60, "ya29.two")]) as tokens:
        path = key_file(tmp_path, private_key_pem, f"{tokens.url}/token")
        env = {**ADC_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(path)}
        transport = ReplayTransport(
            ReplayResponse(fixture("text.sse")), ReplayResponse(fixture("text.sse"))
        )
        registry = registry_with_transport(transport)
        try:
            for _ in range(2):
                await complete(FLASH, ctx(), registry=registry, env=env)
        finally:
            await registry.aclose()
        assert len(tokens.requests) == 2
    assert [r.headers["authorization"] for r in transport.requests] == [
        "Bearer ya29.one",
        "Bearer ya29.two",
    ]


async def test_a_refused_token_request_is_one_error(tmp_path, private_key_pem):
    refusal = SSEReply(
        b'{"error":"invalid_grant","error_description":"Invalid JWT"}',
        status=400,
        headers={"content-type": "application/json"},
    )
    async with serve_sse([refusal]) as tokens:
        path = key_file(tmp_path, private_key_pem, f"{tokens.url}/token")
        events, transport = await replay_stream(
            FLASH,
            ctx(),
            key="",
            api_key=None,
            env={**ADC_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(path)},
        )
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message.startswith("Vertex AI could not get an access token: ")
    assert "invalid_grant" in events[0].error.error_message
    assert transport.requests == []


async def test_a_missing_key_file_names_the_ways_to_authenticate(tmp_path):
    env = {**ADC_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "absent.json")}
    events, _ = await replay_stream(FLASH, ctx(), key="", api_key=None, env=env)
    assert "gcloud auth application-default login" in events[-1].error.error_message


async def test_without_the_extra_adc_names_it_and_api_keys_still_work(monkeypatch):
    for name in (
        "google.auth",
        "google.auth.transport.requests",
        "pi_trio.ai.providers._vertex_auth",
    ):
        monkeypatch.setitem(sys.modules, name, None)
    events, _ = await replay_stream(FLASH, ctx(), key="", api_key=None, env=ADC_ENV)
    assert [e.type for e in events] == ["error"]
    assert events[0].error.error_message == MISSING_EXTRA_TEXT
    assert "pip install 'pi-trio[vertex]'" in MISSING_EXTRA_TEXT
    events, _ = await replay(ReplayResponse(fixture("text.sse")))
    assert events[-1].type == "done"


# =========================================================================== loopback server


async def test_end_to_end_adc_against_loopback_servers(tmp_path, private_key_pem):
    for model in get_models("google-vertex"):
        assert default_registry.get(model.api) is not None
    async with (
        serve_sse([token_reply(3600, "ya29.e2e")]) as tokens,
        serve_sse([SSEReply(fixture("thinking_tools.sse"))]) as server,
    ):
        path = key_file(tmp_path, private_key_pem, f"{tokens.url}/token")
        registry = ProviderRegistry()
        try:
            message = await complete(
                at(server.url),
                ctx(),
                registry=registry,
                env={**ADC_ENV, "GOOGLE_APPLICATION_CREDENTIALS": str(path)},
            )
        finally:
            await registry.aclose()
        served = server.requests[0]
    assert (
        served.path == "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert served.headers["authorization"] == "Bearer ya29.e2e"
    assert message.stop_reason == "toolUse"


async def test_end_to_end_abort_closes_the_server_side_stream():
    first = fixture("text.sse").split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    seen, final = await abort_at_first_text_delta(FLASH, ctx(), first, key=KEY)
    assert seen[-1] == "error"
    assert final.stop_reason == "aborted"
    assert final.content == [TextContent(text="Héllo")]
