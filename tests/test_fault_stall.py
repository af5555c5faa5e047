"""The fault suite, silence: a server that answers nothing but keep-alives, sends its
response head and nothing, or stops mid-answer, against every HTTP provider and the proxy
client. ``first_event_timeout`` and ``idle_timeout`` end the request with a retryable
``error`` naming the limit, measured on the provider's events (SSE comments, ``ping``
events, blank lines, empty event-stream frames do not count), on trio's autojump clock."""

from __future__ import annotations

import math
from typing import Any

import anyio
import httpx2
import msgspec
import pytest
import trio

from pi_trio.agent import Agent, stream_proxy
from pi_trio.ai import (
    AssistantMessage,
    Context,
    RetryPolicy,
    StreamOptions,
    UserMessage,
    open_stream,
)
from pi_trio.ai._stream._stall import (
    DEFAULT_FIRST_EVENT_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    WATCH_STEPS,
)
from pi_trio.ai.failures import is_retryable_assistant_error
from pi_trio.ai.providers._keepalive import is_keepalive, is_keepalive_frame
from pi_trio.testing import faux_assistant_message

from . import eventstream_support as es
from .fault_providers_support import PROVIDERS, Provider
from .fault_server import FaultConn, chunk, head, loopback_registry, serve_faults
from .provider_support import at_url
from .test_fault_providers import Outcome, check_one_terminal, ok_head

LIMIT = 60.0
PING_EVERY = 5.0
FIRST_TEXT = f"No first response event for {LIMIT:g} s after sending the request"
IDLE_TEXT = f"No response event for {LIMIT:g} s (StreamOptions.idle_timeout)"
# the whole test, in fake seconds: far past every limit, so a hang fails instead of passing
GUARD_S = 3600
# a limit is reached when the watchdog looks, at most a sixteenth of it late
LATEST = LIMIT * (1 + 1 / WATCH_STEPS) + 1

providers = pytest.mark.parametrize("provider", PROVIDERS)


def hello() -> Context:
    return Context(messages=[UserMessage(content="hello", timestamp=1)])


def keepalives(provider: Provider) -> list[bytes]:
    """What holds a connection open in the provider's framing: SSE comments (proxies,
    OpenRouter) and blank lines (Gemini pads with them) for every SSE provider, and
    Anthropic's ``ping`` event (also without its name); for Bedrock, event frames without
    a payload."""
    if provider.sse:
        forms = [b": keep-alive\n\n", b"\r\n\r\n", b": OPENROUTER PROCESSING\n\n"]
        if provider.api == "anthropic-messages":
            forms += [b'event: ping\ndata: {"type": "ping"}\n\n', b'data: {"type":"ping"}\n\n']
        return forms
    event = {":message-type": "event", ":content-type": "application/json"}
    return [
        es.frame({**event, ":event-type": "ping"}, b""),
        es.frame({**event, ":event-type": "contentBlockDelta"}, b"{}"),
    ]


def counts(provider: Provider, piece: bytes) -> bool:
    """Whether a piece of a recorded answer holds an event (not a ping, not a comment;
    every Bedrock frame of the answer is an event)."""
    if not provider.sse:
        return True
    return b"data:" in piece and b'"ping"' not in piece


async def send_keepalives(conn: FaultConn, provider: Provider) -> None:
    """Keep-alives every ``PING_EVERY`` seconds until the client leaves."""
    forms = keepalives(provider)
    for n in range(100_000):
        await anyio.sleep(PING_EVERY)
        if not await conn.send(chunk(forms[n % len(forms)])):
            return


def chunked_head(provider: Provider) -> bytes:
    return head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))


async def run(provider: Provider, url: str, **options: Any) -> tuple[Outcome, float]:
    """One request with both limits at ``LIMIT``; its outcome and how long it took."""
    options.setdefault("first_event_timeout", LIMIT)
    options.setdefault("idle_timeout", LIMIT)
    # the HTTP read timeout (the test client's is httpx2's 5 s) beyond every limit
    options.setdefault("timeout_ms", GUARD_S * 1000)
    registry = loopback_registry()
    start = anyio.current_time()
    try:
        with anyio.fail_after(GUARD_S):
            async with open_stream(
                at_url(provider.model, url),
                hello(),
                registry=registry,
                api_key=provider.key,
                **options,
            ) as events:
                seen = [event async for event in events]
    finally:
        await registry.aclose()
    check_one_terminal(seen)
    return Outcome(seen, events.result()), anyio.current_time() - start


def failed_with(outcome: Outcome, text: str) -> AssistantMessage:
    message = outcome.message
    assert message.stop_reason == "error", message
    assert (message.error_message or "").startswith(text), message.error_message
    assert is_retryable_assistant_error(message)
    return message


# --------------------------------------------------------------------------- the three silences


@providers
async def test_keep_alives_alone_end_the_request_at_the_first_event_limit(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(chunked_head(provider)):
            await send_keepalives(conn, provider)

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url)
        with anyio.fail_after(4 * PING_EVERY):  # the server notices at its next writes
            await server.wait_until(lambda s: s.open_connections == 0)
    failed_with(outcome, FIRST_TEXT)
    assert LIMIT <= took < LATEST  # every keep-alive (12 of them) reset nothing
    assert server.bytes_sent > 10 * len(keepalives(provider)[0])


@providers
async def test_a_head_and_nothing_ends_the_request_at_the_first_event_limit(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(chunked_head(provider)):
            await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url, idle_timeout=None)
    failed_with(outcome, FIRST_TEXT)
    assert LIMIT <= took < LATEST
    assert server.client_closed == 1


@providers
async def test_a_stream_that_stops_mid_answer_ends_at_the_idle_limit_keeping_its_text(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(chunked_head(provider) + chunk(provider.through_first_text)):
            await send_keepalives(conn, provider)

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url, first_event_timeout=None)
    message = failed_with(outcome, IDLE_TEXT)
    assert LIMIT <= took < LATEST
    assert any(e.type == "text_delta" for e in outcome.events)
    assert message.content  # the text so far is kept


@providers
async def test_a_slow_stream_whose_events_keep_coming_is_not_cut(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    """Events 40 s apart, keep-alives between them: the answer takes minutes, more than
    either limit, and arrives whole."""

    async def script(conn: FaultConn) -> None:
        if not await conn.send(chunked_head(provider)):
            return
        for event in provider.events:
            if counts(provider, event):
                for form in keepalives(provider):
                    await anyio.sleep(40 / len(keepalives(provider)))
                    await conn.send(chunk(form))
            if not await conn.send(chunk(event)):
                return
        await conn.send(b"0\r\n\r\n")

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url)
    assert outcome.message.stop_reason == "stop", outcome.message.error_message
    assert took > LIMIT + 40


@pytest.mark.parametrize(
    "provider", [p for p in PROVIDERS if p.values[0].api == "anthropic-messages"]
)
async def test_the_time_a_listener_takes_for_an_event_is_not_silence(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    """An agent's listener slower than the limit holds the provider's stream on every
    event (the engine delivers in place): that wait is the listener's, not silence."""

    async def script(conn: FaultConn) -> None:
        if not await conn.send(chunked_head(provider)):
            return
        for event in provider.events:
            if not await conn.send(chunk(event)):
                return
        await conn.send(b"0\r\n\r\n")

    async def slow_listener(event: Any) -> None:
        if event.type == "message_update":
            await anyio.sleep(2 * LIMIT)

    registry = loopback_registry()
    async with serve_faults(script) as server:
        agent = Agent(
            model=at_url(provider.model, server.url),
            registry=registry,
            stream_options=StreamOptions(
                api_key=provider.key,
                first_event_timeout=LIMIT,
                idle_timeout=LIMIT,
                timeout_ms=GUARD_S * 10_000,
            ),
        )
        agent.subscribe(slow_listener)
        try:
            with anyio.fail_after(GUARD_S * 10):
                start = anyio.current_time()
                await agent.prompt("hello")
                took = anyio.current_time() - start
        finally:
            await registry.aclose()
    final = agent.state.messages[-1]
    assert final.stop_reason == "stop", final.error_message
    assert took > 4 * LIMIT  # the listener held the stream that long


# --------------------------------------------------------------------------- retries and abort


@providers
async def test_a_head_that_never_comes_is_retried_under_max_retries(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if len(conn.server.requests) <= 2:
            await conn.wait_closed()  # no head at all
            return
        framed = ok_head(provider, **{"content-length": str(len(provider.body))})
        await conn.send(head(200, framed) + provider.body)

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url, max_retries=2)
    assert outcome.message.stop_reason == "stop", outcome.message.error_message
    assert len(server.requests) == 3
    # two full limits, then the backoffs (at most 0.5 s and 1 s)
    assert 2 * LIMIT <= took < 2 * LIMIT + 2


@providers
async def test_a_head_that_never_comes_fails_once_max_retries_are_spent(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        await conn.wait_closed()

    async with serve_faults(script) as server:
        outcome, took = await run(provider, server.url, max_retries=1)
    failed_with(outcome, FIRST_TEXT)
    assert len(server.requests) == 2
    assert 2 * LIMIT <= took < 2 * LIMIT + 1


@providers
async def test_a_body_gone_silent_is_not_resent_by_the_http_layer(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    """Retries of the HTTP layer stop once a response head arrived, as for every other
    failure: the response is the agent's to retry (``RetryPolicy``)."""

    async def script(conn: FaultConn) -> None:
        if await conn.send(chunked_head(provider)):
            await send_keepalives(conn, provider)

    async with serve_faults(script) as server:
        outcome, _ = await run(provider, server.url, max_retries=3)
    failed_with(outcome, FIRST_TEXT)
    assert len(server.requests) == 1


@providers
async def test_the_agents_retry_policy_asks_again_after_a_stream_went_silent(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if len(conn.server.requests) == 1:
            if await conn.send(chunked_head(provider) + chunk(provider.through_first_text)):
                await send_keepalives(conn, provider)
            return
        framed = ok_head(provider, **{"content-length": str(len(provider.body))})
        await conn.send(head(200, framed) + provider.body)

    registry = loopback_registry()
    seen: list[Any] = []
    async with serve_faults(script) as server:
        agent = Agent(
            model=at_url(provider.model, server.url),
            registry=registry,
            stream_options=StreamOptions(
                api_key=provider.key,
                first_event_timeout=LIMIT,
                idle_timeout=LIMIT,
                timeout_ms=GUARD_S * 1000,
            ),
            retry=RetryPolicy(max_retries=1, base_delay_ms=1000),
        )
        agent.subscribe(seen.append)
        try:
            with anyio.fail_after(GUARD_S):
                await agent.prompt("hello")
        finally:
            await registry.aclose()
    retries = [e for e in seen if e.type == "auto_retry_start"]
    assert len(retries) == 1
    assert retries[0].error_message.startswith(IDLE_TEXT)
    final = agent.state.messages[-1]
    assert final.stop_reason == "stop", final.error_message
    assert len(server.requests) == 2


@providers
async def test_abort_while_waiting_for_an_event_ends_the_run_at_once(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if await conn.send(chunked_head(provider) + chunk(provider.through_first_text)):
            await send_keepalives(conn, provider)

    registry = loopback_registry()
    async with serve_faults(script) as server:
        agent = Agent(
            model=at_url(provider.model, server.url),
            registry=registry,
            stream_options=StreamOptions(
                api_key=provider.key, idle_timeout=LIMIT, timeout_ms=GUARD_S * 1000
            ),
        )

        def abort_on_text(event: Any) -> None:
            if event.type == "message_update" and event.assistant_message_event.type == (
                "text_delta"
            ):
                aborted_at.append(anyio.current_time())

        aborted_at: list[float] = []
        agent.subscribe(abort_on_text)
        try:
            async with anyio.create_task_group() as group:

                async def abort_later() -> None:
                    await anyio.sleep(LIMIT / 3)
                    agent.abort()

                group.start_soon(abort_later)
                start = anyio.current_time()
                await agent.prompt("hello")
                took = anyio.current_time() - start
        finally:
            await registry.aclose()
        with anyio.fail_after(4 * PING_EVERY):
            await server.wait_until(lambda s: s.open_connections == 0)
    final = agent.state.messages[-1]
    assert final.stop_reason == "aborted", final.error_message
    assert final.content  # the text received before the abort
    assert aborted_at, "the text arrived before the abort"
    assert LIMIT / 3 <= took < LIMIT / 3 + 1


# --------------------------------------------------------------------------- the proxy client


PROXY_START = b'data: {"type":"start"}\n\n'
PROXY_TEXT = (
    b'data: {"type":"text_start","contentIndex":0}\n\n'
    b'data: {"type":"text_delta","contentIndex":0,"delta":"Hel"}\n\n'
)
PROXY_DONE = (
    b'data: {"type":"text_delta","contentIndex":0,"delta":"lo"}\n\n'
    b'data: {"type":"text_end","contentIndex":0,"content":"Hello"}\n\n'
    b'data: {"type":"done","reason":"stop","usage":{"input":1,"output":1,"cacheRead":0,'
    b'"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,'
    b'"cacheWrite":0,"total":0}}}\n\n'
)
PROXY_KEEPALIVES = [b"\n", b": ping\n\n", b"data: \n\n"]


async def proxy_keepalives(conn: FaultConn) -> None:
    for n in range(100_000):
        await anyio.sleep(PING_EVERY)
        if not await conn.send(chunk(PROXY_KEEPALIVES[n % len(PROXY_KEEPALIVES)])):
            return


async def via_proxy(url: str, **options: Any) -> tuple[AssistantMessage, float]:
    registry = loopback_registry()
    model = at_url(PROVIDERS[0].values[0].model, url)
    http = httpx2.AsyncClient(timeout=GUARD_S)  # its read timeout beyond every limit
    fn = stream_proxy(proxy_url=url, auth_token="proxy-token-0123456789", http_client=http)
    start = anyio.current_time()
    try:
        with anyio.fail_after(GUARD_S):
            async with open_stream(
                model,
                hello(),
                registry=registry,
                stream_fn=fn,
                first_event_timeout=LIMIT,
                idle_timeout=LIMIT,
                **options,
            ) as events:
                seen = [event async for event in events]
    finally:
        await http.aclose()
        await registry.aclose()
    check_one_terminal(seen)
    return events.result(), anyio.current_time() - start


SSE_HEAD = head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"})


@pytest.mark.parametrize("silence", ["keep-alives", "head only", "no head", "mid-answer"])
async def test_the_proxy_client_ends_a_silent_stream_at_its_limit(
    silence: str, autojump_clock: trio.abc.Clock
) -> None:
    async def script(conn: FaultConn) -> None:
        if silence == "no head":
            await conn.wait_closed()
        elif silence == "head only":
            if await conn.send(SSE_HEAD):
                await conn.wait_closed()
        elif silence == "keep-alives":
            if await conn.send(SSE_HEAD):
                await proxy_keepalives(conn)
        elif await conn.send(SSE_HEAD + chunk(PROXY_START + PROXY_TEXT)):
            await proxy_keepalives(conn)

    async with serve_faults(script) as server:
        message, took = await via_proxy(server.url)
    assert message.stop_reason == "error", message
    text = IDLE_TEXT if silence == "mid-answer" else FIRST_TEXT
    assert (message.error_message or "").startswith(text), message.error_message
    assert is_retryable_assistant_error(message)
    assert LIMIT <= took < LATEST
    if silence == "mid-answer":
        assert message.content


async def test_the_proxy_client_reads_a_slow_live_stream_whole(
    autojump_clock: trio.abc.Clock,
) -> None:
    parts = [PROXY_START, PROXY_TEXT, PROXY_DONE]

    async def script(conn: FaultConn) -> None:
        if not await conn.send(SSE_HEAD):
            return
        for part in parts:
            await anyio.sleep(LIMIT - 1)
            if not await conn.send(chunk(part)):
                return
        await conn.send(b"0\r\n\r\n")

    async with serve_faults(script) as server:
        message, took = await via_proxy(server.url)
    assert message.stop_reason == "stop", message.error_message
    assert took > 2 * LIMIT


# --------------------------------------------------------------------------- asyncio


@pytest.mark.parametrize(
    "provider",
    [p for p in PROVIDERS if p.values[0].api in ("anthropic-messages", "bedrock-converse-stream")],
)
def test_on_asyncio_a_stream_gone_silent_ends_at_its_limit(provider: Provider) -> None:
    """Real time, short limits: the cancel scope's deadline on asyncio's loop."""
    limit = 0.3

    async def main() -> None:
        async def script(conn: FaultConn) -> None:
            if await conn.send(chunked_head(provider) + chunk(provider.through_first_text)):
                forms = keepalives(provider)
                for n in range(1000):
                    await anyio.sleep(limit / 6)
                    if not await conn.send(chunk(forms[n % len(forms)])):
                        return

        async with serve_faults(script) as server:
            outcome, took = await run(
                provider, server.url, first_event_timeout=limit, idle_timeout=limit
            )
        message = outcome.message
        assert message.stop_reason == "error"
        assert (message.error_message or "").startswith(f"No response event for {limit:g} s"), (
            message.error_message
        )
        assert message.content
        assert limit <= took < limit + 5

    anyio.run(main, backend="asyncio")


# --------------------------------------------------------------------------- the rules


def test_keep_alive_events_are_told_from_events() -> None:
    for name, data in [
        ("ping", '{"type": "ping"}'),
        ("", '{"type":"ping"}'),
        ("", " "),
        ("", ""),
        ("keepalive", "anything"),
        ("", '{ "type" : "keepalive" }'),
    ]:
        assert is_keepalive(name, data), (name, data)
    for name, data in [
        ("message_start", '{"type":"message_start"}'),
        ("", "[DONE]"),
        ("", '{"type":"ping","extra":1}'),
        ("", '{"choices":[{"delta":{"content":" "}}]}'),
        ("response.in_progress", '{"type":"response.in_progress"}'),
    ]:
        assert not is_keepalive(name, data), (name, data)
    assert is_keepalive_frame("event", "ping", b"")
    assert is_keepalive_frame("event", "contentBlockDelta", b" {} ")
    assert not is_keepalive_frame("event", "messageStart", b'{"role":"assistant"}')
    assert not is_keepalive_frame("exception", "throttlingException", b"")


def test_the_limits_default_to_five_minutes_and_refuse_nonsense() -> None:
    options = StreamOptions()
    assert options.first_event_timeout == DEFAULT_FIRST_EVENT_TIMEOUT_S == 300
    assert options.idle_timeout == DEFAULT_IDLE_TIMEOUT_S == 300
    assert StreamOptions(first_event_timeout=None, idle_timeout=None).idle_timeout is None
    for bad in (0, -1, math.inf, math.nan, True, "60"):
        with pytest.raises(
            ValueError, match=r"StreamOptions\(idle_timeout=.*\): expected a positive"
        ):
            StreamOptions(idle_timeout=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"first_event_timeout=.*None for no limit"):
            msgspec.structs.replace(options, first_event_timeout=bad)


def test_both_texts_are_retryable_and_name_their_option() -> None:
    for text in (FIRST_TEXT, IDLE_TEXT):
        message = msgspec.structs.replace(
            faux_assistant_message("x"), stop_reason="error", error_message=text
        )
        assert is_retryable_assistant_error(message), text
