"""Behaviours of the original's no-network pi-ai tests (``packages/ai/test/``: the faux
provider, validation, overflow, message transforms, system messages, transcript replay)
that no other test file pins exactly.

The comment above each test numbers its behaviour (S*, SD*) as the port's catalogue of
those upstream tests did. Scenarios that an existing test already
covers are listed in the coverage report, not repeated here.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import trio

from pi_trio.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    Tool,
    ToolArgumentsError,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    complete,
    open_stream,
    parse_streaming_json,
    validate_tool_arguments,
)
from pi_trio.ai.failures import is_context_overflow, is_recoverable_length
from pi_trio.ai.json import repair_json
from pi_trio.ai.models import ModelCost
from pi_trio.ai.providers import MessageBuilder
from pi_trio.ai.providers._anthropic_request import normalize_anthropic_tool_call_id
from pi_trio.ai.providers._openai_compat import resolve_compat
from pi_trio.ai.transcript import ToolRef, get_added_tool_names, transform_messages
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)

from .helpers import MOCK_MODEL, asst, terminal

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def hi() -> Context:
    return Context(messages=[UserMessage(content="hi", timestamp=0)])


async def events_of(faux: FauxProvider, **options: Any) -> list[AssistantMessageEvent]:
    model = faux.get_model()
    assert model is not None
    async with open_stream(model, hi(), stream_fn=faux, **options) as events:
        return [event async for event in events]


# --------------------------------------------------------------------------- faux provider


# S2
async def test_builders_stream_thinking_call_and_text_and_generate_a_missing_call_id() -> None:
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_thinking("think"), faux_tool_call("echo", {"text": "hi"}), faux_text("done")],
                stop_reason="toolUse",
            )
        ]
    )
    model = faux.get_model()
    assert model is not None
    message = await complete(model, hi(), stream_fn=faux)
    thinking, call, text = message.content
    assert thinking == ThinkingContent(thinking="think")
    assert isinstance(call, ToolCall)
    assert isinstance(call.id, str)
    assert call.id
    assert (call.name, call.arguments) == ("echo", {"text": "hi"})
    assert text == TextContent(text="done")
    assert message.stop_reason == "toolUse"


# S16
async def test_several_tool_calls_in_one_message_each_stream_a_start_and_an_end() -> None:
    faux = FauxProvider()
    calls = [
        faux_tool_call("echo", {"text": "one"}, id="tool-1"),
        faux_tool_call("echo", {"text": "two"}, id="tool-2"),
    ]
    faux.set_responses([faux_assistant_message(calls, stop_reason="toolUse")])
    events = await events_of(faux)
    kinds = [event.type for event in events]
    assert kinds.count("toolcall_start") == 2
    assert kinds.count("toolcall_end") == 2
    ends = [event.tool_call for event in events if event.type == "toolcall_end"]
    assert ends == calls
    assert events[-1].type == "done"
    assert events[-1].message.content == calls


# S17
async def test_an_explicit_error_message_streams_its_text_in_two_token_chunks_then_errors() -> None:
    faux = FauxProvider(token_size=(2, 2))
    faux.set_responses(
        [faux_assistant_message("partial", stop_reason="error", error_message="upstream failed")]
    )
    events = await events_of(faux)
    assert [event.type for event in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_end",
        "error",
    ]
    error = events[-1]
    assert error.type == "error"
    assert error.reason == "error"
    assert error.error.stop_reason == "error"
    assert error.error.error_message == "upstream failed"


# S19
async def test_a_paced_stream_aborted_before_the_first_chunk_sends_only_the_aborted_error(
    autojump_clock: trio.testing.MockClock,
) -> None:
    faux = FauxProvider(token_size=(3, 3), tokens_per_second=50)
    faux.set_responses([faux_assistant_message("never streamed")])
    controller = AbortController()
    controller.abort()
    events = await events_of(faux, signal=controller.signal)
    assert [event.type for event in events] == ["error"]
    assert events[0].reason == "aborted"
    assert events[0].error.stop_reason == "aborted"


# --------------------------------------------------------------------------- validation


def broken_tool() -> Tool:
    return Tool(
        name="broken",
        description="a tool whose schema is not a JSON Schema",
        parameters={"type": "object", "properties": {"foo": 5}},
    )


# S30 (0.73 passed the arguments through when a $ref named nothing; 1.6 rejects the values
# at that place and passes through only what its compiler cannot use)
def test_an_unresolvable_ref_rejects_the_values_at_its_place() -> None:
    dangling = Tool(
        name="broken",
        description="a tool whose schema has a dangling $ref",
        parameters={"type": "object", "properties": {"foo": {"$ref": "nonexistent"}}},
    )
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(dangling, {"foo": "bar"})
    assert str(caught.value) == (
        'Validation failed for tool "broken":\n'
        "  - foo: unresolved reference nonexistent\n\n"
        'Received arguments:\n{\n  "foo": "bar"\n}'
    )
    assert validate_tool_arguments(dangling, {}) == {}


def test_an_unusable_schema_returns_the_raw_arguments_and_logs_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    arguments = {"foo": "bar"}
    with caplog.at_level(logging.WARNING, logger="pi_trio"):
        assert validate_tool_arguments(broken_tool(), arguments) == arguments
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert 'Schema compilation failed for tool "broken"' in warnings[0].getMessage()


# S29
def test_an_unusable_schema_never_logs_an_error(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="pi_trio"):
        assert validate_tool_arguments(broken_tool(), {"count": "42"}) == {"count": "42"}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --------------------------------------------------------------------------- overflow


def failed(
    error_message: str,
    *,
    provider: str = "ollama",
    stop_reason: StopReason = "error",
    api: str = "openai-completions",
    model: str = "qwen3.5:35b",
    **usage: int,
) -> AssistantMessage:
    return AssistantMessage(
        content=[],
        api=api,
        provider=provider,
        model=model,
        usage=Usage(**usage),
        stop_reason=stop_reason,
        error_message=error_message or None,
        timestamp=0,
    )


# S33
def test_explicit_ollama_prompt_too_long_errors_are_overflow() -> None:
    text = "400 `prompt too long; exceeded max context length by 100918 tokens`"
    assert is_context_overflow(failed(text), 32768)


# S34
def test_zai_code_1261_prompt_too_long_is_overflow() -> None:
    text = '400 {"code":"1261","message":"Prompt too long"}'
    assert is_context_overflow(failed(text, provider="zai"), 1048576)


# S35
def test_zai_cn_prompt_exceeds_max_length_is_overflow() -> None:
    text = '400 {"code":"1261","message":"Prompt exceeds max length"}'
    assert is_context_overflow(failed(text, provider="zai"))


# S36, S37, S38, S39, S40
@pytest.mark.parametrize(
    "text",
    [
        "400 The input (516368 tokens) is longer than the model's context length (262144 tokens).",
        "Error: 503 litellm.ServiceUnavailableError: litellm.MidStreamFallbackError: "
        "litellm.APIConnectionError: APIConnectionError: OpenAIException - Requested token "
        "count exceeds the model's maximum context length of 131072 tokens.",
        "Error: 400 Input length (265330) exceeds model's maximum context length (262144).",
        "Provider returned error: Input length 131393 exceeds the maximum allowed input length "
        "of 131040 tokens.",
        "400 Prompt has 256468 tokens, but the configured context size is 256000 tokens",
        "Prompt has 5,958,968 tokens, but the configured context size is 256,000 tokens",
    ],
    ids=[
        "S36-together",
        "S37-litellm",
        "S38-parenthesized",
        "S39-poolside",
        "S40-ds4",
        "S40-ds4-separators",
    ],
)
def test_provider_specific_context_length_errors_are_overflow(text: str) -> None:
    assert is_context_overflow(failed(text))


# S41
def test_a_generic_ollama_crash_is_not_overflow() -> None:
    assert not is_context_overflow(failed("500 `model runner crashed unexpectedly`"))


# S42
@pytest.mark.parametrize("status", ["400", "413"])
def test_bodyless_400_and_413_are_overflow_only_for_cerebras(status: str) -> None:
    text = f"{status} status code (no body)"
    assert is_context_overflow(failed(text, provider="cerebras"), 131072)
    assert not is_context_overflow(failed(text, provider="opencode-go"), 1000000)


# S43
@pytest.mark.parametrize("status", ["400", "413"])
@pytest.mark.parametrize("separator", ["", " ", "\t", "\r\n"])
@pytest.mark.parametrize("label", ["", "status code", "STATUS CODE"])
def test_cerebras_bodyless_errors_with_and_without_the_status_label(
    status: str, separator: str, label: str
) -> None:
    text = f"{status}{separator}{label}{separator}(no body)"
    assert is_context_overflow(failed(text, provider="cerebras"))


# S44
def test_long_whitespace_only_cerebras_errors_are_rejected_without_backtracking() -> None:
    script = """
from pi_trio.ai import AssistantMessage, Usage
from pi_trio.ai.failures import is_context_overflow

def cerebras(text):
    return AssistantMessage(content=[], api="openai-completions", provider="cerebras",
                            model="m", usage=Usage(), stop_reason="error",
                            error_message=text, timestamp=0)

tabs = "\\t" * 100_000
for suffix in ("", "x", "(no bodx)"):
    assert not is_context_overflow(cerebras("400" + tabs + suffix)), suffix
assert is_context_overflow(cerebras("413" + tabs + "(no body)"))
"""
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=5, check=False
    )
    assert completed.returncode == 0, completed.stderr


# S45, S46, S47, S48
@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: The service is temporarily unavailable.",
        "Rate limit exceeded, please retry after 30 seconds.",
        "Too many requests. Please slow down.",
    ],
    ids=["S45-bedrock-throttling", "S46-bedrock-unavailable", "S47-rate-limit", "S48-429"],
)
def test_throttling_and_availability_errors_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(failed(text, provider="amazon-bedrock"), 200000)


def length_stop(provider: str = "openai", **usage: int) -> AssistantMessage:
    return failed(
        "", provider=provider, stop_reason="length", api="openai-responses", model="m", **usage
    )


# S49
def test_a_length_stop_with_no_output_and_a_full_window_is_overflow() -> None:
    message = length_stop("xiaomi", input=58, cache_read=1048512, output=0)
    assert is_context_overflow(message, 1048576)


# S50
def test_a_length_stop_below_the_desired_output_is_recoverable() -> None:
    message = length_stop(input=3, cache_read=253584, cache_write=25554, output=16)
    assert is_recoverable_length(message, 128000)


# S51
def test_a_length_stop_that_reached_the_desired_output_is_not_recoverable() -> None:
    assert not is_recoverable_length(length_stop(input=4062, output=1024), 1024)


# S52
def test_a_zero_output_length_stop_is_recoverable_without_context_metadata() -> None:
    assert is_recoverable_length(length_stop(input=100, output=0), 128000)


def test_only_length_stops_with_a_positive_desired_output_are_recoverable() -> None:
    assert not is_recoverable_length(length_stop(output=0), 0)
    stop = failed("", stop_reason="stop", output=0)
    assert not is_recoverable_length(stop, 128000)


# S53
def test_a_normal_length_stop_with_output_is_not_overflow() -> None:
    assert not is_context_overflow(length_stop(input=1000, output=4096), 200000)


# S54
def test_a_zero_output_length_stop_far_below_the_window_is_not_overflow() -> None:
    assert not is_context_overflow(length_stop(input=100, output=0), 200000)


# --------------------------------------------------------------------------- tool-call ids


COPILOT_CLAUDE = Model(
    id="claude-sonnet-4.6",
    name="Claude Sonnet 4.6",
    api="anthropic-messages",
    provider="github-copilot",
    base_url="https://example.invalid",
    reasoning=True,
    input=["text", "image"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=200_000,
    max_tokens=8192,
)


# S59
def test_anthropic_ids_replace_disallowed_characters_with_underscores() -> None:
    assert normalize_anthropic_tool_call_id("functions.bash:17", COPILOT_CLAUDE, None) == (
        "functions_bash_17"
    )
    assert normalize_anthropic_tool_call_id("a.b/c", COPILOT_CLAUDE, None) == "a_b_c"


# S60
def test_valid_anthropic_ids_pass_through_unchanged() -> None:
    valid = "toolu_01V5J7hDMMGwRsAtL4S79whb"
    assert normalize_anthropic_tool_call_id(valid, COPILOT_CLAUDE, None) == valid


# S61
def test_anthropic_ids_are_truncated_to_64_characters() -> None:
    assert len(normalize_anthropic_tool_call_id("a" * 128, COPILOT_CLAUDE, None)) == 64


# S62
def test_an_empty_id_gets_a_non_empty_valid_placeholder() -> None:
    assert ANTHROPIC_ID.match(normalize_anthropic_tool_call_id("", COPILOT_CLAUDE, None))


# S63
def test_an_id_of_only_disallowed_characters_still_becomes_valid() -> None:
    assert ANTHROPIC_ID.match(normalize_anthropic_tool_call_id(".:/", COPILOT_CLAUDE, None))


def kimi_call(tool_call_id: str, name: str = "bash") -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=tool_call_id, name=name, arguments={})],
        api="openai-completions",
        provider="nvidia",
        model="moonshotai/kimi-k2.5",
        usage=Usage(),
        stop_reason="toolUse",
        timestamp=1,
    )


def tool_result(tool_call_id: str, name: str, text: str, is_error: bool) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=tool_call_id,
        tool_name=name,
        is_error=is_error,
        content=[TextContent(text=text)],
        timestamp=2,
    )


# S64
def test_a_kimi_to_anthropic_handoff_rewrites_both_ids_of_the_pair() -> None:
    messages = [
        UserMessage(content="list files", timestamp=0),
        kimi_call("functions.bash:17"),
        tool_result("functions.bash:17", "bash", "a.txt", False),
    ]
    transformed = transform_messages(messages, COPILOT_CLAUDE, normalize_anthropic_tool_call_id)
    call = transformed[1].content[0]
    assert isinstance(call, ToolCall)
    result = transformed[2]
    assert isinstance(result, ToolResultMessage)
    assert call.id == result.tool_call_id == "functions_bash_17"
    assert ANTHROPIC_ID.match(call.id)


# S65
def test_empty_ids_of_orphaned_calls_become_equal_valid_ids_on_both_sides() -> None:
    messages = [kimi_call("", name=""), tool_result("", "", "Tool not found", True)]
    transformed = transform_messages(messages, COPILOT_CLAUDE, normalize_anthropic_tool_call_id)
    call = transformed[0].content[0]
    assert isinstance(call, ToolCall)
    result = transformed[1]
    assert isinstance(result, ToolResultMessage)
    assert call.id == result.tool_call_id
    assert ANTHROPIC_ID.match(call.id)
    assert len(transformed) == 2


# --------------------------------------------------------------------------- JSON repair

WINDOWS_PATH = r"C:\users\workspace\project"
RAW_PATH_JSON = '{"path":"' + WINDOWS_PATH + '"}'


# S66
def test_repair_json_repairs_invalid_unicode_escape_prefixes() -> None:
    assert repair_json(RAW_PATH_JSON) == json.dumps({"path": WINDOWS_PATH}, separators=(",", ":"))


# S67
def test_repair_json_preserves_valid_unicode_escapes() -> None:
    text = '{"value":"\\u0041"}'
    assert repair_json(text) == text


# S68
def test_streaming_parse_keeps_raw_backslashes_of_windows_paths() -> None:
    assert parse_streaming_json(RAW_PATH_JSON) == {"path": WINDOWS_PATH}


# --------------------------------------------------------------------------- exports, system


# S69 (no EventStream factory in pi_trio: SD1 decision; open_stream yields the stream)
async def test_the_assistant_stream_of_open_stream_has_a_callable_result() -> None:
    async def answer(model: Model, context: Context, options: Any, send: Any) -> None:
        await anyio.lowlevel.checkpoint()
        await send.send(terminal(asst("ok")))

    async with open_stream(MOCK_MODEL, hi(), stream_fn=answer) as events:
        assert callable(events.result)
        async for _ in events:
            pass
    assert events.result().content == [TextContent(text="ok")]


def completions_model(provider: str, base_url: str, **fields: Any) -> Model:
    return Model(
        id="m",
        name="m",
        api="openai-completions",
        provider=provider,
        base_url=base_url,
        reasoning=False,
        input=["text"],
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=8192,
        max_tokens=1024,
        **fields,
    )


# S71
def test_mid_conversation_system_messages_follow_the_transport_and_the_compat_flag() -> None:
    openai = completions_model("openai", "https://api.openai.com/v1")
    custom = completions_model("my-gateway", "https://llm.example.invalid/v1")
    enabled = completions_model(
        "my-gateway",
        "https://llm.example.invalid/v1",
        compat={"supportsMidConvoSystemMessages": True},
    )
    # pi 1.6 detects no server as taking them; a model's compat opts in
    assert not resolve_compat(openai).supports_mid_convo_system_messages
    assert not resolve_compat(custom).supports_mid_convo_system_messages
    assert resolve_compat(enabled).supports_mid_convo_system_messages


# S72
def test_added_tool_names_come_from_tool_result_markers_and_system_messages() -> None:
    late = Tool(name="late_tool", description="d", parameters={"type": "object"})
    marked = ToolResultMessage(
        tool_call_id="c",
        tool_name="load",
        content=[],
        is_error=False,
        timestamp=1,
        added_tool_names=["late_tool", "late_tool"],
    )
    assert get_added_tool_names(marked) == ["late_tool"]
    assert get_added_tool_names(SystemMessage(content="", tools_added=[late], timestamp=1)) == [
        "late_tool"
    ]
    removal = SystemMessage(content="", tools_removed=[ToolRef(name="late_tool")], timestamp=1)
    assert get_added_tool_names(removal) == []
    assert get_added_tool_names(UserMessage(content="hi", timestamp=1)) == []
    plain = ToolResultMessage(tool_call_id="c", tool_name="x", content=[], is_error=False)
    assert get_added_tool_names(plain) == []


# --------------------------------------------------------------------------- SD1


# SD1
async def test_events_sent_before_the_consumer_reads_arrive_in_order() -> None:
    message = asst("abc")

    async def eager(model: Model, context: Context, options: Any, send: Any) -> None:
        builder = MessageBuilder(model)
        await send.send(builder.start())
        start = builder.text_start()
        await send.send(start)
        for part in "abc":
            await send.send(builder.text_delta(start.content_index, part))
        await send.send(builder.text_end(start.content_index))
        await send.send(builder.done())

    async with open_stream(MOCK_MODEL, hi(), stream_fn=eager) as events:
        for _ in range(3):
            await anyio.lowlevel.checkpoint()  # let the producer run ahead
        received = [event async for event in events]
    assert [event.type for event in received] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    assert [event.delta for event in received if event.type == "text_delta"] == ["a", "b", "c"]
    assert events.result().content == message.content


# SD1
async def test_a_consumer_that_reads_first_waits_for_the_next_event() -> None:
    release = trio.Event()

    async def late(model: Model, context: Context, options: Any, send: Any) -> None:
        await release.wait()
        await send.send(terminal(asst("late")))

    order: list[str] = []
    async with trio.open_nursery() as nursery:

        async def consume() -> None:
            async with open_stream(MOCK_MODEL, hi(), stream_fn=late) as events:
                async for event in events:
                    order.append(event.type)

        nursery.start_soon(consume)
        await trio.testing.wait_all_tasks_blocked()
        order.append("released")
        release.set()
    assert order == ["released", "done"]


# SD1
async def test_result_before_the_terminal_event_is_a_clear_error() -> None:
    async def slow(model: Model, context: Context, options: Any, send: Any) -> None:
        await send.send(terminal(asst("x")))

    async with open_stream(MOCK_MODEL, hi(), stream_fn=slow) as events:
        with pytest.raises(RuntimeError, match=r"once the terminal event was received"):
            events.result()
        async for _ in events:
            pass
        assert events.result().content == [TextContent(text="x")]


# --------------------------------------------------------------------------- SD8-SD10 gaps


def read_tool(description: str) -> Tool:
    return Tool(name="read", description=description, parameters={"type": "object"})


# SD8
def test_declared_tools_keep_one_entry_per_name() -> None:
    from pi_trio.ai.transcript import get_declared_tools

    messages = [
        SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=0),
        SystemMessage(content="", tools_added=[read_tool("v2")], timestamp=1),
    ]
    assert [t.name for t in get_declared_tools(messages)] == ["read"]


# SD8
def test_redefinitions_and_non_additive_changes_are_detected() -> None:
    from pi_trio.ai.transcript import has_non_additive_tool_changes, has_tool_redefinitions

    same = [
        SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=0),
        SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=1),
    ]
    redefined = [
        SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=0),
        SystemMessage(content="", tools_added=[read_tool("v2")], timestamp=1),
    ]
    removal = [
        SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=0),
        SystemMessage(content="", tools_removed=[ToolRef(name="read")], timestamp=1),
    ]
    assert not has_tool_redefinitions(same)
    assert has_tool_redefinitions(redefined)
    assert has_non_additive_tool_changes(removal)
    assert has_non_additive_tool_changes(same)
    assert not has_non_additive_tool_changes(same[:1])


# SD9
def test_transcript_tools_anchor_additions_only_for_purely_additive_histories() -> None:
    from pi_trio.ai.transcript import resolve_transcript_tools

    glob = Tool(name="glob", description="g", parameters={"type": "object"})
    initial = SystemMessage(content="", tools_added=[read_tool("v1")], timestamp=0)
    additive = [initial, SystemMessage(content="", tools_added=[glob], timestamp=1)]
    resolved = resolve_transcript_tools(additive, True)
    assert [t.name for t in resolved.request_tools] == ["read"]
    assert resolved.anchors_additions
    removing = [
        initial,
        SystemMessage(content="", tools_removed=[ToolRef(name="read")], timestamp=1),
    ]
    resolved = resolve_transcript_tools(removing, True)
    assert resolved.request_tools == []
    assert not resolved.anchors_additions


# SD10
def test_initial_system_message_helpers_only_count_a_leading_system_message() -> None:
    from pi_trio.ai.transcript import get_initial_system_message, without_initial_system_message

    lead = SystemMessage(content="lead", timestamp=0)
    prompt = UserMessage(content="hi", timestamp=1)
    assert without_initial_system_message([lead, prompt]) == [prompt]
    assert get_initial_system_message([prompt, lead]) is None


# SD10
def test_resolve_transcript_keeps_or_collapses_system_messages() -> None:
    from pi_trio.ai import Context
    from pi_trio.ai.transcript import resolve_transcript

    lead = SystemMessage(content="lead", timestamp=0)
    later = SystemMessage(content="later", timestamp=2)
    prompt = UserMessage(content="hi", timestamp=1)
    context = Context(messages=[lead, prompt, later])
    assert resolve_transcript(context, True) is context
    collapsed = resolve_transcript(context, False).messages
    assert len(collapsed) == 2
    assert collapsed[0].content == "lead\n\nlater"
    assert collapsed[1] is prompt
