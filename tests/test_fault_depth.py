"""The fault suite, nesting: JSON nested far deeper than ``MAX_JSON_DEPTH`` at every place
pi_trio decodes bytes that come from outside, sent by a loopback server. Each gives the
error that place gives for any JSON it cannot read (the HTTP status and the body, the
event that could not be parsed, the Bedrock exception), never a ``RecursionError``.

The places: an HTTP error body (every provider, and the proxy client); an SSE event's
data (every SSE provider, also with an observer of the raw events); a Bedrock
event-stream frame and exception frame; a line of the proxy protocol. The transcripts
and session files go through ``from_json`` (``tests/test_json_depth.py``); the proxy
server's request bodies are in ``tests/test_fault_proxy.py``."""

from __future__ import annotations

import ast
import base64
import json
import re
from pathlib import Path
from typing import Any

import anyio
import httpx2
import msgspec
import pytest

from pi_trio.agent import Agent, stream_proxy
from pi_trio.ai import (
    AssistantMessage,
    Context,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    get_model,
    open_stream,
)
from pi_trio.ai.json import MAX_JSON_DEPTH
from pi_trio.testing import FauxProvider, faux_assistant_message

from . import eventstream_support as es
from .fault_providers_support import PROVIDERS, Provider
from .fault_server import loopback_registry, serve_faults
from .provider_support import at_url
from .test_fault_providers import answer, failed, reply, stream

DEPTH = 3_000
DEEP = b"[" * DEPTH + b"]" * DEPTH
# the bound decoder's refusal, never the interpreter's
REFUSED = re.compile(rf"JSON nested {DEPTH + 1} levels deep; .*at most {MAX_JSON_DEPTH} levels")


def no_recursion_error(text: str) -> str:
    assert "RecursionError" not in text
    assert "recursion" not in text.lower(), text
    return text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 429, 500])
async def test_a_deeply_nested_error_body_gives_the_status_and_the_body(
    provider: Provider, status: int
) -> None:
    body = b'{"error":{"message":"quota exceeded","type":"invalid_request_error"},"x":%s}' % DEEP
    headers = {"content-type": "application/json"}
    async with serve_faults(reply(status, body, headers)) as server:
        outcome = await stream(provider, server.url, max_retries=0)
    text = no_recursion_error(failed(provider, outcome, provider.status_head(status)))
    assert '{"error":{"message":"quota exceeded"' in text


def _sse_provider_params() -> list[Any]:
    return [p for p in PROVIDERS if p.values[0].sse]


def _deep_member(event: bytes) -> bytes:
    """The SSE ``event`` with a member nested ``DEPTH`` levels first in its data object."""
    return re.sub(
        rb"^data: ?\{", lambda m: m.group() + b'"zz":' + DEEP + b",", event, count=1, flags=re.M
    )


@pytest.mark.parametrize("provider", _sse_provider_params())
@pytest.mark.parametrize("observed", [False, True])
async def test_a_deeply_nested_sse_event_is_an_unparseable_event_keeping_the_content(
    provider: Provider, observed: bool
) -> None:
    events = list(provider.events)
    deep = _deep_member(events[provider.first_text + 1])
    assert deep != events[provider.first_text + 1]
    body = b"".join([*events[: provider.first_text + 1], deep, *events[provider.first_text + 2 :]])
    seen: list[Any] = []

    def observer(value: Any, model: Any) -> None:
        seen.append(value)

    options = {"on_provider_stream_event": observer} if observed else {}
    async with serve_faults(answer(provider, body)) as server:
        outcome = await stream(provider, server.url, **options)
    text = no_recursion_error(failed(provider, outcome))
    assert REFUSED.search(text), text
    assert any(e.type == "text_delta" for e in outcome.events)
    if observed:
        assert seen  # the events before it were observed
        assert all("zz" not in value for value in seen if isinstance(value, dict))


BEDROCK = next(p for p in PROVIDERS if p.values[0].api == "bedrock-converse-stream")


@pytest.mark.parametrize("provider", [BEDROCK])
@pytest.mark.parametrize("observed", [False, True])
async def test_a_deeply_nested_bedrock_frame_is_an_unparseable_frame_keeping_the_content(
    provider: Provider, observed: bool
) -> None:
    deep = es.frame(
        {
            ":message-type": "event",
            ":event-type": "contentBlockDelta",
            ":content-type": "application/json",
        },
        b'{"zz":%s,"contentBlockIndex":0,"delta":{"text":"x"}}' % DEEP,
    )
    events = list(provider.events)
    body = b"".join([*events[:2], deep, *events[2:]])

    seen: list[Any] = []

    def observer(value: Any, model: Any) -> None:
        seen.append(value)

    options = {"on_provider_stream_event": observer} if observed else {}
    async with serve_faults(answer(provider, body)) as server:
        outcome = await stream(provider, server.url, **options)
    text = no_recursion_error(failed(provider, outcome))
    assert REFUSED.search(text), text
    assert any(e.type == "text_delta" for e in outcome.events)
    if observed:
        assert len(seen) == 2  # the frames before it were observed


@pytest.mark.parametrize("provider", [BEDROCK])
async def test_a_deeply_nested_bedrock_exception_frame_names_the_exception(
    provider: Provider,
) -> None:
    exception = es.frame(
        {
            ":message-type": "exception",
            ":exception-type": "throttlingException",
            ":content-type": "application/json",
        },
        b'{"message":"slow down","x":%s}' % DEEP,
    )
    body = b"".join([*provider.events[:2], exception])
    async with serve_faults(answer(provider, body)) as server:
        outcome = await stream(provider, server.url)
    text = no_recursion_error(failed(provider, outcome, 'Throttling error: {"message":"slow down"'))
    assert any(e.type == "text_delta" for e in outcome.events)
    assert text


@pytest.mark.parametrize("provider", [BEDROCK])
async def test_a_deeply_nested_bedrock_error_body_names_the_aws_error(provider: Provider) -> None:
    body = b'{"message":"Too many tokens","x":%s}' % DEEP
    headers = {"content-type": "application/json", "x-amzn-errortype": "ValidationException"}
    async with serve_faults(reply(400, body, headers)) as server:
        outcome = await stream(provider, server.url, max_retries=0)
    text = no_recursion_error(failed(provider, outcome, "Validation error: "))
    assert '{"message":"Too many tokens"' in text


# Anthropic reads only events named like its own (the garbage has no ``event:`` line)
@pytest.mark.parametrize(
    "provider", [p for p in PROVIDERS if p.values[0].api != "anthropic-messages"]
)
async def test_an_unbalanced_deep_event_is_refused_by_the_bound_not_the_stack(
    provider: Provider,
) -> None:
    async with serve_faults(answer(provider, provider.garbage("deep nesting"))) as server:
        outcome = await stream(provider, server.url)
    text = no_recursion_error(failed(provider, outcome))
    assert "JSON nested 5000 levels deep" in text, text


# --------------------------------------------------------------------------- the proxy client


def _proxy_line(event: dict[str, Any] | bytes) -> bytes:
    data = event if isinstance(event, bytes) else json.dumps(event).encode()
    return b"data: " + data + b"\n\n"


async def _through_proxy(script: Any) -> AssistantMessage:
    async with serve_faults(script) as server, httpx2.AsyncClient() as client:
        fn = stream_proxy(proxy_url=server.url, auth_token="t", http_client=client)
        model = get_model("anthropic", "claude-haiku-4-5")
        assert model is not None
        context = Context(messages=[UserMessage(content="hello", timestamp=1)])
        with anyio.fail_after(30):
            async with open_stream(model, context, stream_fn=fn) as events:
                seen = [event.type async for event in events]
    assert seen.count("error") == 1, seen
    return events.result()


@pytest.mark.parametrize(
    "deep",
    [
        b'{"type":"text_delta","zz":%s,"contentIndex":0,"delta":"x"}' % DEEP,
        b'{"type":"from_a_newer_server","zz":%s}' % DEEP,  # read for its type alone
    ],
)
async def test_a_deeply_nested_proxy_line_is_a_malformed_event_keeping_the_content(
    deep: bytes,
) -> None:
    body = b"".join(
        [
            _proxy_line({"type": "start"}),
            _proxy_line({"type": "text_start", "contentIndex": 0}),
            _proxy_line({"type": "text_delta", "contentIndex": 0, "delta": "so far"}),
            _proxy_line(deep),
        ]
    )
    head_ = {"content-type": "text/event-stream", "content-length": str(len(body))}
    message = await _through_proxy(reply(200, body, head_))
    text = no_recursion_error(message.error_message or "")
    assert text.startswith("Malformed proxy event "), text
    assert REFUSED.search(text), text
    assert message.content == [TextContent(text="so far")]


async def test_a_deeply_nested_proxy_error_body_gives_the_status() -> None:
    body = b'{"error":"no such model","x":%s}' % DEEP
    message = await _through_proxy(reply(400, body, {"content-type": "application/json"}))
    assert message.error_message == "Proxy error: 400 Bad Request"


# --------------------------------------------------------------------------- typed output


class Weather(msgspec.Struct):
    city: str
    temp_c: float


async def test_a_deeply_nested_typed_answer_goes_back_to_the_model_as_a_correction() -> None:
    deep = '{"city": "Oslo", "temp_c": 21.5, "x": ' + DEEP.decode() + "}"
    faux = FauxProvider()
    faux.set_responses(
        [faux_assistant_message(deep), faux_assistant_message('{"city": "Oslo", "temp_c": 20}')]
    )
    agent = Agent(model=faux.get_model(), stream_fn=faux, output_mode="native")
    result = await agent.prompt("Weather in Oslo?", output_type=Weather)
    assert result.output == Weather(city="Oslo", temp_c=20)
    correction = result.messages[2]
    assert isinstance(correction, UserMessage)
    assert isinstance(correction.content, list)
    text = "".join(b.text for b in correction.content if isinstance(b, TextContent))
    assert REFUSED.search(text), text


# --------------------------------------------------------------------------- every site

PACKAGE = Path(__file__).resolve().parent.parent / "pi_trio"
_DECODE_CALLS = {
    ("msgspec", "json", "decode"),
    ("msgspec", "json", "Decoder"),
    ("json", "loads"),
    ("json", "load"),
}
# Calls of a JSON decoder other than the bounded ones (``_json_depth.BoundedDecoder``,
# ``decode_json``, ``decode_checked``), by file and enclosing function, and why each may
# skip the bound. A new call fails the test until it goes through the bound or is
# listed here with its reason.
UNBOUNDED_ALLOWED = {
    "ai/_json/_depth.py:BoundedDecoder.__init__": "the bounded decoder itself",
    "ai/_json/_codec.py:_decoder": "from_json's decoders, called only under decode_checked",
    "ai/_json/_codec.py:_missing_timestamp": "a document decode_checked has let through",
    "ai/_json/_lossless.py:<module>": "reads parts of a document decode_checked has let through",
    "ai/_json/_lossless.py:extra_fields": "the fields kept from such a document",
    "ai/_json/_where.py:_member": "one key string, located for an error message",
    "ai/_catalog/_data.py:<module>": "the package's own catalog",
    "ai/_catalog/_models.py:<module>": "the package's own catalog entries",
    "ai/_transcript/_system.py:_json_clone": "a copy of values pi_trio has just encoded",
    "ai/_arguments/_final.py:_strict": "tool-call arguments, as deep as the stack allows as "
    "in the original; a RecursionError is the error 'Tool arguments are nested too deeply'",
    "ai/_arguments/_partial.py:_strict_parse": "streamed tool-call arguments; a RecursionError "
    "falls back to the partial parser",
    "ai/providers/pi_messages.py:_stream": "the request body pi_trio has just encoded",
    "ai/providers/_vertex_auth.py:_from_file": "the local key file the user names",
    "proxy/_wire.py:decode_json": "after check_json_depth",
    "proxy/_wire.py:decode_request": "after check_json_depth",
    "proxy/_wire.py:<module>": "the decoders of decode_json, after check_json_depth",
    "agui/_app.py:AGUIApp._cancel": "dict[str, str]: a nested value fails at its first level",
    "durable/_queue.py:drain_into": "rows pi_trio wrote to its own database",
    "durable/_queue.py:look": "the mark a step of pi_trio's recorded in its own database",
    "durable/_steps.py:_decode_request": "rows pi_trio wrote to its own database",
    "session/_store.py:is_torn": "whether a session file's last line ends early; too deep "
    "counts as not torn, and the bounded decode then names the line",
    "durable/_result.py:decode_outcome": "rows pi_trio wrote to its own database",
    "durable/_approvals.py:read_waiting": "the pending calls pi_trio's workflow announced in "
    "its own database",
    "durable/_approvals.py:wait_for_decisions": "a decisions message, which any process "
    "with the database may send: a RecursionError is a malformed message, left aside",
    "durable/_steps.py:durable_tool.execute": "rows pi_trio wrote to its own database",
    "temporal/_activities.py:build_activities.tool_call": "what pi_trio wrote to its history",
    "temporal/_codec.py:decode": "payloads pi_trio wrote to its own Temporal history",
    "temporal/_codec.py:decode_event": "payloads pi_trio wrote to its own Temporal history",
    "temporal/_codec.py:decode_options": "payloads pi_trio wrote to its own Temporal history",
    "temporal/_result.py:decode_outcome": "payloads pi_trio wrote to its own Temporal history",
    "testing/_faux.py:FauxProvider._prepare": "a copy of a scripted message",
    "testing/_cassette.py:load_cassette": "a cassette pi_trio recorded, a test's own file; "
    "a line nested too deeply is a ValueError naming it",
    "testing/_replay.py:RecordedRequest.json": "a request pi_trio sent, for a test to read",
    "testing/_sse_server.py:ServedRequest.json": "a request pi_trio sent, for a test to read",
}


def _dotted(node: ast.expr) -> tuple[str, ...] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(parts))


def unbounded_decodes() -> set[str]:
    """``<file>:<function>`` of every call of a JSON decoder in pi_trio that is not the
    bounded one."""
    found: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()

        def visit(node: ast.AST, scope: tuple[str, ...], where: str = where) -> None:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                scope = (*scope, node.name)
            if isinstance(node, ast.Call) and _dotted(node.func) in _DECODE_CALLS:
                found.add(f"{where}:{'.'.join(scope) or '<module>'}")
            for child in ast.iter_child_nodes(node):
                visit(child, scope)

        visit(ast.parse(path.read_text()), ())
    return found


def test_every_json_decode_of_outside_bytes_goes_through_the_bound() -> None:
    assert unbounded_decodes() == set(UNBOUNDED_ALLOWED)


# --------------------------------------------------------------------------- signatures

DEEP_TEXT = DEEP.decode()


def _with_deep_signature(model: Model, where: str) -> Context:
    """A transcript of ``model`` whose ``where`` signature (kept JSON the API wants back,
    read by its request builder) nests far too deep."""
    deep = {
        "thinking": DEEP_TEXT,  # OpenRouter's reasoning_details; a Responses reasoning item
        "text": '{"v":1,"x":' + DEEP_TEXT + "}",  # a Responses message item's id and phase
        "call": '{"type":"reasoning.encrypted","x":' + DEEP_TEXT + "}",  # older OpenRouter
    }
    assistant = AssistantMessage(
        content=[
            ThinkingContent(thinking="hm", thinking_signature=deep.get(where, "")),
            TextContent(text="calling", text_signature=deep.get(where)),
            ToolCall(id="call_1", name="t", arguments={}, thought_signature=deep.get(where)),
        ],
        api=model.api,
        provider=model.provider,
        model=model.id,
        usage=Usage(),
        stop_reason="toolUse",
        timestamp=2,
    )
    result = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="t",
        content=[TextContent(text="done")],
        is_error=False,
        timestamp=3,
    )
    return Context(
        messages=[
            UserMessage(content="hello", timestamp=1),
            assistant,
            result,
            UserMessage(content="again", timestamp=4),
        ]
    )


@pytest.mark.parametrize(
    "provider",
    [p for p in PROVIDERS if p.values[0].api in ("openai-completions", "openai-responses")],
)
@pytest.mark.parametrize("where", ["thinking", "text", "call"])
async def test_signatures_nested_too_deeply_are_left_out_of_the_request(
    provider: Provider, where: str
) -> None:
    async with serve_faults(answer(provider)) as server:
        registry = loopback_registry()
        try:
            async with open_stream(
                at_url(provider.model, server.url),
                _with_deep_signature(provider.model, where),
                registry=registry,
                api_key=provider.key,
            ) as events:
                async for _ in events:
                    pass
        finally:
            await registry.aclose()
    message = events.result()
    assert message.stop_reason == "stop", message.error_message
    assert len(server.requests) == 1
    assert b"[[[[" not in server.requests[0].content


CODEX = next(p for p in PROVIDERS if p.values[0].api == "openai-codex-responses")


@pytest.mark.parametrize("provider", [CODEX])
async def test_a_chatgpt_token_whose_claims_nest_too_deeply_is_a_bad_token(
    provider: Provider,
) -> None:
    claims = base64.urlsafe_b64encode(b'{"x":' + DEEP + b"}").rstrip(b"=").decode()
    token = f"eyJhbGciOiJub25lIn0.{claims}.signature"
    async with serve_faults(answer(provider)) as server:
        outcome = await stream(provider, server.url, key=token)
    assert outcome.text == "Failed to extract accountId from token"
    assert server.requests == []
