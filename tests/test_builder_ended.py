"""``MessageBuilder`` remembers which blocks ended (a bit per block, not a set per
request): an ended block takes no more deltas and is not open any more."""

from __future__ import annotations

import pytest

from pi_trio.ai import StreamProtocolError
from pi_trio.ai.providers import MessageBuilder

from .helpers import MOCK_MODEL


def test_an_ended_block_takes_no_delta_and_is_not_open() -> None:
    builder = MessageBuilder(MOCK_MODEL)
    builder.start()
    text = builder.text_start().content_index
    call = builder.toolcall_start("c1", "echo").content_index
    late = builder.text_start().content_index
    builder.text_delta(text, "a")
    builder.text_end(text)
    builder.toolcall_end(call)
    assert builder.open_block_indices() == [late]
    with pytest.raises(StreamProtocolError, match="content index 0, which is not an open"):
        builder.text_delta(text, "b")
    with pytest.raises(StreamProtocolError, match="content index 1, which is not an open"):
        builder.toolcall_delta(call, "{}")
    builder.text_delta(late, "c")  # still open
    assert [type(e).__name__ for e in builder.end_open_blocks()] == ["TextEndEvent"]
    assert builder.open_block_indices() == []
