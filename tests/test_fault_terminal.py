"""The fault suite, endings: a server that sends a whole answer, through the event that
ends it (Chat Completions' and Mistral's ``data: [DONE]``, Anthropic's ``message_stop``,
the Responses APIs' ``response.completed``, pi-messages' ``done``, Bedrock's ``metadata``
frame), and then loses the connection (closed before the body's end, reset) or keeps it
open. The answer is complete: it is the outcome, not a network error, and nothing waits
for the rest of the body. (A Gemini stream has no such event: it may end after any
chunk, so there a cut is an error.)"""

from __future__ import annotations

import anyio
import pytest
import trio

from pi_trio.ai.providers._sse import DRAIN_TIMEOUT_S
from pi_trio.testing import SSEReply, serve_sse

from .fault_providers_support import PROVIDERS, Provider
from .fault_server import FaultConn, chunk, head, loopback_registry, serve_faults
from .test_fault_providers import ok_head, stream

# every provider but Gemini's (whose stream has no closing event: it may end after any chunk)
CLOSING = [p for p in PROVIDERS if p.values[0].closing_event]
closing_providers = pytest.mark.parametrize("provider", CLOSING)


def _complete(provider: Provider, outcome: object) -> None:
    message = outcome.message  # type: ignore[attr-defined]
    assert message.stop_reason == "stop", message.error_message
    assert message.error_message is None
    assert message.content, message
    assert outcome.events[-1].type == "done"  # type: ignore[attr-defined]


@closing_providers
@pytest.mark.parametrize("framing", ["chunked", "content-length"])
@pytest.mark.parametrize("cut", ["close", "reset"])
async def test_a_connection_lost_after_the_closing_event_keeps_the_complete_answer(
    provider: Provider, framing: str, cut: str
) -> None:
    body = provider.body

    async def script(conn: FaultConn) -> None:
        if framing == "chunked":
            framed = head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))
            sent = await conn.send(framed + chunk(body))  # no last chunk
        else:
            # a length the server never reaches
            framed = head(200, ok_head(provider, **{"content-length": str(len(body) + 100)}))
            sent = await conn.send(framed + body)
        if sent:
            await anyio.sleep(0.05)  # the client has read the whole answer
            if cut == "reset":
                conn.reset()

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    _complete(provider, outcome)


@closing_providers
async def test_a_body_held_open_after_the_closing_event_does_not_hold_up_the_answer(
    provider: Provider, autojump_clock: trio.abc.Clock
) -> None:

    async def script(conn: FaultConn) -> None:
        framed = head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))
        if await conn.send(framed + chunk(provider.body)):
            await conn.wait_closed()

    async with serve_faults(script) as server:
        start = trio.current_time()
        outcome = await stream(provider, server.url, timeout_ms=600_000)
        assert trio.current_time() - start < 1  # no waiting for the rest of the body
        with anyio.fail_after(5):
            await server.wait_until(lambda s: s.client_closed == 1)
    _complete(provider, outcome)


@pytest.mark.parametrize("provider", [p for p in CLOSING if p.values[0].sse])
async def test_after_the_closing_event_the_connection_still_goes_back_to_the_pool(
    provider: Provider,
) -> None:
    # each event in a write of its own, the body's last chunk in another one after them
    reply = SSEReply(list(provider.events), headers={"content-type": provider.content_type})
    async with serve_sse([reply, reply]) as server:
        registry = loopback_registry()
        try:
            for _ in range(2):
                _complete(provider, await stream(provider, server.url, registry=registry))
        finally:
            await registry.aclose()
    assert server.connections == 1


@closing_providers
async def test_what_follows_the_closing_event_is_not_read(provider: Provider) -> None:
    after = provider.garbage("broken json") + provider.garbage("deep nesting")
    if provider.sse:
        after += b"event: error\ndata: {}\n\n"  # Anthropic's error event
    body = provider.body + after  # in the same write: the same network read

    async def script(conn: FaultConn) -> None:
        framed = ok_head(provider, **{"content-length": str(len(body))})
        await conn.send(head(200, framed) + body)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    _complete(provider, outcome)


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if not p.values[0].closing_event])
async def test_without_a_closing_event_a_connection_lost_after_the_last_chunk_is_an_error(
    provider: Provider,
) -> None:
    body = provider.body

    async def script(conn: FaultConn) -> None:
        framed = head(200, ok_head(provider, **{"content-length": str(len(body) + 100)}))
        if await conn.send(framed + body):
            await anyio.sleep(0.05)

    async with serve_faults(script) as server:
        outcome = await stream(provider, server.url)
    assert outcome.message.stop_reason == "error"
    assert (outcome.message.error_message or "").startswith("Network error")
    assert outcome.message.content  # what arrived is kept


@pytest.mark.parametrize(
    "provider",
    [p for p in CLOSING if p.values[0].api in ("openai-completions", "bedrock-converse-stream")],
)
def test_on_asyncio_an_answer_ends_at_its_closing_event_held_open_or_cut(
    provider: Provider,
) -> None:
    async def main() -> None:
        for cut in (False, True):

            async def script(conn: FaultConn, cut: bool = cut) -> None:
                framed = head(200, ok_head(provider, **{"transfer-encoding": "chunked"}))
                if await conn.send(framed + chunk(provider.body)):
                    if cut:
                        conn.reset()
                    else:
                        await conn.wait_closed()

            async with serve_faults(script) as server:
                with anyio.fail_after(DRAIN_TIMEOUT_S + 5):
                    outcome = await stream(provider, server.url, timeout_ms=600_000)
            _complete(provider, outcome)

    anyio.run(main, backend="asyncio")
