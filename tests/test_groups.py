"""Task groups that are an implementation detail never wrap the caller's own exception."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pi_trio.agent import AgentContext, AgentLoopConfig, agent_loop
from pi_trio.ai import Context, open_stream
from pi_trio.ai._stream._groups import raising_sole_exception

from .helpers import MOCK_MODEL, Scripted, asst, user


def test_a_group_of_one_exception_is_raised_as_that_exception_with_its_cause() -> None:
    cause = KeyError("why")
    error = ValueError("boom")
    error.__cause__ = cause
    with pytest.raises(ValueError, match="boom") as caught, raising_sole_exception():
        raise ExceptionGroup("wrapper", [ExceptionGroup("inner", [error])])
    assert caught.value is error
    assert caught.value.__cause__ is cause


def test_a_group_of_several_exceptions_stays_a_group() -> None:
    with pytest.raises(ExceptionGroup) as caught, raising_sole_exception():
        raise ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    assert len(caught.value.exceptions) == 2


async def test_an_error_inside_open_stream_reaches_the_caller_unwrapped() -> None:
    async def consume() -> None:
        async with open_stream(MOCK_MODEL, _context(), stream_fn=_stream()) as events:
            async for _ in events:
                raise LookupError("from the body")

    with pytest.raises(LookupError, match="from the body"):
        await consume()


async def test_an_error_inside_agent_loop_reaches_the_caller_unwrapped() -> None:
    async def consume() -> None:
        config = AgentLoopConfig(model=MOCK_MODEL)
        async with agent_loop([user("hi")], AgentContext(), config, stream_fn=_stream()) as ev:
            async for _ in ev:
                raise LookupError("from the body")

    with pytest.raises(LookupError, match="from the body"):
        await consume()


async def test_a_failing_hook_inside_a_run_with_an_async_consumer_is_raised_unwrapped() -> None:
    def convert(messages: list[Any]) -> list[Any]:
        raise LookupError("convert failed")

    async def consume() -> None:
        config = AgentLoopConfig(model=MOCK_MODEL, convert_to_llm=convert)
        async with agent_loop([user("hi")], AgentContext(), config, stream_fn=_stream()) as ev:
            async for _ in ev:
                await anyio.lowlevel.checkpoint()

    with pytest.raises(LookupError, match="convert failed"):
        await consume()


def _stream() -> Scripted:
    return Scripted(asst("ok"))


def _context() -> Context:
    return Context(messages=[user("hi")])
