"""The faux provider's incremental usage estimate gives the numbers of the full walk:
render the whole prompt, count it, compare it with the session's previous prompt."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from pi_trio.agent import Agent, AgentTool, AgentToolResult
from pi_trio.ai import (
    Context,
    ImageContent,
    SystemMessage,
    TextContent,
    Tool,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_trio.ai.transcript import ToolRef
from pi_trio.testing import (
    FauxProvider,
    _faux_prompt,
    faux_assistant_message,
    faux_text,
    faux_thinking,
    faux_tool_call,
)
from pi_trio.testing._faux_prompt import PromptMeasure, Rendering
from pi_trio.testing._faux_usage import (
    CHARS_PER_TOKEN,
    common_prefix_units,
    estimate_tokens,
    serialize_prompt,
    utf16_len,
)

ALPHABET = "ab c\n\u00e9\u4e2d\U0001f600\U0001f601"  # ASCII, Latin-1, BMP, two astral with one high surrogate


def full_walk_usage(
    context: Context,
    output_text: str,
    *,
    session_id: str | None,
    cache_retention: str | None,
    cache: dict[str, str],
) -> Usage:
    """The estimate as it was before it became incremental: the whole prompt rendered,
    counted and compared on every request."""
    prompt = serialize_prompt(context)
    prompt_tokens = estimate_tokens(prompt)
    output = estimate_tokens(output_text)
    input_tokens = prompt_tokens
    cache_read = cache_write = 0
    if session_id and cache_retention != "none":
        previous = cache.get(session_id)
        if previous:
            shared = common_prefix_units(previous, prompt)
            cache_read = -(-shared // CHARS_PER_TOKEN)
            cache_write = -(-(utf16_len(prompt) - shared) // CHARS_PER_TOKEN)
            input_tokens = max(0, prompt_tokens - cache_read)
        else:
            cache_write = prompt_tokens
        cache[session_id] = prompt
    return Usage(
        input=input_tokens,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        total_tokens=input_tokens + output + cache_read + cache_write,
    )


def text(rng: random.Random, longest: int = 12) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(longest)))


def arguments(rng: random.Random) -> dict[str, Any]:
    values: list[Any] = [1, 1.0, True, -0.0, None, "x", [1, "\U0001f600"], {"k": 2}]
    return {text(rng, 4): rng.choice(values) for _ in range(rng.randrange(3))}


def tool(rng: random.Random) -> Tool:
    return Tool(
        name=rng.choice(["echo", "add", "\u4e2d"]),
        description=text(rng),
        parameters={"type": "object", "properties": arguments(rng)},
    )


def message(rng: random.Random) -> Any:
    kind = rng.randrange(5)
    if kind == 0:
        if rng.random() < 0.5:
            return UserMessage(content=text(rng), timestamp=0)
        blocks: list[Any] = [
            TextContent(text=text(rng))
            if rng.random() < 0.7
            else ImageContent(data=text(rng), mime_type="image/png")
            for _ in range(rng.randrange(3))
        ]
        return UserMessage(content=blocks, timestamp=0)
    if kind == 1:
        parts: list[Any] = []
        for _ in range(rng.randrange(4)):
            pick = rng.randrange(3)
            if pick == 0:
                parts.append(faux_text(text(rng)))
            elif pick == 1:
                parts.append(faux_thinking(text(rng)))
            else:
                parts.append(faux_tool_call("echo", arguments(rng), id="c1"))
        return faux_assistant_message(parts, timestamp=0)
    if kind == 2:
        return ToolResultMessage(
            tool_call_id="c1",
            tool_name=text(rng, 5),
            content=[TextContent(text=text(rng))],
            is_error=False,
            timestamp=0,
        )
    sections = {text(rng, 3): rng.choice([None, text(rng)]) for _ in range(rng.randrange(3))}
    return SystemMessage(
        content=rng.choice([text(rng), [TextContent(text=text(rng))], None]),
        sections=sections or None,
        tools_added=[tool(rng) for _ in range(rng.randrange(2))] or None,
        tools_removed=[ToolRef(name="echo")] if rng.random() < 0.3 else None,
        timestamp=0,
    )


def equal_copy(rng: random.Random, original: Any) -> Any:
    """A new object equal to ``original``; a tool call's arguments may come in another
    key order (equal, but rendered differently)."""
    content = original.content
    if isinstance(content, list):
        content = [
            msgspec.structs.replace(block, arguments=dict(reversed(block.arguments.items())))
            if getattr(block, "type", None) == "toolCall" and rng.random() < 0.5
            else block
            for block in content
        ]
    return msgspec.structs.replace(original, content=content)


def edit(rng: random.Random, messages: list[Any]) -> None:
    """One change of a transcript between two requests, appending most often."""
    kind = rng.randrange(10)
    index = rng.randrange(len(messages)) if messages else 0
    if kind < 5 or not messages:
        messages.extend(message(rng) for _ in range(rng.randrange(1, 4)))
    elif kind == 5:
        messages[index] = message(rng)
    elif kind == 6:
        messages[index] = equal_copy(rng, messages[index])
    elif kind == 7:
        messages.insert(index, message(rng))
    elif kind == 8:
        del messages[index]
    else:
        del messages[index:]


@pytest.mark.parametrize("seed", range(12))
def test_the_incremental_estimate_equals_the_full_walk_on_edited_transcripts(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    if seed % 3 == 0:  # few kept renderings: conversations are pushed out and come back
        monkeypatch.setattr(_faux_prompt, "KEPT_CONVERSATIONS", 1)
    measure = PromptMeasure()
    cache: dict[str, str] = {}
    shared_start = UserMessage(content="hello", timestamp=0)
    conversations = [[shared_start], [shared_start], [], [message(rng)]]
    shorthand = [(None, None), ("sys", None), ("", [tool(rng)]), ("sys \U0001f600", [tool(rng)])]
    for request in range(150):
        messages = rng.choice(conversations)
        edit(rng, messages)
        prompt, tools = rng.choice(shorthand) if rng.random() < 0.2 else (None, None)
        context = Context(messages=list(messages), system_prompt=prompt, tools=tools)
        session = rng.choice([None, "a", "b", ""])
        retention = rng.choice([None, "short", "none"])
        output = text(rng)
        got = measure.usage(context, output, session_id=session, cache_retention=retention)
        want = full_walk_usage(
            context, output, session_id=session, cache_retention=retention, cache=cache
        )
        assert got == want, f"seed {seed}, request {request}: {got} != {want}"


def test_a_rendering_is_the_serialized_prompt_and_its_length() -> None:
    rng = random.Random(7)
    for _ in range(50):
        context = Context(
            messages=[message(rng) for _ in range(rng.randrange(6))],
            system_prompt=rng.choice([None, "", "sys"]),
            tools=rng.choice([None, [], [tool(rng)]]),
        )
        rendering, _ = Rendering.of(context, None)
        assert rendering.text() == serialize_prompt(context)
        assert rendering.units == utf16_len(serialize_prompt(context))


def test_a_growing_transcript_renders_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: list[Any] = []
    block = _faux_prompt.message_block

    def counting(message: Any) -> str:
        rendered.append(message)
        return block(message)

    monkeypatch.setattr(_faux_prompt, "message_block", counting)
    measure = PromptMeasure()
    messages: list[Any] = [SystemMessage(content="sys", timestamp=0)]
    for turn in range(200):
        messages.append(UserMessage(content=f"turn {turn}", timestamp=0))
        measure.usage(
            Context(messages=list(messages)), "ok", session_id="s", cache_retention="short"
        )
    assert len(rendered) == len(messages) == 201
    messages[100] = UserMessage(content="edited", timestamp=0)
    measure.usage(Context(messages=list(messages)), "ok", session_id="s", cache_retention="short")
    assert len(rendered) == 201 + 101  # the edited message and all after it


async def test_an_agents_requests_are_estimated_as_the_full_walk_would() -> None:
    expected: list[Usage] = []
    cache: dict[str, str] = {}

    def answer(context: Context, options: Any, state: Any, model: Any) -> Any:
        reply = (
            faux_assistant_message([faux_text("adding"), faux_tool_call("add", {"a": 1})])
            if state.call_count < 6
            else faux_assistant_message("done \U0001f600")
        )
        expected.append(
            full_walk_usage(
                context,
                "done \U0001f600" if state.call_count >= 6 else 'adding\nadd:{"a":1}',
                session_id=options.session_id,
                cache_retention=options.cache_retention,
                cache=cache,
            )
        )
        return reply

    async def add(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text="2")], details={})

    faux = FauxProvider()
    faux.set_responses([answer] * 6)
    agent = Agent(
        model=faux.get_model(),
        system_prompt="you add",
        tools=[AgentTool(name="add", description="adds", parameters={}, execute=add)],
        stream_fn=faux,
        session_id="s1",
    )
    await agent.prompt("add")
    assistants = [m for m in agent.state.messages if m.role == "assistant"]
    assert [m.usage for m in assistants] == expected
    assert len(expected) == 6
    assert expected[-1].cache_read > 0
