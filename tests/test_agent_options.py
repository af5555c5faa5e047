"""How an Agent takes its hooks and request options: grouped (``hooks=AgentHooks(...)``,
``stream_options=StreamOptions(...)``) or as keywords of their own, never both ways, and
old attribute spellings that say where the option lives now."""

from __future__ import annotations

import pytest

from pi_trio.agent import Agent, AgentHooks
from pi_trio.agent.extend import on_agent_created
from pi_trio.ai import StreamOptions
from pi_trio.testing import FauxProvider, faux_assistant_message

from .helpers import MOCK_MODEL


def test_hooks_given_grouped_or_as_keywords_land_in_agent_hooks() -> None:
    def before(context: object) -> None:
        return None

    def convert(messages: list[object]) -> list[object]:
        return messages

    grouped = Agent(model=MOCK_MODEL, hooks=AgentHooks(before_tool_call=before))
    keywords = Agent(model=MOCK_MODEL, before_tool_call=before, convert_to_llm=convert)
    assert grouped.hooks.before_tool_call is before
    assert keywords.hooks.before_tool_call is before
    assert keywords.hooks.convert_to_llm is convert


def test_request_keywords_land_in_stream_options_without_changing_the_given_ones() -> None:
    base = StreamOptions(temperature=0.5)
    agent = Agent(model=MOCK_MODEL, stream_options=base, session_id="s-1", max_retry_delay_ms=1_000)
    assert agent.stream_options.session_id == "s-1"
    assert agent.stream_options.max_retry_delay_ms == 1_000
    assert agent.stream_options.temperature == 0.5
    assert base.session_id is None


def test_a_hook_given_both_ways_is_refused() -> None:
    def hook(context: object) -> None:
        return None

    with pytest.raises(TypeError, match="got the hook 'finish_turn' twice"):
        Agent(model=MOCK_MODEL, hooks=AgentHooks(finish_turn=hook), finish_turn=hook)


def test_an_unknown_keyword_names_the_closest_one() -> None:
    with pytest.raises(TypeError, match="'befor_tool_call'; did you mean 'before_tool_call'"):
        Agent(model=MOCK_MODEL, befor_tool_call=None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("prepare_next_turn", "agent.hooks.prepare_next_turn"),
        ("session_id", "agent.stream_options"),
    ],
)
def test_the_old_attribute_spelling_says_where_the_option_lives(name: str, home: str) -> None:
    agent = Agent(model=MOCK_MODEL)
    with pytest.raises(AttributeError, match=home):
        setattr(agent, name, None)
    with pytest.raises(AttributeError, match=home):
        getattr(agent, name)


async def test_a_hook_set_on_agent_hooks_is_used_by_the_next_run() -> None:
    provider = FauxProvider()
    provider.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    agent = Agent(model=provider.get_model(), stream_fn=provider)
    seen: list[str] = []
    await agent.prompt("first")
    agent.hooks.transform_context = lambda messages: seen.append("called") or messages
    await agent.prompt("second")
    assert seen == ["called"]


def test_on_agent_created_sees_each_new_agent_fully_built_until_removed() -> None:
    seen: list[tuple[str, object, object]] = []

    def first(agent: Agent) -> None:
        seen.append(("first", agent.state.model, agent.hooks.before_tool_call))

    def second(agent: Agent) -> None:
        seen.append(("second", agent.state.model, None))

    def before(context: object) -> None:
        return None

    existing = Agent(model=MOCK_MODEL)
    remove_first = on_agent_created(first)
    remove_second = on_agent_created(second)
    remove_again = on_agent_created(first)  # the same hook twice: two registrations
    try:
        made = Agent(model=MOCK_MODEL, before_tool_call=before)
        assert seen == [
            ("first", MOCK_MODEL, before),
            ("second", MOCK_MODEL, None),
            ("first", MOCK_MODEL, before),
        ]
        assert made is not existing
        remove_again()
        remove_again()  # twice is harmless
        seen.clear()
        Agent(model=MOCK_MODEL)
        assert [who for who, *_ in seen] == ["first", "second"]
    finally:
        remove_first()
        remove_second()
    seen.clear()
    Agent(model=MOCK_MODEL)
    assert seen == []


def test_what_an_agent_created_hook_raises_comes_out_of_the_constructor() -> None:
    def refuse(agent: Agent) -> None:
        raise LookupError("no agents today")

    remove = on_agent_created(refuse)
    try:
        with pytest.raises(LookupError, match="no agents today"):
            Agent(model=MOCK_MODEL)
    finally:
        remove()
    Agent(model=MOCK_MODEL)
    with pytest.raises(TypeError, match=r"on_agent_created\(\) takes a function called"):
        on_agent_created("first")  # type: ignore[arg-type]
