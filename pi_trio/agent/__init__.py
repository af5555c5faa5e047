"""The agent layer: the loop engine, the stateful ``Agent``, tools and queues.

The top level holds what a program writes every day: ``Agent`` and its settings
(``AgentHooks``, ``RunPolicy``, ``OutputSettings``), tools (``tool``, ``AgentTool``,
``AgentToolResult``), what a run returns (``RunResult`` and its errors), the events, the
abort signal, the stateless loop (``agent_loop``, ``run_agent_loop``…), fallback models,
run limits and context compaction (``FallbackPolicy``, ``RunLimits``, ``Compaction``),
sub-agents (``sub_agent_tool``; ``Agent.as_tool``) and tool approval (``approve``,
``deny``, ``edit``, ``PendingApproval``). The rest lives in namespaces:

- ``pi_trio.agent.hooks``: the hooks and listeners: the types of the callables, the
  contexts they are called with (``BeforeToolCallContext``…) and the results they return
  (``BeforeToolCallResult``…), the default ``convert_to_llm``, and the types of the
  predicates a tool's ``needs_approval`` and ``FallbackPolicy(on=...)`` take, and
  ``Compaction(summarize=...)``'s hook (``SummarizeHook``, ``CompactionRequest``);
- ``pi_trio.agent.extend``: for code built on the agent (wrappers, instrumentation,
  other runtimes): calling a hook or a tool as the agent does (``call_hook``,
  ``positional_arity``, ``as_tool_result``, ``run_tool_call``), ``on_agent_created``,
  reading a transcript as the agent does (``pending_approvals``,
  ``is_approval_placeholder``, ``run_limit_details``), the counters of run limits
  (``RunCounters``), ``RunStatus``, and the agent's constants;
- ``pi_trio.agent.compaction``: the parts context compaction is made of, for a strategy
  of one's own (the size estimate, the cut, the summary message, the default prompts).

A name that moved from the top level to a namespace says where it went when it is used.
"""

import typing

from ..ai import AbortController as AbortController
from ..ai import AbortSignal as AbortSignal
from ..ai._seam import moved_name_error as _moved_name_error
from ..proxy import stream_proxy as stream_proxy
from ._agent import Agent as Agent
from ._agent import AgentBusyError as AgentBusyError
from ._approval import ApprovalDecision as ApprovalDecision
from ._approval import PendingApproval as PendingApproval
from ._approval import approve as approve
from ._approval import deny as deny
from ._approval import edit as edit
from ._compaction import Compaction as Compaction
from ._config import AgentHooks as AgentHooks
from ._config import AgentLoopConfig as AgentLoopConfig
from ._fallback import FallbackPolicy as FallbackPolicy
from ._limits import RunLimits as RunLimits
from ._output import OutputMode as OutputMode
from ._queue import QueueMode as QueueMode
from ._result import ApprovalPendingError as ApprovalPendingError
from ._result import OutputValidationError as OutputValidationError
from ._result import RunAbortedError as RunAbortedError
from ._result import RunError as RunError
from ._result import RunLimitExceeded as RunLimitExceeded
from ._result import RunResult as RunResult
from ._resume import ResumeError as ResumeError
from ._resume import TranscriptChangedError as TranscriptChangedError
from ._run import ContinueError as ContinueError
from ._run import agent_loop as agent_loop
from ._run import agent_loop_continue as agent_loop_continue
from ._run import run_agent_loop as run_agent_loop
from ._run import run_agent_loop_continue as run_agent_loop_continue
from ._settings import OutputSettings as OutputSettings
from ._settings import RunPolicy as RunPolicy
from ._state import AgentState as AgentState
from ._subagent import sub_agent_tool as sub_agent_tool
from ._tool import AgentTool as AgentTool
from ._tool import tool as tool
from ._types import AgentContext as AgentContext
from ._types import AgentEndEvent as AgentEndEvent
from ._types import AgentEvent as AgentEvent
from ._types import AgentMessage as AgentMessage
from ._types import AgentStartEvent as AgentStartEvent
from ._types import AgentToolResult as AgentToolResult
from ._types import AutoRetryEndEvent as AutoRetryEndEvent
from ._types import AutoRetryStartEvent as AutoRetryStartEvent
from ._types import CompactionEndEvent as CompactionEndEvent
from ._types import CompactionStartEvent as CompactionStartEvent
from ._types import MessageEndEvent as MessageEndEvent
from ._types import MessageStartEvent as MessageStartEvent
from ._types import MessageUpdateEvent as MessageUpdateEvent
from ._types import ModelFallbackEvent as ModelFallbackEvent
from ._types import ToolExecutionEndEvent as ToolExecutionEndEvent
from ._types import ToolExecutionStartEvent as ToolExecutionStartEvent
from ._types import ToolExecutionUpdateEvent as ToolExecutionUpdateEvent
from ._types import TurnEndEvent as TurnEndEvent
from ._types import TurnStartEvent as TurnStartEvent

__all__ = [
    "AbortController",
    "AbortSignal",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentHooks",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentStartEvent",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "ApprovalDecision",
    "ApprovalPendingError",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "Compaction",
    "CompactionEndEvent",
    "CompactionStartEvent",
    "ContinueError",
    "FallbackPolicy",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelFallbackEvent",
    "OutputMode",
    "OutputSettings",
    "OutputValidationError",
    "PendingApproval",
    "QueueMode",
    "ResumeError",
    "RunAbortedError",
    "RunError",
    "RunLimitExceeded",
    "RunLimits",
    "RunPolicy",
    "RunResult",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TranscriptChangedError",
    "TurnEndEvent",
    "TurnStartEvent",
    "agent_loop",
    "agent_loop_continue",
    "approve",
    "deny",
    "edit",
    "run_agent_loop",
    "run_agent_loop_continue",
    "sub_agent_tool",
    "stream_proxy",
    "tool",
]

# the namespaces, where the names that left the top level live
_NAMESPACES = ("pi_trio.agent.hooks", "pi_trio.agent.extend", "pi_trio.agent.compaction")

if not typing.TYPE_CHECKING:  # a type checker keeps reporting unknown names as errors

    def __getattr__(name: str) -> object:
        raise _moved_name_error(__name__, name, _NAMESPACES)
