"""JSON-schema output on the wire: each provider's native parameter in the request body,
the strict subset of a schema, which models take it, and an Agent asking for a typed
answer from each provider over HTTP (a loopback server, and recorded bodies replayed)."""

from __future__ import annotations

import copy
from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import Context, Model, OutputFormat, StreamOptions, UserMessage, complete, get_model
from pi_trio.ai.models import ModelCost, supports_json_schema_output
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.ai.providers._anthropic_request import build_anthropic_request
from pi_trio.ai.providers._completions_request import build_body
from pi_trio.ai.providers._google_request import build_google_body
from pi_trio.ai.providers._openai_compat import resolve_compat
from pi_trio.ai.providers._output import (
    StrictSchemaError,
    anthropic_strict_unsupported,
    make_strict_schema,
    openai_strict_unsupported,
)
from pi_trio.ai.providers.openai_responses import build_responses_body
from pi_trio.ai.transcript import normalize_context
from pi_trio.testing import (
    ReplayResponse,
    ReplayTransport,
    SSEReply,
    registry_with_transport,
    serve_sse,
    sse_body,
)

from .helpers import user_text
from .provider_support import UNFINISHED_BODY_WARNINGS, at_url

pytestmark = UNFINISHED_BODY_WARNINGS


class Weather(msgspec.Struct):
    """A weather report."""

    city: str
    temp_c: float
    note: str | None = None
    tags: list[str] = []


# What the agent sends for Weather (msgspec.json.schema, references inlined).
SCHEMA: dict[str, Any] = {
    "description": "A weather report.",
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temp_c": {"type": "number"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
    },
    "required": ["city", "temp_c"],
}
STRICT: dict[str, Any] = {
    "description": "A weather report.",
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temp_c": {"type": "number"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "temp_c", "note", "tags"],
    "additionalProperties": False,
}
WEATHER = OutputFormat(schema=SCHEMA, name="Weather", description="A weather report.")
UNFIT = OutputFormat(
    schema={"type": "object", "properties": {"anything": {}}}, name="Loose", strict=True
)
ANSWER = '{"city": "Oslo", "temp_c": 21.5, "note": null, "tags": []}'
KEY = "sk-test-0123456789"

GPT = Model(
    id="gpt-4o-mini",
    name="GPT-4o mini",
    api="openai-completions",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=False,
    input=["text"],
    cost=ModelCost(input=0, output=0, cache_read=0, cache_write=0),
    context_window=128_000,
    max_tokens=16_384,
)
RESPONSES = get_model("openai", "gpt-4o-mini")
HAIKU = get_model("anthropic", "claude-haiku-4-5")
OPUS = get_model("anthropic", "claude-opus-4-6")
FLASH = get_model("google", "gemini-2.5-flash")
FLASH_3 = get_model("google", "gemini-3-flash-preview")
GROQ = get_model("groq", "llama-3.3-70b-versatile")
assert RESPONSES is not None
assert HAIKU is not None
assert OPUS is not None
assert FLASH is not None
assert FLASH_3 is not None
assert GROQ is not None
CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage(content="Weather in Oslo?")])


def options(output: OutputFormat | None = WEATHER, **fields: Any) -> StreamOptions:
    return StreamOptions(output_format=output, **fields)


def completions_body(model: Model, output: OutputFormat | None = WEATHER) -> dict[str, Any]:
    messages = normalize_context(CONTEXT).messages
    return build_body(model, messages, options(output), resolve_compat(model))


# --------------------------------------------------------------------------- strict subset


def test_the_strict_subset_requires_every_property_and_allows_no_others() -> None:
    given = copy.deepcopy(SCHEMA)
    assert make_strict_schema(SCHEMA) == STRICT
    assert given == SCHEMA  # the caller's schema is left alone


def test_the_strict_subset_converts_definitions_and_keeps_local_references() -> None:
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["value"],
            }
        },
    }
    strict = make_strict_schema(tree)
    node = strict["$defs"]["Node"]
    assert node["required"] == ["value", "children"]
    assert node["additionalProperties"] is False
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "array"}, "$: the root schema must have type object"),
        ({"type": "object", "properties": {"x": {}}}, "$.x: a schema without a type"),
        ({"type": "object"}, "$: an object without declared properties"),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            "$: additionalProperties other than false",
        ),
        (
            {"type": "object", "properties": {"x": {"allOf": [{"type": "string"}]}}},
            '$.x: allOf: [{"type":"string"}] is unsupported',
        ),
        (
            {"type": "object", "properties": {"x": {"$ref": "https://example.com/s"}}},
            "$.x: only local $ref into $defs",
        ),
    ],
)
def test_what_the_strict_subset_cannot_express_is_named(
    schema: dict[str, Any], reason: str
) -> None:
    with pytest.raises(StrictSchemaError) as caught:
        make_strict_schema(schema)
    assert str(caught.value).startswith(reason)


def test_each_provider_refuses_its_own_keywords() -> None:
    limited = {
        "type": "object",
        "properties": {
            "temp_c": {"type": "number", "minimum": -90},
            "city": {"type": "string", "maxLength": 40},
        },
    }
    with pytest.raises(StrictSchemaError, match=r"^\$\.temp_c: minimum: -90 is unsupported$"):
        make_strict_schema(limited, anthropic_strict_unsupported)
    with pytest.raises(StrictSchemaError, match=r"^\$\.city: maxLength: 40 is unsupported$"):
        make_strict_schema(limited, openai_strict_unsupported)
    del limited["properties"]["city"]  # type: ignore[attr-defined]
    assert make_strict_schema(limited, openai_strict_unsupported)["required"] == ["temp_c"]


def test_anthropic_output_refuses_bad_format_and_min_items_values_by_name() -> None:
    # the same rules as Anthropic's strict tools: a format that is no string, or a
    # boolean minItems, is named as unsupported (not a crash, not let through)
    bad_format = {"type": "object", "properties": {"day": {"type": "string", "format": ["x"]}}}
    with pytest.raises(StrictSchemaError, match=r'^\$\.day: format: \["x"\] is unsupported$'):
        make_strict_schema(bad_format, anthropic_strict_unsupported)
    flag = {"type": "array", "items": {"type": "string"}, "minItems": True}
    with pytest.raises(StrictSchemaError, match=r"^\$\.tags: minItems: true is unsupported$"):
        make_strict_schema(
            {"type": "object", "properties": {"tags": flag}}, anthropic_strict_unsupported
        )
    flag["minItems"] = 1
    schema = make_strict_schema(
        {"type": "object", "properties": {"tags": flag}}, anthropic_strict_unsupported
    )
    assert schema["properties"]["tags"]["minItems"] == 1


# --------------------------------------------------------------------------- request bodies


def test_chat_completions_sends_a_strict_json_schema_response_format() -> None:
    body = completions_body(GPT)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Weather",
            "schema": STRICT,
            "strict": True,
            "description": "A weather report.",
        },
    }
    assert "response_format" not in completions_body(GPT, None)


def test_chat_completions_sends_the_schema_as_given_without_strict_mode() -> None:
    no_strict = msgspec.structs.replace(GPT, compat={"supportsStrictMode": False})
    spec = completions_body(no_strict)["response_format"]["json_schema"]
    assert (spec["schema"], spec["strict"]) == (SCHEMA, False)
    asked_off = msgspec.structs.replace(WEATHER, strict=False)
    spec = completions_body(GPT, asked_off)["response_format"]["json_schema"]
    assert (spec["schema"], spec["strict"]) == (SCHEMA, False)
    unfit = msgspec.structs.replace(UNFIT, strict=None)
    spec = completions_body(GPT, unfit)["response_format"]["json_schema"]
    assert (spec["schema"], spec["strict"]) == (unfit.schema, False)


async def test_a_required_strict_schema_that_does_not_fit_fails_the_request_naming_why() -> None:
    transport = ReplayTransport()
    registry = registry_with_transport(transport)
    try:
        message = await complete(GPT, CONTEXT, registry=registry, api_key=KEY, output_format=UNFIT)
    finally:
        await registry.aclose()
    assert message.stop_reason == "error"
    assert message.error_message == (
        "ValueError: output_format 'Loose' asks for strict=True, but $.anything: a schema "
        "without a type is unsupported; pass strict=None to send the schema without strict "
        "mode where it does not fit"
    )
    assert transport.requests == []  # nothing was sent


def test_responses_sends_text_format() -> None:
    body = build_responses_body(RESPONSES, normalize_context(CONTEXT), options())
    assert body["text"] == {
        "format": {
            "type": "json_schema",
            "name": "Weather",
            "schema": STRICT,
            "strict": True,
            "description": "A weather report.",
        }
    }
    plain = build_responses_body(RESPONSES, normalize_context(CONTEXT), options(None))
    assert "text" not in plain


def test_anthropic_sends_output_config_format_next_to_the_effort() -> None:
    def body(model: Model, **fields: Any) -> dict[str, Any]:
        request = build_anthropic_request(model, normalize_context(CONTEXT), options(**fields))
        return request.body

    assert body(HAIKU)["output_config"] == {"format": {"type": "json_schema", "schema": STRICT}}
    adaptive = body(OPUS, extra={"thinking_enabled": True, "effort": "high"})
    assert adaptive["output_config"] == {
        "effort": "high",
        "format": {"type": "json_schema", "schema": STRICT},
    }
    assert "output_config" not in body(HAIKU, output=None)


def test_gemini_sends_a_json_mime_type_and_the_json_schema() -> None:
    body = build_google_body(FLASH, normalize_context(CONTEXT), options(max_tokens=100))
    assert body["generationConfig"] == {
        "maxOutputTokens": 100,
        "responseMimeType": "application/json",
        "responseJsonSchema": SCHEMA,
    }
    plain = build_google_body(FLASH, normalize_context(CONTEXT), options(None))
    assert "generationConfig" not in plain


# --------------------------------------------------------------------------- who takes it


def with_compat(model: Model, **compat: Any) -> Model:
    return msgspec.structs.replace(model, compat={**(model.compat or {}), **compat})


LIMITED = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}


@pytest.mark.parametrize(
    ("model", "schema", "with_tools", "expected"),
    [
        pytest.param(GPT, None, True, True, id="openai chat completions"),
        pytest.param(GROQ, None, False, False, id="groq: not for every model"),
        pytest.param(
            with_compat(GROQ, supportsJsonSchemaOutput=True), None, False, True, id="compat says"
        ),
        pytest.param(
            with_compat(GPT, supportsJsonSchemaOutput=False), None, False, False, id="compat no"
        ),
        pytest.param(
            msgspec.structs.replace(GPT, provider="deepseek", base_url="https://api.deepseek.com"),
            None,
            False,
            False,
            id="deepseek: json_object only",
        ),
        pytest.param(
            msgspec.structs.replace(GPT, provider="ollama", base_url="http://localhost:11434/v1"),
            None,
            False,
            True,
            id="local server",
        ),
        pytest.param(RESPONSES, None, True, True, id="responses"),
        pytest.param(HAIKU, SCHEMA, True, True, id="anthropic structured outputs"),
        pytest.param(HAIKU, LIMITED, False, False, id="anthropic: minimum unsupported"),
        pytest.param(
            msgspec.structs.replace(HAIKU, compat=None), None, False, False, id="no strict tools"
        ),
        pytest.param(FLASH, SCHEMA, False, True, id="gemini 2.5 without tools"),
        pytest.param(FLASH, SCHEMA, True, False, id="gemini 2.5 with tools"),
        pytest.param(FLASH_3, SCHEMA, True, True, id="gemini 3 with tools"),
        pytest.param(
            msgspec.structs.replace(FLASH, id="gemma-4-31b-it"), None, False, False, id="gemma"
        ),
        pytest.param(
            msgspec.structs.replace(GPT, api="faux:1"), None, False, False, id="other apis"
        ),
    ],
)
def test_which_models_take_json_schema_output(
    model: Model, schema: dict[str, Any] | None, with_tools: bool, expected: bool
) -> None:
    assert supports_json_schema_output(model, schema, with_tools=with_tools) is expected


# --------------------------------------------------------------------------- an agent over HTTP


def completions_answer(text: str) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini"}
    return sse_body(
        [
            {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ],
        done=True,
    )


async def typed_run_over_loopback() -> tuple[Weather, list[Any]]:
    replies = [
        SSEReply(completions_answer('{"city": "Oslo"}')),
        SSEReply(completions_answer(ANSWER)),
    ]
    registry = ProviderRegistry()
    try:
        async with serve_sse(replies) as server:
            agent = Agent(
                model=at_url(GPT, server.url),
                registry=registry,
                stream_options=StreamOptions(api_key=KEY),
            )
            result = await agent.prompt("Weather in Oslo?", output_type=Weather)
            requests = [r.json() for r in server.requests]
    finally:
        await registry.aclose()
    return result.output, requests


async def test_an_agent_gets_a_typed_answer_over_http_and_corrects_a_wrong_one() -> None:
    output, requests = await typed_run_over_loopback()
    assert output == Weather(city="Oslo", temp_c=21.5)
    first, second = requests
    assert first["response_format"]["json_schema"]["name"] == "Weather"
    assert first["response_format"]["json_schema"]["strict"] is True
    assert "tools" not in first  # the native path adds no tool
    correction = second["messages"][-1]
    assert correction["role"] == "user"
    assert "Object missing required field `temp_c`" in correction["content"][0]["text"]


def test_an_agent_gets_a_typed_answer_over_http_on_asyncio() -> None:
    output, requests = anyio.run(typed_run_over_loopback, backend="asyncio")
    assert output.temp_c == 21.5
    assert len(requests) == 2


def anthropic_answer(text: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 1}
    return sse_body(
        [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": usage},
                },
            ),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": text},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


def gemini_answer(text: str) -> bytes:
    part = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    return sse_body([{"candidates": [{**part, "finishReason": "STOP"}]}])


def responses_answer(text: str) -> bytes:
    item = {"id": "msg_1", "type": "message", "role": "assistant"}
    part = {"type": "output_text", "text": text, "annotations": []}
    done_item = {**item, "status": "completed", "content": [part]}
    usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    events: list[tuple[str, Any]] = [
        ("response.created", {"response": {"id": "resp_1", "status": "in_progress"}}),
        ("response.output_item.added", {"output_index": 0, "item": {**item, "content": []}}),
        ("response.content_part.added", {**where, "part": {**part, "text": ""}}),
        ("response.output_text.delta", {**where, "delta": text}),
        ("response.output_text.done", {**where, "text": text}),
        ("response.content_part.done", {**where, "part": part}),
        ("response.output_item.done", {"output_index": 0, "item": done_item}),
        (
            "response.completed",
            {
                "response": {
                    "id": "resp_1",
                    "status": "completed",
                    "output": [done_item],
                    "usage": usage,
                }
            },
        ),
    ]
    return sse_body([(name, {"type": name, **data}) for name, data in events])


def anthropic_format(body: dict[str, Any]) -> Any:
    return body["output_config"]["format"]["schema"]


def gemini_format(body: dict[str, Any]) -> Any:
    return body["generationConfig"]["responseJsonSchema"]


def responses_format(body: dict[str, Any]) -> Any:
    return body["text"]["format"]["schema"]


@pytest.mark.parametrize(
    ("model", "answer", "native", "sent"),
    [
        pytest.param(HAIKU, anthropic_answer, anthropic_format, STRICT, id="anthropic"),
        pytest.param(FLASH, gemini_answer, gemini_format, SCHEMA, id="gemini"),
        pytest.param(RESPONSES, responses_answer, responses_format, STRICT, id="responses"),
    ],
)
async def test_each_provider_answers_a_typed_run_natively(
    model: Model, answer: Any, native: Any, sent: dict[str, Any]
) -> None:
    transport = ReplayTransport(ReplayResponse(answer(ANSWER)))
    registry = registry_with_transport(transport)
    try:
        agent = Agent(model=model, registry=registry, stream_options=StreamOptions(api_key=KEY))
        result = await agent.prompt("Weather in Oslo?", output_type=Weather)
    finally:
        await registry.aclose()
    assert result.output == Weather(city="Oslo", temp_c=21.5)
    body = transport.requests[0].json()
    assert native(body) == sent
    assert user_text(result.messages[-1]) == ANSWER


async def test_gemini_2_with_tools_gets_the_final_result_tool_instead() -> None:
    call = {"functionCall": {"name": "final_result", "args": msgspec.json.decode(ANSWER)}}
    body = sse_body(
        [{"candidates": [{"content": {"parts": [call], "role": "model"}, "finishReason": "STOP"}]}]
    )
    transport = ReplayTransport(ReplayResponse(body))
    registry = registry_with_transport(transport)
    lookup = AgentTool(
        name="lookup", description="Look up", parameters={"type": "object"}, execute=print
    )
    try:
        agent = Agent(
            model=FLASH,
            registry=registry,
            stream_options=StreamOptions(api_key=KEY),
            tools=[lookup],
        )
        result = await agent.prompt("Weather in Oslo?", output_type=Weather)
    finally:
        await registry.aclose()
    assert result.output == Weather(city="Oslo", temp_c=21.5)
    sent = transport.requests[0].json()
    assert "responseMimeType" not in sent.get("generationConfig", {})
    names = [d["name"] for d in sent["tools"][0]["functionDeclarations"]]
    assert names == ["lookup", "final_result"]
