"""The stream layer: builder and fold, and the stream-function contract of open_stream."""

from __future__ import annotations

import functools

import anyio
import anyio.lowlevel
import pytest
import trio

from pi_trio.ai import (
    AbortController,
    Context,
    PiError,
    ProviderNotFoundError,
    StartEvent,
    StreamProtocolError,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ToolCall,
    complete,
    open_stream,
    to_json,
)
from pi_trio.ai.providers import ApiProvider, MessageBuilder, MessageFold, ProviderRegistry

from .helpers import MOCK_MODEL, asst, terminal, user

CTX = Context(messages=[user("hi")])


def test_builder_events_are_applied_by_the_consumer_and_read_back_while_open() -> None:
    b = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    fold.apply(b.start())
    start = b.text_start()
    i = start.content_index
    assert b.message.content == []  # the builder describes; the consumer applies
    fold.apply(start)
    for part in ("ab", "cd", "ef"):
        fold.apply(b.text_delta(i, part))
    assert b.message.content[i].text == "abcdef"
    fold.apply(b.text_delta(i, "g"))
    assert b.message.content[i].text == "abcdefg"
    end = b.text_end(i)
    fold.apply(end)
    assert end.content == "abcdefg"
    done = b.done()
    fold.apply(done)
    assert done.reason == "stop"
    assert fold.result is done.message
    assert to_json(done.message).count(b'"text":"abcdefg"') == 1


def test_an_event_built_but_never_applied_is_not_in_the_message() -> None:
    b = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    fold.apply(b.start())
    i = b.text_start().content_index
    fold.apply(TextStartEvent(content_index=i, partial=b.message))
    fold.apply(b.text_delta(i, "sent"))
    b.text_delta(i, " never sent")
    assert b.message.content[i].text == "sent"


def test_builder_streams_tool_arguments_and_parses_them_at_the_end() -> None:
    b = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    fold.apply(b.start())
    start = b.toolcall_start("c1", "echo")
    fold.apply(start)
    i = start.content_index
    for part in ('{"val', 'ue": "he', 'llo"}'):
        fold.apply(b.toolcall_delta(i, part))
    assert b.message.content[i].arguments == {"value": "hello"}
    end = b.toolcall_end(i)
    fold.apply(end)
    assert end.tool_call == ToolCall(id="c1", name="echo", arguments={"value": "hello"})
    assert b.done().reason == "toolUse"


def test_builder_refuses_a_delta_for_a_block_that_was_never_started() -> None:
    b = MessageBuilder(MOCK_MODEL)
    with pytest.raises(PiError, match="text_delta for content index 0"):
        b.text_delta(0, "x")


def test_fold_applies_a_builders_events_to_the_builders_message_once() -> None:
    b = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    events = [b.start(), b.thinking_start()]
    events += [b.thinking_delta(0, "hmm"), b.thinking_end(0, thinking_signature="sig")]
    text_start = b.text_start()
    i = text_start.content_index
    events += [text_start, b.text_delta(i, "he"), b.text_delta(i, "llo")]
    for e in events:
        fold.apply(e)
    assert fold.message is b.message
    assert fold.message.content[0].thinking == "hmm"
    assert fold.message.content[0].thinking_signature == "sig"
    assert fold.message.content[1].text == "hello"
    done = b.done()
    fold.apply(done)
    assert fold.result is done.message
    assert fold.result.content == [
        ThinkingContent(thinking="hmm", thinking_signature="sig"),
        TextContent(text="hello"),
    ]


def test_fold_replays_another_producers_events_onto_its_own_message() -> None:
    # A producer of its own keeps its partial up to date before sending each event.
    partial = asst([], stop="pending")
    fold = MessageFold()
    fold.apply(StartEvent(partial=partial))
    partial.content.append(TextContent(text="he"))
    fold.apply(TextStartEvent(content_index=0, partial=partial))
    fold.apply(TextDeltaEvent(content_index=0, delta="he", partial=partial))
    partial.content[0] = TextContent(text="hello")
    fold.apply(TextDeltaEvent(content_index=0, delta="llo", partial=partial))
    assert fold.message is not partial
    assert fold.message is not None
    assert fold.message.content[0].text == "hello"
    assert len(partial.content) == 1


def test_fold_rejects_events_after_the_terminal_event() -> None:
    fold = MessageFold()
    message = asst("x")
    fold.apply(terminal(message))
    with pytest.raises(PiError, match="after the terminal event"):
        fold.apply(terminal(message))


async def run(stream_fn, **kw) -> tuple[list[str], object]:
    async with open_stream(MOCK_MODEL, CTX, stream_fn=stream_fn, **kw) as events:
        types = [e.type async for e in events]
    return types, events.result()


async def test_a_stream_function_that_raises_yields_an_error_outcome() -> None:
    async def boom(model, context, options, send) -> None:
        await anyio.lowlevel.checkpoint()
        raise ValueError("provider exploded")

    types, result = await run(boom)
    assert types == ["error"]
    assert result.stop_reason == "error"
    assert result.error_message == "provider exploded"


async def test_a_stream_that_ends_without_a_terminal_event_yields_an_error_outcome() -> None:
    async def silent(model, context, options, send) -> None:
        b = MessageBuilder(model)
        await send.send(b.start())
        i = b.text_start().content_index
        await send.send(TextStartEvent(content_index=i, partial=b.message))
        await send.send(b.text_delta(i, "partial"))

    types, result = await run(silent)
    assert types == ["start", "text_start", "text_delta", "error"]
    assert result.stop_reason == "error"
    assert "returned without a terminal event" in result.error_message
    assert result.content[0].text == "partial"


async def test_a_protocol_violation_becomes_an_error_outcome_naming_it() -> None:
    async def broken(model, context, options, send) -> None:
        b = MessageBuilder(model)
        await send.send(b.start())
        await send.send(TextDeltaEvent(content_index=3, delta="x", partial=b.message))
        await send.send(b.done())

    types, result = await run(broken)
    assert types == ["start", "error"]
    assert "broke the protocol" in result.error_message


async def test_events_after_the_terminal_event_are_dropped_and_the_producer_stops() -> None:
    sent_after = []

    async def chatty(model, context, options, send) -> None:
        await send.send(terminal(asst("done")))
        for i in range(1000):
            await send.send(StartEvent(partial=asst("late")))
            sent_after.append(i)

    types, result = await run(chatty)
    assert types == ["done"]
    assert result.content[0].text == "done"
    assert len(sent_after) < 100  # bounded by the channel buffer, then the producer stops


async def test_unknown_api_raises_the_upstream_error_text() -> None:
    registry = ProviderRegistry(builtins=False)
    with pytest.raises(
        ProviderNotFoundError, match="No API provider registered for api: openai-responses"
    ) as caught:
        await complete(MOCK_MODEL, CTX, registry=registry)
    assert isinstance(caught.value, PiError)
    assert isinstance(caught.value, LookupError)


async def test_a_registered_provider_serves_its_api_and_refuses_another_api() -> None:
    async def answer(model, context, options, send) -> None:
        await send.send(terminal(asst("from registry")))

    registry = ProviderRegistry(builtins=False)
    registry.register(ApiProvider(api="openai-responses", stream=answer, stream_simple=answer))
    message = await complete(MOCK_MODEL, CTX, registry=registry)
    assert message.content[0].text == "from registry"
    provider = registry.require("openai-responses")
    other = MOCK_MODEL.__copy__()
    other.api = "elsewhere"
    with pytest.raises(PiError, match="Mismatched api: elsewhere expected openai-responses"):
        await provider.stream(other, CTX, None, None)


async def test_a_decorated_stream_function_is_still_guarded_against_another_api() -> None:
    async def answer(model, context, options, send) -> None:
        await send.send(terminal(asst("from registry")))

    @functools.wraps(answer)
    async def logged(model, context, options, send) -> None:
        await answer(model, context, options, send)

    registry = ProviderRegistry(builtins=False)
    registry.register(ApiProvider(api="openai-responses", stream=logged, stream_simple=logged))
    provider = registry.require("openai-responses")
    other = MOCK_MODEL.__copy__()
    other.api = "elsewhere"
    with pytest.raises(PiError, match="Mismatched api: elsewhere expected openai-responses"):
        await provider.stream(other, CTX, None, None)
    with pytest.raises(PiError, match="Mismatched api: elsewhere expected openai-responses"):
        await provider.stream_simple(other, CTX, None, None)


async def test_cancelling_the_caller_cancels_the_stream_function_and_propagates(
    autojump_clock,
) -> None:
    cancelled = []

    async def slow(model, context, options, send) -> None:
        try:
            await send.send(StartEvent(partial=asst("")))
            await trio.sleep(100)
        except trio.Cancelled:
            cancelled.append(True)
            raise

    with trio.move_on_after(1) as scope:
        await run(slow)
    assert scope.cancelled_caught
    assert cancelled == [True]


async def test_aborting_through_options_signal_yields_an_aborted_outcome_with_content(
    autojump_clock,
) -> None:
    controller = AbortController()

    async def slow(model, context, options, send) -> None:
        b = MessageBuilder(model)
        await send.send(b.start())
        i = b.text_start().content_index
        await send.send(TextStartEvent(content_index=i, partial=b.message))
        await send.send(b.text_delta(i, "so far"))
        await trio.sleep(100)

    async def abort_soon() -> None:
        await trio.sleep(1)
        controller.abort()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(abort_soon)
        types, result = await run(slow, signal=controller.signal)
    assert types[-1] == "error"
    assert result.stop_reason == "aborted"
    assert result.error_message == "Request was aborted"
    assert result.content[0].text == "so far"


class _OwnTextEnd(TextEndEvent, tag="text_end"):
    """A producer's own subclass of an event class."""


def test_a_subclass_of_an_event_class_is_refused_with_what_to_send_instead() -> None:
    builder = MessageBuilder(MOCK_MODEL)
    fold = MessageFold()
    fold.apply(builder.start())
    start = builder.text_start()
    fold.apply(start)
    fold.apply(builder.text_delta(start.content_index, "hi"))
    own = _OwnTextEnd(content_index=0, content="hi", partial=builder.message)
    with pytest.raises(StreamProtocolError, match="send the event classes of pi_trio"):
        fold.apply(own)
