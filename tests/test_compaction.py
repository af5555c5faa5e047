"""Context compaction: the cut, the summary request, the events, the transcript after it,
overflow recovery that does not loop, abort during a summary, and the session store."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from pi_trio.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    Compaction,
    RunPolicy,
)
from pi_trio.agent.compaction import (
    SUMMARIZER_SYSTEM_PROMPT,
    SUMMARY_PREFIX,
    TokenEstimate,
    estimate_tokens,
    is_summary_message,
    plan_compaction,
    serialize_conversation,
    summary_message,
)
from pi_trio.agent.hooks import CompactionRequest
from pi_trio.ai import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    to_json,
)
from pi_trio.session import FileSessionStore, SessionError, record_session
from pi_trio.testing import (
    FauxProvider,
    faux_assistant_message,
    faux_text,
    faux_tool_call,
)

WORDS = "lorem ipsum dolor sit amet " * 40  # ~1 080 characters, ~270 tokens
OVERFLOW = "prompt is too long: 250000 tokens > 200000 maximum"


def user(text: str, ts: int = 1) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=ts)


def assistant(*blocks: Any, ts: int = 2, usage: Usage | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api="faux",
        provider="faux",
        model="faux-1",
        usage=usage or Usage(),
        stop_reason="toolUse" if any(isinstance(b, ToolCall) for b in blocks) else "stop",
        timestamp=ts,
    )


def result(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name="echo",
        content=[TextContent(text=text)],
        is_error=False,
        timestamp=3,
    )


def is_summary_request(context: Any) -> bool:
    first = context.messages[0] if context.messages else None
    return isinstance(first, SystemMessage) and first.content == SUMMARIZER_SYSTEM_PROMPT


def prompt_text(context: Any) -> str:
    return context.messages[-1].content[0].text


class Script:
    """A faux model that answers summary requests with numbered summaries and the run's
    requests from a list, recording every context it was given."""

    def __init__(self, answers: list[Any], summaries: list[Any] | None = None) -> None:
        self.faux = FauxProvider(models=[{"id": "faux-1", "context_window": 3000}])
        self.answers = list(answers)
        self.summaries = summaries
        self.contexts: list[Any] = []
        self.summary_contexts: list[Any] = []
        self.faux.set_responses([self.respond] * 200)

    def respond(self, context: Any, options: Any, state: Any, model: Any) -> Any:
        if is_summary_request(context):
            self.summary_contexts.append(context)
            n = len(self.summary_contexts)
            if self.summaries is not None:
                answer = self.summaries.pop(0)
                return answer(context) if callable(answer) else answer
            return faux_assistant_message(f"SUMMARY {n}")
        self.contexts.append(context)
        answer = self.answers.pop(0)
        return answer(context) if callable(answer) else answer


def echo_tool() -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text=WORDS)])

    return AgentTool(
        name="echo", description="echo", parameters={"type": "object"}, execute=execute
    )


def tool_turn(n: int) -> AssistantMessage:
    return faux_assistant_message(
        [faux_text(f"step {n} " + WORDS), faux_tool_call("echo", {"n": n}, id=f"c{n}")],
        stop_reason="toolUse",
    )


def check_pairs(messages: list[Any]) -> None:
    """Every tool call has exactly one result after it, and no result lacks its call."""
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolCall):
                    open_calls[block.id] = 0
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in open_calls, message.tool_call_id
            assert message.tool_call_id not in answered
            answered.add(message.tool_call_id)
    assert answered == set(open_calls)


def compacting_agent(script: Script, **settings: Any) -> tuple[Agent, list[Any]]:
    options = {"reserve_tokens": 1000, "keep_recent_tokens": 600, **settings}
    agent = Agent(
        model=script.faux.get_model(),
        stream_fn=script.faux,
        system_prompt="You are terse.",
        tools=[echo_tool()],
        policy=RunPolicy(compaction=Compaction(**options)),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    return agent, events


# --------------------------------------------------------------------------- the cut


def test_the_cut_never_separates_a_tool_call_from_its_result() -> None:
    messages = [
        SystemMessage(content="sys", timestamp=0),
        user("go " + WORDS),
        assistant(TextContent(text=WORDS), ToolCall(id="a", name="echo", arguments={})),
        result("a", WORDS),
        assistant(TextContent(text=WORDS), ToolCall(id="b", name="echo", arguments={})),
        result("b", WORDS * 3),  # the newest result alone is over the budget
    ]
    plan = plan_compaction(messages, keep_recent_tokens=300)
    assert plan is not None
    assert plan.first_kept == 4  # the call of the oversized result, never the result
    assert plan.summarized == []  # the cut splits the turn that "go" started
    assert plan.turn_prefix == messages[1:4]


def test_a_cut_between_turns_condenses_whole_turns() -> None:
    messages = [
        SystemMessage(content="sys", timestamp=0),
        user("first " + WORDS),
        assistant(TextContent(text=WORDS)),
        user("second " + WORDS),
        assistant(TextContent(text=WORDS)),
    ]
    plan = plan_compaction(messages, keep_recent_tokens=400)
    assert plan is not None
    assert plan.first_kept == 3
    assert plan.summarized == messages[1:3]  # the system message is not condensed
    assert plan.turn_prefix == []


def test_nothing_to_condense_is_no_plan() -> None:
    messages = [SystemMessage(content="sys", timestamp=0), user("hi")]
    assert plan_compaction(messages, keep_recent_tokens=10) is None
    compacted = [summary_message("earlier", 5), user("hi", 6)]
    assert plan_compaction(compacted, keep_recent_tokens=0) is None


def test_the_summary_of_a_compacted_transcript_is_updated_not_summarized() -> None:
    messages = [
        summary_message("what came before", 10),
        user("next " + WORDS, 11),
        assistant(TextContent(text=WORDS), ts=12),
        user("last", 13),
    ]
    plan = plan_compaction(messages, keep_recent_tokens=1)
    assert plan is not None
    assert plan.previous_summary == "what came before"
    assert plan.summarized == messages[1:3]
    assert all(not is_summary_message(m) for m in plan.summarized)


def test_the_summarizer_reads_text_without_thinking_or_signatures() -> None:
    messages = [
        user("question"),
        assistant(
            ThinkingContent(thinking="secret reasoning", thinking_signature="SIG-123"),
            TextContent(text="answer"),
            ToolCall(id="a", name="echo", arguments={"x": 1}),
        ),
        result("a", "r" * 5000),
    ]
    text = serialize_conversation(messages)
    assert "secret reasoning" not in text
    assert "SIG-123" not in text
    assert "[User]: question" in text
    assert '[Assistant tool calls]: echo({"x":1})' in text
    assert "[3000 more characters left out]" in text


def test_the_estimate_follows_a_growing_transcript_and_ignores_stale_usage() -> None:
    from pi_trio.agent._view import Transcript

    messages = Transcript([user("a" * 400), assistant(TextContent(text="b" * 40))])
    estimate = TokenEstimate()
    assert estimate.tokens(messages) == 110
    messages.append(assistant(TextContent(text="x"), ts=5, usage=Usage(total_tokens=5000)))
    messages.append(user("c" * 40))
    assert estimate.tokens(messages) == 5000 + 10  # reported, then estimated after it
    # after a compaction, usage reported before the summary measured the old transcript
    compacted = Transcript([summary_message("s" * 40, 6), *messages[2:]])
    assert estimate.tokens(compacted) == sum(estimate_tokens(m) for m in compacted)
    compacted.append(assistant(TextContent(text="y"), ts=7, usage=Usage(total_tokens=900)))
    assert estimate.tokens(compacted) == 900


def test_compaction_settings_are_checked_where_they_are_given() -> None:
    with pytest.raises(ValueError, match=r"Compaction\(reserve_tokens=\.\.\.\) must be"):
        Compaction(reserve_tokens=-1)
    with pytest.raises(TypeError, match=r"summarize\(request, signal\)"):
        Compaction(summarize="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"RunPolicy\(compaction=\.\.\.\) takes a Compaction"):
        RunPolicy(compaction={"reserve_tokens": 1})  # type: ignore[arg-type]
    # one spelling: compaction came with the grouped settings, and the error names its group
    with pytest.raises(
        TypeError,
        match=r"^Agent\(compaction=\.\.\.\): compaction is a setting of policy=; give it as "
        r"Agent\(policy=RunPolicy\(compaction=\.\.\.\)\)$",
    ):
        Agent(model=FauxProvider().get_model(), compaction=Compaction())  # type: ignore[call-arg]


# --------------------------------------------------------------------------- in a run


async def test_a_long_run_compacts_before_the_request_that_would_not_fit() -> None:
    script = Script([tool_turn(n) for n in range(12)] + [faux_assistant_message("done")])
    agent, events = compacting_agent(script)
    result = await agent.prompt("go")
    assert result.ok, result.error_message

    starts = [e for e in events if e.type == "compaction_start"]
    ends = [e for e in events if e.type == "compaction_end"]
    assert len(starts) == len(ends) >= 2
    assert all(e.reason == "threshold" and not e.will_retry for e in starts)
    assert all(e.messages is not None and e.error_message is None for e in ends)
    assert all(e.tokens_after < e.tokens_before for e in ends)

    messages = agent.state.messages
    assert isinstance(messages[0], SystemMessage)
    assert messages[0].content == "You are terse."
    assert [t.name for t in messages[0].tools_added] == ["echo"]
    assert is_summary_message(messages[1])
    assert messages[1].content[0].text.startswith(SUMMARY_PREFIX)
    assert f"SUMMARY {len(ends)}" in messages[1].content[0].text
    assert not any(is_summary_message(m) for m in messages[2:])
    check_pairs(messages)
    assert messages[-1].content[0].text == "done"
    # the state is the transcript the last compaction_end announced, plus what followed
    assert [to_json(m) for m in messages[: len(ends[-1].messages)]] == [
        to_json(m) for m in ends[-1].messages
    ]
    # every request after a compaction starts with the system head and the summary
    last = script.contexts[-1]
    assert isinstance(last.messages[0], SystemMessage)
    assert is_summary_message(last.messages[1])
    # the first cut split the turn "go" started: its start was condensed on its own;
    # each later summary updated the one before
    first = ends[0].summary
    assert first.startswith("(no earlier conversation)")
    assert first.endswith("SUMMARY 1")
    for n, context in enumerate(script.summary_contexts[1:], 2):
        assert f"<previous-summary>\n{ends[n - 2].summary}\n</previous-summary>" in (
            prompt_text(context)
        )
    assert events[-1].type == "agent_end"


async def test_an_overflowed_response_is_compacted_and_asked_once_more() -> None:
    overflow = faux_assistant_message("", stop_reason="error", error_message=OVERFLOW)
    script = Script(
        [faux_assistant_message("first " + WORDS)] * 3 + [overflow, faux_assistant_message("ok")]
    )
    agent, events = compacting_agent(script, reserve_tokens=0)
    for n in range(3):
        await agent.prompt(f"q{n} " + WORDS)
    result = await agent.prompt("last")
    assert result.ok
    assert result.text == "ok"
    kinds = [e.type for e in events if e.type.startswith("compaction")]
    assert kinds == ["compaction_start", "compaction_end"]
    start, end = (e for e in events if e.type.startswith("compaction"))
    assert start.reason == "overflow"
    assert start.will_retry
    assert end.will_retry
    # the overflowed response left the transcript and the run's messages
    assert all(getattr(m, "error_message", None) != OVERFLOW for m in agent.state.messages)
    assert all(getattr(m, "error_message", None) != OVERFLOW for m in result.messages)
    assert is_summary_message(agent.state.messages[1])
    assert agent.state.messages[-2].content[0].text == "last"


async def test_an_overflow_after_compacting_ends_the_run_without_a_loop() -> None:
    overflow = faux_assistant_message("", stop_reason="error", error_message=OVERFLOW)
    script = Script([faux_assistant_message("a " + WORDS)] * 2 + [overflow] * 5)
    agent, events = compacting_agent(script, reserve_tokens=0)
    for n in range(2):
        await agent.prompt(f"q{n} " + WORDS)
    result = await agent.prompt("again")
    assert result.stop_reason == "error"
    assert result.error_message == OVERFLOW
    assert len(script.summary_contexts) == 1  # one compaction
    assert len(script.contexts) == 4  # two answers, the overflow, the one retry
    assert [e.type for e in events if e.type.startswith("compaction")] == [
        "compaction_start",
        "compaction_end",
    ]
    assert agent.state.messages[-1].error_message == OVERFLOW


async def test_a_failed_summary_request_leaves_the_transcript_and_the_run_goes_on() -> None:
    failing = faux_assistant_message("", stop_reason="error", error_message="boom 500")
    script = Script(
        [tool_turn(n) for n in range(6)] + [faux_assistant_message("done")],
        summaries=[failing] * 50,
    )
    agent, events = compacting_agent(script)
    result = await agent.prompt("go")
    assert result.ok
    assert result.text == "done"
    ends = [e for e in events if e.type == "compaction_end"]
    assert ends
    assert all(e.messages is None for e in ends)
    assert ends[0].error_message == "the summary request failed: boom 500"
    assert not any(is_summary_message(m) for m in agent.state.messages)
    check_pairs(agent.state.messages)


async def test_a_summary_cut_at_the_output_limit_is_not_kept() -> None:
    cut = faux_assistant_message("half a summ", stop_reason="length")
    script = Script(
        [tool_turn(n) for n in range(6)] + [faux_assistant_message("done")],
        summaries=[cut] * 50,
    )
    agent, events = compacting_agent(script)
    await agent.prompt("go")
    end = next(e for e in events if e.type == "compaction_end")
    assert end.messages is None
    assert "output limit" in end.error_message


async def test_abort_during_the_summary_request_closes_the_compaction_then_the_run() -> None:
    agent: Agent

    def summarize_and_abort(context: Any) -> Any:
        agent.abort()
        return faux_assistant_message("never kept")

    script = Script(
        [tool_turn(n) for n in range(6)] + [faux_assistant_message("done")],
        summaries=[summarize_and_abort],
    )
    agent, events = compacting_agent(script)
    result = await agent.prompt("go")
    assert result.stop_reason == "aborted"
    kinds = [e.type for e in events]
    end = kinds.index("compaction_end")
    assert events[end].aborted
    assert events[end].messages is None
    assert kinds[end + 1 :] == ["message_start", "message_end", "turn_end", "agent_end"]
    assert not any(is_summary_message(m) for m in agent.state.messages)
    assert agent.state.messages[-1].stop_reason == "aborted"
    check_pairs(agent.state.messages)
    assert not agent.state.is_streaming
    script.answers = [faux_assistant_message("again")] * 3
    agent.policy = msgspec.structs.replace(agent.policy, compaction=None)
    assert (await agent.prompt("again")).text == "again"


async def test_thinking_signatures_never_reach_another_summarizer_model() -> None:
    script = Script(
        [
            faux_assistant_message(
                [
                    ThinkingContent(
                        thinking="private chain " + WORDS, thinking_signature="SIG-OF-FAUX-1"
                    ),
                    faux_text("t " + WORDS),
                    faux_tool_call("echo", {"n": n}, id=f"c{n}"),
                ],
                stop_reason="toolUse",
            )
            for n in range(6)
        ]
        + [faux_assistant_message("done")]
    )
    other = FauxProvider(models=[{"id": "summarizer"}])
    seen: list[Any] = []

    def summarize(context: Any, options: Any, state: Any, model: Any) -> Any:
        seen.append((model.id, context))
        return faux_assistant_message("S")

    other.set_responses([summarize] * 20)

    async def stream_fn(model: Any, context: Any, options: Any, send: Any) -> None:
        await (other if model.id == "summarizer" else script.faux)(model, context, options, send)

    agent = Agent(
        model=script.faux.get_model(),
        stream_fn=stream_fn,
        tools=[echo_tool()],
        policy=RunPolicy(
            compaction=Compaction(
                reserve_tokens=1000, keep_recent_tokens=600, model=other.get_model()
            )
        ),
    )
    assert (await agent.prompt("go")).ok
    assert seen
    assert all(model == "summarizer" for model, _ in seen)
    # the signatures exist, and go back to the model that wrote them
    assert any("SIG-OF-FAUX-1" in to_json(c.messages).decode() for c in script.contexts)
    for _, context in seen:
        wire = to_json(context.messages).decode()
        assert "SIG-OF-FAUX-1" not in wire
        assert "private chain" not in wire
        assert all(not isinstance(b, ThinkingContent) for m in context.messages for b in m.content)


async def test_a_summarize_hook_writes_the_summary_or_declines() -> None:
    requests: list[CompactionRequest] = []

    def summarize(request: CompactionRequest) -> str | None:
        requests.append(request)
        return None if len(requests) == 1 else f"hook summary of {len(request.turn_prefix)}"

    script = Script([tool_turn(n) for n in range(8)] + [faux_assistant_message("done")])
    agent, events = compacting_agent(script, summarize=summarize)
    assert (await agent.prompt("go")).ok
    assert script.summary_contexts == []  # no model call: the hook wrote them
    assert len(requests) >= 2
    assert requests[0].reason == "threshold"
    assert requests[0].model.id == "faux-1"
    ends = [e for e in events if e.type == "compaction_end"]
    assert ends[0].messages is None
    assert ends[0].error_message is None
    assert ends[1].summary.startswith("hook summary of")
    assert is_summary_message(agent.state.messages[1])


async def test_the_summary_requests_usage_is_reported() -> None:
    script = Script([tool_turn(n) for n in range(6)] + [faux_assistant_message("done")])
    agent, events = compacting_agent(script)
    await agent.prompt("go")
    end = next(e for e in events if e.type == "compaction_end")
    assert end.usage is not None
    assert end.usage.output > 0


async def test_a_resumed_compacted_transcript_does_not_compact_again_at_once() -> None:
    script = Script([tool_turn(n) for n in range(6)] + [faux_assistant_message("done")] * 3)
    agent, _events = compacting_agent(script)
    await agent.prompt("go")
    count = len(script.summary_contexts)
    assert count >= 1
    saved = msgspec.json.decode(to_json(agent.state.messages))
    from pi_trio.ai import messages_from_json

    resumed = Agent(
        model=script.faux.get_model(),
        stream_fn=script.faux,
        tools=[echo_tool()],
        messages=messages_from_json(msgspec.json.encode(saved)),
        policy=RunPolicy(compaction=Compaction(reserve_tokens=1000, keep_recent_tokens=600)),
    )
    assert (await resumed.prompt("more")).ok
    assert len(script.summary_contexts) == count  # the kept usage is stale, not trusted


async def test_a_file_session_follows_the_compactions(tmp_path: Any) -> None:
    script = Script([tool_turn(n) for n in range(8)] + [faux_assistant_message("done")])
    agent, events = compacting_agent(script)
    store = FileSessionStore(tmp_path / "s.jsonl")
    record_session(agent, store)
    await agent.prompt("go")
    assert any(e.type == "compaction_end" and e.messages for e in events)
    saved = FileSessionStore(tmp_path / "s.jsonl").load()
    assert [to_json(m) for m in saved] == [to_json(m) for m in agent.state.messages]
    assert not list(tmp_path.glob(".s.jsonl.*"))  # no temporary file left


async def test_a_store_that_cannot_replace_is_refused_for_a_compacting_agent() -> None:
    class AppendOnly:
        def append(self, message: Any) -> None: ...

        def load(self) -> list[Any]:
            return []

    agent = Agent(model=FauxProvider().get_model(), policy=RunPolicy(compaction=Compaction()))
    with pytest.raises(SessionError, match="has no replace"):
        record_session(agent, AppendOnly())


def test_compaction_and_its_abort_work_the_same_on_asyncio() -> None:
    async def main() -> None:
        script = Script([tool_turn(n) for n in range(8)] + [faux_assistant_message("done")])
        agent, events = compacting_agent(script)
        assert (await agent.prompt("go")).ok
        assert is_summary_message(agent.state.messages[1])
        check_pairs(agent.state.messages)
        assert any(e.type == "compaction_end" and e.messages for e in events)

        def summarize_and_abort(context: Any) -> Any:
            aborting.abort()
            return faux_assistant_message("never kept")

        script = Script(
            [tool_turn(n) for n in range(6)] + [faux_assistant_message("done")],
            summaries=[summarize_and_abort],
        )
        aborting, events = compacting_agent(script)
        assert (await aborting.prompt("go")).stop_reason == "aborted"
        end = next(e for e in events if e.type == "compaction_end")
        assert end.aborted
        assert events[-1].type == "agent_end"
        check_pairs(aborting.state.messages)

    anyio.run(main, backend="asyncio")
