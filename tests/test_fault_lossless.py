"""The fault suite, fuzzing the lossless decoder: the transcripts, messages and event logs
the original runtime wrote (``tests/fixtures/pi16``, ``pi073``), mutated in their
structure (unknown members, values of another type in known fields and in the ``role`` /
``type`` tags, members dropped, duplicated, reordered, grafted elsewhere or nested far
beyond the depth limit) and then, often, in their bytes. Every input carries at least one
unknown member, or is decoded with ``exact=True``, so it goes through
``decode_keeping_layout`` and not only msgspec's strict path
(``tests/test_fault_json.py`` fuzzes that one).

Every input either decodes to values that re-encode and decode to the same JSON, or
raises ``MessageDecodeError`` (a ``MessageValidationError`` naming the field for JSON of
the wrong shape); never ``TypeError``, ``RecursionError`` or anything else. Hypothesis
runs derandomized (a fixed seed: a failure replays as it is)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.agent import AgentEvent
from pi_trio.ai import (
    AssistantMessageEvent,
    MessageDecodeError,
    MessageValidationError,
    from_json,
    messages_from_json,
    to_json,
)
from pi_trio.ai.json import messages_from_jsonl, messages_to_jsonl

from .test_fault_json import mutated

FIXTURES = Path(__file__).parent / "fixtures"

LOSSLESS_FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Every tag the wire types know, so a mutated tag often picks another (valid) struct.
TAGS = [
    *("user", "assistant", "toolResult", "system"),
    *("text", "thinking", "image", "toolCall", "redactedThinking"),
    *("start", "text_delta", "toolcall_end", "done", "error"),
    *("agent_start", "agent_end", "message_update", "tool_execution_end", "turn_end"),
]


class Obj(list[tuple[str, Any]]):
    """A JSON object as its members in order; duplicate keys allowed."""


def parse(data: bytes) -> Any:
    return json.loads(data, object_pairs_hook=Obj)


class Nested:
    """``value`` inside ``depth`` arrays (written without recursion)."""

    def __init__(self, value: Any, depth: int) -> None:
        self.value = value
        self.depth = depth


def dump(value: Any) -> str:
    if isinstance(value, Nested):
        return "[" * value.depth + dump(value.value) + "]" * value.depth
    if isinstance(value, Obj):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def _seeds() -> tuple[list[Any], list[Any]]:
    """The transcripts (a JSON array of messages) and the event-log lines of the
    original runtime, parsed."""
    transcripts = [parse(p.read_bytes()) for p in sorted(FIXTURES.glob("pi*/*.transcript.json"))]
    transcripts += [[parse(p.read_bytes())] for p in sorted(FIXTURES.glob("pi*/*.message.json"))]
    # the events holding a message whose type pi_trio knows (an agent event's ``message``
    # is any object, and kept as plain values)
    events = [
        parse(line)
        for p in sorted(FIXTURES.glob("pi*/*.events.jsonl"))
        for line in p.read_bytes().splitlines()
        if not line.startswith((b'{"type":"agent_', b'{"type":"turn_', b'{"type":"tool_'))
        and not line.startswith((b'{"type":"message_start', b'{"type":"message_end'))
    ]
    return transcripts, events


# by name, so that hypothesis shows a strategy as ``restructured('events')``
SEEDS = dict(zip(("transcripts", "events"), _seeds(), strict=True))

_SCALARS = (
    st.none()
    | st.booleans()
    | st.sampled_from([0, -1, 1.5, 1e300, 2**64, "", "x", "\ud800", *TAGS])
    | st.text(max_size=8)
)
# Values that do not fit where they land: containers (also holding a tag), scalars.
ODD_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(
            st.tuples(st.sampled_from(["type", "role", "text", "zz"]), inner), max_size=3
        ).map(Obj)
    ),
    max_leaves=6,
)


def _containers(value: Any, found: list[Any]) -> list[Any]:
    """Every object and array of ``value``, outermost first."""
    if isinstance(value, list):
        found.append(value)
        for item in value:
            _containers(item[1] if isinstance(value, Obj) else item, found)
    return found


def _is_message(value: Any) -> bool:
    return isinstance(value, Obj) and any(key == "role" for key, _ in value)


def _replace(container: list[Any], index: int, new: Any) -> None:
    if isinstance(container, Obj):
        container[index] = (container[index][0], new)
    else:
        container[index] = new


def _value_at(container: list[Any], index: int) -> Any:
    return container[index][1] if isinstance(container, Obj) else container[index]


@st.composite
def restructured(draw: st.DrawFn, seeds: str) -> Any:
    """A deep copy of one of the ``SEEDS[seeds]`` with up to five structural mutations,
    and (unless the draw says ``bare``) an unknown member first in its first message: the
    strict path stops there, and the lossless one reads the rest of the document."""
    tree = copy.deepcopy(draw(st.sampled_from(SEEDS[seeds])))
    bare = draw(st.integers(0, 3)) == 0
    if not bare:
        first = next((o for o in _containers(tree, []) if _is_message(o)), None)
        if first is not None:
            first.insert(0, ("zz", draw(ODD_VALUES)))
    kinds = ["unknown", "retype", "tag", "drop", "duplicate", "reorder", "graft", "nest"]
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=5)):
        containers = _containers(tree, [])
        objects = [c for c in containers if isinstance(c, Obj)]
        if kind == "unknown" and objects:
            target = draw(st.sampled_from(objects))
            at = draw(st.integers(0, len(target)))
            target.insert(at, (draw(st.sampled_from(["zz", "v", "future", ""])), draw(ODD_VALUES)))
            continue
        if kind == "tag":
            tagged = [o for o in objects if any(k in ("role", "type") for k, _ in o)]
            if tagged:
                # mostly inside: a bad tag at the top stops the strict path at once
                target = draw(st.sampled_from(tagged[1:] or tagged) | st.sampled_from(tagged))
                index = next(i for i, (k, _) in enumerate(target) if k in ("role", "type"))
                _replace(target, index, draw(st.sampled_from(TAGS) | ODD_VALUES))
            continue
        filled = [c for c in containers if c]
        if not filled:
            continue
        target = draw(st.sampled_from(filled))
        index = draw(st.integers(0, len(target) - 1))
        if kind == "retype":
            _replace(target, index, draw(ODD_VALUES))
        elif kind == "drop":
            del target[index]
        elif kind == "duplicate":
            target.insert(index, target[index])
        elif kind == "reorder":
            target.reverse()
        elif kind == "graft":
            donor = draw(st.sampled_from(containers))
            _replace(target, index, copy.deepcopy(donor))
        elif kind == "nest":
            depth = draw(st.sampled_from([1, 2, 3, 300, 3_000]))
            _replace(target, index, Nested(_value_at(target, index), depth))
    return tree


@st.composite
def fuzzed(draw: st.DrawFn, seeds: str) -> bytes:
    """A restructured seed, encoded, then in half the cases mutated in its bytes too."""
    data = dump(draw(restructured(seeds))).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        data = draw(mutated((data,)))
    return data


def _decodes_cleanly(decode: Any, raw: bytes, encode: Any = to_json) -> None:
    """``decode(raw)`` gives values whose JSON decodes to the same JSON, or raises
    ``MessageDecodeError``; a ``MessageValidationError`` names the field."""
    try:
        value = decode(raw)
    except MessageDecodeError as exc:
        failure = exc
    else:
        encoded = encode(value)
        assert encode(decode(encoded)) == encoded
        return
    if isinstance(failure, MessageValidationError):
        assert failure.path is not None
        assert failure.path.startswith("$"), failure


@LOSSLESS_FUZZ
@given(st.data())
def test_a_restructured_transcript_decodes_losslessly_or_fails_with_a_decode_error(
    data: st.DataObject,
) -> None:
    raw = data.draw(fuzzed("transcripts"))
    exact = data.draw(st.booleans())
    _decodes_cleanly(lambda b: messages_from_json(b, exact=exact), raw)


@LOSSLESS_FUZZ
@given(st.data())
def test_a_restructured_event_decodes_losslessly_or_fails_with_a_decode_error(
    data: st.DataObject,
) -> None:
    raw = data.draw(fuzzed("events"))
    # the union the line was written as (a tag mutation may have changed it since)
    kind = (
        AgentEvent
        if re.match(rb'\{"type":"(agent|turn|message|tool)_', raw)
        else AssistantMessageEvent
    )
    exact = data.draw(st.booleans())
    _decodes_cleanly(lambda b: from_json(b, kind, exact=exact), raw)


@settings(LOSSLESS_FUZZ, max_examples=60)
@given(st.data())
def test_restructured_json_lines_decode_losslessly_or_fail_with_a_decode_error(
    data: st.DataObject,
) -> None:
    transcript = data.draw(restructured("transcripts"))
    items = transcript if isinstance(transcript, list) and not isinstance(transcript, Obj) else []
    raw = "\n".join(dump(item) for item in items).encode("utf-8", "surrogatepass")
    _decodes_cleanly(messages_from_jsonl, raw, messages_to_jsonl)


# --------------------------------------------------------------------------- found by fuzzing

_USER_WITH_EXTRA = '{"role":"user","content":"x","timestamp":1,"zz":1}'


@pytest.mark.parametrize(
    ("data", "path"),
    [
        # an unknown member sends the document down the lossless path; a later tag that
        # is an array or an object picks no struct, and the strict decoder names it
        (f'[{_USER_WITH_EXTRA},{{"role":[{{"type":"image"}}],"content":"x","timestamp":1}}]', "$[1].role"),
        (f'[{_USER_WITH_EXTRA},{{"role":{{}},"content":"x","timestamp":1}}]', "$[1].role"),
        ('[{"role":"user","zz":1,"content":[{"type":{},"text":"a"}],"timestamp":1}]', "$[0].content[0].type"),
        ('[{"role":"user","zz":1,"content":[{"type":["text"],"text":"a"}],"timestamp":1}]', "$[0].content[0].type"),
        ('[{"role":"user","zz":1,"content":[{"type":1.5,"text":"a"}],"timestamp":1}]', "$[0].content[0].type"),
    ],
)  # fmt: skip
def test_a_tag_that_is_not_a_string_is_a_validation_error_naming_it_on_the_lossless_path(
    data: str, path: str
) -> None:
    with pytest.raises(MessageValidationError, match=r"^Expected `str`") as caught:
        messages_from_json(data)
    assert caught.value.path == path
