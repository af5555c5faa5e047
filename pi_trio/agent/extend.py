"""For code built on the agent: wrappers, instrumentation, other runtimes.

A wrapper that calls a hook, a listener or a tool on the agent's behalf calls it as the
agent does: ``await call_hook(fn, *args)`` passes the first ``positional_arity(fn)``
arguments, ``as_tool_result(name, value)`` reads what a tool returned, and
``run_tool_call`` takes one tool call through all its steps (hooks, validation,
execution). ``on_agent_created(hook)`` sees every new ``Agent``
(``pi_trio.otel.instrument()`` uses it). A transcript is read as the agent reads it:
``pending_approvals(messages)`` lists the calls a paused run waits on,
``is_approval_placeholder(message)`` tells a waiting call's placeholder result, and
``run_limit_details(message)`` the details of the answer a run limit ended a run with
(``RUN_LIMIT_DIAGNOSTIC``). ``RunCounters`` is what ``RunLimits`` counts
(``agent.limit_counters``: assign a new one to count from zero again); ``RunStatus`` the
values of ``RunResult.status``. The constants are the agent's own: the text of an
aborted tool call, the name of the typed output's tool, the buffer of ``agent_loop``'s
event stream (``AgentEventStream``), the default client identity, the failures a
``FallbackPolicy`` falls through on by default (``DEFAULT_FALLBACK_ON``).
"""

from __future__ import annotations

from ._agent import AgentCreatedHook as AgentCreatedHook
from ._agent import on_agent_created as on_agent_created
from ._approval import is_approval_placeholder as is_approval_placeholder
from ._fallback import DEFAULT_FALLBACK_ON as DEFAULT_FALLBACK_ON
from ._hooks import call_hook as call_hook
from ._hooks import positional_arity as positional_arity
from ._limits import RUN_LIMIT_DIAGNOSTIC as RUN_LIMIT_DIAGNOSTIC
from ._limits import RunCounters as RunCounters
from ._limits import run_limit_details as run_limit_details
from ._output import DEFAULT_MAX_OUTPUT_RETRIES as DEFAULT_MAX_OUTPUT_RETRIES
from ._output import FINAL_RESULT_TOOL as FINAL_RESULT_TOOL
from ._request import DEFAULT_AGENT_IDENTITY as DEFAULT_AGENT_IDENTITY
from ._result import RunStatus as RunStatus
from ._resume import pending_approvals as pending_approvals
from ._run import AGENT_EVENT_BUFFER as AGENT_EVENT_BUFFER
from ._run import AgentEventStream as AgentEventStream
from ._tool_call import ABORTED_TOOL_TEXT as ABORTED_TOOL_TEXT
from ._tool_call import ToolCallOutcome as ToolCallOutcome
from ._tool_call import as_tool_result as as_tool_result
from ._tool_call import run_tool_call as run_tool_call

__all__ = [
    "ABORTED_TOOL_TEXT",
    "AGENT_EVENT_BUFFER",
    "DEFAULT_AGENT_IDENTITY",
    "DEFAULT_FALLBACK_ON",
    "DEFAULT_MAX_OUTPUT_RETRIES",
    "FINAL_RESULT_TOOL",
    "RUN_LIMIT_DIAGNOSTIC",
    "AgentCreatedHook",
    "AgentEventStream",
    "RunCounters",
    "RunStatus",
    "ToolCallOutcome",
    "as_tool_result",
    "call_hook",
    "is_approval_placeholder",
    "on_agent_created",
    "pending_approvals",
    "positional_arity",
    "run_limit_details",
    "run_tool_call",
]
