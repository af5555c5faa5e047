"""The fault suite, odd data on the wire and secrets in reprs: a lone surrogate escape in
a streamed text delta (every HTTP provider), credentials in ``repr(Model)``, a model id
that would change the path of Gemini's and Vertex's URLs, and a failing tool's exception
text on an OpenTelemetry span with content capture off."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgspec
import pytest

from pi_trio.ai import StreamOptions, TextContent, get_model

from . import eventstream_support as es
from .fault_providers_support import PROVIDERS, Provider
from .fault_server import head, serve_faults
from .test_fault_providers import stream

LONE = b"\\ud83d"


def _with_lone_surrogate(provider: Provider, text: str) -> tuple[bytes, ...]:
    """The recorded answer with ``\\ud83d`` after the first character of its text."""
    events = list(provider.events)
    if not provider.sse:  # Bedrock: the event-stream frame is made anew, checksums and all
        events[provider.first_text] = es.text_delta(0, text[0] + "\ud83d" + text[1:])
        return tuple(events)
    event = events[provider.first_text]
    marker = b'"' + text[:2].encode()
    assert event.count(marker) == 1, event
    cut = event.index(marker) + 1 + len(text[0].encode())
    events[provider.first_text] = event[:cut] + LONE + event[cut:]
    return tuple(events)


def _reply(body: bytes, content_type: str) -> Any:
    async def script(conn: Any) -> None:
        headers = {"content-type": content_type, "content-length": str(len(body))}
        await conn.send(head(200, headers) + body)

    return script


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_lone_surrogate_escape_in_a_text_delta_reads_as_a_replacement_character(
    provider: Provider,
) -> None:
    async with serve_faults(_reply(provider.body, provider.content_type)) as server:
        clean = await stream(provider, server.url)
    assert clean.message.stop_reason == "stop", clean.text
    first = _first_delta(clean.events)
    body = b"".join(_with_lone_surrogate(provider, first))
    async with serve_faults(_reply(body, provider.content_type)) as server:
        outcome = await stream(provider, server.url)
    assert outcome.message.stop_reason == "stop", outcome.text
    assert _first_delta(outcome.events) == first[0] + "\ufffd" + first[1:]
    assert any(isinstance(b, TextContent) and b.text for b in outcome.message.content)


def _first_delta(events: list[Any]) -> str:
    delta: str = next(e.delta for e in events if e.type == "text_delta")
    return delta


# --------------------------------------------------------------------------- model ids in URLs

_GOOGLE_APIS = [
    p for p in PROVIDERS if p.values[0].api in ("google-generative-ai", "google-vertex")
]


@pytest.mark.parametrize("provider", _GOOGLE_APIS)
@pytest.mark.parametrize("model_id", ["../../evil?x=1#", "gemini/./x", "gemini//x", "%2e%2e/evil"])
async def test_a_model_id_that_would_leave_the_models_path_is_refused_unsent(
    provider: Provider, model_id: str
) -> None:
    model = msgspec.structs.replace(provider.model, id=model_id)
    async with serve_faults(_reply(provider.body, provider.content_type)) as server:
        outcome = await stream(replace(provider, model=model), server.url)
    assert outcome.message.stop_reason == "error"
    assert f"The model id {model_id!r} cannot be sent to the " in outcome.text
    assert server.requests == []


@pytest.mark.parametrize("provider", _GOOGLE_APIS)
async def test_query_and_fragment_characters_of_a_model_id_stay_in_its_path_segment(
    provider: Provider,
) -> None:
    model = msgspec.structs.replace(provider.model, id="gem ini?x=1&y#frag%")
    async with serve_faults(_reply(provider.body, provider.content_type)) as server:
        outcome = await stream(replace(provider, model=model), server.url)
    assert outcome.message.stop_reason == "stop", outcome.text
    path = server.requests[0].path
    assert path.endswith("/models/gem%20ini%3Fx%3D1%26y%23frag%25:streamGenerateContent?alt=sse")


# --------------------------------------------------------------------------- reprs


def test_repr_hides_credential_headers_of_a_model_and_credentials_in_extra() -> None:
    model = msgspec.structs.replace(
        get_model("openai", "gpt-4o-mini"),
        headers={"Authorization": "Bearer sk-model-secret", "X-Api-Key": "k-1", "x-title": "t"},
    )
    shown = repr(model)
    assert "sk-model-secret" not in shown
    assert "k-1" not in shown
    assert "'Authorization': '<hidden>'" in shown
    assert "'x-title': 't'" in shown
    assert model.headers == {
        "Authorization": "Bearer sk-model-secret",
        "X-Api-Key": "k-1",
        "x-title": "t",
    }
    options = StreamOptions(
        extra={"bearer_token": "ABSK-token", "aws_secret_access_key": "wJalr", "region": "eu"}
    )
    shown = repr(options)
    assert "ABSK-token" not in shown
    assert "wJalr" not in shown
    assert "'region': 'eu'" in shown


# --------------------------------------------------------------------------- OpenTelemetry


@pytest.mark.parametrize("capture", [False, True])
async def test_a_failing_tools_text_reaches_its_span_only_with_content_capture(
    otel: Any, capture: bool
) -> None:
    from pi_trio.agent import Agent
    from pi_trio.otel import instrument
    from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

    from .otel_support import text_tool

    def raises(value: str) -> str:
        raise ValueError(f"cannot open {value}")

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_tool_call("raises", {"value": "/secret/plan.txt"}, id="r1"),
                    faux_tool_call("raises", {"value": ["x"]}, id="r2"),  # fails validation
                ],
                stop_reason="toolUse",
            ),
            faux_assistant_message("noted"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[text_tool("raises", raises)], stream_fn=faux)
    instrument(agent, capture_content=capture, **otel.providers)
    await agent.prompt("try")

    raised, invalid = sorted(otel.named("execute_tool raises"), key=lambda s: s.start_time)
    shown = repr([(s.status.description, s.attributes, s.events) for s in (raised, invalid)])
    assert ("/secret/plan.txt" in shown) is capture, shown
    assert ("Received arguments" in shown) is capture, shown
    event = raised.events[0]
    assert event.name == "exception"
    assert event.attributes["exception.type"] == "ValueError"
    assert ("exception.message" in event.attributes) is capture
