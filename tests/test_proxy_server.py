"""The proxy server end to end over loopback: the pi_trio client (and raw HTTP, and the
original TypeScript client when node is available) against ``pi_trio.proxy.serve`` with a
faux provider behind it. Each server runs in the test's nursery on a free port."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import msgspec
import pytest
import trio

from pi_trio.agent import stream_proxy
from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    Context,
    Model,
    PiError,
    StreamOptions,
    UserMessage,
    complete,
    get_model,
    get_models,
    get_providers,
    open_stream,
)
from pi_trio.ai.providers import ApiProvider, MessageBuilder, ProviderRegistry
from pi_trio.proxy import (
    DEFAULT_SAMPLING_PARAMS,
    TOKENS_ENV,
    ProxyApp,
    catalog_models_only,
    create_app,
    load_tokens,
    serve,
)
from pi_trio.testing import (
    FauxProvider,
    SSEReply,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
    serve_sse,
)

TOKEN = "s3cret-token"
NODE_PACKAGE = "@mariozechner/pi-agent-core@0.73.1"
PI16_PACKAGES = ("@earendil-works/pi-agent-core@1.6.0", "@earendil-works/pi-ai@1.6.0")
HELD_APART = 0.001  # tokens per second: after its first event a paced faux stream waits


def serve_any(model: Model) -> Model:
    return model


class Upstream:
    """Providers behind the proxy, in a registry of their own: a faux provider whose
    streams record the options they got and whether they were cancelled, and a scripted
    stream function for exact event shapes."""

    def __init__(self, **faux: Any) -> None:
        self.faux = FauxProvider(**faux)
        self.model = self.faux.get_model()
        assert self.model is not None
        self.options: list[StreamOptions] = []
        self.cancelled = trio.Event()
        self.registry = ProviderRegistry(builtins=False)
        self.registry.register(
            ApiProvider(api=self.faux.api, stream=self._stream, stream_simple=self._stream)
        )

    async def _stream(
        self, model: Model, context: Context, options: StreamOptions, send: Any
    ) -> None:
        self.options.append(options)
        try:
            await self.faux.stream(model, context, options, send)
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise


async def start(nursery: trio.Nursery, upstream: Upstream, **options: Any) -> tuple[str, ProxyApp]:
    options.setdefault("model_policy", serve_any)
    app = create_app(tokens=[TOKEN], registry=upstream.registry, **options)
    url = await nursery.start(partial(serve, "127.0.0.1", 0, app=app))
    return url, app


def hello() -> Context:
    return Context(messages=[UserMessage(content="hello", timestamp=1)])


async def ask(
    url: str, model: Model, context: Context | None = None, token: str = TOKEN, **options: Any
) -> AssistantMessage:
    async with httpx2.AsyncClient() as http:
        fn = stream_proxy(proxy_url=url, auth_token=token, http_client=http)
        return await complete(model, context or hello(), stream_fn=fn, **options)


async def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> httpx2.Response:
    headers = {"Authorization": f"Bearer {TOKEN}", **(headers or {})}
    async with httpx2.AsyncClient() as http:
        return await http.post(f"{url}/api/stream", content=body, headers=headers)


def request_body(model: Model, context: Context | None = None, **options: Any) -> bytes:
    messages = (context or hello()).messages
    return msgspec.json.encode(
        {"model": model, "context": {"messages": messages}, "options": options}
    )


def frames(body: bytes) -> list[dict[str, Any]]:
    """The SSE frames of a response, checked to be exactly ``data: <json>\\n\\n``."""
    assert body.endswith(b"\n\n")
    events = []
    for frame in body[:-2].split(b"\n\n"):
        assert frame.startswith(b"data: ")
        assert b"\n" not in frame
        events.append(json.loads(frame[6:]))
    return events


async def until(condition: Any) -> None:
    with trio.fail_after(10):
        while not condition():
            await trio.lowlevel.checkpoint()


@pytest.fixture
def upstream() -> Upstream:
    return Upstream()


# --------------------------------------------------------------------------- streaming


async def test_a_text_reply_streams_through_the_proxy(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.faux.set_responses([faux_assistant_message("Hello from behind the proxy")])
    url, _ = await start(nursery, upstream)
    result = await ask(url, upstream.model)
    assert result.stop_reason == "stop"
    assert msgspec.to_builtins(result.content) == [
        {"type": "text", "text": "Hello from behind the proxy"}
    ]
    assert result.usage.output > 0
    assert (result.api, result.provider, result.model) == (upstream.faux.api, "faux", "faux-1")


async def test_thinking_text_and_tool_calls_arrive_as_the_provider_sent_them(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    content = [
        faux_thinking("Which city? " * 20),
        faux_text("Let me look that up."),
        faux_tool_call("weather", {"city": "Paris", "days": [1, 2, 3]}, id="call_1"),
        faux_tool_call("clock", {"tz": "Europe/Paris"}, id="call_2"),
    ]
    upstream.faux.set_responses([faux_assistant_message(content, stop_reason="toolUse")])
    url, _ = await start(nursery, upstream)
    events: list[Any] = []
    async with httpx2.AsyncClient() as http:
        fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
        async with open_stream(upstream.model, hello(), stream_fn=fn) as stream:
            async for event in stream:
                events.append(event.type)
    result = stream.result()
    assert result.stop_reason == "toolUse"
    assert result.content == content
    assert events[0] == "start"
    assert events[-1] == "done"
    assert events.count("toolcall_end") == 2
    assert events.count("thinking_delta") > 1


async def test_an_upstream_error_reaches_the_client_with_its_content(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.faux.set_responses(
        [faux_assistant_message("half an ans", stop_reason="error", error_message="overloaded")]
    )
    url, _ = await start(nursery, upstream)
    result = await ask(url, upstream.model)
    assert result.stop_reason == "error"
    assert result.error_message == "overloaded"
    assert msgspec.to_builtins(result.content) == [{"type": "text", "text": "half an ans"}]


async def test_an_upstream_failure_before_any_content_is_an_error_outcome(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream)  # no faux responses queued
    result = await ask(url, upstream.model)
    assert result.stop_reason == "error"
    assert result.error_message == "No more faux responses queued"


async def test_options_reach_the_provider_but_api_keys_never_come_from_the_request(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.faux.set_responses([faux_assistant_message("ok")])
    url, _ = await start(nursery, upstream)
    body = request_body(
        upstream.model,
        temperature=0.25,
        maxTokens=99,
        reasoning="low",
        sessionId="sess",
        maxRetryDelayMs=5,
        apiKey="sk-from-the-client",
        env={"OPENAI_API_KEY": "sk-from-the-client"},
        requestIdentity={"sessionId": "sess", "turnId": "t"},
        topP=0.5,
        transport="websocket",  # the original's clients send it; pi_trio has no such option
    )
    response = await post(url, body)
    assert response.status_code == 200
    (options,) = upstream.options
    assert "transport" not in StreamOptions.__struct_fields__
    assert (options.temperature, options.max_tokens, options.reasoning) == (0.25, 99, "low")
    assert (options.session_id, options.max_retry_delay_ms) == ("sess", 5)
    assert options.api_key is None
    assert options.env is None


# Each option a client may set, a value the policy allows, and what the provider gets.
ALLOWED_OPTIONS: dict[str, tuple[Any, Any]] = {
    "temperature": (0.25, lambda o: o.temperature == 0.25),
    "maxTokens": (16_384, lambda o: o.max_tokens == 16_384),  # the faux model's maxTokens
    "reasoning": ("high", lambda o: o.reasoning == "high"),
    "thinkingBudgets": ({"low": 0, "high": 16_384}, lambda o: o.thinking_budgets.high == 16_384),
    "cacheRetention": ("long", lambda o: o.cache_retention == "long"),
    "sessionId": ("sess-1", lambda o: o.session_id == "sess-1"),
    "maxRetryDelayMs": (0, lambda o: o.max_retry_delay_ms == 0),
    "headers": ({"X-Title": "app", "X-Other": "no"}, lambda o: o.headers == {"X-Title": "app"}),
    "metadata": ({"user_id": "u-1"}, lambda o: o.metadata == {"user_id": "u-1"}),
    "samplingParams": (
        dict.fromkeys(DEFAULT_SAMPLING_PARAMS, 1),
        lambda o: o.sampling_params == dict.fromkeys(DEFAULT_SAMPLING_PARAMS, 1),
    ),
}


@pytest.mark.parametrize("name", list(ALLOWED_OPTIONS))
async def test_an_option_the_policy_allows_reaches_the_provider(
    nursery: trio.Nursery, upstream: Upstream, name: str
) -> None:
    value, reached = ALLOWED_OPTIONS[name]
    upstream.faux.set_responses([faux_assistant_message("ok")])
    url, _ = await start(nursery, upstream)
    response = await post(url, request_body(upstream.model, **{name: value}))
    assert response.status_code == 200, response.text
    (options,) = upstream.options
    assert reached(options), options


# Values the policy refuses, and the start of the 400's text.
REFUSED_OPTIONS: list[tuple[str, Any, str]] = [
    ("maxTokens", 0, "options.maxTokens 0 must be 1 to 16384 (faux/faux-1's maxTokens)"),
    ("maxTokens", 16_385, "options.maxTokens 16385 must be 1 to 16384"),
    ("thinkingBudgets", {"low": -1}, "options.thinkingBudgets.low -1 must be 0 to 16384"),
    ("thinkingBudgets", {"high": 16_385}, "options.thinkingBudgets.high 16385 must be 0 to"),
    ("maxRetryDelayMs", -1, "options.maxRetryDelayMs -1 must be 0 or more"),
    ("metadata", {"user_id": 7}, "options.metadata.user_id must be a string, got 7"),
    ("metadata", {"tenant": "t"}, "options.metadata 'tenant' not allowed by this proxy; it takes user_id"),
    ("samplingParams", {"top_p": True}, "options.samplingParams.top_p must be a number, got True"),
    ("samplingParams", {"top_p": "0.5"}, "options.samplingParams.top_p must be a number, got '0.5'"),
    ("samplingParams", {"stop": 1, "model": "x"}, "options.samplingParams 'model', 'stop' not allowed by this proxy; it takes frequency_penalty, min_p, presence_penalty, repetition_penalty, seed, top_k, top_p"),
    ("reasoning", "extreme", "Invalid request body: Invalid enum value 'extreme' - at `$.options.reasoning`"),
    ("cacheRetention", "forever", "Invalid request body: Invalid enum value 'forever' - at `$.options.cacheRetention`"),
    ("temperature", "hot", "Invalid request body: Expected `float | null`, got `str`"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "value", "error"), REFUSED_OPTIONS)
async def test_an_option_value_the_policy_refuses_is_a_400_naming_the_rule(
    nursery: trio.Nursery, upstream: Upstream, name: str, value: Any, error: str
) -> None:
    url, _ = await start(nursery, upstream)
    response = await post(url, request_body(upstream.model, **{name: value}))
    assert response.status_code == 400
    assert response.json()["error"].startswith(error)
    assert upstream.faux.call_count == 0


async def test_the_sampling_parameters_a_client_may_set_are_the_servers_choice(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.faux.set_responses([faux_assistant_message("ok")])
    url, _ = await start(nursery, upstream, sampling_params={"mirostat_tau"})
    refused = await post(url, request_body(upstream.model, samplingParams={"top_p": 0.5}))
    assert refused.json() == {
        "error": "options.samplingParams 'top_p' not allowed by this proxy; it takes mirostat_tau"
    }
    allowed = await post(url, request_body(upstream.model, samplingParams={"mirostat_tau": 5}))
    assert allowed.status_code == 200
    assert upstream.options[0].sampling_params == {"mirostat_tau": 5}
    with pytest.raises(TypeError, match=r"sampling_params must be a collection of names"):
        create_app(tokens=[TOKEN], sampling_params="top_p")


async def test_a_lone_surrogate_in_the_context_survives_the_trip(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    seen: list[Any] = []

    def reply(context: Context, *args: Any) -> AssistantMessage:
        seen.append(context.messages[-1].content)
        return faux_assistant_message("ok")

    upstream.faux.set_responses([reply])
    url, _ = await start(nursery, upstream)
    result = await ask(url, upstream.model, Context(messages=[UserMessage(content="a\ud800b")]))
    assert result.stop_reason == "stop"
    assert seen == ["a\ud800b"]


# --------------------------------------------------------------------------- abort


async def test_abort_mid_stream_cancels_the_upstream_stream(nursery: trio.Nursery) -> None:
    upstream = Upstream(tokens_per_second=HELD_APART)
    upstream.faux.set_responses([faux_assistant_message("a long answer " * 50)])
    url, app = await start(nursery, upstream)
    controller = AbortController()
    seen = []
    async with httpx2.AsyncClient() as http:
        fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
        async with open_stream(
            upstream.model, hello(), stream_fn=fn, signal=controller.signal
        ) as stream:
            async for event in stream:
                seen.append(event.type)
                if event.type == "text_start":
                    controller.abort()
    assert seen == ["start", "text_start", "error"]
    assert stream.result().stop_reason == "aborted"
    with trio.fail_after(10):
        await upstream.cancelled.wait()
    await until(lambda: app.active_streams == 0)


async def test_a_client_that_disconnects_cancels_the_upstream_stream(
    nursery: trio.Nursery,
) -> None:
    upstream = Upstream(tokens_per_second=HELD_APART)
    upstream.faux.set_responses([faux_assistant_message("never finished " * 50)])
    url, app = await start(nursery, upstream)
    async with httpx2.AsyncClient() as http:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        body = request_body(upstream.model)
        async with http.stream("POST", f"{url}/api/stream", content=body, headers=headers) as r:
            with trio.CancelScope() as leave:
                async for chunk in r.aiter_raw():
                    assert chunk.startswith(b'data: {"type":"start"}')
                    leave.cancel()
    with trio.fail_after(10):
        await upstream.cancelled.wait()
    await until(lambda: app.active_streams == 0)


# --------------------------------------------------------------------------- refusals


async def test_a_wrong_token_is_refused_without_detail(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream)
    result = await ask(url, upstream.model, token="wrong")
    assert result.stop_reason == "error"
    assert result.error_message == "Proxy error: Unauthorized"
    for headers in ({"Authorization": "Basic czNjcmV0"}, {"Authorization": "Bearer"}):
        response = await post(url, request_body(upstream.model), headers)
        assert response.status_code == 401
        assert response.json() == {"error": "Unauthorized"}
        assert response.headers["www-authenticate"] == "Bearer"
    refused = [
        [],  # no credentials
        [("authorization", f"Token {TOKEN}")],  # another scheme
        [("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer wrong")],  # two
    ]
    async with httpx2.AsyncClient() as http:
        for given in refused:
            response = await http.post(
                f"{url}/api/stream", content=request_body(upstream.model), headers=given
            )
            assert response.status_code == 401, given
    assert upstream.faux.call_count == 0


async def test_an_oversized_body_is_refused_with_413(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream, max_body_bytes=4096)
    big = Context(messages=[UserMessage(content="x" * 10_000)])
    result = await ask(url, upstream.model, big)
    assert result.error_message == "Proxy error: Request body too large: the limit is 4096 bytes"
    response = await post(url, b"x" * 4097)
    assert response.status_code == 413
    at_the_limit = await post(url, b"x" * 4096)  # read whole: refused for its JSON
    assert at_the_limit.status_code == 400
    assert upstream.faux.call_count == 0


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"not json", "Invalid request body: JSON is malformed: invalid character (byte 4)"),
        (b'{"context": {"messages": []}}', "Invalid request body: Object missing required field `model`"),
        (b"[]", "Invalid request body: Expected `object`, got `array`"),
    ],
)  # fmt: skip
async def test_a_malformed_body_is_refused_with_a_clear_400(
    nursery: trio.Nursery, upstream: Upstream, body: bytes, error: str
) -> None:
    url, _ = await start(nursery, upstream)
    response = await post(url, body)
    assert response.status_code == 400
    assert response.json() == {"error": error}


async def test_a_body_with_a_wrong_field_names_its_path(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream)
    good = json.loads(request_body(upstream.model))
    cases = [
        ({**good, "model": {**good["model"], "contextWindow": "big"}}, "$.model.contextWindow"),
        ({**good, "context": {"messages": [{"role": "robot"}]}}, "$.context.messages[0].role"),
        ({**good, "options": {"maxTokens": "many"}}, "$.options.maxTokens"),
    ]
    for body, path in cases:
        response = await post(url, json.dumps(body).encode())
        assert response.status_code == 400
        assert response.json()["error"].startswith("Invalid request body: ")
        assert f"at `{path}`" in response.json()["error"]
    assert upstream.faux.call_count == 0


async def test_an_unknown_api_is_refused_with_400(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream)
    model = msgspec.structs.replace(upstream.model, api="nope")
    result = await ask(url, model)
    assert result.error_message == "Proxy error: No API provider registered for api: nope"


async def test_streams_beyond_the_cap_are_refused_with_429(nursery: trio.Nursery) -> None:
    upstream = Upstream(tokens_per_second=HELD_APART)
    upstream.faux.set_responses([faux_assistant_message("slow " * 50)])
    url, app = await start(nursery, upstream, max_streams=1)
    holding = trio.Event()

    async def hold(task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        with trio.CancelScope() as scope:
            task_status.started(scope)
            async with httpx2.AsyncClient() as http:
                fn = stream_proxy(proxy_url=url, auth_token=TOKEN, http_client=http)
                async with open_stream(upstream.model, hello(), stream_fn=fn) as stream:
                    async for event in stream:
                        if event.type == "text_start":
                            holding.set()

    held = await nursery.start(hold)
    await holding.wait()
    result = await ask(url, upstream.model)
    assert result.error_message == "Proxy error: Too many concurrent streams (limit 1)"
    held.cancel()
    await until(lambda: app.active_streams == 0)
    upstream.faux.tokens_per_second = None
    upstream.faux.set_responses([faux_assistant_message("your turn")])
    assert (await ask(url, upstream.model)).stop_reason == "stop"


async def test_the_default_policy_serves_only_catalog_models_at_their_base_url(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream, model_policy=catalog_models_only)
    result = await ask(url, upstream.model)
    assert result.error_message == (
        "Proxy error: Model faux/faux-1 is not in this proxy's catalog; "
        "only catalog models are served"
    )
    provider = get_providers()[0]
    model = get_models(provider)[0]
    assert catalog_models_only(model) == model  # the catalog's own entry
    moved = msgspec.structs.replace(model, base_url="https://attacker.example")
    refusal = catalog_models_only(moved)
    assert refusal is not None
    assert "'https://attacker.example'" in refusal
    assert get_model(provider, model.id) == model


async def test_other_paths_and_methods_are_refused(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    url, _ = await start(nursery, upstream)
    async with httpx2.AsyncClient() as http:
        missing = await http.post(f"{url}/api/other")
        wrong = await http.get(f"{url}/api/stream")
    assert missing.status_code == 404
    assert wrong.status_code == 405
    assert wrong.headers["allow"] == "POST"


def test_tokens_come_from_the_environment_and_a_file(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team tokens\nalpha\n\n  beta  \n")
    env = {TOKENS_ENV: "one, two,,"}
    assert load_tokens(env=env) == {"one", "two"}
    assert load_tokens(tokens_file=path, env=env) == {"one", "two", "alpha", "beta"}
    with pytest.raises(PiError, match=rf"no tokens to accept: set {TOKENS_ENV}"):
        create_app(tokens=[])
    limits = ({"max_streams": 0}, {"max_body_bytes": 0}, {"body_timeout": 0})
    for limit in (*limits, {"max_bytes_in_flight": 0}):
        with pytest.raises(ValueError, match=r"must be positive"):
            create_app(tokens=["t"], **limit)


def test_the_limits_default_to_what_the_readme_says() -> None:
    app = create_app(tokens=["t"])
    assert app.max_body_bytes == 32 * 1024 * 1024
    assert app.max_bytes_in_flight == 512 * 1024 * 1024
    assert (app.body_timeout, app.max_streams) == (30.0, 64)
    assert app.sampling_params == {
        "top_p", "top_k", "min_p", "frequency_penalty", "presence_penalty",
        "repetition_penalty", "seed",
    }  # fmt: skip
    assert app.forward_headers == {
        "anthropic-beta", "openai-beta", "x-session-affinity", "x-session-id", "session_id",
        "x-client-request-id", "http-referer", "x-title",
    }  # fmt: skip


def test_an_empty_tokens_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKENS_ENV, raising=False)
    path = tmp_path / "tokens"
    path.write_text("# no token yet\n\n")
    with pytest.raises(PiError, match=rf"the tokens file '{re.escape(str(path))}' holds no token"):
        create_app(tokens_file=path)
    monkeypatch.setenv(TOKENS_ENV, "env-token")
    create_app(tokens_file=path)  # the variable's token is enough


# --------------------------------------------------------------------------- conformance


SIGNED_CALL = {
    "type": "toolCall",
    "id": "call_9|fc_9",
    "name": "lookup",
    "arguments": {"q": "pi"},
    "thoughtSignature": "gem-sig",
    "namespace": "dynamic_tools",
}


async def scripted(model: Model, context: Context, options: StreamOptions, send: Any) -> None:
    """Every kind of block, with the metadata the protocol carries."""
    builder = MessageBuilder(model)
    await send.send(builder.start())
    await send.send(builder.thinking_start())
    await send.send(builder.thinking_delta(0, "hmm"))
    await send.send(builder.thinking_end(0, thinking_signature="th-sig"))
    await send.send(builder.text_start())
    await send.send(builder.text_delta(1, "Looking"))
    await send.send(builder.text_end(1, text_signature="tx-sig"))
    await send.send(builder.toolcall_start("call_9|fc_9", "lookup", thought_signature="gem-sig"))
    await send.send(builder.toolcall_delta(2, '{"q": "pi"}'))
    builder.tool_call(2).namespace = "dynamic_tools"
    await send.send(builder.toolcall_end(2))
    # Anthropic's encrypted reasoning, which must go back to Anthropic redacted
    await send.send(builder.thinking_start(thinking_signature="encrypted", redacted=True))
    await send.send(builder.thinking_delta(3, "[Reasoning redacted]"))
    await send.send(builder.thinking_end(3))
    builder.message.usage.input = 3
    builder.message.provider_thinking_level = "low"
    await send.send(builder.done("toolUse"))


SHAPES = {
    "start": {"type"},
    "text_start": {"type", "contentIndex"},
    "text_delta": {"type", "contentIndex", "delta"},
    "text_end": {"type", "contentIndex", "contentSignature"},
    "thinking_start": {"type", "contentIndex"},
    "thinking_delta": {"type", "contentIndex", "delta"},
    "thinking_end": {"type", "contentIndex", "contentSignature"},
    "toolcall_start": {"type", "contentIndex", "id", "toolName"},
    "toolcall_delta": {"type", "contentIndex", "delta"},
    "toolcall_end": {"type", "contentIndex", "toolCall"},
    "done": {"type", "reason", "usage", "providerThinkingLevel"},
    "error": {"type", "reason", "errorMessage", "usage"},
}


async def test_events_go_out_in_the_original_proxy_shapes_without_partial(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.registry.register(ApiProvider(api="scripted", stream=scripted, stream_simple=scripted))
    url, _ = await start(nursery, upstream)
    model = msgspec.structs.replace(upstream.model, api="scripted")
    response = await post(url, request_body(model))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    events = frames(response.content)
    assert [e["type"] for e in events] == [
        "start", "thinking_start", "thinking_delta", "thinking_end", "text_start",
        "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_end",
        "thinking_start", "thinking_delta", "thinking_end", "done",
    ]  # fmt: skip
    for event in events[:-4]:
        assert set(event) == SHAPES[event["type"]], event
    # pi_trio's one additive field, which the original's client ignores
    assert events[12] == {
        "type": "thinking_end", "contentIndex": 3, "contentSignature": "encrypted", "redacted": True
    }  # fmt: skip
    assert events[3]["contentSignature"] == "th-sig"
    assert events[6] == {"type": "text_end", "contentIndex": 1, "contentSignature": "tx-sig"}
    assert events[7] == {
        "type": "toolcall_start", "contentIndex": 2, "id": "call_9|fc_9", "toolName": "lookup"
    }  # fmt: skip
    assert events[9]["toolCall"] == SIGNED_CALL
    assert events[13]["reason"] == "toolUse"
    assert events[13]["providerThinkingLevel"] == "low"
    assert set(events[13]["usage"]) == {
        "input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"
    }  # fmt: skip


async def test_an_error_goes_out_in_the_original_shape(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.faux.set_responses(
        [faux_assistant_message("", stop_reason="error", error_message="boom")]
    )
    url, _ = await start(nursery, upstream)
    events = frames((await post(url, request_body(upstream.model))).content)
    error = events[-1]
    assert set(error) == SHAPES["error"]
    assert (error["reason"], error["errorMessage"]) == ("error", "boom")


async def test_the_client_rebuilds_exactly_what_the_provider_built(
    nursery: trio.Nursery, upstream: Upstream
) -> None:
    upstream.registry.register(ApiProvider(api="scripted", stream=scripted, stream_simple=scripted))
    url, _ = await start(nursery, upstream)
    model = msgspec.structs.replace(upstream.model, api="scripted")
    direct = await complete(model, hello(), stream_fn=scripted)
    proxied = await ask(url, model)
    direct.timestamp = proxied.timestamp
    direct.duration_ms = proxied.duration_ms  # each side timed its own stream
    assert msgspec.to_builtins(proxied) == msgspec.to_builtins(direct)
    assert msgspec.to_builtins(proxied.content[2]) == SIGNED_CALL


# --------------------------------------------------------------------------- TypeScript client

NODE_CLIENT = """
import { streamProxy } from "@mariozechner/pi-agent-core";
const [url, token, model] = [process.argv[2], process.argv[3], JSON.parse(process.argv[4])];
const context = { messages: [{ role: "user", content: "hello", timestamp: 1 }] };
const stream = streamProxy(model, context, { proxyUrl: url, authToken: token });
const types = [];
for await (const event of stream) types.push(event.type);
const result = await stream.result();
console.log(JSON.stringify({ types, result }));
"""


def npm_installed(folder: str, *packages: str) -> Path:
    """A folder under benchmarks/.cache with ``packages`` installed by npm (once; later
    runs reuse it); the test is skipped when node, npm or the install is unavailable."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run the original TypeScript client")
    root = Path(__file__).resolve().parent.parent / "benchmarks" / ".cache" / folder
    done = root / ".installed"
    if not done.exists():
        root.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(root), *packages],
                check=True, capture_output=True, timeout=600,
            )  # fmt: skip
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"could not install {' '.join(packages)}: {exc}")
        done.write_text(" ".join(packages))
    return root


@pytest.fixture(scope="session")
def node_client() -> Path:
    """The original ``@mariozechner/pi-agent-core`` client script (the package cached
    under benchmarks/.cache)."""
    script = npm_installed("pi-agent-core", NODE_PACKAGE) / "client.mjs"
    script.write_text(NODE_CLIENT)
    return script


@pytest.mark.node
async def test_the_original_typescript_client_talks_to_the_server(
    nursery: trio.Nursery, upstream: Upstream, node_client: Path
) -> None:
    content = [
        faux_thinking("think"),
        faux_text("Hi from pi_trio"),
        faux_tool_call("f", {"a": 1}, id="c1"),
    ]
    upstream.faux.set_responses([faux_assistant_message(content, stop_reason="toolUse")])
    url, _ = await start(nursery, upstream)
    model = msgspec.json.encode(upstream.model).decode()
    with trio.fail_after(60):
        done = await trio.run_process(
            ["node", str(node_client), url, TOKEN, model],
            capture_stdout=True, capture_stderr=True, check=False, env={**os.environ},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    output = json.loads(done.stdout)
    assert output["types"][0] == "start"
    assert output["types"][-1] == "done"
    result = output["result"]
    assert result["stopReason"] == "toolUse"
    assert result["content"] == msgspec.to_builtins(content)
    assert result["usage"]["output"] > 0


NODE_CLIENT_16 = """
import { pathToFileURL } from "node:url";
const [core, url, token, model] = [process.argv[2], process.argv[3], process.argv[4], JSON.parse(process.argv[5])];
const { streamProxy } = await import(pathToFileURL(core).href);
const context = { messages: [{ role: "user", content: "hello", timestamp: 1 }] };
const stream = streamProxy(model, context, { proxyUrl: url, authToken: token });
for await (const event of stream) {}
console.log(JSON.stringify(await stream.result()));
"""


@pytest.fixture(scope="session")
def pi16_core() -> Path:
    """The 1.6 agent core's entry module: under PI16_DIR when set, else installed (once)
    under benchmarks/.cache; skipped (in this synchronous fixture, where the skip keeps
    its reason) without node or the package."""
    directory = os.environ.get("PI16_DIR")
    root = Path(directory) if directory else npm_installed("pi16", *PI16_PACKAGES)
    core = root / "node_modules/@earendil-works/pi-agent-core/dist/index.js"
    if shutil.which("node") is None or not core.exists():
        pytest.skip(f"{root} holds no @earendil-works/pi-agent-core 1.6 (or node is missing)")
    return core


@pytest.mark.node
async def test_the_1_6_typescript_client_keeps_the_signatures_and_ignores_redacted(
    nursery: trio.Nursery, upstream: Upstream, tmp_path: Path, pi16_core: Path
) -> None:
    """What pi_trio's server adds (``redacted`` on ``thinking_end``) is ignored by the
    original 1.6 client, and the Gemini ``thoughtSignature`` reaches it in the tool call.
    Needs node and PI16_DIR (a folder with @earendil-works/pi-agent-core 1.6 installed)."""
    core = pi16_core
    upstream.registry.register(ApiProvider(api="scripted", stream=scripted, stream_simple=scripted))
    url, _ = await start(nursery, upstream)
    model = msgspec.structs.replace(upstream.model, api="scripted")
    script = tmp_path / "client16.mjs"
    script.write_text(NODE_CLIENT_16)
    with trio.fail_after(60):
        done = await trio.run_process(
            ["node", str(script), str(core), url, TOKEN, msgspec.json.encode(model).decode()],
            capture_stdout=True, capture_stderr=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["stopReason"] == "toolUse"
    thinking, text, call, redacted = result["content"]
    assert thinking == {"type": "thinking", "thinking": "hmm", "thinkingSignature": "th-sig"}
    assert text == {"type": "text", "text": "Looking", "textSignature": "tx-sig"}
    assert call == SIGNED_CALL
    # the original's client has no place for the flag: an ordinary thinking block
    assert redacted == {
        "type": "thinking", "thinking": "[Reasoning redacted]", "thinkingSignature": "encrypted"
    }  # fmt: skip


NODE_RADIUS_16 = """
import { pathToFileURL } from "node:url";
const [dir, url, token, id] = process.argv.slice(2);
const at = (path) => import(pathToFileURL(`${dir}/node_modules/@earendil-works/${path}`).href);
const { RADIUS_MODELS } = await at("pi-ai/dist/providers/radius.models.js");
const { streamProxy } = await at("pi-agent-core/dist/index.js");
const model = RADIUS_MODELS[id];
const context = { messages: [{ role: "user", content: "hello", timestamp: 1 }] };
const stream = streamProxy(model, context, { proxyUrl: url, authToken: token });
for await (const event of stream) {}
console.log(JSON.stringify({ model, result: await stream.result() }));
"""


@pytest.mark.node
async def test_the_1_6_typescript_client_is_served_a_radius_model(
    nursery: trio.Nursery, tmp_path: Path, pi16_core: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The original 1.6 client sends a Radius model as its catalog writes it (``lab``,
    ``enabled``, ``providers``, ``free``); the server serves it from its own catalog
    entry, against a loopback Radius. Needs node and PI16_DIR."""
    monkeypatch.setenv("RADIUS_API_KEY", "radius-server-key-0123456789")
    recorded = (Path(__file__).parent / "fixtures" / "pi16" / "pimessages_text.sse").read_bytes()
    registry = ProviderRegistry()
    async with serve_sse([SSEReply(recorded)]) as radius:

        def policy(model: Model) -> Model | str:
            served = catalog_models_only(model)
            return (
                served
                if isinstance(served, str)
                else msgspec.structs.replace(served, base_url=radius.url)
            )

        app = create_app(tokens=[TOKEN], registry=registry, model_policy=policy)
        url = await nursery.start(partial(serve, "127.0.0.1", 0, app=app))
        script = tmp_path / "radius16.mjs"
        script.write_text(NODE_RADIUS_16)
        directory = str(pi16_core.parents[4])
        try:
            with trio.fail_after(60):
                done = await trio.run_process(
                    ["node", str(script), directory, url, TOKEN, "recursive/flint"],
                    capture_stdout=True, capture_stderr=True, check=False,
                )  # fmt: skip
        finally:
            await registry.aclose()
    assert done.returncode == 0, done.stderr.decode()
    output = json.loads(done.stdout)
    assert {"lab", "enabled", "providers", "free"} <= set(output["model"])
    result = output["result"]
    assert result["stopReason"] == "stop", result.get("errorMessage")
    assert result["content"][0]["type"] == "text"
    (sent,) = radius.requests
    assert sent.json()["model"] == "recursive/flint"
    assert sent.headers["authorization"] == "Bearer radius-server-key-0123456789"
