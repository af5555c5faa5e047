"""The faux provider: scripted queue, factories, chunking, pacing, usage estimate, abort."""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

import anyio
import msgspec
import pytest
import trio
import trio.lowlevel

from pi_trio.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    ImageContent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_trio.ai._errors import PiError
from pi_trio.ai._stream._abort import AbortController
from pi_trio.ai._stream._open import complete, complete_simple, open_stream
from pi_trio.ai._stream._options import ResponseInfo, StreamOptions
from pi_trio.ai._stream._registry import ProviderRegistry
from pi_trio.ai.transcript import ToolRef
from pi_trio.testing import (
    FauxModel,
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from pi_trio.testing._faux_usage import (
    common_prefix_units,
    estimate_tokens,
    serialize_prompt,
    split_by_token_size,
)

ECHO = Tool(
    name="echo",
    description="Echo text",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)
ECHO_JSON = (
    '{"name":"echo","description":"Echo text","parameters":{"type":"object",'
    '"properties":{"text":{"type":"string"}},"required":["text"]}}'
)


def user_context(*texts: str) -> Context:
    return Context(messages=[UserMessage(content=text, timestamp=0) for text in texts])


async def collect(
    faux: FauxProvider, context: Context | None = None, **options: Any
) -> list[AssistantMessageEvent]:
    model = faux.get_model()
    assert model is not None
    async with open_stream(
        model, context or user_context("hi"), stream_fn=faux, **options
    ) as events:
        return [event async for event in events]


async def ask(
    faux: FauxProvider, context: Context | None = None, **options: Any
) -> AssistantMessage:
    model = options.pop("model", None) or faux.get_model()
    return await complete(model, context or user_context("hi"), stream_fn=faux, **options)


def types(events: list[AssistantMessageEvent]) -> list[str]:
    return [event.type for event in events]


def text_of(message: AssistantMessage) -> str:
    return "".join(block.text for block in message.content if isinstance(block, TextContent))


async def call_directly(
    faux: FauxProvider, context: Context, options: StreamOptions
) -> list[AssistantMessageEvent]:
    """Run the stream function without the runtime, on a channel of our own."""
    model = faux.get_model()
    assert model is not None
    send, receive = anyio.create_memory_object_stream[AssistantMessageEvent](100)
    with send, receive:
        await faux.stream(model, context, options, send)
        received = []
        while True:
            try:
                received.append(receive.receive_nowait())
            except anyio.WouldBlock:
                return received


class ScriptedRandom(random.Random):
    """A random source that returns the given values in turn."""

    def __init__(self, values: list[float]) -> None:
        super().__init__(0)
        self.values = values
        self.calls = 0

    def random(self) -> float:
        value = self.values[self.calls % len(self.values)]
        self.calls += 1
        return value


# --------------------------------------------------------------------------- builders


def test_block_builders_build_text_thinking_and_tool_call_blocks() -> None:
    assert faux_text("hi") == TextContent(text="hi")
    assert faux_thinking("hmm") == ThinkingContent(thinking="hmm")
    call = faux_tool_call("echo", {"text": "hi"}, id="tool-1")
    assert call == ToolCall(id="tool-1", name="echo", arguments={"text": "hi"})


def test_tool_call_ids_default_to_unique_tool_ms_random_base36() -> None:
    first = faux_tool_call("echo", {})
    second = faux_tool_call("echo", {})
    assert re.fullmatch(r"tool:\d+:[0-9a-z]+", first.id)
    assert first.id != second.id


def test_assistant_message_defaults_to_faux_placeholders_zero_usage_and_stop() -> None:
    message = faux_assistant_message("hello", timestamp=5)
    assert message.content == [TextContent(text="hello")]
    assert (message.api, message.provider, message.model) == ("faux", "faux", "faux-1")
    assert message.usage.total_tokens == 0
    assert message.usage.cost.total == 0
    assert message.stop_reason == "stop"
    assert message.timestamp == 5
    wire = msgspec.json.decode(msgspec.json.encode(message))
    assert "errorMessage" not in wire
    assert "responseId" not in wire


def test_assistant_message_takes_a_block_or_a_list_of_blocks() -> None:
    thinking = faux_thinking("t")
    assert faux_assistant_message(thinking).content == [thinking]
    blocks = [thinking, faux_text("a"), faux_tool_call("echo", {}, id="c")]
    message = faux_assistant_message(
        blocks, stop_reason="toolUse", error_message="e", response_id="r"
    )
    assert message.content == blocks
    assert (message.stop_reason, message.error_message, message.response_id) == (
        "toolUse",
        "e",
        "r",
    )
    assert faux_assistant_message([]).content == []


def test_builders_reject_bad_inputs_with_the_expected_form() -> None:
    with pytest.raises(TypeError, match=r"faux_text\(text\) must be a str, got 3"):
        faux_text(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"arguments as a dict, got '\{\}'"):
        faux_tool_call("echo", "{}")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"text, thinking and tool-call blocks"):
        faux_assistant_message([ImageContent(data="x", mime_type="image/png")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"takes a str, one block or a list of blocks, got 42"):
        faux_assistant_message(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"stop_reason must be one of .*got 'done'"):
        faux_assistant_message("x", stop_reason="done")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- construction


def test_default_provider_has_a_unique_api_and_the_default_model() -> None:
    faux = FauxProvider()
    assert re.fullmatch(r"faux:\d+:[0-9a-z]+", faux.api)
    assert FauxProvider().api != faux.api
    assert faux.provider == "faux"
    model = faux.get_model()
    assert model is faux.models[0]
    assert model is not None
    assert (model.id, model.name, model.api, model.provider) == (
        "faux-1",
        "Faux Model",
        faux.api,
        "faux",
    )
    assert model.base_url == "http://localhost:0"
    assert model.reasoning is False
    assert model.input == ["text", "image"]
    assert (model.context_window, model.max_tokens) == (128_000, 16_384)
    assert model.cost.input == model.cost.output == 0
    assert faux.state.call_count == faux.call_count == 0


def test_model_definitions_fill_missing_fields_with_defaults() -> None:
    faux = FauxProvider(
        api="faux:test",
        provider="faux-provider",
        models=[
            {"id": "faux-fast"},
            {"id": "faux-thinker", "name": "Thinker", "reasoning": True, "maxTokens": 10},
            FauxModel(id="faux-text", input=["text"], context_window=1000),
            {
                "id": "faux-priced",
                "cost": {"input": 1, "output": 2, "cache_read": 3, "cache_write": 4},
            },
        ],
    )
    fast, thinker, text, priced = faux.models
    assert (fast.name, fast.reasoning, fast.max_tokens) == ("faux-fast", False, 16_384)
    assert (thinker.name, thinker.reasoning, thinker.max_tokens) == ("Thinker", True, 10)
    assert (text.input, text.context_window) == (["text"], 1000)
    assert (priced.cost.cache_read, priced.cost.cache_write) == (3, 4)
    assert all(m.api == "faux:test" and m.provider == "faux-provider" for m in faux.models)
    assert faux.get_model() is fast
    assert faux.get_model("faux-thinker") is thinker
    assert faux.get_model("nope") is None


def test_bad_model_definitions_are_refused_with_the_offending_value() -> None:
    with pytest.raises(TypeError, match=r"invalid faux model definition \{'id': 1\}"):
        FauxProvider(models=[{"id": 1}])
    with pytest.raises(TypeError, match=r"FauxModel or a dict with 'id'.*got 'faux-1'"):
        FauxProvider(models=["faux-1"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("given", "normalized"),
    [((3, 5), (3, 5)), ((1, 1), (1, 1)), ((0, 0), (1, 1)), ((5, 2), (2, 2)), ((None, 8), (3, 8))],
)
def test_token_size_is_normalized_to_at_least_one_and_min_at_most_max(
    given: tuple[int | None, int | None], normalized: tuple[int, int]
) -> None:
    assert FauxProvider(token_size=given).token_size == normalized


def test_bad_pacing_options_are_refused() -> None:
    with pytest.raises(TypeError, match=r"token_size must be a \(min, max\) pair of ints, got 3"):
        FauxProvider(token_size=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pair of ints, got \('a', 2\)"):
        FauxProvider(token_size=("a", 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"tokens_per_second must be a number or None, got 'fast'"):
        FauxProvider(tokens_per_second="fast")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- queue


async def test_registered_provider_answers_and_estimates_usage() -> None:
    registry = ProviderRegistry(builtins=False)
    faux = FauxProvider()
    faux.register(registry)
    faux.set_responses([faux_assistant_message("hello world")])
    context = Context(system_prompt="You are terse.", messages=[UserMessage(content="hi")])
    model = faux.get_model()
    assert model is not None
    message = await complete(model, context, registry=registry)
    assert message.content == [TextContent(text="hello world")]
    assert message.usage.input > 0
    assert message.usage.output > 0
    assert message.usage.total_tokens == message.usage.input + message.usage.output
    assert faux.state.call_count == 1


async def test_factories_see_their_model_so_one_script_serves_several_models() -> None:
    faux = FauxProvider(
        models=[{"id": "faux-fast", "reasoning": False}, {"id": "faux-thinker", "reasoning": True}]
    )

    def answer(
        context: Context, options: StreamOptions, state: Any, model: Any
    ) -> AssistantMessage:
        return faux_assistant_message(f"{model.id}:{str(model.reasoning).lower()}")

    faux.set_responses([answer, answer])
    assert [m.id for m in faux.models] == ["faux-fast", "faux-thinker"]
    assert text_of(await ask(faux, model=faux.get_model("faux-fast"))) == "faux-fast:false"
    assert text_of(await ask(faux, model=faux.get_model("faux-thinker"))) == "faux-thinker:true"


async def test_returned_messages_carry_the_providers_api_provider_and_requested_model() -> None:
    faux = FauxProvider(api="faux:test", provider="faux-provider", models=[{"id": "faux-model"}])
    faux.set_responses([faux_assistant_message("hi")])
    message = await ask(faux)
    assert (message.api, message.provider, message.model) == (
        "faux:test",
        "faux-provider",
        "faux-model",
    )


async def test_responses_are_consumed_in_order_then_the_queue_reports_exhaustion() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("first"), faux_assistant_message("second")])
    assert text_of(await ask(faux)) == "first"
    assert text_of(await ask(faux)) == "second"
    exhausted = await ask(faux, user_context("hello there"))
    assert exhausted.stop_reason == "error"
    assert exhausted.error_message == "No more faux responses queued"
    assert exhausted.content == []
    assert exhausted.usage.input == estimate_tokens("user:hello there") == 4
    assert exhausted.usage.output == 0
    assert faux.get_pending_response_count() == faux.pending_response_count == 0
    assert faux.state.call_count == 3


async def test_an_exhausted_queue_sends_one_error_event_without_start() -> None:
    events = await collect(FauxProvider())
    assert types(events) == ["error"]


async def test_set_replaces_and_append_extends_the_queue() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("first")])
    assert text_of(await ask(faux)) == "first"
    assert faux.pending_response_count == 0
    faux.set_responses([faux_assistant_message("second")])
    assert faux.pending_response_count == 1
    assert text_of(await ask(faux)) == "second"
    faux.append_responses([faux_assistant_message("third"), faux_assistant_message("fourth")])
    assert faux.pending_response_count == 2
    assert text_of(await ask(faux)) == "third"
    assert text_of(await ask(faux)) == "fourth"
    assert faux.pending_response_count == 0
    faux.set_responses([faux_assistant_message("x"), faux_assistant_message("y")])
    faux.set_responses([faux_assistant_message("z")])
    assert faux.pending_response_count == 1


def test_queueing_something_that_is_not_a_response_is_refused() -> None:
    faux = FauxProvider()
    with pytest.raises(TypeError, match=r"AssistantMessage .* or a factory.*got 'hello'"):
        faux.set_responses(["hello"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"got 3"):
        faux.append_responses([3])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("steps", "shown"),
    [
        (faux_assistant_message("hi"), "AssistantMessage("),
        ("hello", "'hello'"),
        (lambda *args: faux_assistant_message("hi"), "<function "),
    ],
)
def test_one_response_without_its_list_is_refused_with_the_fix(steps: Any, shown: str) -> None:
    faux = FauxProvider()
    for method in ("set_responses", "append_responses"):
        with pytest.raises(TypeError) as caught:
            getattr(faux, method)(steps)
        text = str(caught.value)
        assert text.startswith(f"FauxProvider.{method}() takes a list of responses, got {shown}")
        assert text.endswith(f"; wrap it: {method}([faux_assistant_message(...)])")
    with pytest.raises(TypeError, match=r"^FauxProvider.set_responses\(\) takes a list .* got 3$"):
        faux.set_responses(3)  # type: ignore[arg-type]
    assert faux.pending_response_count == 0


async def test_async_factory_sees_the_context_and_the_already_counted_call() -> None:
    faux = FauxProvider()

    async def factory(context: Context, options: Any, state: Any, model: Any) -> AssistantMessage:
        await trio.lowlevel.checkpoint()
        return faux_assistant_message(f"{len(context.messages)}:{state.call_count}")

    faux.set_responses([factory])
    assert text_of(await ask(faux)) == "1:1"


async def test_sync_factory_sees_options_state_and_model() -> None:
    faux = FauxProvider()
    seen: list[tuple[Any, ...]] = []

    def factory(
        context: Context, options: StreamOptions, state: Any, model: Any
    ) -> AssistantMessage:
        seen.append((options.session_id, state is faux.state, model.id))
        return faux_assistant_message(f"{len(context.messages)}:{state.call_count}")

    faux.set_responses([faux_assistant_message("first"), factory])
    await ask(faux)
    assert text_of(await ask(faux, user_context("a", "b"), session_id="s")) == "2:2"
    assert seen == [("s", True, "faux-1")]


async def test_a_raising_factory_gives_exactly_one_error_event_with_its_message() -> None:
    faux = FauxProvider()

    def factory(*args: Any) -> AssistantMessage:
        raise RuntimeError("boom")

    faux.set_responses([factory])
    events = await collect(faux)
    assert types(events) == ["error"]
    error = events[0].error  # type: ignore[union-attr]
    assert (error.stop_reason, error.error_message, error.content) == ("error", "boom", [])
    assert error.usage.total_tokens == 0
    assert faux.state.call_count == 1


async def test_a_factory_returning_something_else_gives_an_error_naming_it() -> None:
    faux = FauxProvider()
    faux.set_responses([lambda *args: "hello"])
    message = await ask(faux)
    assert message.stop_reason == "error"
    assert message.error_message is not None
    assert "must return an AssistantMessage" in message.error_message
    assert "got 'hello'" in message.error_message


async def test_a_response_without_a_terminal_stop_reason_ends_in_an_error() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("partial", stop_reason="pending")])
    events = await collect(faux)
    assert "done" not in types(events)
    assert types(events)[-1] == "error"
    error = events[-1].error  # type: ignore[union-attr]
    assert error.stop_reason == "error"
    assert error.error_message == "Faux response ended without a stop reason"


async def test_a_scripted_error_streams_its_blocks_then_errors_with_its_own_message() -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses(
        [faux_assistant_message("so far", stop_reason="error", error_message="overloaded")]
    )
    events = await collect(faux)
    assert types(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "error"]
    error = events[-1]
    assert error.type == "error"
    assert error.reason == "error"
    assert error.error.error_message == "overloaded"
    assert error.error.content == [TextContent(text="so far")]


async def test_a_scripted_aborted_message_ends_with_an_aborted_error_event() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("x", stop_reason="aborted", error_message="stop")])
    events = await collect(faux)
    assert events[-1].type == "error"
    assert events[-1].reason == "aborted"
    assert events[-1].error.error_message == "stop"


async def test_scripted_messages_are_copied_not_mutated() -> None:
    faux = FauxProvider()
    scripted = faux_assistant_message([faux_tool_call("echo", {"items": [1]}, id="c")], timestamp=7)
    faux.set_responses([scripted, scripted])
    first = await ask(faux)
    second = await ask(faux)
    assert scripted.api == "faux"
    assert scripted.usage.total_tokens == 0
    assert first.api == faux.api
    assert first.timestamp == second.timestamp == 7
    first_call = first.content[0]
    assert isinstance(first_call, ToolCall)
    first_call.arguments["items"].append(2)
    assert scripted.content[0].arguments == {"items": [1]}  # type: ignore[union-attr]
    assert second.content[0].arguments == {"items": [1]}  # type: ignore[union-attr]


async def test_concurrent_calls_each_take_one_response() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    answers: list[str] = []

    async def one() -> None:
        answers.append(text_of(await ask(faux)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one)
        nursery.start_soon(one)
    assert sorted(answers) == ["a", "b"]
    assert faux.call_count == 2


async def test_on_response_is_awaited_with_status_200_before_streaming() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    seen: list[tuple[ResponseInfo, str, int]] = []

    def sync_hook(info: ResponseInfo, model: Any) -> None:
        seen.append((info, model.id, faux.call_count))

    async def async_hook(info: ResponseInfo, model: Any) -> None:
        await trio.lowlevel.checkpoint()
        seen.append((info, model.id, faux.call_count))

    assert text_of(await ask(faux, on_response=sync_hook)) == "a"
    assert text_of(await ask(faux, on_response=async_hook)) == "b"
    assert seen == [(ResponseInfo(200, {}), "faux-1", 1), (ResponseInfo(200, {}), "faux-1", 2)]


async def test_a_raising_on_response_gives_one_error_event() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a")])

    def hook(info: ResponseInfo, model: Any) -> None:
        raise ValueError("rejected")

    events = await collect(faux, on_response=hook)
    assert types(events) == ["error"]
    assert events[0].error.error_message == "rejected"  # type: ignore[union-attr]
    assert faux.pending_response_count == 0


# --------------------------------------------------------------------------- streaming


async def test_exact_event_order_with_one_token_chunks() -> None:
    faux = FauxProvider(token_size=(1, 1))
    call = faux_tool_call("echo", {}, id="tool-1")
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_thinking("go"), faux_text("ok"), call], stop_reason="toolUse"
            )
        ]
    )
    model = faux.get_model()
    assert model is not None
    received: list[AssistantMessageEvent] = []
    start_stop_reason = None
    async with open_stream(model, user_context("hi"), stream_fn=faux) as events:
        async for event in events:
            if event.type == "start":
                start_stop_reason = event.partial.stop_reason
                assert event.partial.content == []
            received.append(event)
    assert types(received) == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "done",
    ]
    assert start_stop_reason == "pending"
    toolcall_end = received[9]
    assert toolcall_end.type == "toolcall_end"
    assert toolcall_end.tool_call == call
    assert toolcall_end.content_index == 2
    done = received[-1]
    assert done.type == "done"
    assert done.reason == "toolUse"
    assert done.message.content == [ThinkingContent(thinking="go"), TextContent(text="ok"), call]
    assert events.result() == done.message


async def test_streams_thinking_text_and_tool_call_deltas_that_rebuild_the_content() -> None:
    faux = FauxProvider()
    arguments = {"text": "hi", "count": 12}
    faux.set_responses(
        [
            faux_assistant_message(
                [
                    faux_thinking("let me think about this for a moment"),
                    faux_text("here is a fairly long answer to the question"),
                    faux_tool_call("echo", arguments, id="tool-1"),
                ],
                stop_reason="toolUse",
            )
        ]
    )
    events = await collect(faux)
    kinds = types(events)
    for kind in ("thinking_start", "thinking_delta", "text_start", "text_delta"):
        assert kind in kinds
    assert "toolcall_start" in kinds
    assert "toolcall_end" in kinds
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == '{"text":"hi","count":12}'
    assert json.loads("".join(deltas)) == arguments
    thinking = "".join(e.delta for e in events if e.type == "thinking_delta")
    text = "".join(e.delta for e in events if e.type == "text_delta")
    assert thinking == "let me think about this for a moment"
    assert text == "here is a fairly long answer to the question"


async def test_tool_call_deltas_are_compact_json_keeping_non_ascii() -> None:
    faux = FauxProvider(token_size=(100, 100))
    faux.set_responses(
        [faux_assistant_message(faux_tool_call("say", {"text": "héllo", "n": [1, 2]}))]
    )
    events = await collect(faux)
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"text":"héllo","n":[1,2]}']


async def test_partial_tool_call_arguments_fill_in_during_the_deltas_as_real_providers_do(
    autojump_clock: trio.testing.MockClock,
) -> None:
    faux = FauxProvider(token_size=(1, 1), tokens_per_second=100)
    arguments = {"text": "hello world", "n": 3}
    faux.set_responses([faux_assistant_message(faux_tool_call("echo", arguments, id="c"))])
    model = faux.get_model()
    assert model is not None
    seen: list[tuple[str, dict[str, Any]]] = []
    async with open_stream(model, user_context("hi"), stream_fn=faux) as events:
        async for event in events:
            if event.type == "toolcall_delta":
                block = event.partial.content[event.content_index]
                assert isinstance(block, ToolCall)
                seen.append((event.delta, dict(block.arguments)))
    assert seen == [
        ('{"te', {}),
        ('xt":', {}),
        ('"hel', {"text": "hel"}),
        ("lo w", {"text": "hello w"}),
        ("orld", {"text": "hello world"}),
        ('","n', {"text": "hello world"}),
        ('":3}', arguments),
    ]


async def test_an_agent_listener_reads_the_partial_arguments_on_every_delta() -> None:
    from pi_trio.agent import Agent

    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message(faux_tool_call("echo", {"text": "hello"}))])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    seen: list[dict[str, Any]] = []

    def listener(event: Any) -> None:
        if event.type == "message_update":
            update = event.assistant_message_event
            if update.type == "toolcall_delta":
                seen.append(dict(event.message.content[update.content_index].arguments))

    agent.subscribe(listener)
    await agent.prompt("hi")
    assert seen == [{}, {}, {"text": "hel"}, {"text": "hello"}]


async def test_one_token_chunks_are_four_characters() -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("abcdefghij")])
    events = await collect(faux)
    assert [e.delta for e in events if e.type == "text_delta"] == ["abcd", "efgh", "ij"]
    assert [e.content for e in events if e.type == "text_end"] == ["abcdefghij"]


async def test_an_empty_text_block_streams_exactly_one_empty_delta() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("")])
    events = await collect(faux)
    assert types(events) == ["start", "text_start", "text_delta", "text_end", "done"]
    assert events[2].delta == ""  # type: ignore[union-attr]


def test_chunk_sizes_are_drawn_from_the_injected_random_source() -> None:
    rng = ScriptedRandom([0.0, 0.99, 0.5])
    chunks = split_by_token_size("x" * 30, 1, 3, rng)
    assert [len(chunk) for chunk in chunks] == [4, 12, 8, 4, 2]
    assert rng.calls == 5
    assert split_by_token_size("", 1, 3, rng) == [""]


async def test_a_seeded_random_source_makes_the_chunking_reproducible() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 4

    async def deltas(seed: int) -> list[str]:
        faux = FauxProvider(token_size=(1, 4), rng=random.Random(seed))
        faux.set_responses([faux_assistant_message(text)])
        return [e.delta for e in await collect(faux) if e.type == "text_delta"]

    first = await deltas(42)
    assert first == await deltas(42)
    assert "".join(first) == text
    assert len({len(chunk) for chunk in first[:-1]}) > 1


async def test_stream_simple_and_calling_the_instance_stream_the_same_way() -> None:
    registry = ProviderRegistry(builtins=False)
    faux = FauxProvider()
    faux.register(registry)
    faux.set_responses([faux_assistant_message("simple"), faux_assistant_message("direct")])
    model = faux.get_model()
    assert model is not None
    simple = await complete_simple(model, user_context("hi"), registry=registry, reasoning="high")
    assert text_of(simple) == "simple"
    assert text_of(await ask(faux)) == "direct"
    assert faux.api_provider.api == faux.api


# --------------------------------------------------------------------------- usage


def worked_example_context() -> Context:
    return Context(
        system_prompt="sys",
        messages=[
            UserMessage(
                content=[
                    TextContent(text="hello"),
                    ImageContent(data="abcd", mime_type="image/png"),
                ],
                timestamp=0,
            ),
            faux_assistant_message("prior", timestamp=0),
            ToolResultMessage(
                tool_call_id="tool-1",
                tool_name="echo",
                content=[TextContent(text="tool out")],
                is_error=False,
                timestamp=0,
            ),
        ],
        tools=[ECHO],
    )


WORKED_EXAMPLE_PROMPT = (
    f"system:sys\ntool+:{ECHO_JSON}\n\nuser:hello\n[image:image/png:4]\n\n"
    "assistant:prior\n\ntoolResult:echo\ntool out"
)


async def test_usage_is_estimated_from_the_serialized_prompt_and_the_output() -> None:
    context = worked_example_context()
    assert serialize_prompt(context) == WORKED_EXAMPLE_PROMPT
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("done")])
    usage = (await ask(faux, context)).usage
    assert usage.input == math.ceil(len(WORKED_EXAMPLE_PROMPT) / 4)
    assert usage.output == 1
    assert usage.cache_read == usage.cache_write == 0
    assert usage.total_tokens == usage.input + usage.output
    assert usage.cost.total == 0


def test_a_transcript_with_a_leading_system_message_serializes_like_the_shorthand() -> None:
    shorthand = worked_example_context()
    transcript = Context(
        messages=[
            SystemMessage(content="sys", tools_added=[ECHO], timestamp=0),
            *shorthand.messages,
        ]
    )
    assert serialize_prompt(transcript) == WORKED_EXAMPLE_PROMPT


def test_later_system_messages_render_their_text_and_tool_changes() -> None:
    context = Context(
        messages=[
            SystemMessage(content="sys", timestamp=0),
            UserMessage(content="hi", timestamp=0),
            SystemMessage(
                content="more rules",
                tools_removed=[ToolRef(name="old")],
                tools_added=[ECHO],
                timestamp=0,
            ),
            UserMessage(content="go", timestamp=0),
        ]
    )
    assert serialize_prompt(context) == (
        "system:sys\n\nuser:hi\n\n"
        f'system:more rules\ntool-:{{"name":"old"}}\ntool+:{ECHO_JSON}\n\n'
        "user:go"
    )


def test_an_empty_system_prompt_still_declares_its_tools() -> None:
    context = Context(messages=[UserMessage(content="hi", timestamp=0)], tools=[ECHO])
    assert serialize_prompt(context) == f"system:tool+:{ECHO_JSON}\n\nuser:hi"


async def test_token_estimates_count_utf16_code_units() -> None:
    assert estimate_tokens("😀😀😀") == 2  # six code units
    assert estimate_tokens("abcde") == 2
    assert common_prefix_units("a😀x", "a😁x") == 2  # the shared high surrogate counts
    assert common_prefix_units("abc", "abd") == 2
    assert common_prefix_units("abc", "abc") == 3
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("😀😀😀")])
    assert (await ask(faux)).usage.output == 2


async def test_a_session_writes_the_prompt_first_and_reads_the_shared_prefix_later() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("first answer"), faux_assistant_message("ok")])
    first_prompt = "user:hello"
    first = (await ask(faux, user_context("hello"), session_id="s1", cache_retention="short")).usage
    assert (first.input, first.cache_read, first.cache_write) == (3, 0, 3)
    context = Context(
        messages=[
            UserMessage(content="hello", timestamp=0),
            faux_assistant_message("first answer", timestamp=0),
            UserMessage(content="more please", timestamp=0),
        ]
    )
    second_prompt = serialize_prompt(context)
    assert second_prompt.startswith(first_prompt)
    second = (await ask(faux, context, session_id="s1", cache_retention="short")).usage
    assert second.cache_read == math.ceil(len(first_prompt) / 4) == 3
    assert second.cache_write == math.ceil((len(second_prompt) - len(first_prompt)) / 4)
    assert second.input == math.ceil(len(second_prompt) / 4) - 3
    assert second.total_tokens == second.input + second.output + 3 + second.cache_write


async def test_the_cache_is_not_shared_across_sessions_or_without_a_session() -> None:
    faux = FauxProvider()
    faux.set_responses(
        [faux_assistant_message("a"), faux_assistant_message("b"), faux_assistant_message("c")]
    )
    first = (
        await ask(faux, user_context("hello"), session_id="session-1", cache_retention="short")
    ).usage
    assert first.cache_write > 0
    context = user_context("hello", "again")
    second = (await ask(faux, context, session_id="session-2", cache_retention="short")).usage
    assert second.cache_read == 0
    assert second.cache_write == second.input > 0
    third = (await ask(faux, context)).usage
    assert (third.cache_read, third.cache_write) == (0, 0)


async def test_cache_retention_none_disables_the_simulation() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("a"), faux_assistant_message("b")])
    for _ in range(2):
        usage = (
            await ask(faux, user_context("hello"), session_id="s", cache_retention="none")
        ).usage
        assert (usage.cache_read, usage.cache_write) == (0, 0)
        assert usage.input == 3


async def test_each_provider_has_its_own_cache() -> None:
    one, two = FauxProvider(), FauxProvider()
    for faux in (one, two):
        faux.set_responses([faux_assistant_message("a")])
        usage = (await ask(faux, user_context("hello"), session_id="s")).usage
        assert (usage.cache_read, usage.cache_write) == (0, 3)


# --------------------------------------------------------------------------- pacing


async def test_tokens_per_second_paces_every_chunk(autojump_clock: trio.testing.MockClock) -> None:
    faux = FauxProvider(token_size=(1, 1), tokens_per_second=10)
    # 40 text characters: 10 one-token chunks; '{"a":1}': chunks '{"a"' and ':1}', one token each.
    faux.set_responses(
        [faux_assistant_message([faux_text("abcd" * 10), faux_tool_call("f", {"a": 1})])]
    )
    started = trio.current_time()
    message = await ask(faux)
    assert message.stop_reason == "stop"
    assert trio.current_time() - started == pytest.approx(12 / 10)


async def test_unpaced_streams_take_no_clock_time(autojump_clock: trio.testing.MockClock) -> None:
    faux = FauxProvider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("abcd" * 50)])
    started = trio.current_time()
    await ask(faux)
    assert trio.current_time() == started


# --------------------------------------------------------------------------- abort


async def test_a_signal_aborted_before_the_call_gives_one_aborted_error_event() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("never"), faux_assistant_message("never")])
    controller = AbortController()
    controller.abort()
    through_runtime = await collect(faux, signal=controller.signal)
    direct = await call_directly(faux, user_context("hi"), StreamOptions(signal=controller.signal))
    for events in (through_runtime, direct):
        assert types(events) == ["error"]
        error = events[0]
        assert error.type == "error"
        assert error.reason == "aborted"
        assert error.error.stop_reason == "aborted"
        assert error.error.error_message == "Request was aborted"
        assert error.error.content == []
    assert faux.call_count == 2


@pytest.mark.parametrize(
    ("block", "delta_type"),
    [
        (faux_text("abcd" * 10), "text_delta"),
        (faux_thinking("abcd" * 10), "thinking_delta"),
        (faux_tool_call("echo", {"text": "abcd" * 10}, id="c"), "toolcall_delta"),
    ],
)
async def test_aborting_the_signal_mid_block_keeps_what_arrived_and_never_ends_the_block(
    autojump_clock: trio.testing.MockClock, block: Any, delta_type: str
) -> None:
    faux = FauxProvider(token_size=(1, 1), tokens_per_second=10)
    faux.set_responses([faux_assistant_message(block)])
    controller = AbortController()
    model = faux.get_model()
    assert model is not None
    received: list[AssistantMessageEvent] = []
    started = trio.current_time()
    async with open_stream(
        model, user_context("hi"), stream_fn=faux, signal=controller.signal
    ) as events:
        async for event in events:
            received.append(event)
            if event.type == delta_type:
                controller.abort()
    start_type = delta_type.replace("delta", "start")
    assert types(received) == ["start", start_type, delta_type, "error"]
    error = received[-1]
    assert error.type == "error"
    assert error.reason == "aborted"
    assert error.error.stop_reason == "aborted"
    assert error.error.error_message == "Request was aborted"
    assert len(error.error.content) == 1
    if isinstance(block, TextContent):
        assert error.error.content == [TextContent(text="abcd")]
    elif isinstance(block, ThinkingContent):
        assert error.error.content == [ThinkingContent(thinking="abcd")]
    assert trio.current_time() - started == pytest.approx(0.1)


async def test_cancelling_the_callers_scope_mid_text_propagates_and_keeps_the_text(
    autojump_clock: trio.testing.MockClock,
) -> None:
    faux = FauxProvider(token_size=(1, 1), tokens_per_second=10)
    faux.set_responses([faux_assistant_message("abcd" * 10)])
    model = faux.get_model()
    assert model is not None
    received: list[str] = []
    with trio.CancelScope() as scope:
        async with open_stream(model, user_context("hi"), stream_fn=faux) as events:
            async for event in events:
                received.append(event.type)
                if event.type == "text_delta":
                    scope.cancel()
    assert scope.cancelled_caught
    assert received == ["start", "text_start", "text_delta"]
    outcome = events.aborted_message()
    assert outcome.stop_reason == "aborted"
    assert outcome.error_message == "Request was aborted"
    assert outcome.content == [TextContent(text="abcd")]


# --------------------------------------------------------------------------- registration


async def test_unregistering_removes_the_provider_from_the_registry() -> None:
    registry = ProviderRegistry(builtins=False)
    faux = FauxProvider()
    unregister = faux.register(registry)
    faux.set_responses([faux_assistant_message("hi")])
    model = faux.get_model()
    assert model is not None
    assert text_of(await complete(model, user_context("hi"), registry=registry)) == "hi"
    unregister()
    assert registry.get(faux.api) is None
    with pytest.raises(
        PiError, match=rf"^No API provider registered for api: {re.escape(faux.api)}$"
    ):
        await complete(model, user_context("hi"), registry=registry)


async def test_register_uses_the_default_registry_when_none_is_given() -> None:
    faux = FauxProvider()
    unregister = faux.register()
    try:
        faux.set_responses([faux_assistant_message("default")])
        model = faux.get_model()
        assert model is not None
        assert text_of(await complete(model, user_context("hi"))) == "default"
    finally:
        unregister()
    with pytest.raises(PiError, match=r"^No API provider registered for api: faux:"):
        await complete(model, user_context("hi"))


def test_unregistering_leaves_a_later_registration_of_the_same_api_alone() -> None:
    registry = ProviderRegistry(builtins=False)
    first = FauxProvider(api="faux:shared")
    second = FauxProvider(api="faux:shared")
    unregister_first = first.register(registry)
    second.register(registry)
    unregister_first()
    provider = registry.get("faux:shared")
    assert provider is not None
    assert provider.stream.__wrapped__ == second.stream  # type: ignore[attr-defined]


async def test_a_model_of_another_api_is_refused_by_the_registry() -> None:
    registry = ProviderRegistry(builtins=False)
    faux = FauxProvider(api="faux:a")
    faux.register(registry)
    faux.set_responses([faux_assistant_message("never")])
    other = FauxProvider(api="faux:b").get_model()
    assert other is not None
    message = await complete(other, user_context("hi"), stream_fn=registry.require("faux:a").stream)
    assert message.stop_reason == "error"
    assert message.error_message == "Mismatched api: faux:b expected faux:a"
    assert faux.call_count == 0
    assert faux.pending_response_count == 1
