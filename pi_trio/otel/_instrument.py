"""``instrument()``: OpenTelemetry for one agent, or for every agent made afterwards."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context

from ..agent import Agent
from ..agent.extend import on_agent_created
from ._listener import AgentTelemetry
from ._pi_listener import PiAgentTelemetry
from ._telemetry import VOCABULARIES, Telemetry, Vocabulary
from ._tools import ToolWrapping

__all__ = ["instrument"]


class _Instrumentation:
    """One agent's instrumentation: its listener and its traced tools, and how to undo
    both. The agent holds it (through its listener), so it lives as long as the agent
    and no longer."""

    def __init__(self, agent: Agent, telemetry: Telemetry, owner: object) -> None:
        self.owner = owner  # the global instrumentation that made it, or None
        self.listener = AgentTelemetry(agent, telemetry, self._run_ended)
        genai = telemetry.vocabulary != "pi"
        self.tools = ToolWrapping(self.listener) if genai else None
        if self.tools is not None:
            self.tools.wrap(agent.state.tools)
        unsubscribes = [agent.subscribe(self.listener)] if genai else []
        self.pi: PiAgentTelemetry | None = None
        if telemetry.pi is not None:
            if genai:  # inside each chat span, told by the GenAI listener
                self.pi = PiAgentTelemetry(agent, telemetry.pi, self.listener.chat_context)
                self.listener.companion = self.pi
            else:  # under the span current where the run was started
                self.pi = PiAgentTelemetry(agent, telemetry.pi, otel_context.get_current)
                unsubscribes.append(agent.subscribe(self.pi))
        self.unsubscribes = unsubscribes
        self.agent = weakref.ref(agent)
        self.done = False

    def _run_ended(self) -> None:
        agent = self.agent()
        if agent is not None and self.tools is not None:
            self.tools.wrap(agent.state.tools)  # tools added meanwhile: from the next run on

    def undo(self) -> None:
        if self.done:
            return
        self.done = True
        for unsubscribe in self.unsubscribes:
            unsubscribe()
        agent = self.agent()
        if agent is not None:
            if self.tools is not None:
                self.tools.restore(agent.state.tools)
            _instrumented.pop(agent, None)
        self.listener.close("the agent was uninstrumented during the run")
        if self.pi is not None:
            self.pi.close()


# The agents instrumented now. Weak both ways: an agent that is dropped is collected,
# instrumented or not.
_instrumented: weakref.WeakKeyDictionary[Agent, weakref.ref[_Instrumentation]] = (
    weakref.WeakKeyDictionary()
)


class _Global:
    """Every ``Agent`` constructed while this is installed gets instrumented (through
    ``pi_trio.agent.extend.on_agent_created``; the ``Agent`` class is left as it is)."""

    def __init__(self, telemetry: Telemetry) -> None:
        self.telemetry = telemetry
        self.agents: weakref.WeakSet[Agent] = weakref.WeakSet()
        self.remove_hook: Callable[[], None] = lambda: None

    def agent_created(self, agent: Agent) -> None:
        if _global is self and not _is_instrumented(agent):
            _instrument_agent(agent, self.telemetry, self)
            self.agents.add(agent)


_global: _Global | None = None


def instrument(
    agent: Agent | None = None,
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    capture_content: bool | str | None = None,
    agent_name: str | None = None,
    vocabulary: Vocabulary = "genai",
) -> Callable[[], None]:
    """Trace and measure ``agent``'s runs, or (without ``agent``) those of every ``Agent``
    constructed from now on. Returns the function that turns it off again.

    Spans: ``invoke_agent`` per run, ``turn`` per turn under it, ``chat {model}`` per
    model request and ``execute_tool {name}`` per tool call under their turn, with the
    OpenTelemetry GenAI attributes (provider, models, token usage, finish reasons,
    ``error.type``) and ``pi.usage.cost``. Metrics: ``gen_ai.client.token.usage`` and
    ``gen_ai.client.operation.duration`` per request, ``gen_ai.invoke_agent.duration`` per
    run, ``gen_ai.execute_tool.duration`` per tool call. A tool's own spans nest under its
    ``execute_tool`` span. Without ``agent``, new agents are found through
    ``pi_trio.agent.extend.on_agent_created``.

    ``tracer_provider`` / ``meter_provider`` default to the global ones. Message
    content (prompts, answers, tool arguments and results) is recorded only with
    ``capture_content=True``, or when it is ``None`` and the environment variable
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for it (``true``,
    ``SPAN_ONLY`` or ``SPAN_AND_EVENT``; ``capture_content`` takes these strings too).
    ``agent_name`` becomes ``gen_ai.agent.name`` and part of the run span's name.

    ``vocabulary``: ``"genai"`` (the default) writes the spans above; ``"pi"`` writes pi
    1.6's own vocabulary instead (a ``pi.ai.request`` span per model request and the
    ``pi.ai.*`` metrics, see ``pi_trio.otel``); ``"both"`` writes both, each request's
    ``pi.ai.request`` span inside its ``chat`` span.
    """
    if vocabulary not in VOCABULARIES:
        raise ValueError(
            f"vocabulary must be one of {', '.join(map(repr, VOCABULARIES))}, got {vocabulary!r}"
        )
    if agent is not None and not isinstance(agent, Agent):
        raise TypeError(
            f"instrument() takes a pi_trio.agent.Agent (or nothing, for every new Agent), "
            f"got {agent!r}"
        )
    _check_not_instrumented(agent)
    telemetry = Telemetry(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        agent_name=agent_name,
        vocabulary=vocabulary,
    )
    if agent is None:
        return _instrument_globally(telemetry)
    return _instrument_agent(agent, telemetry)


def _check_not_instrumented(agent: Agent | None) -> None:
    if agent is None and _global is not None:
        raise RuntimeError(
            "every new Agent is instrumented already; call the function instrument() "
            "returned to turn that off before instrumenting globally again"
        )
    if agent is not None and _is_instrumented(agent):
        raise RuntimeError(
            f"{agent!r} is instrumented already; call the function instrument() returned "
            "to turn that off before instrumenting it again"
        )


def _is_instrumented(agent: Agent) -> bool:
    ref = _instrumented.get(agent)
    return ref is not None and ref() is not None


def _instrument_agent(
    agent: Agent, telemetry: Telemetry, owner: object = None
) -> Callable[[], None]:
    instrumentation = _Instrumentation(agent, telemetry, owner)
    _instrumented[agent] = weakref.ref(instrumentation)
    return instrumentation.undo


def _instrument_globally(telemetry: Telemetry) -> Callable[[], None]:
    global _global
    state = _Global(telemetry)
    state.remove_hook = on_agent_created(state.agent_created)
    _global = state

    def uninstrument() -> None:
        global _global
        if _global is not state:
            return
        _global = None
        state.remove_hook()
        for agent in list(state.agents):
            ref = _instrumented.get(agent)
            instrumentation = ref() if ref is not None else None
            if instrumentation is not None and instrumentation.owner is state:
                instrumentation.undo()

    return uninstrument
