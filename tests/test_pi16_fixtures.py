"""What the original writes, recorded from it (tests/record_pi16.mjs), read by pi_trio.

tests/fixtures/pi16 was recorded from @earendil-works/pi-agent-core and pi-ai 1.6.0,
tests/fixtures/pi073 from @mariozechner/* 0.73.1 (see index.json in each). Every
transcript and every event loads and re-encodes byte for byte (``exact=True``; without it,
to equal JSON), a transcript with a field from a newer line keeps it in place, and the
recorded corpora (streamed JSON, argument parsing, validation texts, costs, OpenRouter's
billed cost) come out of pi_trio the same. The recorder itself runs only with node and the
original installed (marker ``node``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pi_trio.agent import AgentEvent
from pi_trio.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    SystemMessage,
    Tool,
    ToolArgumentsError,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    calculate_cost,
    from_json,
    messages_from_json,
    messages_to_json,
    open_stream,
    open_stream_simple,
    to_json,
    validate_tool_arguments,
)
from pi_trio.ai.failures import is_retryable_assistant_error
from pi_trio.ai.json import StreamingJsonParser, extra_fields, parse_tool_call_arguments
from pi_trio.ai.models import ModelCost
from pi_trio.testing import ReplayResponse, ReplayTransport, registry_with_transport

HERE = Path(__file__).parent
PI16 = HERE / "fixtures" / "pi16"
PI073 = HERE / "fixtures" / "pi073"
RECORDER = HERE / "record_pi16.mjs"


def files(root: Path, pattern: str) -> list[Path]:
    return sorted(root.glob(pattern))


def ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


TRANSCRIPTS = files(PI16, "*.transcript.json") + files(PI073, "*.transcript.json")
EVENT_LOGS = files(PI16, "*.events.jsonl") + files(PI073, "*.events.jsonl")
PROVIDER_SCENARIOS = ["openrouter_cost", "openrouter_byok_cost", "completions_malformed_arguments"]
# The original's mistral-conversations, azure-openai-responses and openai-codex-responses
# against a local server; <name>.json also holds the request it sent.
API_SCENARIOS = sorted(
    p.name.removesuffix(".sse")
    for p in PI16.glob("*.sse")
    if p.name.startswith(("mistral_", "azure_", "codex_"))
)
# The original's pi-messages against a local server (compared in test_pi_messages, with
# the events as they were pushed, <name>.pushed.jsonl).
PI_MESSAGES_SCENARIOS = sorted(p.name.removesuffix(".sse") for p in PI16.glob("pimessages_*.sse"))
PUSHED_LOGS = files(PI16, "*.pushed.jsonl")
# Headers the recorder kept (those the providers set themselves).
RECORDED_HEADERS = (
    "accept",
    "api-key",
    "authorization",
    "chatgpt-account-id",
    "content-type",
    "content-encoding",
    "openai-beta",
    "originator",
    "session-id",
    "session_id",
    "x-affinity",
    "x-client-request-id",
)
# The recorded options (camelCase, as the original takes them) in pi_trio's terms: the
# unified ones as fields, the provider-native ones in ``extra``.
_OPTION_FIELDS = {
    "sessionId": "session_id",
    "maxTokens": "max_tokens",
    "reasoning": "reasoning",
}
# Recorded options pi_trio has no field for: ``transport`` ("sse"; pi_trio speaks only SSE,
# so the option was dropped)
_NOT_OPTIONS = {"transport"}
_NATIVE_OPTIONS = {
    "serviceTier": "service_tier",
    "reasoningEffort": "reasoning_effort",
    "textVerbosity": "text_verbosity",
}


def recorded(name: str) -> Any:
    return json.loads((PI16 / f"{name}.json").read_text(encoding="utf-8"))


def test_the_fixtures_were_recorded_from_the_versions_they_claim() -> None:
    assert json.loads((PI16 / "index.json").read_text())["recordedWith"]["pi-ai"] == "1.6.0"
    assert json.loads((PI073 / "index.json").read_text())["recordedWith"]["pi-ai"] == "0.73.1"
    assert len(TRANSCRIPTS) == 16
    assert len(EVENT_LOGS) == 19 + len(API_SCENARIOS) + len(PI_MESSAGES_SCENARIOS)
    assert len(PI_MESSAGES_SCENARIOS) == len(PUSHED_LOGS) == 6


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=ids(TRANSCRIPTS))
def test_every_recorded_transcript_loads_and_re_encodes_byte_for_byte(path: Path) -> None:
    data = path.read_bytes()
    assert messages_to_json(messages_from_json(data, exact=True)) == data
    # without exact=True the known fields take pi_trio's order: the same JSON
    assert json.loads(messages_to_json(messages_from_json(data))) == json.loads(data)


@pytest.mark.parametrize("path", EVENT_LOGS + PUSHED_LOGS, ids=ids(EVENT_LOGS + PUSHED_LOGS))
def test_every_recorded_event_loads_and_re_encodes_byte_for_byte(path: Path) -> None:
    kind: Any = (
        AgentEvent
        if path.with_suffix("").with_suffix(".transcript.json").exists()
        else AssistantMessageEvent
    )
    for line in path.read_bytes().splitlines():
        event = from_json(line, kind, exact=True)
        assert to_json(event) == line


@pytest.mark.parametrize("name", ["tool_turn", "run_tool_call_nested"])
def test_a_transcript_with_a_field_from_a_newer_line_keeps_it_in_place(name: str) -> None:
    data = (PI16 / f"{name}.transcript.json").read_bytes()
    transcript = json.loads(data)
    assistant = next(i for i, m in enumerate(transcript) if m["role"] == "assistant")
    marker = b'"stopReason":'
    at = data.index(marker, data.index(b'"role":"assistant"'))
    future = data[:at] + b'"routing":{"region":"eu","tries":[1,2]},' + data[at:]
    loaded = messages_from_json(future)
    assert messages_to_json(loaded) == future
    assert extra_fields(loaded[assistant]) == {"routing": {"region": "eu", "tries": [1, 2]}}
    with pytest.raises(msgspec.ValidationError, match="unknown field `routing`"):
        messages_from_json(future, strict=True)


def test_the_1_6_transcripts_carry_the_new_fields_typed() -> None:
    nested = messages_from_json((PI16 / "run_tool_call_nested.transcript.json").read_bytes())
    result = next(m for m in nested if m.role == "toolResult")
    assert result.nested_calls is not None
    assert [(c.id, c.status) for c in result.nested_calls.calls] == [
        ("nested_1", "ok"),
        ("nested_2", "error"),
        ("nested_3", "error"),
    ]
    assistant = next(m for m in nested if m.role == "assistant")
    assert assistant.duration_ms is not None
    assert assistant.thinking_level == "off"
    malformed = messages_from_json((PI16 / "malformed_arguments.transcript.json").read_bytes())
    call = next(m for m in malformed if m.role == "assistant").content[0]
    assert isinstance(call, ToolCall)
    assert call.arguments == {}
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("Unexpected end of JSON input")


def test_every_1_6_field_reads_typed_and_fields_no_line_knows_stay_in_place() -> None:
    data = (PI16 / "every_field.transcript.json").read_bytes()
    system, user, assistant, result, *_ = messages_from_json(data)
    assert isinstance(system, SystemMessage)
    assert system.sections == {"intro": "hi", "gone": None}
    assert system.tools_added is not None
    assert system.tools_removed is not None
    assert system.tools_added[0].constrained_sampling == {"type": "json_schema", "strict": "prefer"}
    assert system.tools_removed[0].name == "mul"
    assert isinstance(assistant, AssistantMessage)
    assert (
        assistant.response_model,
        assistant.provider_thinking_level,
        assistant.thinking_level,
        assistant.stop_reason,
        assistant.raw_stop_reason,
        assistant.end_turn,
        assistant.duration_ms,
    ) == ("claude-x", "high", "xhigh", "deferred", "pause_turn", False, 12)
    assert assistant.deferred is not None
    assert assistant.deferred.poll_after_ms == 100
    assert assistant.diagnostics is not None
    assert assistant.diagnostics[0]["type"] == "retry"
    usage = assistant.usage
    assert (usage.cache_write_1h, usage.reasoning, usage.cost.total_from_provider) == (2, 5, True)
    call = assistant.content[2]
    assert isinstance(call, ToolCall)
    assert (call.namespace, call.arguments_error, call.thought_signature) == ("ns", "bad", "th")
    assert isinstance(result, ToolResultMessage)
    assert result.details is None
    assert result.usage == usage
    assert result.nested_calls is not None
    assert not result.nested_calls.complete
    assert result.nested_calls.calls[1].arguments_bytes == 99999
    future = {"deep": [1, {"at": "assistant"}], "small": 3e-6, "big": 1e21}
    assert extra_fields(assistant) == {"future_assistant": future}
    for value, name in [
        (system, "system"),
        (system.tools_added[0], "tool"),
        (system.tools_removed[0], "tool_reference"),
        (user, "user"),
        (assistant.content[0], "thinking"),
        (call, "tool_call"),
        (assistant.deferred, "deferred"),
        (usage, "usage"),
        (usage.cost, "cost"),
        (result, "tool_result"),
        (result.nested_calls, "nested_calls"),
        (result.nested_calls.calls[0], "nested_call"),
    ]:
        assert list(extra_fields(value)) == [f"future_{name}"], name
    with pytest.raises(msgspec.ValidationError, match="unknown field `future_system_text`"):
        messages_from_json(data, strict=True)


# --------------------------------------------------------------------------- providers


@pytest.mark.parametrize("name", PROVIDER_SCENARIOS)
async def test_the_openai_completions_provider_reads_the_recorded_stream_as_1_6_does(
    name: str,
) -> None:
    meta = recorded(name)["model"]
    base_url = (
        "https://openrouter.ai/api/v1" if meta["provider"] == "openrouter" else "https://x/v1"
    )
    model = from_json(json.dumps({**meta, "baseUrl": base_url}), Model)
    transport = ReplayTransport(ReplayResponse((PI16 / f"{name}.sse").read_bytes()))
    registry = registry_with_transport(transport)
    context = Context(messages=[UserMessage(content="Hi", timestamp=1)])
    try:
        async with open_stream(model, context, registry=registry, api_key="k") as events:
            seen = [event.type async for event in events]
    finally:
        await registry.aclose()
    want = json.loads((PI16 / f"{name}.message.json").read_bytes())
    got = json.loads(to_json(events.result()))
    for message in (want, got):
        message.pop("timestamp")
        message.pop("durationMs", None)  # the original's event stream adds it
    assert got == want
    lines = (PI16 / f"{name}.events.jsonl").read_bytes().splitlines()
    assert seen == [json.loads(line)["type"] for line in lines]
    message_bytes = (PI16 / f"{name}.message.json").read_bytes()
    assert to_json(from_json(message_bytes, exact=True)) == message_bytes


def _api_options(meta: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in meta["options"].items():
        if key in _NOT_OPTIONS:
            continue
        if key in _OPTION_FIELDS:
            options[_OPTION_FIELDS[key]] = value
        else:
            extra[_NATIVE_OPTIONS[key]] = value
    if extra:
        options["extra"] = extra
    authorization = meta["requests"][0]["headers"].get("authorization", "")
    options["api_key"] = authorization.removeprefix("Bearer ") or "test-key"
    return options


@pytest.mark.parametrize("name", API_SCENARIOS)
async def test_the_new_apis_send_and_read_what_1_6_sends_and_reads(name: str) -> None:
    meta = recorded(name)
    base = f"https://pi16.test{meta['basePath']}"
    model = from_json(json.dumps({**meta["model"], "baseUrl": base}), Model)
    context = from_json(json.dumps(meta["context"]), Context)
    body = (PI16 / f"{name}.sse").read_bytes()
    status = meta["status"]
    kind = "text/event-stream" if status < 400 else "application/json"
    transport = ReplayTransport(ReplayResponse(body, status=status, headers={"content-type": kind}))
    registry = registry_with_transport(transport)
    entry = open_stream_simple if meta["simple"] else open_stream
    try:
        async with entry(model, context, registry=registry, **_api_options(meta)) as events:
            seen = [event.type async for event in events]
    finally:
        await registry.aclose()
    # the request
    want_request = meta["requests"][0]
    sent = transport.requests[0]
    assert sent.url.removeprefix("https://pi16.test") == want_request["path"]
    assert sent.json() == want_request["body"]
    for header in RECORDED_HEADERS:
        if header == "accept" and model.api == "azure-openai-responses":
            continue  # the OpenAI SDK asks for JSON even when it streams
        assert sent.headers.get(header) == want_request["headers"].get(header), header
    # the answer
    want = json.loads((PI16 / f"{name}.message.json").read_bytes())
    got = json.loads(to_json(events.result()))
    for message in (want, got):
        message.pop("timestamp")
        message.pop("durationMs", None)  # the original's event stream adds it
    assert got == want
    lines = (PI16 / f"{name}.events.jsonl").read_bytes().splitlines()
    assert seen == [json.loads(line)["type"] for line in lines]


# --------------------------------------------------------------------------- corpora


def utf16_view(value: Any) -> Any:
    """Strings as a UTF-16 decoder reads them, without replacement characters: the
    original keeps a lone surrogate that pi_trio turns into U+FFFD."""
    if isinstance(value, str):
        text = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text.replace("\ufffd", "")
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return float(value)  # JavaScript has one number type
    if isinstance(value, list):
        return [utf16_view(item) for item in value]
    return {utf16_view(key): utf16_view(item) for key, item in value.items()}


def test_streamed_arguments_snapshot_as_the_original_snapshots_them() -> None:
    cases = recorded("streaming_json")["cases"]
    assert len(cases) == 400
    for case in cases:
        parser = StreamingJsonParser()
        seen = []
        for chunk in case["chunks"]:
            parser.feed(chunk)
            seen.append(parser.value())
        want = [s if isinstance(s, dict) else {} for s in case["snapshots"]]
        assert utf16_view(seen) == utf16_view(want), case["chunks"]


def test_finished_argument_texts_parse_as_the_original_parses_them() -> None:
    for case in recorded("parse_tool_call_arguments")["cases"]:
        parsed = parse_tool_call_arguments(case["text"])
        want = case["parsed"]
        assert utf16_view(parsed.arguments) == utf16_view(want["arguments"]), case["text"]
        assert parsed.arguments_error == want.get("argumentsError"), case["text"]


def test_validation_reports_what_the_original_reports() -> None:
    for case in recorded("validation")["cases"]:
        tool = Tool(name="calc", description="d", parameters=case["parameters"])
        call = ToolCall(id="1", name="calc", arguments=case["arguments"])
        if "error" in case:
            with pytest.raises(ToolArgumentsError) as caught:
                validate_tool_arguments(tool, call)
            assert str(caught.value) == case["error"]
        else:
            assert validate_tool_arguments(tool, call) == case["result"]


def test_costs_are_the_same_floats_and_bytes_as_the_originals() -> None:
    for case in recorded("calculate_cost")["cases"]:
        rates = case["rates"]
        model = from_json(
            json.dumps(
                {
                    "id": "m",
                    "name": "m",
                    "api": "a",
                    "provider": "p",
                    "baseUrl": "http://x",
                    "reasoning": False,
                    "input": ["text"],
                    "cost": rates,
                    "contextWindow": 1,
                    "maxTokens": 1,
                }
            ),
            Model,
        )
        assert isinstance(model.cost, ModelCost)
        usage = from_json(case["usage"], Usage)
        usage.cost.total_from_provider = msgspec.UNSET
        calculate_cost(model, usage)
        assert to_json(usage) == case["usage"].encode()


def test_retryable_errors_are_the_originals() -> None:
    for case in recorded("retry")["errors"]:
        message = AssistantMessage(
            content=[],
            api="a",
            provider="p",
            model="m",
            usage=Usage(),
            stop_reason="error",
            error_message=case["errorMessage"],
            timestamp=1,
        )
        assert is_retryable_assistant_error(message) is case["retryable"], case["errorMessage"]


# --------------------------------------------------------------------------- the recorder


def _original_package() -> Path:
    directory = os.environ.get("PI16_DIR")
    if shutil.which("node") is None or not directory:
        pytest.skip(
            "set PI16_DIR to a folder with the original installed (npm install --prefix <dir> "
            "@earendil-works/pi-agent-core@1.6.0 @earendil-works/pi-ai@1.6.0) and have node on PATH"
        )
    path = Path(directory)
    if not (path / "node_modules" / "@earendil-works" / "pi-ai").is_dir():
        pytest.skip(f"PI16_DIR={directory} holds no @earendil-works/pi-ai")
    return path


@pytest.mark.node
def test_recording_again_gives_the_committed_fixtures(tmp_path: Path) -> None:
    package = _original_package()
    done = subprocess.run(
        ["node", str(RECORDER), str(package), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    index = json.loads((tmp_path / "index.json").read_text())
    committed = json.loads((PI16 / "index.json").read_text())
    if (
        index["recordedWith"]["node"].split(".")[0]
        != committed["recordedWith"]["node"].split(".")[0]
    ):
        pytest.skip("another node major version words JSON.parse errors differently")
    # features.json is another recorder's (tests/pi16_features.py, checked by its own test)
    committed_names = {p.name for p in PI16.iterdir()} - {"features.json"}
    assert {p.name for p in tmp_path.iterdir()} == committed_names
    for name in sorted(committed_names):
        assert (tmp_path / name).read_bytes() == (PI16 / name).read_bytes(), name
