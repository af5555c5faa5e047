"""Turning OpenTelemetry on and off: one agent or every new agent, the content opt-in,
closing spans mid-run, the attribute names, and that ``import pi_trio`` stays free of
OpenTelemetry."""

from __future__ import annotations

import gc
import importlib.util
import json
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.trace import StatusCode

from pi_trio.agent import Agent
from pi_trio.ai import Cost, StreamOptions, Usage
from pi_trio.otel import CAPTURE_CONTENT_ENV, instrument
from pi_trio.otel import _semconv as semconv
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

from .helpers import MOCK_MODEL, Scripted, asst
from .otel_support import Pipeline, text_tool


def tool_run(faux: FauxProvider, **agent_options: Any) -> Agent:
    """An agent whose next prompt makes one ``echo`` call (id ``c1``), then answers."""
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("echo", {"value": "hi"}, id="c1")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ]
    )
    return Agent(
        model=faux.get_model(),
        tools=[text_tool("echo", lambda v: f"echoed {v}")],
        stream_fn=faux,
        **agent_options,
    )


async def test_content_is_recorded_only_when_asked_for(otel: Pipeline) -> None:
    agent = tool_run(FauxProvider(), system_prompt="Be brief.")
    instrument(agent, capture_content=True, **otel.providers)
    await agent.prompt("say hi")

    first, second = sorted(otel.named("chat"), key=lambda s: s.start_time)
    assert json.loads(first.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "say hi"}]}
    ]
    assert json.loads(first.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be brief."}
    ]
    assert json.loads(first.attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "echo", "arguments": {"value": "hi"}}
            ],
            "finish_reason": "tool_call",
        }
    ]
    definitions = json.loads(first.attributes["gen_ai.tool.definitions"])
    assert [(d["type"], d["name"]) for d in definitions] == [("function", "echo")]
    history = json.loads(second.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[2]["parts"] == [
        {"type": "tool_call_response", "id": "c1", "response": "echoed hi"}
    ]
    tool = otel.one("execute_tool")
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"value": "hi"}
    assert json.loads(tool.attributes["gen_ai.tool.call.result"]) == {
        "content": [{"type": "text", "content": "echoed hi"}]
    }


@pytest.mark.parametrize(
    ("env", "recorded"),
    [
        ("true", True),
        ("false", False),
        (None, False),
        # OpenTelemetry's GenAI utilities' modes: content goes on spans with SPAN_*
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("NO_CONTENT", False),
        ("EVENT_ONLY", False),
    ],
)
async def test_the_environment_variable_opts_in_when_capture_content_is_not_given(
    otel: Pipeline, monkeypatch: pytest.MonkeyPatch, env: str | None, recorded: bool
) -> None:
    if env is not None:
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, env)
    agent = tool_run(FauxProvider())
    instrument(agent, **otel.providers)
    await agent.prompt("say hi")

    content_keys = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"}
    found = {k for s in otel.spans() for k in (s.attributes or {}) if k in content_keys}
    assert found == (content_keys if recorded else set())


async def test_uninstrument_stops_recording_and_gives_back_the_tools(otel: Pipeline) -> None:
    faux = FauxProvider()
    agent = tool_run(faux)
    original = agent.state.tools[0]
    uninstrument = instrument(agent, **otel.providers)
    assert agent.state.tools[0] is not original  # a traced copy
    assert agent.state.tools[0].name == "echo"
    await agent.prompt("say hi")
    assert len(otel.named("invoke_agent")) == 1

    uninstrument()
    uninstrument()  # twice is fine
    assert agent.state.tools[0] is original
    tool_run(faux)  # queue the same responses again
    await agent.prompt("again")
    assert len(otel.named("invoke_agent")) == 1


async def test_tools_added_later_are_traced_from_the_next_run_on(otel: Pipeline) -> None:
    faux = FauxProvider()
    agent = Agent(model=faux.get_model(), stream_fn=faux)
    instrument(agent, **otel.providers)
    faux.set_responses([faux_assistant_message("no tools yet")])
    await agent.prompt("one")

    tracer = otel.tracer_provider.get_tracer("app")

    def echo(value: str) -> str:
        with tracer.start_as_current_span("inside echo"):
            return value

    agent.state.tools.append(text_tool("echo", echo))
    for prompt in ("two", "three"):
        faux.set_responses(
            [
                faux_assistant_message(
                    [faux_tool_call("echo", {"value": prompt}, id=prompt)], stop_reason="toolUse"
                ),
                faux_assistant_message("ok"),
            ]
        )
        await agent.prompt(prompt)

    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in otel.named("execute_tool")}
    assert sorted(tools) == ["three", "two"]
    # run "two" ran the tool as it was added (spans it makes are not under its tool
    # span); when that run ended the tool was replaced by its traced copy
    parents = {s.parent.span_id if s.parent else None for s in otel.named("inside echo")}
    assert parents == {None, tools["three"].context.span_id}


async def test_instrumenting_one_agent_twice_is_refused(otel: Pipeline) -> None:
    agent = Agent(model=MOCK_MODEL)
    uninstrument = instrument(agent, **otel.providers)
    with pytest.raises(RuntimeError, match="instrumented already"):
        instrument(agent, **otel.providers)
    uninstrument()
    instrument(agent, **otel.providers)()
    with pytest.raises(TypeError, match=r"takes a pi_trio\.agent\.Agent"):
        instrument("agent", **otel.providers)  # type: ignore[arg-type]


async def test_instrumenting_globally_covers_every_agent_made_afterwards(otel: Pipeline) -> None:
    init = Agent.__init__
    faux = FauxProvider()
    before = tool_run(faux)
    uninstrument = instrument(agent_name="helper", **otel.providers)
    try:
        assert Agent.__init__ is init  # through on_agent_created: the class is untouched
        with pytest.raises(RuntimeError, match="instrumented already"):
            instrument(**otel.providers)
        after = tool_run(faux)
        await after.prompt("say hi")
        run = otel.one("invoke_agent helper")
        assert run.attributes["gen_ai.agent.name"] == "helper"
        assert otel.tree()[0][1][0] == (
            "turn 1",
            [("chat faux-1", []), ("execute_tool echo c1", [])],
        )

        tool_run(faux)
        await before.prompt("say hi")  # made before: not instrumented
        assert len(otel.named("invoke_agent")) == 1
    finally:
        uninstrument()
    assert Agent.__init__ is init
    assert after.state.tools[0].execute.__name__ == "run"  # the original tool is back
    tool_run(faux)
    await after.prompt("again")
    await tool_run(faux).prompt("new")
    assert len(otel.named("invoke_agent")) == 1


async def test_uninstrumenting_mid_run_ends_the_open_spans(otel: Pipeline) -> None:
    started = anyio.Event()

    async def hang(value: str) -> str:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("hang", {"value": "x"}, id="h1")], stop_reason="toolUse"
            )
        ]
    )
    agent = Agent(model=faux.get_model(), tools=[text_tool("hang", hang)], stream_fn=faux)
    uninstrument = instrument(agent, **otel.providers)
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.prompt, "go")
        await started.wait()
        uninstrument()
        agent.abort()

    names = sorted(s.name for s in otel.spans())
    assert names == ["chat faux-1", "execute_tool hang", "invoke_agent", "turn"]
    for prefix in ("execute_tool", "turn", "invoke_agent"):
        span = otel.one(prefix)
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "the agent was uninstrumented during the run"


async def test_an_instrumented_agent_that_is_dropped_is_collected(otel: Pipeline) -> None:
    faux = FauxProvider()
    uninstrument_all = instrument(**otel.providers)
    try:
        globally = tool_run(faux)
        await globally.prompt("say hi")
        dropped = weakref.ref(globally)
        del globally
        gc.collect()
        assert dropped() is None
    finally:
        uninstrument_all()

    alone = tool_run(faux)
    instrument(alone, **otel.providers)  # the function it returns is dropped too
    await alone.prompt("say hi")
    dropped = weakref.ref(alone)
    del alone
    gc.collect()
    assert dropped() is None
    assert len(otel.named("invoke_agent")) == 2


# Agent-level duration metrics of the GenAI conventions (model/gen-ai/metrics.yaml in
# open-telemetry/semantic-conventions-genai) that opentelemetry-semantic-conventions does
# not list yet.
NEWER_THAN_THE_PACKAGE = {"gen_ai.invoke_agent.duration", "gen_ai.execute_tool.duration"}


def test_the_attribute_and_metric_names_are_the_conventions_own() -> None:
    ours = {
        value
        for name, value in vars(semconv).items()
        if name.isupper() and isinstance(value, str) and value.startswith("gen_ai.")
    }
    theirs = {
        value
        for module in (gen_ai_attributes, gen_ai_metrics)
        for value in vars(module).values()
        if isinstance(value, str)
    }
    assert ours - theirs <= NEWER_THAN_THE_PACKAGE
    assert ours >= NEWER_THAN_THE_PACKAGE
    assert semconv.PROVIDER_NAME == gen_ai_attributes.GEN_AI_PROVIDER_NAME
    assert semconv.OPERATION_DURATION == gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION


def test_importing_pi_trio_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, pi_trio, pi_trio.ai, pi_trio.agent, pi_trio.testing, pi_trio.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
        "import pi_trio.otel\n"
        "print('opentelemetry.trace' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "True"]


ROOT = Path(__file__).resolve().parent.parent


async def test_the_readme_example_runs_and_prints_the_tree_it_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = (ROOT / "examples" / "otel_traces.py").read_text()
    readme = (ROOT / "README.md").read_text()
    assert f"```python\n{source}```" in readme
    spec = importlib.util.spec_from_file_location(
        "examples_otel_traces", ROOT / "examples" / "otel_traces.py"
    )
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    await example.main()
    printed = capsys.readouterr().out
    assert printed.startswith("invoke_agent (")
    assert f"```text\n{printed}```" in readme


async def test_a_request_span_carries_usage_cost_and_the_server(otel: Pipeline) -> None:
    usage = Usage(
        input=10, output=5, cache_read=3, cache_write=2, reasoning=4, cost=Cost(total=0.25)
    )
    answer = msgspec.structs.replace(
        asst("hi", response_model="mock-2025", response_id="r-9"), usage=usage
    )
    agent = Agent(
        model=MOCK_MODEL,
        stream_fn=Scripted(answer),
        stream_options=StreamOptions(max_tokens=100, temperature=0.5),
        session_id="conv-1",
    )
    instrument(agent, **otel.providers)
    await agent.prompt("hello")

    chat = otel.one("chat mock")
    assert {
        k: v
        for k, v in (chat.attributes or {}).items()
        if k != "gen_ai.response.time_to_first_chunk"
    } == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "mock",
        "gen_ai.request.max_tokens": 100,
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.stream": True,
        "server.address": "example.invalid",
        "server.port": 443,
        "gen_ai.response.model": "mock-2025",
        "gen_ai.response.id": "r-9",
        "gen_ai.response.finish_reasons": ("stop",),
        "pi.stop_reason": "stop",
        "gen_ai.usage.input_tokens": 15,  # cached tokens included
        "gen_ai.usage.output_tokens": 5,
        "gen_ai.usage.cache_read.input_tokens": 3,
        "gen_ai.usage.cache_creation.input_tokens": 2,
        "gen_ai.usage.reasoning.output_tokens": 4,
        "pi.usage.cost": 0.25,
    }
    run = otel.one("invoke_agent")
    assert run.attributes["gen_ai.conversation.id"] == "conv-1"
    assert run.attributes["pi.usage.cost"] == 0.25
    assert run.attributes["gen_ai.response.finish_reasons"] == ("stop",)


@pytest.mark.parametrize(
    ("provider", "api", "expected"),
    [
        ("anthropic", "anthropic-messages", ("anthropic", "chat")),
        ("google", "google-generative-ai", ("gcp.gemini", "generate_content")),
        ("xai", "openai-completions", ("x_ai", "chat")),
        ("mistral", "openai-completions", ("mistral_ai", "chat")),
        ("openrouter", "openai-completions", ("openrouter", "chat")),
    ],
)
def test_pi_providers_and_apis_map_to_the_conventions_values(
    provider: str, api: str, expected: tuple[str, str]
) -> None:
    assert (semconv.provider_name(provider), semconv.operation_of_api(api)) == expected


@pytest.mark.parametrize(
    ("stop_reason", "error_message", "expected"),
    [
        ("stop", None, None),
        ("toolUse", None, None),
        ("aborted", "Request was aborted", "aborted"),
        ("error", "429 rate limited, retry later", "429"),
        ("error", "No API key for provider: openai", "_OTHER"),
        ("error", "2024 was a year", "_OTHER"),
    ],
)
def test_the_error_type_of_a_response(
    stop_reason: str, error_message: str | None, expected: str | None
) -> None:
    message = asst("", stop_reason, error_message=error_message)
    assert semconv.error_type_of_message(message) == expected
