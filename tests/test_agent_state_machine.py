"""A hypothesis state machine over an Agent driven by the faux provider.

Each step is one run on trio's fake clock: random responses (text, tool calls), tools
that sleep, fail or time out, listeners that are slow or raise, and steers, follow-ups
and aborts at random times. After every step: events well nested, each tool call of a
completed response exactly one result, no queued message lost or duplicated, the agent
idle and no task of the run alive.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import trio
import trio.testing
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from pi_trio.agent import Agent, AgentTool
from pi_trio.ai import ToolCall, UserMessage
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_text, faux_tool_call

from .test_abort import AbortAt, check_invariants

TOOL_NAMES = ("sleepy", "failing", "hanging")


async def _execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    kind = params.get("kind")
    if kind == "failing":
        raise RuntimeError("tool failed")
    await trio.sleep(params.get("seconds", 0.1) if kind == "sleepy" else 1000)
    return "slept"


def _tools() -> list[AgentTool]:
    return [
        AgentTool(
            name=name, description=name, parameters={"type": "object"}, execute=_execute, timeout=5
        )
        for name in TOOL_NAMES
    ]


responses = st.lists(
    st.one_of(
        st.text("abc ", min_size=0, max_size=12).map(lambda t: ("text", t)),
        st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3).map(
            lambda names: ("tools", names)
        ),
    ),
    min_size=1,
    max_size=4,
)
actions = st.lists(
    st.tuples(st.sampled_from(["steer", "follow_up", "abort"]), st.floats(0, 3)),
    max_size=4,
)


class AgentMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.faux = FauxProvider(token_size=(1, 3), tokens_per_second=50)
        self.agent = Agent(
            model=self.faux.get_model(), system_prompt="s", tools=_tools(), stream_fn=self.faux
        )
        self.enqueued: list[Any] = []
        self.counter = 0
        self.events: list[Any] = []
        self.live: set[Any] = set()

    def _response(self, spec: tuple[str, Any]) -> Any:
        kind, value = spec
        if kind == "text":
            return faux_assistant_message(value)
        calls = [faux_tool_call(name, {"kind": name, "seconds": 0.2}) for name in value]
        return faux_assistant_message([faux_text("using tools"), *calls], stop_reason="toolUse")

    @rule(
        script=responses, timed=actions, slow_listener=st.booleans(), raising_listener=st.booleans()
    )
    def run_once(
        self,
        script: list[Any],
        timed: list[tuple[str, float]],
        slow_listener: bool,
        raising_listener: bool,
    ) -> None:
        self.faux.set_responses(
            [self._response(s) for s in script] + [faux_assistant_message("fallback")] * 8
        )
        events: list[Any] = []
        agent = self.agent
        unsubscribe = [agent.subscribe(events.append)]
        if slow_listener:

            async def slow(event: Any) -> None:
                if event.type in ("message_end", "tool_execution_end"):
                    await trio.sleep(0.05)

            unsubscribe.append(agent.subscribe(slow))
        if raising_listener:

            def raising(event: Any) -> None:
                if event.type == "tool_execution_end":
                    raise RuntimeError("listener failed")

            unsubscribe.append(agent.subscribe(raising))

        async def main() -> None:
            instrument = AbortAt(-1, lambda: None)
            trio.lowlevel.add_instrument(instrument)
            try:
                async with trio.open_nursery() as nursery:
                    for action, at in timed:
                        nursery.start_soon(self._act, action, at)
                    failures: list[str] = []
                    try:
                        await agent.prompt(f"prompt {self.counter}")
                    except RuntimeError as exc:
                        # a raising listener also raises on the failure events
                        failures.append(str(exc))
                    assert failures in ([], ["listener failed"] if raising_listener else [])
                    nursery.cancel_scope.cancel()
            finally:
                trio.lowlevel.remove_instrument(instrument)
            self.live = {t for t in instrument.live if "act" not in t.name}

        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
        for u in unsubscribe:
            u()
        self.events = events

    async def _act(self, action: str, at: float) -> None:
        await trio.sleep(at)
        if action == "abort":
            self.agent.abort()
            return
        self.counter += 1
        message = UserMessage(content=f"queued {self.counter}")
        self.enqueued.append(message)
        getattr(self.agent, action)(message)

    @rule()
    def clear_queues(self) -> None:
        queued = [*(self.agent._steering._items or ()), *(self.agent._follow_up._items or ())]
        self.agent.clear_all_queues()
        dropped = {id(m) for m in queued}
        self.enqueued = [m for m in self.enqueued if id(m) not in dropped]

    @invariant()
    def run_was_consistent(self) -> None:
        if self.events:
            check_invariants(self.events, self.agent)
        assert self.live == set()
        assert not self.agent.state.is_streaming
        assert self.agent.signal is None

    @invariant()
    def no_queued_message_lost_or_duplicated(self) -> None:
        in_transcript = Counter(id(m) for m in self.agent.state.messages)
        queued = Counter(
            id(m)
            for m in [*(self.agent._steering._items or ()), *(self.agent._follow_up._items or ())]
        )
        for message in self.enqueued:
            assert in_transcript[id(message)] + queued[id(message)] == 1

    @invariant()
    def completed_tool_calls_have_one_result(self) -> None:
        results = Counter(
            m.tool_call_id for m in self.agent.state.messages if m.role == "toolResult"
        )
        for m in self.agent.state.messages:
            if m.role == "assistant" and m.stop_reason not in ("error", "aborted"):
                for block in m.content:
                    if isinstance(block, ToolCall):
                        assert results[block.id] == 1


AgentMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
TestAgentMachine = AgentMachine.TestCase
