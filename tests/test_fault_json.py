"""The fault suite, fuzzing: the recorded provider streams in ``tests/fixtures``, the
transcripts they make and the transcripts the original runtime wrote, mutated by
hypothesis, seeded. Decoding a transcript either gives
messages that round-trip or raises ``msgspec.DecodeError`` / ``ValidationError``, never
``RecursionError`` or anything else; a mutated stream replayed through its provider ends
in exactly one terminal event; the proxy's decoders fail only with their documented
errors."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_trio.ai import (
    AssistantMessage,
    Context,
    Message,
    Model,
    StreamProtocolError,
    TextContent,
    ToolResultMessage,
    UserMessage,
    get_model,
    messages_from_json,
    messages_to_json,
    open_stream,
)
from pi_trio.proxy._rebuild import ProxyRebuilder
from pi_trio.proxy._wire import ProxyRequest, decode_request, encode_event, encode_request
from pi_trio.testing import ReplayResponse, ReplayTransport, registry_with_transport

FIXTURES = Path(__file__).parent / "fixtures"
MODELS = {
    "anthropic": ("anthropic", "claude-haiku-4-5"),
    "openai_completions": ("groq", "openai/gpt-oss-120b"),
    "openai_responses": ("openai", "gpt-5-mini"),
    "google": ("google", "gemini-2.5-flash"),
    "mistral": ("mistral", "mistral-small-latest"),
    "pi_messages": ("radius", "balanced"),
}
# The streams recorded from pi 1.6, by the prefix of their name: the Responses dialects
# of Azure and Codex read like OpenAI's; the rest are chat completions.
RECORDED_PREFIXES = {
    "mistral_": "mistral",
    "pimessages_": "pi_messages",
    "azure_": "openai_responses",
    "codex_": "openai_responses",
}
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def model_for(directory: str) -> Model:
    model = get_model(*MODELS[directory])
    assert model is not None
    return model


def recorded_streams() -> list[tuple[str, bytes]]:
    """Every recorded provider stream, with the directory naming its API (the streams
    recorded from pi 1.6: ``RECORDED_PREFIXES``)."""
    streams = []
    for path in sorted(FIXTURES.glob("*/*.sse")):
        directory = path.parent.name
        if directory.startswith("pi"):
            directory = next(
                (api for prefix, api in RECORDED_PREFIXES.items() if path.name.startswith(prefix)),
                "openai_completions",
            )
        streams.append((directory, path.read_bytes()))
    return streams


def original_transcripts() -> list[bytes]:
    """Transcripts and messages written by the original runtime (0.73 and 1.6)."""
    found = [p.read_bytes().strip() for p in sorted(FIXTURES.glob("pi*/*.transcript.json"))]
    found += [
        b"[" + p.read_bytes().strip() + b"]" for p in sorted(FIXTURES.glob("pi*/*.message.json"))
    ]
    return found


async def replay(directory: str, body: bytes | list[bytes]) -> tuple[list[Any], AssistantMessage]:
    registry = registry_with_transport(ReplayTransport(ReplayResponse(body)))
    context = Context(messages=[UserMessage(content="hello", timestamp=1)])
    try:
        with trio.fail_after(10):
            async with open_stream(
                model_for(directory), context, registry=registry, api_key="sk-fuzz-key-0123"
            ) as stream:
                events = [event async for event in stream]
    finally:
        await registry.aclose()
    return events, stream.result()


@functools.cache
def recorded_transcripts() -> tuple[bytes, ...]:
    """One transcript per recorded stream (the prompt, the assistant message the provider
    built from the stream, and a result for each of its tool calls), then the transcripts
    the original runtime wrote."""

    async def build() -> list[bytes]:
        transcripts = []
        for directory, body in recorded_streams():
            _, message = await replay(directory, body)
            messages: list[Message] = [UserMessage(content="hello", timestamp=1), message]
            for block in message.content:
                if block.type == "toolCall":
                    messages.append(
                        ToolResultMessage(
                            tool_call_id=block.id,
                            tool_name=block.name,
                            content=[TextContent(text=f"result of {block.name}")],
                            is_error=False,
                            timestamp=2,
                        )
                    )
            transcripts.append(messages_to_json(messages))
        return transcripts

    return tuple(trio.run(build)) + tuple(original_transcripts())


TOKENS = [
    b'"',
    b"\\",
    b"\\u",
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"null",
    b"1e999",
    b"-0",
    b"\xff",
    b"\xc3",
    b'"role":"user"',
    b'"type":"toolCall"',
    b'{"type":"unknown","x":1}',
    b"\n\n",
    b"data: ",
    b"event: error\n",
]


@st.composite
def mutated(draw: st.DrawFn, seeds: tuple[bytes, ...]) -> bytes:
    """A seed with one to four mutations: byte flips, inserted tokens, deletions,
    truncation, a copied span, or a member nested up to far beyond the depth limit."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "copy", "nest"]))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and at < len(data):
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del data[at:]
        elif kind == "copy":
            start = draw(st.integers(0, len(data)))
            data[at:at] = data[start : start + draw(st.integers(1, 200))]
        elif kind == "nest":
            # a new first member of some object, nested up to far beyond the limit
            depth = draw(st.sampled_from([1, 100, 260, 5_000]))
            objects = [m.end() for m in re.finditer(rb'\{(?=")', data)] or [at]
            at = draw(st.sampled_from(objects))
            data[at:at] = b'"zz":' + b"[" * depth + b"1" + b"]" * depth + b","
    return bytes(data)


# --------------------------------------------------------------------------- transcripts


def test_the_recorded_transcripts_round_trip() -> None:
    transcripts = recorded_transcripts()
    assert len(transcripts) == len(recorded_streams()) + len(original_transcripts()) > 40
    for data in transcripts:
        assert messages_to_json(messages_from_json(data, exact=True)) == data


@FUZZ
@given(st.data())
def test_a_mutated_transcript_decodes_to_messages_that_round_trip_or_fails_cleanly(
    data: st.DataObject,
) -> None:
    raw = data.draw(mutated(recorded_transcripts()))
    exact = data.draw(st.booleans())
    try:
        messages = messages_from_json(raw, exact=exact)
    except DECODE_ERRORS:
        return
    encoded = messages_to_json(messages)
    assert messages_to_json(messages_from_json(encoded, exact=exact)) == encoded


@FUZZ
@given(st.data())
def test_a_mutated_proxy_request_decodes_or_fails_cleanly(data: st.DataObject) -> None:
    def request_body(transcript: bytes) -> bytes:
        context = Context(messages=messages_from_json(transcript))
        return encode_request(model_for("anthropic"), context, _options())

    seeds = tuple(request_body(t) for t in recorded_transcripts())
    raw = data.draw(mutated(seeds))
    try:
        request = decode_request(raw)
    except DECODE_ERRORS:
        return
    assert isinstance(request, ProxyRequest)


def _options() -> Any:
    from pi_trio.ai import StreamOptions

    return StreamOptions(temperature=0.5, headers={"anthropic-beta": "x"})


# --------------------------------------------------------------------------- streams


@functools.cache
def recorded_proxy_lines() -> tuple[bytes, ...]:
    """The proxy-protocol frames of every recorded stream, one body per stream."""

    async def build() -> list[bytes]:
        bodies = []
        for directory, body in recorded_streams():
            events, _ = await replay(directory, body)
            bodies.append(b"".join(encode_event(event) for event in events))
        return bodies

    return tuple(trio.run(build))


@FUZZ
@given(st.data())
def test_mutated_proxy_frames_rebuild_or_fail_with_a_protocol_error(data: st.DataObject) -> None:
    raw = data.draw(mutated(recorded_proxy_lines()))
    rebuilder = ProxyRebuilder(model_for("anthropic"))
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            rebuilder.feed_line(line)
        except StreamProtocolError:
            return


@pytest.mark.parametrize("directory", sorted(MODELS))
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_a_mutated_recorded_stream_ends_in_exactly_one_terminal_event(
    directory: str, data: st.DataObject
) -> None:
    seeds = tuple(body for name, body in recorded_streams() if name == directory)
    body = data.draw(mutated(seeds))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=4)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    events, message = trio.run(replay, directory, chunks)
    kinds = [event.type for event in events]
    assert kinds.count("done") + kinds.count("error") == 1, kinds
    assert kinds[-1] in ("done", "error")
    assert message.stop_reason in ("stop", "length", "toolUse", "error")
