"""The transcripts compaction and sub-agents write load in the original 1.6.

``tests/fixtures/pi16/features.json`` was recorded by ``tests/pi16_features.py``: each
transcript (a compacted run; a parent that delegated to sub-agents, finished and aborted,
and a child of each) was loaded into the original's ``Agent``, which was prompted once
more; the fixture keeps what it sent to its model and its transcript afterwards. Here:
pi_trio still writes those transcripts, the original kept every message as it was, and
it sends its model what pi_trio sends for the same transcript. Loading them again needs
node and the original (marker ``node``; installed once under benchmarks/.cache unless
PI16_DIR names a folder that has it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_trio.agent import Agent, AgentTool
from pi_trio.agent.compaction import SUMMARY_PREFIX
from pi_trio.ai import messages_from_json, to_json
from pi_trio.ai.transcript import get_current_tools
from pi_trio.testing import FauxProvider, faux_assistant_message

from .pi16_features import FIXTURE, build, load_in_original, normalized

RECORDED = json.loads(FIXTURE.read_text())
RESULTS = {r["name"]: r for r in RECORDED["results"]}


def test_the_fixture_was_recorded_from_the_original_1_6() -> None:
    assert RECORDED["recordedWith"] == {
        "@earendil-works/pi-agent-core": "1.6.0",
        "@earendil-works/pi-ai": "1.6.0",
    }
    assert set(RESULTS) == {
        "compaction",
        "subagent_parent",
        "subagent_child",
        "subagent_parent_aborted",
        "subagent_child_aborted",
    }


def test_pi_trio_still_writes_the_transcripts_the_original_loaded() -> None:
    for case in build():
        assert case["transcript"] == RESULTS[case["name"]]["transcript"], case["name"]


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_the_original_keeps_every_message_as_pi_trio_wrote_it(name: str) -> None:
    result = RESULTS[name]
    transcript = result["transcript"]
    after = result["after"]
    assert after[: len(transcript)] == transcript
    assert [m["role"] for m in after[len(transcript) :]] == ["user", "assistant"]
    assert after[-1]["content"] == [{"type": "text", "text": "continued"}]
    assert after[-1]["stopReason"] == "stop"


@pytest.mark.parametrize("name", sorted(RESULTS))
async def test_the_original_sends_its_model_what_pi_trio_sends(name: str) -> None:
    result = RESULTS[name]
    messages = messages_from_json(json.dumps(result["transcript"]))
    sent: list[Any] = []

    def respond(context: Any, *_: Any) -> Any:
        sent.extend(context.messages)
        return faux_assistant_message("continued")

    faux = FauxProvider()
    faux.set_responses([respond])
    tools = [
        AgentTool(name=t.name, description=t.description, parameters=t.parameters, execute=_unused)
        for t in get_current_tools(messages)
    ]
    agent = Agent(model=faux.get_model(), stream_fn=faux, messages=messages, tools=tools)
    await agent.prompt("continue")
    ours = normalized(json.loads(to_json(sent)))
    assert ours == normalized(result["sent"])


def test_the_original_sends_the_summary_as_a_user_message_after_the_system_prompt() -> None:
    sent = RESULTS["compaction"]["sent"]
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == "You are terse."
    assert sent[1]["role"] == "user"
    assert sent[1]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    assert "summary 2" in sent[1]["content"][0]["text"]
    roles = [m["role"] for m in sent[2:]]
    assert roles[:2] == ["assistant", "toolResult"]  # a kept call with its result


def test_the_original_keeps_a_sub_agents_usage_and_run_in_its_result() -> None:
    for name in ("subagent_parent", "subagent_parent_aborted"):
        results = [m for m in RESULTS[name]["after"] if m["role"] == "toolResult"]
        assert len(results) == 2
        for result in results:
            assert result["usage"]["output"] > 0
    finished = [m for m in RESULTS["subagent_parent"]["after"] if m["role"] == "toolResult"]
    assert finished[0]["details"]["messages"][-1]["role"] == "assistant"
    assert finished[0]["content"][0]["text"].startswith("child answer 0")
    # what the original sends its model of a tool result: the content, not the details
    sent = [m for m in RESULTS["subagent_parent"]["sent"] if m["role"] == "toolResult"]
    assert sent == finished


async def _unused(*_: Any) -> str:
    return "unused"


def _original_package() -> Path:
    """PI16_DIR, or the original installed once under benchmarks/.cache (as the proxy's
    tests of the 1.6 client do)."""
    from .test_proxy_server import PI16_PACKAGES, npm_installed

    directory = os.environ.get("PI16_DIR")
    root = Path(directory) if directory else npm_installed("pi16", *PI16_PACKAGES)
    if shutil.which("node") is None or not (root / "node_modules/@earendil-works/pi-ai").is_dir():
        pytest.skip(f"{root} holds no @earendil-works/pi-ai 1.6 (or node is missing)")
    return root


@pytest.mark.node
def test_loading_again_in_the_original_gives_the_recorded_fixture() -> None:
    package = _original_package()
    given = build()
    loaded = load_in_original(package, given)
    for case, result in zip(given, loaded["results"], strict=True):
        recorded = RESULTS[case["name"]]
        assert result["sent"] == recorded["sent"], case["name"]
        assert result["after"] == recorded["after"], case["name"]
