"""The openai-codex-responses provider: URL, the account id in the token, headers, body,
the reasoning mapping, the Codex dialect of the Responses stream, failed statuses and their
retries, bodies recorded from pi 1.6 replayed through httpx2, a loopback server end to end
and abort mid-stream. (What pi 1.6 itself sends and builds for the same bodies is compared
in test_pi16_fixtures.)"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.ai import (
    Context,
    Model,
    OutputFormat,
    ProviderError,
    StreamOptions,
    SystemMessage,
    TextContent,
    Tool,
    UserMessage,
    get_model,
)
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._codex_request import (
    CodexRequest,
    build_codex_body,
    codex_account_id,
    codex_error_text,
    codex_should_retry,
    codex_url,
)
from pi_trio.ai.providers._responses_events import (
    ResponsesEventMapper,
    resolve_codex_service_tier,
)
from pi_trio.ai.providers._sse import SSEParser
from pi_trio.ai.transcript import ToolRef, normalize_context
from pi_trio.testing import ReplayResponse, SSEReply, serve_sse, sse_body

from .helpers import applied
from .provider_support import (
    UNFINISHED_REPLAY_WARNINGS,
    abort_at_first_text_delta,
    at_url,
    complete_with_fresh_registry,
    replay_stream,
)

pytestmark = UNFINISHED_REPLAY_WARNINGS

PI16 = Path(__file__).parent / "fixtures" / "pi16"
SOL = get_model("openai-codex", "gpt-6.2-sol")  # takes the level mid-conversation
LUNA = get_model("openai-codex", "gpt-5.6-luna")
assert SOL is not None
assert LUNA is not None
ADD = Tool(
    name="add",
    description="Add two numbers",
    parameters={"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
)


def token(claims: dict[str, Any]) -> str:
    parts = [{"alg": "none"}, claims]
    encoded = [
        base64.urlsafe_b64encode(json.dumps(p).encode()).rstrip(b"=").decode() for p in parts
    ]
    return ".".join([*encoded, "sig"])


TOKEN = token({"https://api.openai.com/auth": {"chatgpt_account_id": "acct_42"}})


def recorded(name: str) -> bytes:
    return (PI16 / f"{name}.sse").read_bytes()


def ctx(*messages: Any, system: str | None = None, tools: list[Tool] | None = None) -> Context:
    return Context(messages=list(messages), system_prompt=system, tools=tools)


def body_of(model: Model, context: Context, request: CodexRequest | None = None, **options: Any):
    return build_codex_body(
        model, normalize_context(context), StreamOptions(**options), request or CodexRequest()
    )


async def replay(model: Model, context: Context, *replies: Any, **options: Any):
    return await replay_stream(model, context, *replies, key=TOKEN, **options)


# =========================================================================== request


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://chatgpt.com/backend-api", "https://chatgpt.com/backend-api/codex/responses"),
        ("https://proxy.test/codex/", "https://proxy.test/codex/responses"),
        ("https://proxy.test/codex/responses", "https://proxy.test/codex/responses"),
        ("  ", "https://chatgpt.com/backend-api/codex/responses"),
    ],
)
def test_the_url_under_any_base(base, url):
    assert codex_url(base) == url


def test_the_account_id_comes_from_the_tokens_claims():
    assert codex_account_id(TOKEN) == "acct_42"
    # base64url characters in the payload
    assert codex_account_id(token({"https://api.openai.com/auth": {"chatgpt_account_id": "a?>~"}}))
    for bad in (
        "sk-not-a-jwt",
        "a.b.c",
        token({"sub": "x"}),
        token({"https://api.openai.com/auth": {}}),
    ):
        with pytest.raises(ProviderError, match="Failed to extract accountId from token"):
            codex_account_id(bad)


def test_body_defaults():
    body = body_of(LUNA, ctx(UserMessage(content="hi")), max_tokens=8)
    assert body == {
        "model": "gpt-5.6-luna",
        "store": False,
        "stream": True,
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "max_output_tokens": 16,
        "reasoning": {"effort": "none"},
    }
    capped = msgspec.structs.replace(LUNA, compat={"supportsMaxOutputTokens": False})
    assert "max_output_tokens" not in body_of(capped, ctx(UserMessage(content="hi")), max_tokens=8)


@pytest.mark.parametrize(
    ("effort", "reasoning"),
    [
        ("high", {"effort": "high", "summary": "auto"}),
        ("minimal", {"effort": "low", "summary": "auto"}),  # through the level map
        ("none", {"effort": "none", "summary": "auto"}),  # the map has no "off" entry
    ],
)
def test_reasoning_efforts_of_a_model_without_mid_conversation_levels(effort, reasoning):
    body = body_of(LUNA, ctx(UserMessage(content="hi")), CodexRequest(reasoning_effort=effort))
    assert body["reasoning"] == reasoning
    assert all(item.get("type") != "configuration_update" for item in body["input"])


def test_off_is_no_reasoning_field_where_the_map_says_so():
    body = body_of(SOL, ctx(UserMessage(content="hi")), CodexRequest(reasoning_effort="none"))
    assert "reasoning" not in body
    assert "reasoning" not in body_of(SOL, ctx(UserMessage(content="hi")))


def test_tools_are_additional_tools_items_where_the_transcript_declares_them():
    mul = msgspec.structs.replace(ADD, name="mul")
    context = ctx(
        UserMessage(content="hi"),
        SystemMessage(content="", tools_removed=[ToolRef(name="add"), ToolRef(name="mul")]),
        SystemMessage(content="", tools_added=[ADD]),
        system="S",
        tools=[ADD, mul],
    )
    body = body_of(SOL, context)
    assert "tools" not in body
    kinds = [item.get("type") or item.get("role") for item in body["input"]]
    assert kinds == [
        "additional_tools",
        "developer",
        "user",
        "developer",  # the removal notice
        "developer",  # the incremental notice before the second declaration
        "additional_tools",
    ]
    assert body["input"][0]["tools"][0]["strict"] is None
    assert body["input"][3]["content"].startswith("The following tools are no longer available")
    assert body["input"][4]["content"].endswith("Still unavailable: mul.")


def test_session_is_the_cache_key_unless_retention_is_none_and_output_formats_go_in_text():
    output = OutputFormat(
        name="N", schema={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    body = body_of(LUNA, ctx(UserMessage(content="hi")), session_id="s" * 70)
    assert body["prompt_cache_key"] == "s" * 64
    none = body_of(LUNA, ctx(UserMessage(content="hi")), session_id="s", cache_retention="none")
    assert "prompt_cache_key" not in none
    request = CodexRequest(text_verbosity="high", tool_choice="required", service_tier="flex")
    body = build_codex_body(
        LUNA,
        normalize_context(ctx(UserMessage(content="hi"))),
        StreamOptions(),
        request,
        text_format={"type": "json_schema", "name": output.name, "schema": output.schema},
    )
    assert body["text"] == {
        "verbosity": "high",
        "format": {"type": "json_schema", "name": "N", "schema": output.schema},
    }
    assert (body["tool_choice"], body["service_tier"]) == ("required", "flex")


# =========================================================================== stream


def feed_all(body: bytes, model: Model = LUNA, tier: str | None = None) -> list[Any]:
    builder = MessageBuilder(model)
    mapper = ResponsesEventMapper(builder, model, service_tier=tier, codex=True)
    events: list[Any] = []
    parser = SSEParser()
    try:
        for sse in [*parser.feed(body), *parser.close()]:
            events.extend(mapper.feed_data(sse.data))
        events.append(mapper.finish())
    except ProviderError as exc:
        events.append(builder.error(str(exc)))
    return applied(builder, events)


def done(status: str | None = "completed", **response: Any) -> dict[str, Any]:
    return {
        "type": "response.done",
        "response": {
            "id": "r",
            "status": status,
            "usage": {"input_tokens": 100, "output_tokens": 10},
            **response,
        },
    }


def test_response_done_finishes_and_nothing_after_it_is_read():
    message = feed_all(recorded("codex_tools"), SOL)[-1].message
    assert message.stop_reason == "toolUse"
    assert message.end_turn is False
    assert [b.type for b in message.content] == ["thinking", "toolCall"]


def test_an_unknown_status_counts_as_none():
    message = feed_all(sse_body([done("weird")]))[-1].message
    assert (message.stop_reason, message.raw_stop_reason) == ("stop", None)


@pytest.mark.parametrize(
    ("event", "text"),
    [
        ({"type": "error", "message": "slow down", "code": "rate"}, "Codex error: slow down"),
        (
            {"type": "error", "error": {"code": "server_is_overloaded"}},
            "Codex error: server_is_overloaded",
        ),
        ({"type": "error"}, 'Codex error: {"type":"error"}'),
        ({"type": "response.failed", "response": {"error": {"message": "boom"}}}, "boom"),
        ({"type": "response.failed", "response": {}}, "Codex response failed"),
    ],
)
def test_failures_in_the_stream_read_as_the_codex_client_words_them(event, text):
    assert feed_all(sse_body([event]))[-1].error.error_message == text


@pytest.mark.parametrize(
    ("reported", "requested", "billed"),
    [
        ("default", "priority", "priority"),
        ("default", "flex", "flex"),
        ("default", None, "default"),
        ("flex", "priority", "flex"),
        (None, "priority", "priority"),
    ],
)
def test_the_tier_billed(reported, requested, billed):
    assert resolve_codex_service_tier(reported, requested) == billed


def test_priority_doubles_the_cost_and_fast_is_no_codex_tier():
    base = feed_all(sse_body([done()]))[-1].message.usage.cost.total
    priority = feed_all(sse_body([done(service_tier="default")]), tier="priority")
    assert priority[-1].message.usage.cost.total == pytest.approx(base * 2)
    fast = feed_all(sse_body([done(service_tier="fast")]))
    assert fast[-1].message.usage.cost.total == pytest.approx(base)


# =========================================================================== failed statuses


def test_usage_limits_read_as_a_usage_limit_with_the_plan_and_the_wait():
    body = json.dumps(
        {"error": {"type": "usage_limit_reached", "plan_type": "PLUS", "resets_at": 1000 + 600}}
    )
    assert codex_error_text(429, None, body, False, now=1000) == (
        "You have hit your ChatGPT usage limit (plus plan). Try again in ~10 min."
    )
    assert codex_error_text(429, None, '{"error": {"message": "x"}}', False) == (
        "You have hit your ChatGPT usage limit."
    )


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ('{"error": {"message": "Bad model", "code": "invalid"}}', "Bad model"),
        ('{"detail": "Unsupported parameter"}', '{"detail": "Unsupported parameter"}'),
        ("<html>oops</html>", "<html>oops</html>"),
        ("", "Bad Request"),
    ],
)
def test_other_failures_read_as_their_message_or_body(body, text):
    assert codex_error_text(400, None, body, False) == text


@pytest.mark.parametrize(
    ("status", "body", "retry"),
    [
        (429, "slow down", True),
        (429, '{"error": {"code": "insufficient_quota"}}', False),
        (503, "", True),
        (400, "upstream connect error", True),
        (400, "bad request", False),
        (408, "", False),
    ],
)
def test_which_statuses_are_retried(status, body, retry):
    assert codex_should_retry(status, body) is retry


# =========================================================================== over httpx2


async def test_the_request_carries_the_token_account_originator_and_session():
    events, transport = await replay(
        LUNA,
        ctx(UserMessage(content="hi")),
        ReplayResponse(recorded("codex_service_tier")),
        session_id="s-1",
        headers={"chatgpt-account-id": "forged", "X-Extra": "kept"},
    )
    request = transport.requests[0]
    assert request.url == "https://chatgpt.com/backend-api/codex/responses"
    headers = request.headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["chatgpt-account-id"] == "acct_42"  # the backend's headers win
    assert (headers["originator"], headers["openai-beta"]) == ("pi", "responses=experimental")
    assert (headers["session-id"], headers["x-client-request-id"]) == ("s-1", "s-1")
    assert headers["x-extra"] == "kept"
    assert events[-1].type == "done"


async def test_a_key_that_is_no_chatgpt_token_fails_before_any_request():
    events, transport = await replay_stream(LUNA, ctx(UserMessage(content="hi")), key="sk-proj-123")
    assert events[-1].error.error_message == "Failed to extract accountId from token"
    assert transport.requests == []


async def test_a_usage_limit_is_not_retried_and_a_503_is():
    limit = b'{"error": {"code": "usage_limit_reached", "message": "Monthly usage limit reached"}}'
    events, transport = await replay(
        LUNA, ctx(UserMessage(content="hi")), ReplayResponse(limit, status=429), max_retries=2
    )
    assert len(transport.requests) == 1
    assert events[-1].error.error_message == "You have hit your ChatGPT usage limit."
    events, transport = await replay(
        LUNA,
        ctx(UserMessage(content="hi")),
        ReplayResponse(b"", status=503, headers={"retry-after-ms": "1"}),
        ReplayResponse(recorded("codex_service_tier")),
        max_retries=1,
    )
    assert len(transport.requests) == 2
    assert events[-1].type == "done"


# =========================================================================== loopback


async def test_end_to_end_against_a_loopback_server():
    async with serve_sse([SSEReply(recorded("codex_tools"))]) as server:
        message = await complete_with_fresh_registry(
            at_url(SOL, f"{server.url}/backend-api"),
            ctx(UserMessage(content="2 + 3?"), tools=[ADD]),
            key=TOKEN,
        )
        assert server.requests[0].path == "/backend-api/codex/responses"
        assert server.requests[0].headers["chatgpt-account-id"] == "acct_42"
    assert message.stop_reason == "toolUse"
    assert message.content[1].arguments == {"a": 2, "b": 3}


async def test_a_backend_that_holds_the_stream_open_after_the_response_still_ends_it():
    """The Codex backend may keep the stream open once the response finished; the request
    ends at the terminal response event."""
    with anyio.fail_after(10):
        body = recorded("codex_tools")
        async with serve_sse([SSEReply(body, hold_open=True)]) as server:
            message = await complete_with_fresh_registry(
                at_url(SOL, f"{server.url}/backend-api"),
                ctx(UserMessage(content="2 + 3?"), tools=[ADD]),
                key=TOKEN,
            )
            await server.wait_until(lambda s: s.open_connections == 0)
    assert message.stop_reason == "toolUse"
    assert message.content[1].arguments == {"a": 2, "b": 3}


async def test_abort_mid_stream_closes_the_server_side_stream():
    body = recorded("codex_service_tier")
    head = body[: body.index(b'data: {"type":"response.output_item.done"')]
    seen, message = await abort_at_first_text_delta(
        LUNA, ctx(UserMessage(content="hi")), head, key=TOKEN
    )
    assert seen[-1] == "error"
    assert message.stop_reason == "aborted"
    assert message.content == [TextContent(text="Hi.")]
