"""Cross-provider message transformation before a request (``transform_messages``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import pytest

from pi_trio.ai import (
    AssistantMessage,
    ImageContent,
    Model,
    StopReason,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_trio.ai.models import ModelCost
from pi_trio.ai.transcript import transform_messages

USER_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_PLACEHOLDER = "(tool image omitted: model does not support images)"


def model(
    *,
    id: str = "claude-sonnet-4.6",
    api: str = "anthropic-messages",
    provider: str = "github-copilot",
    images: bool = True,
) -> Model:
    inputs: list[Literal["text", "image"]] = ["text", "image"] if images else ["text"]
    return Model(
        id=id,
        name=id,
        api=api,
        provider=provider,
        base_url="https://example.invalid",
        reasoning=True,
        input=inputs,
        cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
        context_window=200_000,
        max_tokens=8192,
    )


TARGET = model()


def reply(
    *blocks: Any,
    stop_reason: StopReason = "stop",
    api: str = TARGET.api,
    provider: str = TARGET.provider,
    model_id: str = TARGET.id,
) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=api,
        provider=provider,
        model=model_id,
        usage=Usage(),
        stop_reason=stop_reason,
        timestamp=2,
        error_message="boom" if stop_reason in ("error", "aborted") else None,
    )


def foreign(*blocks: Any, stop_reason: StopReason = "stop") -> AssistantMessage:
    return reply(
        *blocks,
        stop_reason=stop_reason,
        api="openai-completions",
        provider="github-copilot",
        model_id="gpt-4o",
    )


def call(id: str, name: str = "bash", **fields: Any) -> ToolCall:
    return ToolCall(id=id, name=name, arguments={"command": "ls"}, **fields)


def result(tool_call_id: str, name: str = "bash", text: str = "done") -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=tool_call_id,
        tool_name=name,
        content=[TextContent(text=text)],
        is_error=False,
        timestamp=3,
    )


def user(content: Any = "hi") -> UserMessage:
    return UserMessage(content=content, timestamp=1)


def image(data: str = "aGk=") -> ImageContent:
    return ImageContent(data=data, mime_type="image/png")


def anthropic_ids(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", tool_call_id)[:64] or "tool_call"


def encode(messages: Any) -> bytes:
    return msgspec.json.encode(messages)


@dataclass
class Note:
    text: str
    role: str = "note"


# --------------------------------------------------------------------------- basics


def test_empty_transcript_stays_empty() -> None:
    assert transform_messages([], TARGET) == []


def test_plain_conversation_passes_through_as_the_same_objects() -> None:
    messages = [SystemMessage(content="p", timestamp=0), user(), reply(TextContent(text="ok"))]
    transformed = transform_messages(messages, TARGET)
    assert transformed == messages
    assert all(a is b for a, b in zip(transformed, messages, strict=True))
    assert transformed is not messages


def test_system_only_transcript_passes_through() -> None:
    messages = [SystemMessage(content="only", timestamp=0)]
    assert transform_messages(messages, TARGET) == messages


def test_custom_role_messages_pass_through_untouched() -> None:
    note = Note("keep me")
    messages: list[Any] = [user(), note, reply(call("c1")), note, result("c1")]
    transformed = transform_messages(messages, TARGET)
    assert transformed == messages
    assert transformed[1] is note


# --------------------------------------------------------------------------- pass 0


def test_missing_content_is_treated_as_empty() -> None:
    broken = UserMessage(content=None, timestamp=1)  # type: ignore[arg-type]
    assistant = reply()
    broken_assistant = msgspec.structs.replace(assistant, content=None)
    transformed = transform_messages([broken, broken_assistant], TARGET)
    assert transformed[0].content == []
    assert transformed[1].content == []
    assert broken.content is None


def test_images_reach_vision_models_unchanged() -> None:
    message = user([TextContent(text="look"), image()])
    assert transform_messages([message], TARGET)[0] is message


def test_user_images_become_a_placeholder_for_text_only_models() -> None:
    message = user([TextContent(text="look"), image(), TextContent(text="and"), image()])
    transformed = transform_messages([message], model(images=False))[0]
    assert transformed.content == [
        TextContent(text="look"),
        TextContent(text=USER_PLACEHOLDER),
        TextContent(text="and"),
        TextContent(text=USER_PLACEHOLDER),
    ]
    assert isinstance(message.content, list)
    assert isinstance(message.content[1], ImageContent)


def test_consecutive_images_collapse_into_one_placeholder() -> None:
    message = user([image("a"), image("b"), image("c"), TextContent(text="what?")])
    transformed = transform_messages([message], model(images=False))[0]
    assert transformed.content == [TextContent(text=USER_PLACEHOLDER), TextContent(text="what?")]


def test_tool_result_images_get_the_tool_placeholder() -> None:
    tool_result = ToolResultMessage(
        tool_call_id="c1",
        tool_name="screenshot",
        content=[image(), image()],
        is_error=False,
        timestamp=3,
    )
    transformed = transform_messages([reply(call("c1")), tool_result], model(images=False))
    assert transformed[1].content == [TextContent(text=TOOL_PLACEHOLDER)]
    assert transformed[1].tool_call_id == "c1"


def test_text_only_model_keeps_image_free_and_string_messages_as_they_are() -> None:
    plain, blocks = user("text"), user([TextContent(text="t")])
    transformed = transform_messages([plain, blocks], model(images=False))
    assert transformed[0] is plain
    assert transformed[1] is blocks


# --------------------------------------------------------------------------- pass 1: thinking


def test_redacted_thinking_is_kept_for_the_same_model_only() -> None:
    redacted = ThinkingContent(
        thinking="[Reasoning redacted]", thinking_signature="enc", redacted=True
    )
    same = transform_messages([reply(redacted, TextContent(text="a"))], TARGET)[0]
    assert same.content[0] is redacted
    other = transform_messages([foreign(redacted, TextContent(text="a"))], TARGET)[0]
    assert other.content == [TextContent(text="a")]


def test_same_model_thinking_with_signature_is_kept_even_when_empty() -> None:
    encrypted = ThinkingContent(thinking="", thinking_signature="opaque")
    message = reply(encrypted, TextContent(text="a"))
    assert transform_messages([message], TARGET)[0] is message


def test_blank_thinking_without_signature_is_dropped() -> None:
    for source in (reply, foreign):
        message = source(ThinkingContent(thinking="  \n\t"), TextContent(text="a"))
        assert transform_messages([message], TARGET)[0].content == [TextContent(text="a")]


def test_blank_thinking_with_signature_from_another_model_is_dropped() -> None:
    message = foreign(ThinkingContent(thinking=" ", thinking_signature="reasoning_content"))
    assert transform_messages([message], TARGET)[0].content == []


def test_same_model_thinking_is_kept() -> None:
    thinking = ThinkingContent(thinking="Let me think")
    message = reply(thinking)
    assert transform_messages([message], TARGET)[0] is message


def test_thinking_from_another_model_is_dropped() -> None:
    # pi 1.6: another model's signature is useless, and its thinking as plain text would
    # read as part of the visible reply
    message = foreign(
        ThinkingContent(
            thinking="Let me think about this...", thinking_signature="reasoning_content"
        ),
        ThinkingContent(thinking="unsigned"),
        ThinkingContent(thinking="", redacted=True, thinking_signature="enc"),
        TextContent(text="Hi there!"),
    )
    transformed = transform_messages([message], TARGET)[0]
    assert transformed.content == [TextContent(text="Hi there!")]
    assert isinstance(message.content[0], ThinkingContent)


@pytest.mark.parametrize(
    ("api", "provider", "model_id"),
    [
        ("openai-completions", TARGET.provider, TARGET.id),
        (TARGET.api, "anthropic", TARGET.id),
        (TARGET.api, TARGET.provider, "claude-opus-4-6"),
    ],
)
def test_any_difference_in_provider_api_or_model_counts_as_another_model(
    api: str, provider: str, model_id: str
) -> None:
    message = reply(
        ThinkingContent(thinking="t"),
        TextContent(text="a"),
        api=api,
        provider=provider,
        model_id=model_id,
    )
    assert transform_messages([message], TARGET)[0].content == [TextContent(text="a")]


# --------------------------------------------------------------------------- pass 1: text, calls


def test_text_from_another_model_loses_its_signature() -> None:
    signed = TextContent(text="answer", text_signature='{"v":1,"id":"msg_1"}')
    same = transform_messages([reply(signed)], TARGET)[0]
    assert same.content[0] is signed
    other = transform_messages([foreign(signed)], TARGET)[0]
    assert msgspec.json.encode(other.content[0]) == b'{"type":"text","text":"answer"}'


def test_tool_calls_from_another_model_lose_their_thought_signature() -> None:
    signed = call("call_123", thought_signature="sig")
    transformed = transform_messages([foreign(signed), result("call_123")], TARGET)
    new_call = transformed[0].content[0]
    assert isinstance(new_call, ToolCall)
    assert new_call.thought_signature is None
    assert new_call.id == "call_123"
    assert new_call.arguments == {"command": "ls"}
    assert signed.thought_signature == "sig"


def test_same_model_tool_calls_keep_signature_and_id() -> None:
    signed = call("functions.bash:17", thought_signature="sig")
    messages = [reply(signed), result("functions.bash:17")]
    transformed = transform_messages(messages, TARGET, anthropic_ids)
    assert transformed == messages
    assert transformed[0].content[0] is signed


def test_renamed_tool_call_ids_are_propagated_to_their_results() -> None:
    source = reply(
        call("functions.bash:17"),
        api="openai-completions",
        provider="nvidia",
        model_id="moonshotai/kimi-k2.5",
        stop_reason="toolUse",
    )
    messages = [user(), source, result("functions.bash:17"), result("unrelated")]
    transformed = transform_messages(messages, TARGET, anthropic_ids)
    assert transformed[1].content[0].id == "functions_bash_17"
    assert transformed[2].tool_call_id == "functions_bash_17"
    assert transformed[3].tool_call_id == "unrelated"
    assert messages[2].tool_call_id == "functions.bash:17"


def test_normalizer_receives_id_target_model_and_source_message() -> None:
    seen: list[tuple[str, Model, AssistantMessage]] = []

    def normalize(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
        seen.append((tool_call_id, target, source))
        return tool_call_id

    source = foreign(call("a"), call("b"))
    transformed = transform_messages([source, result("a"), result("b")], TARGET, normalize)
    assert [(i, t, s) for i, t, s in seen] == [("a", TARGET, source), ("b", TARGET, source)]
    assert transformed[0] is source


def test_empty_tool_call_ids_get_equal_normalized_ids_on_both_sides() -> None:
    source = foreign(ToolCall(id="", name="", arguments={}))
    failed = ToolResultMessage(
        tool_call_id="",
        tool_name="",
        is_error=True,
        timestamp=3,
        content=[TextContent(text="Tool not found")],
    )
    transformed = transform_messages([source, failed], TARGET, anthropic_ids)
    assert transformed[0].content[0].id == "tool_call"
    assert transformed[1].tool_call_id == "tool_call"
    assert len(transformed) == 2


def test_a_normalizer_that_returns_no_string_is_a_type_error() -> None:
    def broken(tool_call_id: str, target: Model, source: AssistantMessage) -> str:
        return None  # type: ignore[return-value]

    with pytest.raises(TypeError, match=r"^normalize_tool_call_id must return a str, got None"):
        transform_messages([foreign(call("x"))], TARGET, broken)


# --------------------------------------------------------------------------- pass 2


def test_tool_call_followed_by_user_message_gets_a_synthetic_result_before_it() -> None:
    prompt = user("next")
    transformed = transform_messages([reply(call("c1"), stop_reason="toolUse"), prompt], TARGET)
    assert len(transformed) == 3
    synthetic = transformed[1]
    assert isinstance(synthetic, ToolResultMessage)
    body = msgspec.json.decode(msgspec.json.encode(synthetic))
    assert body.pop("timestamp") > 0
    assert body == {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "No result provided"}],
        "isError": True,
    }
    assert transformed[2] is prompt


def test_system_message_also_flushes_missing_results() -> None:
    note = SystemMessage(content="update", timestamp=4)
    transformed = transform_messages([reply(call("c1")), note], TARGET)
    assert [m.role for m in transformed] == ["assistant", "toolResult", "system"]


def test_next_assistant_message_flushes_missing_results() -> None:
    transformed = transform_messages([reply(call("c1")), reply(TextContent(text="b"))], TARGET)
    assert [m.role for m in transformed] == ["assistant", "toolResult", "assistant"]


def test_trailing_orphaned_tool_call_gets_a_result_with_the_normalized_id() -> None:
    source = reply(
        call("call_123|fc_123", "read"),
        api="openai-responses",
        provider="github-copilot",
        model_id="gpt-5",
        stop_reason="toolUse",
    )
    transformed = transform_messages([user(), source], TARGET, anthropic_ids)
    last = transformed[-1]
    assert isinstance(last, ToolResultMessage)
    assert (last.tool_call_id, last.tool_name, last.is_error) == ("call_123_fc_123", "read", True)
    assert last.content == [TextContent(text="No result provided")]


def test_only_calls_still_missing_a_result_get_one() -> None:
    source = reply(
        call("call_1|fc_1"),
        call("call_2|fc_2"),
        api="openai-responses",
        provider="github-copilot",
        model_id="gpt-5",
        stop_reason="toolUse",
    )
    transformed = transform_messages([user(), source, result("call_1|fc_1")], TARGET, anthropic_ids)
    synthetic = [m for m in transformed if isinstance(m, ToolResultMessage) and m.is_error]
    assert len(synthetic) == 1
    assert synthetic[0].tool_call_id == "call_2_fc_2"
    assert synthetic[0].tool_name == "bash"
    assert [m.role for m in transformed] == ["user", "assistant", "toolResult", "toolResult"]


def test_answered_tool_calls_get_no_synthetic_results() -> None:
    messages = [reply(call("a"), call("b")), result("b"), result("a"), user()]
    assert transform_messages(messages, TARGET) == messages


@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
def test_failed_assistant_messages_are_dropped_with_their_tool_calls(
    stop_reason: StopReason,
) -> None:
    failed = reply(TextContent(text="partial"), call("c1"), stop_reason=stop_reason)
    prompt = user("again")
    transformed = transform_messages([user(), failed, prompt], TARGET)
    assert [m.role for m in transformed] == ["user", "user"]
    assert transformed[1] is prompt


def test_failed_assistant_message_still_flushes_the_previous_calls() -> None:
    transformed = transform_messages(
        [reply(call("c1")), reply(call("c2"), stop_reason="error")], TARGET
    )
    assert [m.role for m in transformed] == ["assistant", "toolResult"]
    assert transformed[1].tool_call_id == "c1"


def test_transcript_ending_in_a_failed_message_gets_no_results_for_it() -> None:
    transformed = transform_messages([user(), reply(call("c1"), stop_reason="aborted")], TARGET)
    assert [m.role for m in transformed] == ["user"]


def test_custom_messages_do_not_flush_pending_calls() -> None:
    note = Note("between")
    transformed = transform_messages([reply(call("c1")), note, result("c1")], TARGET)
    assert transformed[1] is note
    assert len(transformed) == 3


# --------------------------------------------------------------------------- purity


def test_input_messages_are_never_mutated() -> None:
    messages: list[Any] = [
        SystemMessage(content="p", timestamp=0),
        user([TextContent(text="look"), image(), image()]),
        foreign(
            ThinkingContent(thinking="hmm", thinking_signature="s"),
            TextContent(text="x", text_signature="sig"),
            call("a.b", thought_signature="t"),
            stop_reason="toolUse",
        ),
        result("a.b"),
        reply(call("z"), stop_reason="error"),
        foreign(call("q")),
    ]
    snapshot = [encode(m) for m in messages]
    original_list = list(messages)
    transform_messages(messages, model(images=False), anthropic_ids)
    assert messages == original_list
    assert [encode(m) for m in messages] == snapshot
