"""Mistakes in ``Agent(...)``, ``subscribe``, ``agent.state`` and what a run is given
(``prompt``, ``steer``, ``follow_up``) are caught where they are made: one line naming the
argument, the value and what to give instead."""

from __future__ import annotations

from typing import Any

import pytest

from pi_trio.agent import Agent
from pi_trio.ai import UnknownModelError, get_model
from pi_trio.testing import FauxProvider

from .helpers import MOCK_MODEL

MODEL_HINT = (
    "a catalog name such as 'anthropic/claude-haiku-4-5' (`pi-trio models` lists them) or "
    "a Model; offline, a FauxProvider from pi_trio.testing: "
    "Agent(model=faux.get_model(), stream_fn=faux)"
)


def one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("arguments", [{}, {"model": None}])
def test_an_agent_without_a_model_says_how_to_pick_one(arguments: dict[str, Any]) -> None:
    with pytest.raises(TypeError) as caught:
        Agent(**arguments)
    assert one_line(caught.value) == f"Agent(model=...) is required: {MODEL_HINT}"


def test_a_model_name_is_resolved_and_a_typo_names_the_argument_and_the_closest_names() -> None:
    assert Agent(model="anthropic/claude-haiku-4-5").state.model == get_model(
        "anthropic", "claude-haiku-4-5"
    )
    with pytest.raises(UnknownModelError) as caught:
        Agent(model="anthropic/claude-hiku-4-5")
    assert one_line(caught.value).startswith(
        "Agent(model='anthropic/claude-hiku-4-5'): unknown model 'claude-hiku-4-5' for "
        "provider 'anthropic'; did you mean 'claude-haiku-4-5'"
    )


def test_the_command_lines_offline_model_points_to_the_faux_provider() -> None:
    with pytest.raises(UnknownModelError, match=r"command line's offline model; in code, use a"):
        Agent(model="faux/faux-1")


@pytest.mark.parametrize(
    ("arguments", "error", "text"),
    [
        ({"model": 42}, TypeError, "Agent(model=...) takes a Model or 'provider/model-id', got 42"),
        (
            {"thinking_level": "bogus"},
            ValueError,
            "Agent(thinking_level=...) must be one of off, minimal, low, medium, high, xhigh, "
            "max; got 'bogus'",
        ),
        (
            {"tool_execution": "eager"},
            ValueError,
            "RunPolicy(tool_execution=...) must be 'sequential' or 'parallel'; got 'eager'",
        ),
        (
            {"max_concurrent_tools": 0},
            ValueError,
            "RunPolicy(max_concurrent_tools=...) must be a whole number of at least 1 (or None: no "
            "limit); got 0",
        ),
        (
            {"close_timeout": "5"},
            TypeError,
            "RunPolicy(close_timeout=...) must be seconds, got '5'",
        ),
        (
            {"close_timeout": -1},
            ValueError,
            "RunPolicy(close_timeout=...) must be seconds, 0 or more; got -1",
        ),
        (
            {"stream_fn": "openai"},
            TypeError,
            "Agent(stream_fn=...) takes a function called as stream_fn(model, context, options, "
            "send), got 'openai'",
        ),
        (
            {"before_tool_call": 42},
            TypeError,
            "AgentHooks(before_tool_call=...) takes a function (sync or async), got 42",
        ),
        (
            {"messages": "hello"},
            TypeError,
            "Agent(messages=...) takes a list of messages (the transcript), got 'hello'",
        ),
        ({"system_prompt": 3}, TypeError, "Agent(system_prompt=...) takes a str, got 3"),
        (
            {"messages": ["hello"]},
            TypeError,
            "Agent(messages=...): item 0 is 'hello', not a message (an object with a role, "
            "such as a UserMessage)",
        ),
        (
            {"tools": [print]},
            TypeError,
            "Agent(tools=...): tools[0] is <built-in function print>; expected an AgentTool (e.g. "
            "from @tool) or a Tool",
        ),
    ],
)
def test_a_wrong_argument_is_one_line_naming_it(
    arguments: dict[str, Any], error: type[Exception], text: str
) -> None:
    arguments = {"model": MOCK_MODEL, **arguments}
    with pytest.raises(error) as caught:
        Agent(**arguments)
    assert one_line(caught.value) == text


def test_subscribe_takes_a_function() -> None:
    agent = Agent(model=MOCK_MODEL)
    with pytest.raises(TypeError) as caught:
        agent.subscribe(42)  # type: ignore[arg-type]
    assert one_line(caught.value) == (
        "Agent.subscribe() takes a function called as listener(event) or "
        "listener(event, signal), got 42"
    )


def test_state_assignments_are_checked_like_the_constructor() -> None:
    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    with pytest.raises(TypeError, match=r"^agent\.state\.model is required: a catalog name"):
        agent.state.model = None  # type: ignore[assignment]
    with pytest.raises(UnknownModelError, match=r"^agent\.state\.model = 'openai/gpt-9': "):
        agent.state.model = "openai/gpt-9"
    with pytest.raises(ValueError, match=r"^agent\.state\.thinking_level must be one of off, "):
        agent.state.thinking_level = "huge"
    assert agent.state.model == faux.get_model()
    agent.state.model = "openai/gpt-5-mini"
    assert agent.state.model.id == "gpt-5-mini"
    agent.state.thinking_level = "high"
    assert agent.state.thinking_level == "high"


MESSAGE = "a message (an object with a role, such as a UserMessage)"


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda agent: agent.steer(42), f"Agent.steer() takes a str or {MESSAGE}, got 42"),
        (
            lambda agent: agent.follow_up(None),
            f"Agent.follow_up() takes a str or {MESSAGE}, got None",
        ),
    ],
)
def test_steering_and_follow_up_messages_are_checked_when_queued(call: Any, text: str) -> None:
    agent = Agent(model=MOCK_MODEL)
    with pytest.raises(TypeError) as caught:
        call(agent)
    assert one_line(caught.value) == text


@pytest.mark.parametrize(
    ("prompt", "text"),
    [
        (42, f"Agent.prompt() takes a str or {MESSAGE}, got 42"),
        (
            ["hi"],
            f"Agent.prompt([...]): item 0 is 'hi', not {MESSAGE}; give a str alone, not in a list",
        ),
    ],
)
async def test_a_prompt_that_is_not_a_message_is_refused_before_the_run(
    prompt: Any, text: str
) -> None:
    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    with pytest.raises(TypeError) as caught:
        await agent.prompt(prompt)
    assert one_line(caught.value) == text
    assert faux.state.call_count == 0
    assert agent.state.messages == []  # nothing reached the transcript
    assert not agent.state.is_streaming
