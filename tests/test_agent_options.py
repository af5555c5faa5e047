"""How an Agent is configured: four groups (``hooks=AgentHooks(...)``,
``stream_options=StreamOptions(...)``, ``policy=RunPolicy(...)``,
``output=OutputSettings(...)``), the flat keywords as a compatibility spelling that lands
in the same groups (never both ways), and the old attribute names, which say where each
setting lives now."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from pi_trio.agent import (
    Agent,
    AgentHooks,
    FallbackPolicy,
    OutputSettings,
    RunLimits,
    RunPolicy,
    tool,
)
from pi_trio.agent.extend import on_agent_created
from pi_trio.ai import RetryPolicy, StreamOptions
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .helpers import MOCK_MODEL


def test_hooks_given_grouped_or_as_keywords_land_in_agent_hooks() -> None:
    def before(context: object) -> None:
        return None

    def convert(messages: list[object]) -> list[object]:
        return messages

    given = AgentHooks(before_tool_call=before)
    grouped = Agent(model=MOCK_MODEL, hooks=given)
    keywords = Agent(model=MOCK_MODEL, before_tool_call=before, convert_to_llm=convert)
    assert grouped.hooks.before_tool_call is before
    assert grouped.hooks is not given  # the agent's own copy
    assert keywords.hooks.before_tool_call is before
    assert keywords.hooks.convert_to_llm is convert


def test_request_keywords_land_in_stream_options_without_changing_the_given_ones() -> None:
    base = StreamOptions(temperature=0.5)
    agent = Agent(model=MOCK_MODEL, stream_options=base, session_id="s-1", max_retry_delay_ms=1_000)
    assert agent.stream_options.session_id == "s-1"
    assert agent.stream_options.max_retry_delay_ms == 1_000
    assert agent.stream_options.temperature == 0.5
    assert base.session_id is None


def test_policy_and_output_keywords_land_in_their_groups() -> None:
    retry = RetryPolicy(max_retries=2)
    flat = Agent(
        model=MOCK_MODEL,
        tool_execution="sequential",
        max_concurrent_tools=3,
        close_timeout=1.5,
        retry=retry,
        steering_mode="all",
        follow_up_mode="all",
        output_type=dict,
        output_mode="tool",
        max_output_retries=0,
    )
    assert flat.policy == RunPolicy(
        tool_execution="sequential",
        max_concurrent_tools=3,
        close_timeout=1.5,
        retry=retry,
        steering_mode="all",
        follow_up_mode="all",
    )
    assert flat.output == OutputSettings(type=dict, mode="tool", max_retries=0)
    given = RunPolicy(close_timeout=1.0)
    both = Agent(model=MOCK_MODEL, policy=given, tool_execution="sequential")
    assert both.policy == RunPolicy(close_timeout=1.0, tool_execution="sequential")
    assert given.tool_execution == "parallel"


def test_fallback_and_limits_are_run_policy_given_grouped_flat_or_as_a_model_list() -> None:
    faux = FauxProvider(models=[{"id": "primary"}, {"id": "backup"}])
    primary, backup = faux.get_model("primary"), faux.get_model("backup")
    chain, limits = FallbackPolicy(models=[backup]), RunLimits(max_requests=5)
    grouped = Agent(model=primary, policy=RunPolicy(fallback=chain, limits=limits))
    flat = Agent(model=primary, fallback=chain, limits=limits)
    assert grouped.policy == flat.policy == RunPolicy(fallback=chain, limits=limits)
    given = RunPolicy(tool_execution="sequential")
    listed = Agent(model=[primary, backup], policy=given)  # type: ignore[list-item]
    assert listed.state.model is primary
    assert listed.policy.fallback == FallbackPolicy(models=[backup])
    assert listed.policy.tool_execution == "sequential"
    assert given.fallback is None  # the given policy is not changed
    refused = r"^Agent\(model=\[...\]\) with several models already is a fallback chain"
    with pytest.raises(TypeError, match=refused):
        Agent(model=[primary, backup], policy=RunPolicy(fallback=chain))  # type: ignore[list-item]
    with pytest.raises(TypeError, match=refused):
        Agent(model=[primary, backup], fallback=chain)  # type: ignore[list-item]


async def test_fallback_and_limits_in_the_policy_reach_the_run() -> None:
    faux = FauxProvider(models=[{"id": "primary"}, {"id": "backup"}])
    overloaded = faux_assistant_message("", stop_reason="error", error_message="529 Overloaded")
    faux.set_responses([overloaded, faux_assistant_message("backup answers")])
    primary, backup = faux.get_model("primary"), faux.get_model("backup")
    policy = RunPolicy(
        fallback=FallbackPolicy(models=[backup]), limits=RunLimits(max_requests=3, per="agent")
    )
    agent = Agent(model=primary, stream_fn=faux, policy=policy)
    result = await agent.prompt("go")
    assert (result.text, result.final.model) == ("backup answers", "backup")
    assert agent.limit_counters.requests == 2  # counted for the agent: per="agent"
    # a policy assigned anew is read by the next run: one request left, then the limit
    agent.policy = msgspec.structs.replace(
        agent.policy, limits=RunLimits(max_requests=2, per="agent")
    )
    faux.set_responses([faux_assistant_message("never asked")])
    limited = await agent.prompt("again")
    assert limited.stop_reason == "aborted"
    assert "RunLimits(max_requests=2)" in (limited.error_message or "")


def test_every_flat_keyword_lands_in_the_field_the_readme_names() -> None:
    """The compatibility list of the README's "Configuring an Agent" is the real one."""
    from pathlib import Path

    from pi_trio.agent import _options

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    prose = " ".join(
        readme.split("**The flat keywords still work**", 1)[1].split("\n\n", 1)[0].split()
    )
    hooks = set(AgentHooks.__struct_fields__)
    policy = set(RunPolicy.__struct_fields__)
    named = {n for n in _options.FLAT_KEYWORDS if f"`{n}`" in prose}
    # the policy's fields that came with the groups have no flat keyword: named as such
    grouped_only = policy - set(_options.FLAT_KEYWORDS)
    assert grouped_only == {"compaction"}
    assert set(_options.FLAT_KEYWORDS) - named == hooks | (policy - grouped_only)
    assert "each hook" in prose
    assert "the policy's fields other than `compaction`" in prose
    assert "`Agent(compaction=...)` raises" in prose


def test_a_setting_given_both_ways_is_refused() -> None:
    def hook(context: object) -> None:
        return None

    with pytest.raises(
        TypeError, match=r"^Agent\(\) got 'finish_turn' twice: as a keyword and in hooks="
    ):
        Agent(model=MOCK_MODEL, hooks=AgentHooks(finish_turn=hook), finish_turn=hook)
    with pytest.raises(
        TypeError, match=r"^Agent\(\) got 'close_timeout' twice: as a keyword and in policy="
    ):
        Agent(model=MOCK_MODEL, policy=RunPolicy(close_timeout=1), close_timeout=2)
    with pytest.raises(
        TypeError, match=r"^Agent\(\) got 'output_mode' twice: as a keyword and in output="
    ):
        Agent(model=MOCK_MODEL, output=OutputSettings(mode="tool"), output_mode="native")


def test_an_unknown_keyword_names_the_closest_one() -> None:
    with pytest.raises(TypeError, match="'befor_tool_call'; did you mean 'before_tool_call'"):
        Agent(model=MOCK_MODEL, befor_tool_call=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'polcy'; did you mean 'policy'"):
        Agent(model=MOCK_MODEL, polcy=RunPolicy())  # type: ignore[call-arg]


def test_a_grouped_only_setting_given_flat_names_its_group() -> None:
    """``compaction`` came with the groups: it has one spelling, and the flat one says
    which (as the README's "Configuring an Agent" quotes)."""
    with pytest.raises(TypeError) as caught:
        Agent(model=MOCK_MODEL, compaction=None)  # type: ignore[call-arg]
    assert str(caught.value) == (
        "Agent(compaction=...): compaction is a setting of policy=; give it as "
        "Agent(policy=RunPolicy(compaction=...))"
    )
    with pytest.raises(TypeError, match=r"give it as Agent\(stream_options=StreamOptions"):
        Agent(model=MOCK_MODEL, temperature=0.2)  # type: ignore[call-arg]


def test_the_removed_transport_option_says_why() -> None:
    with pytest.raises(
        TypeError, match=r"^Agent\(transport=...\): it was removed: no provider read it"
    ):
        Agent(model=MOCK_MODEL, transport="sse")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="transport"):
        StreamOptions(transport="sse")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("prepare_next_turn", "agent.hooks.prepare_next_turn"),
        ("session_id", "agent.stream_options.session_id"),
        ("tool_execution", "agent.policy.tool_execution"),
        ("close_timeout", "agent.policy.close_timeout"),
        ("steering_mode", "agent.policy.steering_mode"),
        ("fallback", "agent.policy.fallback"),
        ("limits", "agent.policy.limits"),
        ("output_type", "agent.output.type"),
        ("max_output_retries", "agent.output.max_retries"),
    ],
)
def test_the_old_attribute_spelling_says_where_the_setting_lives(name: str, home: str) -> None:
    agent = Agent(model=MOCK_MODEL)
    text = f"^Agent.{name} moved: use {home}$"
    with pytest.raises(AttributeError, match=text):
        setattr(agent, name, None)
    with pytest.raises(AttributeError, match=text):
        getattr(agent, name)
    assert not hasattr(agent, name)


def test_a_misspelt_attribute_is_an_error_not_a_new_attribute() -> None:
    agent = Agent(model=MOCK_MODEL)
    with pytest.raises(AttributeError, match="'Agent' object has no attribute 'stream_fun'"):
        agent.stream_fun = None  # type: ignore[attr-defined]
    assert not hasattr(agent, "__dict__")


def test_an_agent_given_no_groups_shares_the_default_policy_and_output() -> None:
    first, second = Agent(model=MOCK_MODEL), Agent(model=MOCK_MODEL)
    assert first.policy is second.policy
    assert first.output is second.output
    assert first.policy == RunPolicy()
    assert first.output == OutputSettings()


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (
            lambda: RunPolicy(tool_execution="eager"),
            "RunPolicy(tool_execution=...) must be 'sequential' or 'parallel'; got 'eager'",
        ),
        (
            lambda: RunPolicy(max_concurrent_tools=0),
            "RunPolicy(max_concurrent_tools=...) must be a whole number of at least 1 (or None: no limit); got 0",
        ),
        (
            lambda: RunPolicy(max_concurrent_tools=True),
            "RunPolicy(max_concurrent_tools=...) must be a whole number of at least 1 (or None: no limit); got True",
        ),
        (
            lambda: RunPolicy(close_timeout="5"),
            "RunPolicy(close_timeout=...) must be seconds, got '5'",
        ),
        (
            lambda: RunPolicy(close_timeout=-1),
            "RunPolicy(close_timeout=...) must be seconds, 0 or more; got -1",
        ),
        (
            lambda: RunPolicy(close_timeout=float("nan")),
            "RunPolicy(close_timeout=...) must be seconds, 0 or more; got nan",
        ),
        (
            lambda: RunPolicy(retry=3),
            "RunPolicy(retry=...) takes a RetryPolicy (from pi_trio.ai), such as RetryPolicy(max_retries=3), or None; got 3",
        ),
        (
            lambda: RunPolicy(fallback="openai/gpt-4o-mini"),
            "RunPolicy(fallback=...) takes a FallbackPolicy, such as FallbackPolicy(models=['openai/gpt-4o-mini']), or None; got 'openai/gpt-4o-mini'",
        ),
        (
            lambda: RunPolicy(limits={"max_requests": 3}),
            "RunPolicy(limits=...) takes RunLimits, such as RunLimits(max_requests=20), or None; got {'max_requests': 3}",
        ),
        (
            lambda: RunPolicy(steering_mode="some"),
            "RunPolicy(steering_mode=...) must be 'one-at-a-time' or 'all'; got 'some'",
        ),
        (
            lambda: RunPolicy(follow_up_mode=None),
            "RunPolicy(follow_up_mode=...) must be 'one-at-a-time' or 'all'; got None",
        ),
        (
            lambda: OutputSettings(mode="json"),
            "OutputSettings(mode=...) must be 'auto', 'native' or 'tool'; got 'json'",
        ),
        (
            lambda: OutputSettings(max_retries=1.5),
            "OutputSettings(max_retries=...) must be a whole number, 0 or more; got 1.5",
        ),
        (
            lambda: AgentHooks(finish_turn="end"),
            "AgentHooks(finish_turn=...) takes a function (sync or async), got 'end'",
        ),
        (
            lambda: Agent(model=MOCK_MODEL, policy={"tool_execution": "sequential"}),
            "Agent(policy=...) takes a RunPolicy, such as RunPolicy(tool_execution='sequential'), got {'tool_execution': 'sequential'}",
        ),
        (
            lambda: Agent(model=MOCK_MODEL, hooks=print),
            "Agent(hooks=...) takes an AgentHooks, such as AgentHooks(before_tool_call=check), got <built-in function print>",
        ),
    ],
)
def test_a_wrong_setting_is_refused_where_it_is_made(make: Any, text: str) -> None:
    with pytest.raises((TypeError, ValueError)) as caught:
        make()
    assert str(caught.value) == text


def test_a_policy_is_frozen_and_a_new_one_is_read_by_the_next_run() -> None:
    agent = Agent(model=MOCK_MODEL)
    with pytest.raises(AttributeError):
        agent.policy.close_timeout = 1.0  # type: ignore[misc]
    agent.policy = msgspec.structs.replace(agent.policy, tool_execution="sequential")
    assert agent.policy.tool_execution == "sequential"
    with pytest.raises(TypeError, match=r"^Agent\(policy=...\) takes a RunPolicy"):
        agent.policy = "sequential"  # type: ignore[assignment]
    with pytest.raises(ValueError, match="tool_execution"):
        msgspec.structs.replace(agent.policy, tool_execution="eager")  # type: ignore[arg-type]


async def test_a_queue_mode_assigned_with_a_policy_applies_to_the_queue() -> None:
    faux = FauxProvider()
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("both")])
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    await agent.prompt("start")
    agent.policy = RunPolicy(follow_up_mode="all")
    agent.follow_up("a")
    agent.follow_up("b")
    assert [m.content[0].text for m in agent.peek_queued_messages()] == ["a", "b"]
    result = await agent.continue_()
    assert [m.role for m in result.messages] == ["user", "user", "assistant"]


@pytest.mark.parametrize(
    ("policy", "order"),
    [
        (RunPolicy(tool_execution="sequential"), ["start 0", "end 0"]),
        (RunPolicy(), ["start 0", "start 1"]),  # the default: parallel
    ],
)
async def test_the_policy_reaches_the_run(
    autojump_clock: Any, policy: RunPolicy, order: list[str]
) -> None:
    seen: list[str] = []

    @tool
    async def step(value: str) -> str:
        """Take a step that waits."""
        seen.append(f"start {value}")
        await trio.sleep(1)
        seen.append(f"end {value}")
        return value

    faux = FauxProvider()
    calls = [faux_tool_call("step", {"value": str(i)}) for i in range(2)]
    faux.set_responses(
        [faux_assistant_message(calls, stop_reason="toolUse"), faux_assistant_message("done")]
    )
    agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[step], policy=policy)
    await agent.prompt("go")
    assert seen[:2] == order


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


def test_the_given_hooks_and_request_options_are_copied_for_the_agent() -> None:
    options = StreamOptions(temperature=0.5)
    hooks = AgentHooks()
    agent = Agent(model=MOCK_MODEL, stream_options=options, hooks=hooks)
    agent.stream_options.max_tokens = 5
    agent.hooks.finish_turn = lambda context: "end"
    assert options.max_tokens is None
    assert hooks.finish_turn is None
    assert Agent(model=MOCK_MODEL, stream_options=options).stream_options.max_tokens is None
