"""pi_trio's SSE framing against httpx2's own ``EventSource``: every recorded SSE fixture
(every provider, and the bodies recorded from pi 1.6) gives the same events through both,
fed whole and in small pieces, with LF, CRLF and CR line ends. ``_sse`` says why pi_trio
keeps its own parser; this test keeps it honest.

The one deliberate difference: a body whose last event is not followed by a blank line.
``EventSource`` drops that event (the HTML standard's rule at the end of a stream);
pi_trio delivers it, because servers and proxies that cut the final blank line are common
and the event is often the usage or the terminal one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from pi_trio.ai.providers._sse import MAX_SSE_EVENT_BYTES, SSEParser

FIXTURES = Path(__file__).parent / "fixtures"
BODIES = sorted(FIXTURES.glob("**/*.sse"))
LINE_ENDS = {"lf": b"\n", "crlf": b"\r\n", "cr": b"\r"}


class _Pieces(httpx2.SyncByteStream):
    def __init__(self, body: bytes, size: int) -> None:
        self.body, self.size = body, size

    def __iter__(self) -> Iterator[bytes]:
        for i in range(0, len(self.body), self.size):
            yield self.body[i : i + self.size]


def event_source(body: bytes, size: int) -> list[tuple[str, str]]:
    response = httpx2.Response(
        200,
        headers={"content-type": "text/event-stream"},
        stream=_Pieces(body, size),
        request=httpx2.Request("POST", "https://provider.test/stream"),
    )
    source = httpx2.EventSource(response, max_event_size=MAX_SSE_EVENT_BYTES)
    return [("" if sse.event == "message" else sse.event, sse.data) for sse in source]


def own_parser(body: bytes, size: int) -> list[tuple[str, str]]:
    parser = SSEParser()
    events = []
    for i in range(0, len(body), size):
        events.extend(parser.feed(body[i : i + size]))
    events.extend(parser.close())
    return [(event.event, event.data) for event in events]


def test_there_are_fixtures_of_every_provider() -> None:
    assert {p.parent.name for p in BODIES} >= {
        "anthropic",
        "google",
        "openai_completions",
        "openai_responses",
        "pi16",
    }
    assert len(BODIES) >= 40


@pytest.mark.parametrize("line_end", list(LINE_ENDS))
@pytest.mark.parametrize("path", BODIES, ids=[f"{p.parent.name}/{p.name}" for p in BODIES])
def test_every_recorded_body_gives_the_same_events_as_httpx2_event_source(
    path: Path, line_end: str
) -> None:
    body = path.read_bytes().replace(b"\n", LINE_ENDS[line_end])
    end = LINE_ENDS[line_end]
    terminated = re.search(rb"(\r\n|\r|\n)(\r\n|\r|\n)$", body) is not None
    for size in (len(body) or 1, 7, 1):
        ours, theirs = own_parser(body, size), event_source(body, size)
        if terminated:
            assert ours == theirs
        else:
            # the deliberate difference (module docstring): the unterminated last event
            assert ours[:-1] == theirs
            assert event_source(body + end + end, size) == ours
