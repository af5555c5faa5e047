"""Fallback models: Agent(policy=RunPolicy(fallback=FallbackPolicy(...))) goes on with the next model of a
chain when a response fails; which failures fall through (failure_kind); the failed
response leaves the transcript (model_fallback); retries come first; the abort contract
holds during a fallback; a cross-provider fallback replays the transcript by the hand-off
rules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import trio.testing

from pi_trio.agent import (
    Agent,
    AgentTool,
    AutoRetryEndEvent,
    FallbackPolicy,
    ModelFallbackEvent,
    RunPolicy,
)
from pi_trio.ai import (
    Model,
    RetryPolicy,
    TextContent,
    ThinkingContent,
    ToolCall,
    UnknownModelError,
    get_model,
)
from pi_trio.ai.failures import FailureKind, failure_kind
from pi_trio.ai.providers import ProviderRegistry
from pi_trio.testing import (
    FauxProvider,
    SSEReply,
    faux_assistant_message,
    faux_tool_call,
    serve_sse,
)

FIXTURES = Path(__file__).parent / "fixtures"
OVERLOADED = "529 overloaded_error: Overloaded"


def failed(text: str) -> Any:
    return faux_assistant_message("", stop_reason="error", error_message=text)


def transcript(agent: Agent) -> list[tuple[str, str | None]]:
    """The roles of the agent's messages after its system head, with the answers' models."""
    return [(m.role, getattr(m, "model", None)) for m in agent.state.messages if m.role != "system"]


def run_on(backend: str, main: Callable[[], Awaitable[Any]]) -> Any:
    """``main()`` on ``backend``; trio on the autojump clock."""
    if backend == "trio":
        clock = trio.testing.MockClock(autojump_threshold=0)
        return anyio.run(main, backend="trio", backend_options={"clock": clock})
    return anyio.run(main, backend="asyncio")


class Chain:
    """A faux provider with three models, the models each request went to, and an Agent
    whose chain is primary -> backup -> last."""

    def __init__(self, *answers: Any, **policy: Any) -> None:
        self.faux = FauxProvider(models=[{"id": "primary"}, {"id": "backup"}, {"id": "last"}])
        self.faux.set_responses(list(answers))
        self.asked: list[str] = []
        self.events: list[Any] = []
        faux = self.faux

        async def stream_fn(model: Model, context: Any, options: Any, send: Any) -> None:
            self.asked.append(model.id)
            await faux(model, context, options, send)

        fallback = FallbackPolicy(
            models=[self.model("backup"), self.model("last")], **policy.pop("fallback", {})
        )
        self.agent = Agent(
            model=self.model("primary"), stream_fn=stream_fn, fallback=fallback, **policy
        )
        self.agent.subscribe(self.events.append)

    def model(self, id: str) -> Model:
        model = self.faux.get_model(id)
        assert model is not None
        return model

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def echo() -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
        return f"echoed {params['value']}"

    return AgentTool(
        name="echo", description="Echo.", parameters={"type": "object"}, execute=execute
    )


# --------------------------------------------------------------------------- the chain


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_transient_failure_goes_on_with_the_next_model_in_the_same_turn(backend: str) -> None:
    async def main() -> Chain:
        chain = Chain(
            failed(OVERLOADED),
            faux_assistant_message(
                [faux_tool_call("echo", {"value": "x"}, id="c1")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
            tools=[echo()],
        )
        result = await chain.agent.prompt("go")
        assert result.ok
        assert result.text == "done"
        return chain

    chain = run_on(backend, main)
    agent = chain.agent
    # the failed response left the transcript; the backup answered, and kept answering
    assert transcript(agent) == [
        ("user", None),
        ("assistant", "backup"),
        ("toolResult", None),
        ("assistant", "backup"),
    ]
    assert chain.asked == ["primary", "backup", "backup"]
    types = chain.types()
    assert types.count("turn_start") == 2  # the fallback stays in its turn
    # listeners saw the failure end, then its withdrawal, then the backup's answer start
    at = types.index("model_fallback")
    assert types[at - 1 : at + 2] == ["message_end", "model_fallback", "message_start"]
    assert chain.events[at - 1].message.error_message == OVERLOADED
    (event,) = [e for e in chain.events if isinstance(e, ModelFallbackEvent)]
    assert (event.from_model, event.to_model, event.kind, event.position) == (
        "faux/primary",
        "faux/backup",
        "transient",
        1,
    )
    assert event.error_message == OVERLOADED
    # the backup's first answer says whom it stands in for
    first, second = [m for m in agent.state.messages if m.role == "assistant"]
    (note,) = first.diagnostics
    assert note["type"] == "model_fallback"
    assert note["details"] == {"from": "faux/primary", "kind": "transient"}
    assert note["error"] == {"message": OVERLOADED}
    assert second.diagnostics is None


async def test_the_next_run_starts_with_the_agents_own_model_again() -> None:
    chain = Chain(failed(OVERLOADED), faux_assistant_message("one"), faux_assistant_message("two"))
    await chain.agent.prompt("first")
    await chain.agent.prompt("second")
    assert chain.asked == ["primary", "backup", "primary"]
    assert chain.agent.state.model.id == "primary"


async def test_when_the_chain_runs_out_the_last_failure_is_the_answer() -> None:
    chain = Chain(failed("503 one"), failed("503 two"), failed("503 three"))
    result = await chain.agent.prompt("go")
    assert chain.asked == ["primary", "backup", "last"]
    assert result.stop_reason == "error"
    assert result.error_message == "503 three"
    assert transcript(chain.agent) == [
        ("user", None),
        ("assistant", "last"),
    ]
    falls = [e for e in chain.events if isinstance(e, ModelFallbackEvent)]
    assert [(e.to_model, e.position) for e in falls] == [("faux/backup", 1), ("faux/last", 2)]


async def test_retries_run_out_on_a_model_before_the_chain_takes_over(autojump_clock: Any) -> None:
    chain = Chain(
        failed("503 a"),
        failed("503 b"),
        failed("503 c"),
        failed("503 d"),
        faux_assistant_message("backup answers"),
        retry=RetryPolicy(max_retries=2, base_delay_ms=1_000),
    )
    start = anyio.current_time()
    result = await chain.agent.prompt("go")
    elapsed = anyio.current_time() - start
    assert result.text == "backup answers"
    # primary: the first try and two retries; backup: a failure, then (its own retry) an answer
    assert chain.asked == ["primary", "primary", "primary", "backup", "backup"]
    assert 1 + 2 + 1 <= elapsed < 5  # backoffs of 1 s and 2 s on primary, 1 s on backup
    kinds = [
        e.type
        for e in chain.events
        if e.type in ("auto_retry_start", "auto_retry_end", "model_fallback")
    ]
    assert kinds == [
        "auto_retry_start",
        "auto_retry_start",
        "model_fallback",
        "auto_retry_end",
        "auto_retry_start",
        "auto_retry_end",
    ]
    ends = [e for e in chain.events if isinstance(e, AutoRetryEndEvent)]
    assert [(e.success, e.attempt, e.final_error) for e in ends] == [
        (False, 2, "503 c"),
        (True, 1, None),
    ]
    assert [m.role for m in chain.agent.state.messages] == ["user", "assistant"]


# --------------------------------------------------------------------------- what falls through


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (OVERLOADED, "transient"),
        ("429 rate_limit_error: Number of requests exceeded", "transient"),
        ("No response event for 60 s (StreamOptions.idle_timeout)", "transient"),
        ('429 {"error":{"code":"insufficient_quota"}}', "quota"),
        ("prompt is too long: 213462 tokens > 200000 maximum", "overflow"),
        ('401 {"type":"authentication_error","message":"invalid x-api-key"}', "other"),
        ("400 unknown model 'gpt-9'", "other"),
    ],
)
def test_failure_kind_sorts_failed_responses(error: str, kind: FailureKind) -> None:
    assert failure_kind(failed(error)) == kind


def test_only_a_failed_response_has_a_failure_kind() -> None:
    assert failure_kind(faux_assistant_message("fine")) is None
    aborted = faux_assistant_message("", stop_reason="aborted", error_message="503 aborted")
    assert failure_kind(aborted) is None


@pytest.mark.parametrize(
    ("error", "falls"),
    [
        ('429 {"error":{"code":"insufficient_quota"}}', True),
        ('401 {"type":"authentication_error","message":"invalid x-api-key"}', False),
        ("prompt is too long: 213462 tokens > 200000 maximum", False),
    ],
)
async def test_by_default_transient_and_quota_failures_fall_through(
    error: str, falls: bool
) -> None:
    chain = Chain(failed(error), faux_assistant_message("backup"))
    result = await chain.agent.prompt("go")
    assert chain.asked == (["primary", "backup"] if falls else ["primary"])
    assert result.ok is falls


async def test_overflow_falls_through_when_the_policy_asks_for_it() -> None:
    overflow = "prompt is too long: 213462 tokens > 200000 maximum"
    chain = Chain(
        failed(overflow),
        faux_assistant_message("a larger window"),
        fallback={"on": {"overflow"}},
    )
    result = await chain.agent.prompt("go")
    assert result.text == "a larger window"
    (event,) = [e for e in chain.events if isinstance(e, ModelFallbackEvent)]
    assert event.kind == "overflow"
    # ... and then only overflow: a transient failure of the backup stays
    chain = Chain(failed(overflow), failed(OVERLOADED), fallback={"on": {"overflow"}})
    result = await chain.agent.prompt("go")
    assert chain.asked == ["primary", "backup"]
    assert result.error_message == OVERLOADED


async def test_a_predicate_decides_with_the_message_and_the_model_that_failed() -> None:
    seen: list[tuple[str, str]] = []

    def on(message: Any, model: Model) -> bool:
        seen.append((model.id, message.error_message))
        return model.id == "primary"  # only the primary falls through, whatever the error

    chain = Chain(failed("401 bad key"), failed("401 bad key too"), fallback={"on": on})
    result = await chain.agent.prompt("go")
    assert seen == [("primary", "401 bad key"), ("backup", "401 bad key too")]
    assert chain.asked == ["primary", "backup"]
    assert result.error_message == "401 bad key too"


async def test_an_aborted_response_never_falls_through() -> None:
    chain = Chain(faux_assistant_message("a long answer " * 50), faux_assistant_message("never"))
    chain.agent.subscribe(lambda e: chain.agent.abort() if e.type == "message_update" else None)
    result = await chain.agent.prompt("go")
    assert result.stop_reason == "aborted"
    assert chain.asked == ["primary"]
    assert "model_fallback" not in chain.types()


# --------------------------------------------------------------------------- abort and cancel


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_an_abort_while_falling_back_ends_the_run_by_the_contract(backend: str) -> None:
    async def main() -> Chain:
        chain = Chain(failed(OVERLOADED), faux_assistant_message("never"))
        chain.agent.subscribe(lambda e: chain.agent.abort() if e.type == "model_fallback" else None)
        result = await chain.agent.prompt("go")
        assert result.stop_reason == "aborted"
        return chain

    chain = run_on(backend, main)
    assert chain.asked == ["primary"]  # the backup is never asked after the abort
    assert [m.role for m in chain.agent.state.messages] == ["user", "assistant"]
    assert chain.agent.state.messages[-1].stop_reason == "aborted"
    assert chain.types()[-2:] == ["turn_end", "agent_end"]
    assert not chain.agent.state.is_streaming


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_cancelling_the_caller_during_the_backups_answer_keeps_what_streamed(
    backend: str,
) -> None:
    async def main() -> Chain:
        chain = Chain(
            failed(OVERLOADED),
            faux_assistant_message("the backup's long answer " * 20),
            faux_assistant_message("again"),
        )
        chain.faux.token_size = (1, 1)
        with anyio.CancelScope() as scope:

            def cancel_on_backup_text(event: Any) -> None:
                message = event.message if event.type == "message_update" else None
                backup = message is not None and message.model == "backup"
                if backup and len(message.content[0].text) > 20:
                    scope.cancel()

            chain.agent.subscribe(cancel_on_backup_text)
            await chain.agent.prompt("go")
        assert scope.cancelled_caught
        last = chain.agent.state.messages[-1]
        assert (last.model, last.stop_reason) == ("backup", "aborted")
        assert last.content[0].text.startswith("the backup's long")
        assert not chain.agent.state.is_streaming
        result = await chain.agent.prompt("still there?")  # reusable, from the primary
        assert result.text == "again"
        return chain

    chain = run_on(backend, main)
    assert chain.asked == ["primary", "backup", "primary"]


# --------------------------------------------------------------------------- composition


async def test_a_saved_session_keeps_the_answer_not_the_failure(tmp_path: Path) -> None:
    from pi_trio.session import FileSessionStore, record_session

    chain = Chain(failed(OVERLOADED), faux_assistant_message("saved"))
    store = FileSessionStore(tmp_path / "s.jsonl")
    record_session(chain.agent, store)
    await chain.agent.prompt("go")
    saved = store.load()
    assert [(m.role, getattr(m, "model", None)) for m in saved] == [
        ("user", None),
        ("assistant", "backup"),
    ]


async def test_a_typed_output_comes_from_the_model_fallen_back_to() -> None:
    class Weather(msgspec.Struct):
        city: str
        temp_c: int

    chain = Chain(
        failed(OVERLOADED),
        faux_assistant_message(
            [faux_tool_call("final_result", {"city": "Paris", "temp_c": 21})],
            stop_reason="toolUse",
        ),
        output_type=Weather,
        output_mode="tool",
    )
    result = await chain.agent.prompt("weather?")
    assert result.output == Weather(city="Paris", temp_c=21)
    assert chain.asked == ["primary", "backup"]


def test_a_fallback_policy_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match=r"models=\[\]\) has nothing to fall back to"):
        FallbackPolicy(models=[])
    with pytest.raises(TypeError, match=r"takes a list of models .* got 'openai/gpt-4o-mini'"):
        FallbackPolicy(models="openai/gpt-4o-mini")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'flaky' is not a failure kind; the kinds are other"):
        FallbackPolicy(models=["openai/gpt-4o-mini"], on={"flaky"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"on=\.\.\.\) takes a set of failure kinds"):
        FallbackPolicy(models=["openai/gpt-4o-mini"], on="transient")  # type: ignore[arg-type]
    with pytest.raises(UnknownModelError, match=r"item 1"):
        FallbackPolicy(models=["openai/gpt-4o-mini", "openai/no-such-model"])
    with pytest.raises(TypeError, match=r"RunPolicy\(fallback=\.\.\.\) takes a FallbackPolicy"):
        Agent(model="openai/gpt-4o-mini", fallback=["openai/gpt-4o"])  # type: ignore[arg-type]
    policy = FallbackPolicy(models=["openai/gpt-4o-mini"], on=["transient"])
    assert policy.models == (get_model("openai", "gpt-4o-mini"),)
    assert policy.on == frozenset({"transient"})


# --------------------------------------------------------------------------- across providers


def _sse(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_cross_provider_fallback_replays_the_transcript_by_the_hand_off_rules(
    backend: str,
) -> None:
    """Anthropic thinks (signed) and calls tools, then is overloaded: a Chat Completions
    model (Groq's) gets the transcript without Anthropic's thinking. The next run is
    Anthropic's again, which gets its own signed thinking back and the other model's
    answer as plain text."""
    keys = {"anthropic": "sk-ant-fallback-test", "groq": "gsk-fallback-test"}

    async def main() -> tuple[Any, Agent]:
        overloaded = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
        async with serve_sse(
            [
                SSEReply(_sse("anthropic/thinking_tools.sse")),
                SSEReply(overloaded, status=529),
                SSEReply(_sse("openai_completions/text.sse")),
                SSEReply(_sse("anthropic/text.sse")),
            ]
        ) as server:
            claude = get_model("anthropic", "claude-haiku-4-5")
            gpt = get_model("groq", "openai/gpt-oss-120b")
            assert claude is not None
            assert gpt is not None
            claude = msgspec.structs.replace(claude, base_url=server.url)
            gpt = msgspec.structs.replace(gpt, base_url=server.url)

            async def weather(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
                return f"{params['city']}: 21 C"

            registry = ProviderRegistry()  # its own connections, closed before the server
            agent = Agent(
                registry=registry,
                model=claude,
                tools=[
                    AgentTool(
                        name="get_weather",
                        description="Weather.",
                        parameters={"type": "object"},
                        execute=weather,
                    )
                ],
                get_api_key=keys.get,
                fallback=FallbackPolicy(models=[gpt]),
            )
            try:
                result = await agent.prompt("Weather in Paris and Tokyo?")
                again = await agent.prompt("Thanks!")
            finally:
                await registry.aclose()
            assert result.text == "Hello, wörld 😀"
            assert again.text == "Héllo wörld 🌍!"
        return server, agent

    server, agent = run_on(backend, main)
    first, _, to_openai, back = server.requests
    assert first.headers["x-api-key"] == keys["anthropic"]
    assert to_openai.headers["authorization"] == f"Bearer {keys['groq']}"
    assert to_openai.path.endswith("/chat/completions")
    sent = to_openai.json()
    assert sent["model"] == "openai/gpt-oss-120b"
    text = to_openai.content.decode()
    # Anthropic's thinking (its text, its signature, its redacted block) stays behind;
    # the calls and their results go along
    assert "The user wants the weather" not in text
    assert "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" not in text
    assert "EmwKAhgBEgy3va3pzix" not in text
    (assistant,) = [m for m in sent["messages"] if m["role"] == "assistant"]
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_01A", "toolu_01B"]
    tool_texts = [m["content"] for m in sent["messages"] if m["role"] == "tool"]
    assert tool_texts == ["Paris: 21 C", "Tōkyō: 21 C"]
    # the next run asks Anthropic again, which gets its own thinking back, signed
    blocks = [
        block
        for message in back.json()["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
    ]
    thinking = [b for b in blocks if b["type"] == "thinking"]
    assert [b["signature"] for b in thinking] == [
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"
    ]
    assert {"type": "text", "text": "Hello, wörld 😀"} in blocks
    # the transcript tells who answered what
    answers = [m for m in agent.state.messages if m.role == "assistant"]
    assert [(m.provider, m.model) for m in answers] == [
        ("anthropic", "claude-haiku-4-5"),
        ("groq", "openai/gpt-oss-120b"),
        ("anthropic", "claude-haiku-4-5"),
    ]
    assert isinstance(answers[0].content[0], ThinkingContent)
    assert any(isinstance(b, ToolCall) for b in answers[0].content)
    assert isinstance(answers[1].content[0], TextContent)
    assert answers[1].diagnostics[0]["details"] == {
        "from": "anthropic/claude-haiku-4-5",
        "kind": "transient",
    }


# --------------------------------------------------------------------------- telemetry and AG-UI


def test_a_fallback_is_an_event_on_the_turns_span(otel: Any) -> None:
    from pi_trio.otel import instrument

    async def main() -> Chain:
        chain = Chain(failed(OVERLOADED), faux_assistant_message("backup answers"))
        instrument(chain.agent, **otel.providers)
        await chain.agent.prompt("go")
        return chain

    anyio.run(main, backend="trio")
    # siblings sorted by label: one request to each model, in the one turn
    assert otel.tree() == [
        ("invoke_agent", [("turn 1", [("chat backup", []), ("chat primary", [])])])
    ]
    turn = otel.one("turn")
    (event,) = turn.events
    assert event.name == "pi.model_fallback"
    assert dict(event.attributes) == {
        "pi.fallback.from_model": "faux/primary",
        "pi.fallback.to_model": "faux/backup",
        "pi.fallback.kind": "transient",
    }
    run = otel.one("invoke_agent")
    assert run.attributes["pi.fallbacks"] == 1
    assert run.status.is_ok
    primary, backup = sorted(otel.named("chat"), key=lambda span: span.start_time)
    assert not primary.status.is_ok
    assert backup.status.is_ok


async def test_a_fallback_reaches_an_ag_ui_client_as_a_custom_event() -> None:
    from pi_trio.agui import EventTranslator

    chain = Chain(failed(OVERLOADED), faux_assistant_message("backup answers"))
    translator = EventTranslator("thread", "run")
    out: list[Any] = []
    chain.agent.subscribe(lambda event: out.extend(translator.translate(event)))
    result = await chain.agent.prompt("go")
    out.append(translator.finish(result))
    (custom,) = [e for e in out if e.type.value == "CUSTOM"]
    assert custom.name == "pi.fallback"
    assert custom.value == {
        "fromModel": "faux/primary",
        "toModel": "faux/backup",
        "kind": "transient",
        "errorMessage": OVERLOADED,
        "position": 1,
    }
    kinds = [e.type.value for e in out]
    assert kinds[-1] == "RUN_FINISHED"
    assert kinds.count("TEXT_MESSAGE_START") == kinds.count("TEXT_MESSAGE_END")
    deltas = [e.delta for e in out if e.type.value == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas) == "backup answers"


async def test_a_list_of_models_is_a_fallback_chain() -> None:
    faux = FauxProvider(models=[{"id": "primary"}, {"id": "backup"}])
    faux.set_responses([failed(OVERLOADED), faux_assistant_message("backup answers")])
    primary, backup = faux.get_model("primary"), faux.get_model("backup")
    agent = Agent(model=[primary, backup], stream_fn=faux)  # type: ignore[list-item]
    assert agent.state.model is primary
    result = await agent.prompt("go")
    assert result.text == "backup answers"
    assert result.final.model == "backup"
    alone = Agent(model=[primary], stream_fn=faux)  # type: ignore[list-item]
    assert alone.state.model is primary
    with pytest.raises(ValueError, match=r"Agent\(model=\[\]\) names no model"):
        Agent(model=[], stream_fn=faux)
    with pytest.raises(TypeError, match=r"give either the list or policy=RunPolicy\(fallback="):
        Agent(
            model=[primary, backup],  # type: ignore[list-item]
            stream_fn=faux,
            fallback=FallbackPolicy(models=[backup]),  # type: ignore[list-item]
        )


async def test_an_overflow_is_never_retried_on_the_same_model_even_when_it_reads_as_transient(
    autojump_clock: Any,
) -> None:
    """Without compaction as well: asking the same model again with the same context
    overflows again (the retries would only spend requests and backoff)."""
    faux = FauxProvider(models=[{"id": "faux-1", "context_window": 3000}])
    overflow = "Provider returned error: maximum context length is 3000 tokens"
    faux.set_responses(
        [
            faux_assistant_message("", stop_reason="error", error_message=overflow),
            faux_assistant_message("never asked"),
        ]
    )
    agent = Agent(
        model=faux.get_model(),
        stream_fn=faux,
        policy=RunPolicy(retry=RetryPolicy(max_retries=3, base_delay_ms=1_000)),
    )
    result = await agent.prompt("go")
    assert result.stop_reason == "error"
    assert result.error_message == overflow
    assert faux.state.call_count == 1
