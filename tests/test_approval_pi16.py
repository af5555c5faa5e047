"""The transcripts of a run paused for approval, and resumed, load in the original 1.6.

``tests/fixtures/approval_pi16`` holds what pi_trio writes (``python -m
tests.approval_pi16``: a paused run's transcript with a pending and a waiting placeholder,
and the same run resumed) and what the original did with them (``original.json``,
recorded by ``tests/record_approval_pi16.mjs``): it loads them unchanged, sends each
placeholder to the model as its call's result, makes up no result of its own, and runs
on. The recorder runs only with node and the original installed (marker ``node``); the
rest checks the recording and that the committed inputs are what pi_trio writes now.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from pi_trio.agent import Agent, TranscriptChangedError, approve, edit
from pi_trio.agent.extend import pending_approvals
from pi_trio.ai import messages_from_json, messages_to_json
from pi_trio.testing import FauxProvider, faux_assistant_message

from .approval_pi16 import FIXTURES, lookup, refund, transcripts

RECORDER = Path(__file__).resolve().parent / "record_approval_pi16.mjs"
ORIGINAL = json.loads((FIXTURES / "original.json").read_text())
PLACEHOLDER = 'Tool call "refund" is waiting for approval; it has not run.'
WAITING = 'Tool call "lookup" has not run: it runs after an earlier call of this turn is approved.'


def normalized(value: Any) -> Any:
    """Without what differs between two runs: clocks, durations, and the fingerprint's
    hashes (which cover the clocks)."""
    if isinstance(value, dict):
        return {
            k: normalized(v)
            for k, v in value.items()
            if k not in ("timestamp", "durationMs", "transcript", "answer")
        }
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def committed(name: str) -> bytes:
    return (FIXTURES / f"{name}.transcript.json").read_bytes()


def test_the_committed_transcripts_are_what_pi_trio_writes_now() -> None:
    for name, data in transcripts().items():
        assert normalized(json.loads(data)) == normalized(json.loads(committed(name))), name


def test_the_committed_paused_transcript_resumes_to_the_committed_resumed_one() -> None:
    paused = messages_from_json(committed("paused"))
    assert [p.tool_call_id for p in pending_approvals(paused)] == ["call_refund"]

    async def resume() -> list[Any]:
        faux = FauxProvider(api="faux", provider="faux")
        faux.set_responses([faux_assistant_message("Refunded 450 on order 42.")])
        agent = Agent(
            model=faux.get_model(),
            stream_fn=faux,
            tools=[refund, lookup],
            tool_execution="sequential",
            messages=paused,
        )
        await agent.resume({"call_refund": edit({"order": 42, "amount": 450})})
        return agent.state.messages

    resumed = anyio.run(resume, backend="trio")
    assert normalized(json.loads(messages_to_json(resumed))) == normalized(
        json.loads(committed("resumed"))
    )


def test_the_original_loads_a_paused_transcript_and_sends_each_placeholder_as_the_result() -> None:
    seen = ORIGINAL["transcripts"]["paused"]
    assert ORIGINAL["recordedWith"]["pi-agent-core"] == "1.6.0"
    assert seen["reencodedUnchanged"] is True
    assert seen["loaded"] == len(json.loads(committed("paused")))
    results = [m for m in seen["sentToModel"] if m["role"] == "toolResult"]
    assert results == [
        {
            "role": "toolResult",
            "toolCallId": "call_lookup",
            "isError": False,
            "text": "order 42: delivered",
        },
        {"role": "toolResult", "toolCallId": "call_refund", "isError": True, "text": PLACEHOLDER},
        {"role": "toolResult", "toolCallId": "call_after", "isError": True, "text": WAITING},
    ]
    # no dangling call: the original made up no result, where without the placeholders
    # it makes one up for each waiting call
    assert seen["madeUpResults"] == []
    assert seen["madeUpWithoutPlaceholders"] == [
        {"toolCallId": "call_refund", "text": "No result provided"},
        {"toolCallId": "call_after", "text": "No result provided"},
    ]
    assert seen["stopReason"] == "stop"
    assert seen["errorMessage"] is None
    assert seen["events"][0] == "agent_start"
    assert seen["events"][-1] == "agent_end"


def test_the_original_loads_the_resumed_transcript() -> None:
    seen = ORIGINAL["transcripts"]["resumed"]
    assert seen["reencodedUnchanged"] is True
    assert seen["madeUpResults"] == []
    assert seen["madeUpWithoutPlaceholders"] == []
    assert [m["toolCallId"] for m in seen["sentToModel"] if m["role"] == "toolResult"] == [
        "call_lookup",
        "call_refund",
        "call_after",
    ]
    assert seen["stopReason"] == "stop"


def test_what_the_original_made_of_a_paused_transcript_loads_in_pi_trio_and_is_no_longer_resumable() -> (
    None
):
    transcript = json.dumps(ORIGINAL["transcripts"]["paused"]["transcript"], separators=(",", ":"))
    messages = messages_from_json(transcript, exact=True)
    assert messages_to_json(messages).decode() == transcript
    # the original went on past the pause: the placeholders are the calls' results now
    assert pending_approvals(messages) == ()

    async def resume() -> None:
        faux = FauxProvider(api="faux", provider="faux")
        agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[refund], messages=messages)
        with pytest.raises(TranscriptChangedError, match=r"\(system, assistant\) were added after"):
            await agent.resume({"call_refund": approve()})

    anyio.run(resume, backend="trio")


@pytest.mark.node
def test_recording_again_gives_the_committed_observations(tmp_path: Path) -> None:
    directory = os.environ.get("PI16_DIR")
    if shutil.which("node") is None or not directory:
        pytest.skip(
            "set PI16_DIR to a folder with the original installed (npm install --prefix <dir> "
            "@earendil-works/pi-agent-core@1.6.0 @earendil-works/pi-ai@1.6.0) and have node on PATH"
        )
    for path in FIXTURES.glob("*.transcript.json"):
        shutil.copy(path, tmp_path / path.name)
    done = subprocess.run(
        ["node", str(RECORDER), directory, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    again = json.loads((tmp_path / "original.json").read_text())
    assert again["transcripts"] == ORIGINAL["transcripts"]
