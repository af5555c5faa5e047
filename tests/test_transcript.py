"""The transcript layer: replaying system messages, tool declarations and their deltas."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_trio.ai import (
    AssistantMessage,
    Context,
    SystemMessage,
    TextContent,
    Tool,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_trio.ai._transcript._system import system_reminder_text
from pi_trio.ai.transcript import (
    ToolRef,
    ToolStateChanges,
    collapse_system_messages,
    create_initial_system_message,
    declarations_equal,
    declare_tool_changes,
    get_current_system_message,
    get_current_system_prompt,
    get_current_tools,
    get_system_message_text,
    get_tool_state_changes,
    normalize_context,
    render_system_message_update,
    to_tool_declaration,
)

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str | None = None, **parameters: Any) -> Tool:
    return Tool(
        name=name,
        description=description if description is not None else f"{name} tool",
        parameters=parameters or dict(EMPTY_SCHEMA),
    )


@dataclass
class ExecutableTool:
    """Shaped like an AgentTool: more than a declaration."""

    name: str
    description: str
    parameters: dict[str, Any]
    label: str = ""
    constrained_sampling: Any = None
    execute: Any = field(default=lambda *args: None)


@dataclass
class Note:
    """An application message of a custom role."""

    text: str
    role: str = "note"


def user(text: str = "hi", timestamp: int = 1) -> UserMessage:
    return UserMessage(content=text, timestamp=timestamp)


def assistant(text: str = "ok") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="faux",
        provider="faux",
        model="m",
        usage=Usage(),
        stop_reason="stop",
        timestamp=2,
    )


def system(content: str | list[TextContent] = "", **fields: Any) -> SystemMessage:
    fields.setdefault("timestamp", 5)
    return SystemMessage(content=content, **fields)


def names(tools: list[Tool] | None) -> list[str]:
    return [t.name for t in tools or []]


def to_json(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


# --------------------------------------------------------------------------- initial message


def test_no_prompt_and_no_tools_creates_no_initial_message() -> None:
    assert create_initial_system_message() is None
    assert create_initial_system_message("", []) is None


def test_initial_message_has_timestamp_zero_and_no_tools_key_without_tools() -> None:
    message = create_initial_system_message("You are a helpful assistant.")
    assert to_json(message) == {
        "role": "system",
        "content": "You are a helpful assistant.",
        "timestamp": 0,
    }


def test_initial_message_with_tools_only_has_empty_content() -> None:
    read = tool("read")
    message = create_initial_system_message(None, [read])
    assert message is not None
    assert message.content == ""
    assert message.tools_added == [read]
    assert message.timestamp == 0


def test_initial_message_declares_executable_tools_without_their_extras() -> None:
    echo = ExecutableTool("echo", "Echo input", {}, label="Echo")
    message = create_initial_system_message("You are helpful.", [echo])
    assert message is not None
    assert to_json(message)["toolsAdded"] == [
        {"name": "echo", "description": "Echo input", "parameters": {}}
    ]


# --------------------------------------------------------------------------- normalize_context


def test_normalize_context_without_prompt_or_tools_keeps_messages() -> None:
    messages = [user()]
    context = Context(messages=messages)
    assert normalize_context(context) is context
    empty = normalize_context(Context(messages=messages, system_prompt="", tools=[]))
    assert empty.messages is messages
    assert empty.system_prompt is None
    assert empty.tools is None


def test_normalize_context_prepends_initial_system_message() -> None:
    read = tool("read")
    original = [user()]
    context = Context(messages=original, system_prompt="Be terse.", tools=[read])
    normalized = normalize_context(context)
    assert normalized.system_prompt is None
    assert normalized.tools is None
    assert len(normalized.messages) == 2
    assert to_json(normalized.messages[0]) == {
        "role": "system",
        "content": "Be terse.",
        "timestamp": 0,
        "toolsAdded": [to_json(read)],
    }
    assert normalized.messages[1] is original[0]
    assert original == [user()]
    assert context.system_prompt == "Be terse."


def test_normalize_context_of_empty_context() -> None:
    assert normalize_context(Context()).messages == []


# --------------------------------------------------------------------------- declarations


def test_tool_declaration_keeps_only_declared_fields_and_clones_parameters() -> None:
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}}
    executable = ExecutableTool("read", "Read a file", parameters, label="Read")
    declaration = to_tool_declaration(executable)
    assert isinstance(declaration, Tool)
    assert to_json(declaration) == {
        "name": "read",
        "description": "Read a file",
        "parameters": parameters,
    }
    parameters["properties"]["path"]["type"] = "number"
    assert declaration.parameters["properties"]["path"]["type"] == "string"


def test_tool_declaration_keeps_constrained_sampling_when_set() -> None:
    sampling = {"type": "json_schema", "strict": "prefer"}
    declaration = to_tool_declaration(ExecutableTool("t", "d", {}, constrained_sampling=sampling))
    assert declaration.constrained_sampling == sampling
    assert to_json(declaration)["constrainedSampling"] == sampling
    disabled = to_tool_declaration(ExecutableTool("t", "d", {}, constrained_sampling=False))
    assert to_json(disabled)["constrainedSampling"] is False


def test_tool_declaration_accepts_objects_without_constrained_sampling() -> None:
    @dataclass
    class Bare:
        name: str = "bare"
        description: str = "d"
        parameters: dict[str, Any] = field(default_factory=dict)

    assert to_json(to_tool_declaration(Bare())) == {
        "name": "bare",
        "description": "d",
        "parameters": {},
    }


def test_tool_declaration_of_a_non_tool_explains_what_is_expected() -> None:
    with pytest.raises(TypeError, match=r"^expected a tool with 'name', 'description'"):
        to_tool_declaration("read")  # type: ignore[arg-type]


def test_tool_declaration_rejects_bad_fields() -> None:
    with pytest.raises(TypeError, match=r"^a tool name must be a str, got 3"):
        to_tool_declaration(ExecutableTool(3, "d", {}))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"description of tool 'x' must be a str, got None"):
        to_tool_declaration(ExecutableTool("x", None, {}))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"parameters of tool 'x' must be a JSON schema object"):
        to_tool_declaration(ExecutableTool("x", "d", ["not", "a", "dict"]))  # type: ignore[arg-type]


def test_tool_declaration_rejects_parameters_that_are_not_json() -> None:
    with pytest.raises(TypeError, match=r"^the parameters of tool 'x' must be JSON-serialisable"):
        to_tool_declaration(ExecutableTool("x", "d", {"default": object()}))


def test_declarations_equal_compares_json_with_key_order() -> None:
    a = tool("read", type="object", properties={})
    same = ExecutableTool("read", "read tool", {"type": "object", "properties": {}})
    reordered = tool("read", properties={}, type="object")
    assert declarations_equal(a, same)
    assert not declarations_equal(a, reordered)
    assert not declarations_equal(
        a, tool("read", "other description", type="object", properties={})
    )


# --------------------------------------------------------------------------- replay


def test_current_tools_of_empty_and_system_free_transcripts_are_empty() -> None:
    assert get_current_tools([]) == []
    assert get_current_tools([user(), assistant(), Note("x")]) == []


def test_current_tools_replays_additions_and_removals_in_order() -> None:
    read, glob, bash = tool("read"), tool("glob"), tool("bash")
    messages = [
        system("Base", tools_added=[read, glob]),
        user(),
        system(tools_added=[bash], tools_removed=[ToolRef(name="read")]),
        Note("custom messages are ignored"),
    ]
    assert names(get_current_tools(messages)) == ["glob", "bash"]


def test_current_tools_applies_removals_before_additions_within_one_message() -> None:
    read_v1, glob = tool("read", "v1"), tool("glob")
    read_v2 = tool("read", "v2")
    messages = [
        system(tools_added=[read_v1, glob]),
        system(tools_added=[read_v2], tools_removed=[ToolRef(name="read")]),
    ]
    current = get_current_tools(messages)
    assert names(current) == ["glob", "read"]
    assert current[1] is read_v2


def test_current_tools_replaces_a_readded_name_in_place_without_removal() -> None:
    messages = [
        system(tools_added=[tool("read", "v1"), tool("glob")]),
        system(tools_added=[tool("read", "v2")]),
    ]
    current = get_current_tools(messages)
    assert names(current) == ["read", "glob"]
    assert current[0].description == "v2"


def test_removing_an_undeclared_tool_is_harmless() -> None:
    assert get_current_tools([system(tools_removed=[ToolRef(name="ghost")])]) == []


def test_replay_of_system_messages_sections_and_tools() -> None:
    read, glob = tool("read", "v1"), tool("glob")
    messages = [
        system("Base prompt.", tools_added=[read, glob], timestamp=10),
        user(),
        system("Extra rule.", sections={"style": "terse", "stale": "old"}, timestamp=12),
        system(
            "Patch.",
            sections={"style": "short", "stale": None},
            tools_removed=[ToolRef(name="glob")],
            timestamp=13,
        ),
    ]
    head = get_current_system_message(messages)
    assert head is not None
    assert head.content == "Base prompt.\n\nExtra rule.\n\nPatch."
    assert head.timestamp == 10
    assert head.sections == {"style": "short"}
    assert head.tools_added == [read]
    assert head.tools_removed is None
    assert get_current_system_prompt(messages) == "Base prompt.\n\nExtra rule.\n\nPatch.\n\nshort"


def test_section_update_keeps_its_first_position_and_deleted_sections_move_to_the_end() -> None:
    messages = [
        system(sections={"a": "1", "b": "2", "c": "3"}),
        system(sections={"a": "1b", "b": None}),
        system(sections={"b": "2b"}),
    ]
    head = get_current_system_message(messages)
    assert head is not None
    assert list((head.sections or {}).items()) == [("a", "1b"), ("c", "3"), ("b", "2b")]
    assert get_current_system_prompt(messages) == "1b\n\n3\n\n2b"


def test_deleting_every_section_omits_sections_from_the_head() -> None:
    messages = [system("p", sections={"a": "1"}), system(sections={"a": None})]
    head = get_current_system_message(messages)
    assert head is not None
    assert head.sections is None
    assert get_current_system_prompt(messages) == "p"


def test_later_content_is_appended_with_a_blank_line_and_empty_content_skipped() -> None:
    messages = [
        system("first"),
        system(""),
        system([TextContent(text="block one"), TextContent(text="block two")]),
    ]
    assert get_current_system_prompt(messages) == "first\n\nblock one\nblock two"


def test_no_system_message_means_no_head_and_empty_prompt() -> None:
    for messages in ([], [user(), assistant(), Note("n")]):
        assert get_current_system_message(messages) is None
        assert get_current_system_prompt(messages) == ""


def test_system_only_transcript_replays() -> None:
    messages = [system("only", timestamp=3)]
    head = get_current_system_message(messages)
    assert head is not None
    assert to_json(head) == {"role": "system", "content": "only", "timestamp": 3}
    assert get_current_system_prompt(messages) == "only"


def test_head_of_tool_only_transcript_has_empty_content() -> None:
    read = tool("read")
    head = get_current_system_message([system(tools_added=[read], timestamp=0)])
    assert head is not None
    assert head.content == ""
    assert head.tools_added == [read]
    assert get_current_system_prompt([system(tools_added=[read])]) == ""


def test_system_message_text_renders_content_then_live_sections() -> None:
    message = system("Intro", sections={"a": "A", "gone": None, "empty": "", "b": "B"})
    assert get_system_message_text(message) == "Intro\n\nA\n\nB"
    assert get_system_message_text(system("")) == ""


# --------------------------------------------------------------------------- tool state changes


def test_tool_state_changes_lists_new_and_gone_tools_in_their_own_order() -> None:
    a, b, c, d = tool("a"), tool("b"), tool("c"), tool("d")
    changes = get_tool_state_changes([a, b, c], [d, c, a])
    assert isinstance(changes, ToolStateChanges)
    assert names(changes.tools_added) == ["d"]
    assert changes.tools_removed == [ToolRef(name="b")]


def test_redefined_tool_is_removed_and_added() -> None:
    changes = get_tool_state_changes([tool("read", "v1")], [tool("read", "v2")])
    assert to_json(changes.tools_added) == [to_json(tool("read", "v2"))]
    assert changes.tools_removed == [ToolRef(name="read")]


def test_identical_tool_sets_have_no_changes() -> None:
    executable = [ExecutableTool("read", "read tool", dict(EMPTY_SCHEMA), label="Read")]
    changes = get_tool_state_changes([tool("read")], executable)
    assert changes == ToolStateChanges()
    assert get_tool_state_changes([], []) == ToolStateChanges(tools_added=[], tools_removed=[])


def test_added_tools_are_declarations_not_executables() -> None:
    changes = get_tool_state_changes([], [ExecutableTool("echo", "Echo", {}, label="E")])
    assert changes.tools_added == [Tool(name="echo", description="Echo", parameters={})]


# --------------------------------------------------------------------------- declare_tool_changes


def test_unchanged_tools_return_pending_untouched() -> None:
    read = tool("read")
    messages = [system("p", tools_added=[read], timestamp=0)]
    pending = [user()]
    assert declare_tool_changes(messages, [read], pending) is pending
    empty: list[Any] = []
    assert declare_tool_changes(messages, [read], empty) is empty
    assert declare_tool_changes([], [], empty) is empty


def test_new_declaration_is_inserted_before_the_pending_messages() -> None:
    first, second = tool("first"), tool("second")
    messages = [system("You are helpful.", tools_added=[first], timestamp=0)]
    prompt, extra = user("two"), user("three")
    pending = [prompt, extra]
    result = declare_tool_changes(messages, [second], pending)
    assert len(result) == 3
    declaration = result[0]
    assert result[1] is prompt
    assert result[2] is extra
    assert isinstance(declaration, SystemMessage)
    assert declaration.timestamp > 0
    body = to_json(declaration)
    del body["timestamp"]
    assert body == {
        "role": "system",
        "content": "",
        "toolsAdded": [
            {"name": "second", "description": "second tool", "parameters": EMPTY_SCHEMA}
        ],
        "toolsRemoved": [{"name": "first"}],
    }
    assert pending == [prompt, extra]


def test_new_declaration_after_custom_messages_counts_them_as_non_system() -> None:
    note, prompt = Note("n"), user()
    result = declare_tool_changes([], [tool("a")], [note, prompt])
    assert isinstance(result[0], SystemMessage)
    assert result[1:] == [note, prompt]


def test_new_declaration_lists_only_non_empty_tool_fields() -> None:
    only_added = declare_tool_changes([], [tool("a")], [user()])[0]
    assert isinstance(only_added, SystemMessage)
    assert only_added.tools_removed is None
    assert names(only_added.tools_added) == ["a"]
    only_removed = declare_tool_changes([system(tools_added=[tool("a")])], [], [user()])[0]
    assert isinstance(only_removed, SystemMessage)
    assert only_removed.tools_added is None
    assert only_removed.tools_removed == [ToolRef(name="a")]


def test_empty_pending_gets_a_lone_declaration_message() -> None:
    result = declare_tool_changes([user(), assistant()], [tool("a")], [])
    assert len(result) == 1
    assert isinstance(result[0], SystemMessage)
    assert names(result[0].tools_added) == ["a"]


def test_tool_changes_merge_into_the_last_pending_system_message() -> None:
    echo = ExecutableTool("echo", "Echo input", {}, label="Echo")
    messages = [system("You are helpful.", timestamp=0)]
    earlier = system("earlier", timestamp=1)
    pending_system = system(sections={"skills": "<skills>x</skills>"}, timestamp=1)
    prompt = user("hi", timestamp=2)
    result = declare_tool_changes(messages, [echo], [earlier, pending_system, prompt])
    assert result[0] is earlier
    assert result[2] is prompt
    assert to_json(result[1]) == {
        "role": "system",
        "content": "",
        "sections": {"skills": "<skills>x</skills>"},
        "toolsAdded": [{"name": "echo", "description": "Echo input", "parameters": {}}],
        "timestamp": 1,
    }
    assert pending_system.tools_added is None


def test_pending_system_message_tool_claims_are_overwritten_by_the_executable_set() -> None:
    first, second = tool("first"), tool("second")
    messages = [system("You are helpful.", tools_added=[first], timestamp=0)]
    claiming = system(
        sections={"note": "<note>x</note>"},
        tools_added=[second],
        tools_removed=[ToolRef(name="first")],
        timestamp=1,
    )
    prompt = user()
    result = declare_tool_changes(messages, [first], [claiming, prompt])
    assert to_json(result[0]) == {
        "role": "system",
        "content": "",
        "sections": {"note": "<note>x</note>"},
        "timestamp": 1,
    }
    assert result[1] is prompt
    assert names(get_current_tools([*messages, *result])) == ["first"]
    assert names(claiming.tools_added) == ["second"]


def test_pending_system_message_claims_are_replaced_by_the_real_delta() -> None:
    messages = [system(tools_added=[tool("a")], timestamp=0)]
    claiming = system(tools_added=[tool("ghost")], timestamp=1)
    result = declare_tool_changes(messages, [tool("a"), tool("b")], [claiming])
    assert len(result) == 1
    assert isinstance(result[0], SystemMessage)
    assert names(result[0].tools_added) == ["b"]
    assert result[0].tools_removed is None


def test_earlier_pending_system_messages_count_toward_the_declared_state() -> None:
    messages = [system(tools_added=[tool("a")], timestamp=0)]
    earlier = system(tools_added=[tool("b")], timestamp=1)
    last = system("later", timestamp=2)
    pending = [earlier, last]
    assert declare_tool_changes(messages, [tool("a"), tool("b")], pending) is pending


def test_redefined_executable_tool_is_declared_as_remove_and_add() -> None:
    messages = [system(tools_added=[tool("read", "v1")], timestamp=0)]
    result = declare_tool_changes(messages, [tool("read", "v2")], [user()])
    declaration = result[0]
    assert isinstance(declaration, SystemMessage)
    assert declaration.tools_removed == [ToolRef(name="read")]
    assert [t.description for t in declaration.tools_added or []] == ["v2"]
    replayed = get_current_tools([*messages, *result])
    assert [t.description for t in replayed] == ["v2"]


def test_replay_after_declaring_equals_the_executable_set() -> None:
    messages = [
        system("p", tools_added=[tool("a"), tool("b")], timestamp=0),
        user(),
        system(tools_removed=[ToolRef(name="a")], tools_added=[tool("a", "new")]),
    ]
    executable = [
        ExecutableTool("c", "c tool", {}),
        ExecutableTool("b", "b tool", dict(EMPTY_SCHEMA)),
    ]
    result = declare_tool_changes(messages, executable, [user("next")])
    declaration = result[0]
    assert isinstance(declaration, SystemMessage)
    assert declaration.tools_removed == [ToolRef(name="a")]
    assert names(declaration.tools_added) == ["c"]
    replayed = get_current_tools([*messages, *result])
    assert names(replayed) == ["b", "c"]
    assert get_tool_state_changes(replayed, executable) == ToolStateChanges()
    assert declare_tool_changes([*messages, *result], executable, []) == []


# --------------------------------------------------------------------------- provider side


def test_collapse_system_messages_gives_prompt_and_other_messages() -> None:
    first, later, prompt, reply = system("lead"), system("later"), user(), assistant()
    text, rest = collapse_system_messages([first, prompt, later, reply])
    assert text == "lead\n\nlater"
    assert rest == [prompt, reply]
    assert rest[0] is prompt


def test_collapse_of_empty_and_system_only_transcripts() -> None:
    assert collapse_system_messages([]) == ("", [])
    assert collapse_system_messages([system("only", sections={"x": "X"})]) == ("only\n\nX", [])


def test_render_system_message_update_names_updated_and_removed_sections() -> None:
    message = system("New rule.", sections={"style": "Be terse.", "stale": None})
    assert render_system_message_update(message) == (
        'New rule.\n\nUpdated system prompt section "style":\n\nBe terse.'
        '\n\nRemoved system prompt section "stale".'
    )


def test_render_system_message_update_without_content_or_sections() -> None:
    assert render_system_message_update(system("")) == ""
    assert render_system_message_update(system("", tools_added=[tool("a")])) == ""
    assert render_system_message_update(system("", sections={"x": None})) == (
        'Removed system prompt section "x".'
    )


def test_system_reminder_wraps_text_and_leaves_empty_text_empty() -> None:
    assert system_reminder_text("changed") == "<system_reminder>\nchanged\n</system_reminder>"
    assert system_reminder_text("") == ""


def test_transcript_functions_do_not_mutate_messages() -> None:
    messages = [
        system("p", tools_added=[tool("a")], sections={"s": "1"}, timestamp=0),
        ToolResultMessage(tool_call_id="1", tool_name="a", content=[], is_error=False, timestamp=3),
        system(sections={"s": None}, tools_removed=[ToolRef(name="a")]),
    ]
    before = msgspec.json.encode(messages)
    get_current_system_message(messages)
    get_current_system_prompt(messages)
    collapse_system_messages(messages)
    declare_tool_changes(messages, [tool("b")], [system("x", tools_added=[tool("z")])])
    assert msgspec.json.encode(messages) == before


# --------------------------------------------------------------------------- property


_tool_names = st.sampled_from(["a", "b", "c", "d"])
_tools = st.builds(tool, _tool_names, st.sampled_from(["v1", "v2"]))
_system_messages = st.builds(
    lambda added, removed: system(
        tools_added=added or None, tools_removed=[ToolRef(name=n) for n in removed] or None
    ),
    st.lists(_tools, max_size=3),
    st.lists(_tool_names, max_size=2),
)
_executable = st.lists(_tools, max_size=4, unique_by=lambda t: t.name)


@settings(derandomize=True, max_examples=300)
@given(
    history=st.lists(st.one_of(_system_messages, st.builds(user)), max_size=5),
    pending_system=st.one_of(st.none(), _system_messages),
    executable=_executable,
)
def test_after_declaring_the_transcript_replays_exactly_the_executable_set(
    history: list[Any], pending_system: SystemMessage | None, executable: list[Tool]
) -> None:
    pending: list[Any] = [user("next")]
    if pending_system is not None:
        pending.insert(0, pending_system)
    result = declare_tool_changes(history, executable, pending)
    replayed = {t.name: t for t in get_current_tools([*history, *result])}
    assert sorted(replayed) == sorted(t.name for t in executable)
    assert all(declarations_equal(replayed[t.name], t) for t in executable)
    assert declare_tool_changes([*history, *result], executable, []) == []


def test_split_leading_system_prompt_joins_only_the_leading_system_messages() -> None:
    from pi_trio.ai._transcript._system import split_leading_system_prompt

    later = SystemMessage(content="later", timestamp=3)
    messages = [
        SystemMessage(content="first", timestamp=1),
        SystemMessage(content="second", timestamp=1),
        UserMessage(content="hi", timestamp=2),
        later,
    ]
    prompt, rest = split_leading_system_prompt(messages)
    assert prompt == "first\n\nsecond"
    assert list(rest) == [messages[2], later]
    assert split_leading_system_prompt(messages[2:]) == ("", messages[2:])
