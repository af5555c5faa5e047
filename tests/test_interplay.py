"""Where compaction and sub-agents meet tool approval, model fallback and run limits: a
paused transcript compacted and then resumed, a resumed run that compacts with a session
store following, summary requests counted by the run's limits, a sub-agent's spend held
to the parent's limits, a fallback inside a sub-agent, an overflow that compaction cannot
save handed to the fallback chain (never retried on the same model), and a sub-agent
that pauses for approval."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from pi_trio.agent import (
    Agent,
    AgentTool,
    AgentToolResult,
    Compaction,
    FallbackPolicy,
    RunLimitExceeded,
    RunLimits,
    RunPolicy,
    approve,
)
from pi_trio.agent.compaction import (
    SUMMARIZER_SYSTEM_PROMPT,
    compacted_transcript,
    is_summary_message,
    plan_compaction,
    summary_message,
)
from pi_trio.agent.extend import is_approval_placeholder, pending_approvals
from pi_trio.ai import (
    AssistantMessage,
    RetryPolicy,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    to_json,
)
from pi_trio.session import FileSessionStore, record_session
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

WORDS = "lorem ipsum dolor sit amet " * 40  # ~1 080 characters, ~270 tokens
OVERFLOW = "Provider returned error: maximum context length is 3000 tokens"  # and transient


def is_summary_request(context: Any) -> bool:
    first = context.messages[0] if context.messages else None
    return isinstance(first, SystemMessage) and first.content == SUMMARIZER_SYSTEM_PROMPT


class Model:
    """Faux models that answer summary requests from ``summaries`` (default: a fixed
    summary) and the run's requests from ``answers``, counting both."""

    def __init__(
        self,
        answers: list[Any],
        *,
        summaries: list[Any] | None = None,
        models: list[dict[str, Any]] | None = None,
    ) -> None:
        self.faux = FauxProvider(models=models or [{"id": "faux-1", "context_window": 3000}])
        self.answers = list(answers)
        self.summaries = summaries
        self.requests: list[Any] = []  # (model id, context) of the run's requests
        self.summary_requests = 0
        self.faux.set_responses([self.respond] * 100)

    def respond(self, context: Any, options: Any, state: Any, model: Any) -> Any:
        if is_summary_request(context):
            self.summary_requests += 1
            if self.summaries is not None:
                return self.summaries.pop(0)
            return faux_assistant_message("SUMMARY")
        self.requests.append((model.id, context))
        return self.answers.pop(0)


def same(a: list[Any], b: list[Any]) -> bool:
    return [to_json(m) for m in a] == [to_json(m) for m in b]


def refund_tool(ran: list[Any], text: str = "refunded") -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        ran.append(params)
        return AgentToolResult(content=[TextContent(text=text)])

    return AgentTool(
        name="refund",
        description="Refund an order.",
        parameters={"type": "object"},
        execute=execute,
        needs_approval=True,
    )


def refund_call(call_id: str = "r1") -> AssistantMessage:
    return faux_assistant_message(
        [faux_text("refunding"), faux_tool_call("refund", {"order": 7}, id=call_id)],
        stop_reason="toolUse",
    )


def history(pairs: int) -> list[Any]:
    messages: list[Any] = []
    for n in range(pairs):
        messages.append(UserMessage(content=[TextContent(text=f"q{n} " + WORDS)], timestamp=1))
        messages.append(faux_assistant_message(f"a{n} " + WORDS))
    return messages


# --------------------------------------------------------------------------- approvals


async def test_a_compacted_paused_transcript_resumes() -> None:
    """Compacting a paused transcript (the public pieces, as a host would, with the
    smallest budget) keeps the paused answer with its placeholders, so it resumes."""
    model = Model([refund_call(), faux_assistant_message("done")])
    ran: list[Any] = []
    agent = Agent(
        model=model.faux.get_model(),
        stream_fn=model.faux,
        system_prompt="You refund.",
        tools=[refund_tool(ran)],
        messages=history(3),
    )
    paused = await agent.prompt("refund order 7")
    assert paused.status == "approval_pending"
    messages = agent.state.messages
    plan = plan_compaction(messages, keep_recent_tokens=1)
    assert plan is not None
    answer = len(messages) - 2  # the paused answer, then its placeholder
    assert is_approval_placeholder(messages[-1])
    assert plan.first_kept == answer  # the cut falls before the answer, never after
    assert plan.turn_prefix  # the prompt of the paused turn is condensed on its own
    compacted = compacted_transcript(messages, plan, summary_message("SUMMARY", 1))
    assert pending_approvals(compacted) == paused.pending_approvals
    agent.state.messages = compacted

    resumed = await agent.resume({"r1": approve()})
    assert resumed.ok, resumed.error_message
    assert resumed.text == "done"
    assert ran == [{"order": 7}]
    after = agent.state.messages
    assert is_summary_message(after[1])
    assert isinstance(after[3], ToolResultMessage)
    assert after[3].content[0].text == "refunded"  # in the placeholder's place
    assert not any(is_approval_placeholder(m) for m in after)
    _, context = model.requests[-1]
    assert is_summary_message(context.messages[1])  # the model read the compacted one


async def test_a_resumed_run_compacts_after_the_paused_turns_results(tmp_path: Any) -> None:
    """A compaction of a resumed run comes after the paused turn's results took their
    placeholders' places; the session store follows both rewrites."""
    model = Model([refund_call(), faux_assistant_message("done")])
    ran: list[Any] = []
    agent = Agent(
        model=model.faux.get_model(),
        stream_fn=model.faux,
        system_prompt="You refund.",
        tools=[refund_tool(ran, text="refund log: " + WORDS * 7)],  # ~1 900 tokens
        messages=history(1),
        policy=RunPolicy(compaction=Compaction(reserve_tokens=1000, keep_recent_tokens=600)),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    store = FileSessionStore(tmp_path / "s.jsonl")
    record_session(agent, store)
    paused = await agent.prompt("refund order 7")
    assert paused.status == "approval_pending"
    assert not any(e.type == "compaction_start" for e in events)  # it fitted until now
    assert same(FileSessionStore(tmp_path / "s.jsonl").load(), agent.state.messages)

    events.clear()
    resumed = await agent.resume({"r1": approve()})
    assert resumed.ok, resumed.error_message
    kinds = [e.type for e in events]
    result_end = next(
        i
        for i, e in enumerate(events)
        if e.type == "message_end" and isinstance(e.message, ToolResultMessage)
    )
    assert kinds.index("compaction_start") > result_end
    end = next(e for e in events if e.type == "compaction_end")
    assert end.messages is not None
    assert not any(is_approval_placeholder(m) for m in end.messages)
    kept = [m for m in end.messages if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in kept] == ["r1"]  # the call kept its one result
    assert ran == [{"order": 7}]
    assert same(FileSessionStore(tmp_path / "s.jsonl").load(), agent.state.messages)


async def test_a_sub_agent_that_pauses_for_approval_is_an_error_result_naming_the_calls() -> None:
    child_model = Model([refund_call()])
    ran: list[Any] = []
    child = Agent(
        model=child_model.faux.get_model(),
        stream_fn=child_model.faux,
        tools=[refund_tool(ran)],
    )
    parent_model = Model(
        [
            faux_assistant_message([faux_tool_call("clerk", {"task": "refund 7"}, id="d1")]),
            faux_assistant_message("could not"),
        ]
    )
    parent = Agent(
        model=parent_model.faux.get_model(),
        stream_fn=parent_model.faux,
        tools=[child.as_tool("clerk", "Does refunds")],
    )
    result = await parent.prompt("go")
    assert result.ok
    answer = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert answer.is_error
    text = answer.content[0].text
    assert "wait for approval" in text
    assert "refund (r1)" in text
    assert "never resumed" in text
    assert ran == []


# --------------------------------------------------------------------------- limits


async def test_the_summary_requests_count_toward_the_run_limits() -> None:
    turns = [
        faux_assistant_message(
            [faux_text(f"step {n} " + WORDS), faux_tool_call("echo", {"n": n}, id=f"c{n}")],
            stop_reason="toolUse",
        )
        for n in range(8)
    ] + [faux_assistant_message("done")]

    async def echo(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=[TextContent(text=WORDS)])

    def agent_on(model: Model, limits: RunLimits) -> Agent:
        return Agent(
            model=model.faux.get_model(),
            stream_fn=model.faux,
            tools=[AgentTool(name="echo", description="e", parameters={}, execute=echo)],
            policy=RunPolicy(
                compaction=Compaction(reserve_tokens=1000, keep_recent_tokens=600), limits=limits
            ),
        )

    counted = Model(list(turns))
    agent = agent_on(counted, RunLimits(max_requests=1000, per="agent"))
    result = await agent.prompt("go")
    assert result.ok
    assert counted.summary_requests >= 2
    counters = agent.limit_counters
    assert counters.requests == len(counted.requests) + counted.summary_requests
    # the limits count what the run reports it spent, summaries included
    assert counters.total_tokens == result.usage.total_tokens
    assert counters.output_tokens == result.usage.output

    # a limit the run's own requests alone would meet is reached earlier
    stopped = Model(list(turns))
    agent = agent_on(stopped, RunLimits(max_requests=len(turns)))
    result = await agent.prompt("go")
    with pytest.raises(RunLimitExceeded) as caught:
        result.raise_for_error()
    assert caught.value.limit == "max_requests"
    assert len(stopped.requests) < len(turns)


async def test_a_sub_agents_spend_counts_toward_the_parents_limits() -> None:
    child_model = Model([faux_assistant_message("notes: " + WORDS)])  # ~270 output tokens
    child = Agent(model=child_model.faux.get_model(), stream_fn=child_model.faux)
    parent_model = Model(
        [
            faux_assistant_message([faux_tool_call("research", {"task": "tides"}, id="d1")]),
            faux_assistant_message("never asked: the limit comes first"),
        ]
    )
    parent = Agent(
        model=parent_model.faux.get_model(),
        stream_fn=parent_model.faux,
        tools=[child.as_tool("research", "Research")],
        limits=RunLimits(max_output_tokens=100),
    )
    result = await parent.prompt("go")
    with pytest.raises(RunLimitExceeded) as caught:
        result.raise_for_error()
    answer = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert answer.usage is not None
    assert caught.value.limit == "max_output_tokens"
    assert caught.value.spent >= answer.usage.output > 100
    assert len(parent_model.requests) == 1  # the child's spend stopped the next request


async def test_an_overflow_is_not_compacted_when_the_limits_allow_no_other_request() -> None:
    overflow = faux_assistant_message("", stop_reason="error", error_message=OVERFLOW)
    model = Model([faux_assistant_message("a0 " + WORDS), faux_assistant_message("a1 " + WORDS)])
    model.answers += [overflow, faux_assistant_message("never asked")]
    agent = Agent(
        model=model.faux.get_model(),
        stream_fn=model.faux,
        policy=RunPolicy(
            compaction=Compaction(reserve_tokens=0, keep_recent_tokens=600),
            limits=RunLimits(max_requests=3, per="agent"),
        ),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    for n in range(2):
        assert (await agent.prompt(f"q{n} " + WORDS)).ok
    result = await agent.prompt("last")  # its request is the third and last allowed
    assert result.error_message == OVERFLOW
    assert not any(e.type == "compaction_start" for e in events)
    assert model.summary_requests == 0
    assert len(model.requests) == 3


# --------------------------------------------------------------------------- fallback


async def test_a_sub_agent_falls_back_inside_its_own_run() -> None:
    models = [{"id": "large"}, {"id": "small"}]
    child_model = Model(
        [
            faux_assistant_message("", stop_reason="error", error_message="529 Overloaded"),
            faux_assistant_message("found on small"),
        ],
        models=models,
    )
    child = Agent(
        model=[child_model.faux.get_model("large"), child_model.faux.get_model("small")],
        stream_fn=child_model.faux,
    )
    parent_model = Model(
        [
            faux_assistant_message([faux_tool_call("research", {"task": "x"}, id="d1")]),
            faux_assistant_message("thanks"),
        ],
        models=models,
    )
    parent = Agent(
        model=parent_model.faux.get_model("large"),
        stream_fn=parent_model.faux,
        tools=[child.as_tool("research", "Research", forward_events=True)],
    )
    events: list[Any] = []
    parent.subscribe(events.append)
    result = await parent.prompt("go")
    assert result.ok
    answer = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert answer.content[0].text == "found on small"
    forwarded = [e.partial_result.details.type for e in events if e.type == "tool_execution_update"]
    assert "model_fallback" in forwarded
    assert not any(e.type == "model_fallback" for e in events)  # the parent did not fall back
    assert [m.model for m in answer.details["messages"] if isinstance(m, AssistantMessage)] == [
        "small"
    ]
    assert [m for m, _ in parent_model.requests] == ["large", "large"]
    assert [m for m, _ in child_model.requests] == ["large", "small"]


async def test_an_overflow_compaction_cannot_save_goes_to_the_fallback_model(
    tmp_path: Any,
) -> None:
    """The overflow is not retried on the same model (compaction handles overflows);
    the compaction fails, so the fallback chain takes it; the store never saves it."""
    model = Model(
        [
            faux_assistant_message("a0 " + WORDS),
            faux_assistant_message("a1 " + WORDS),
            faux_assistant_message("", stop_reason="error", error_message=OVERFLOW),
            faux_assistant_message("ok from big"),
        ],
        summaries=[faux_assistant_message("", stop_reason="error", error_message="boom")],
        models=[{"id": "small", "context_window": 3000}, {"id": "big", "context_window": 99999}],
    )
    agent = Agent(
        model=model.faux.get_model("small"),
        stream_fn=model.faux,
        policy=RunPolicy(
            compaction=Compaction(reserve_tokens=0, keep_recent_tokens=600),
            retry=RetryPolicy(max_retries=2),
            fallback=FallbackPolicy(models=[model.faux.get_model("big")], on={"overflow"}),
        ),
    )
    events: list[Any] = []
    agent.subscribe(events.append)
    store = FileSessionStore(tmp_path / "s.jsonl")
    record_session(agent, store)
    for n in range(2):
        await agent.prompt(f"q{n} " + WORDS)
    result = await agent.prompt("last")
    assert result.ok, result.error_message
    assert result.text == "ok from big"
    kinds = [e.type for e in events if e.type in ("compaction_start", "compaction_end")]
    kinds += [e.type for e in events if e.type in ("model_fallback", "auto_retry_start")]
    assert kinds == ["compaction_start", "compaction_end", "model_fallback"]
    end = next(e for e in events if e.type == "compaction_end")
    assert end.messages is None
    assert "boom" in end.error_message
    assert [m for m, _ in model.requests] == ["small", "small", "small", "big"]
    assert not any(getattr(m, "error_message", None) == OVERFLOW for m in agent.state.messages)
    assert same(FileSessionStore(tmp_path / "s.jsonl").load(), agent.state.messages)


def test_the_interplay_works_the_same_on_asyncio(tmp_path: Any) -> None:
    async def main() -> None:
        await test_a_compacted_paused_transcript_resumes()
        await test_a_sub_agents_spend_counts_toward_the_parents_limits()
        await test_an_overflow_compaction_cannot_save_goes_to_the_fallback_model(tmp_path)

    anyio.run(main, backend="asyncio")
