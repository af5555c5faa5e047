"""``AgentTool.replay``: the durable recovery policy of a tool, runtime-only."""

from __future__ import annotations

import pytest

from pi_trio.agent import AgentTool, tool
from pi_trio.ai import to_json
from pi_trio.ai.transcript import to_tool_declaration

SCHEMA = {"type": "object", "properties": {}}


async def _noop(tool_call_id: str, params: object) -> str:
    return "ok"


def test_replay_defaults_to_never_and_accepts_safe():
    assert AgentTool(name="a", description="d", parameters=SCHEMA, execute=_noop).replay == "never"
    safe = AgentTool(name="a", description="d", parameters=SCHEMA, execute=_noop, replay="safe")
    assert safe.replay == "safe"


def test_replay_rejects_other_values_with_the_allowed_ones():
    with pytest.raises(
        ValueError, match=r"^AgentTool 'a': replay must be 'never' or 'safe', got 'always'$"
    ):
        AgentTool(name="a", description="d", parameters=SCHEMA, execute=_noop, replay="always")  # type: ignore[arg-type]


def test_the_tool_decorator_sets_replay():
    @tool(replay="safe")
    async def lookup(key: str) -> str:
        """Look a key up."""
        return key

    @tool
    async def send_mail(to: str) -> str:
        """Send a mail."""
        return to

    assert lookup.replay == "safe"
    assert send_mail.replay == "never"


def test_replay_is_never_declared_to_the_model():
    safe = AgentTool(name="a", description="d", parameters=SCHEMA, execute=_noop, replay="safe")
    assert b"replay" not in to_json(to_tool_declaration(safe))
