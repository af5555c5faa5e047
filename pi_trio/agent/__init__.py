"""The agent layer: the loop engine, the stateful ``Agent``, tools and queues."""

from ..ai import AbortController as AbortController
from ..ai import AbortSignal as AbortSignal
from ..proxy import stream_proxy as stream_proxy
from ._agent import Agent as Agent
from ._agent import AgentBusyError as AgentBusyError
from ._agent import AgentCreatedHook as AgentCreatedHook
from ._agent import on_agent_created as on_agent_created
from ._approval import ApprovalDecision as ApprovalDecision
from ._approval import ApprovalPolicy as ApprovalPolicy
from ._approval import PendingApproval as PendingApproval
from ._approval import approve as approve
from ._approval import deny as deny
from ._approval import edit as edit
from ._approval import is_approval_placeholder as is_approval_placeholder
from ._compaction import Compaction as Compaction
from ._compaction import CompactionRequest as CompactionRequest
from ._config import AfterToolCallHook as AfterToolCallHook
from ._config import AgentHooks as AgentHooks
from ._config import AgentListener as AgentListener
from ._config import AgentLoopConfig as AgentLoopConfig
from ._config import BeforeToolCallHook as BeforeToolCallHook
from ._config import ConvertToLlmHook as ConvertToLlmHook
from ._config import FinishTurnHook as FinishTurnHook
from ._config import GetApiKeyHook as GetApiKeyHook
from ._config import MessagePoll as MessagePoll
from ._config import PrepareNextTurnHook as PrepareNextTurnHook
from ._config import PrepareRequestHook as PrepareRequestHook
from ._config import ShouldStopAfterTurnHook as ShouldStopAfterTurnHook
from ._config import SignalHook as SignalHook
from ._config import TransformContextHook as TransformContextHook
from ._config import default_convert_to_llm as default_convert_to_llm
from ._fallback import DEFAULT_FALLBACK_ON as DEFAULT_FALLBACK_ON
from ._fallback import FallbackPolicy as FallbackPolicy
from ._fallback import FallbackPredicate as FallbackPredicate
from ._hooks import call_hook as call_hook
from ._hooks import positional_arity as positional_arity
from ._limits import RUN_LIMIT_DIAGNOSTIC as RUN_LIMIT_DIAGNOSTIC
from ._limits import RunCounters as RunCounters
from ._limits import RunLimits as RunLimits
from ._limits import run_limit_details as run_limit_details
from ._loop import DEFAULT_AGENT_IDENTITY as DEFAULT_AGENT_IDENTITY
from ._output import DEFAULT_MAX_OUTPUT_RETRIES as DEFAULT_MAX_OUTPUT_RETRIES
from ._output import FINAL_RESULT_TOOL as FINAL_RESULT_TOOL
from ._output import OutputMode as OutputMode
from ._queue import QueueMode as QueueMode
from ._result import ApprovalPendingError as ApprovalPendingError
from ._result import OutputValidationError as OutputValidationError
from ._result import RunAbortedError as RunAbortedError
from ._result import RunError as RunError
from ._result import RunLimitExceeded as RunLimitExceeded
from ._result import RunResult as RunResult
from ._result import RunStatus as RunStatus
from ._resume import ResumeError as ResumeError
from ._resume import TranscriptChangedError as TranscriptChangedError
from ._resume import pending_approvals as pending_approvals
from ._run import AGENT_EVENT_BUFFER as AGENT_EVENT_BUFFER
from ._run import AgentEventStream as AgentEventStream
from ._run import ContinueError as ContinueError
from ._run import agent_loop as agent_loop
from ._run import agent_loop_continue as agent_loop_continue
from ._run import run_agent_loop as run_agent_loop
from ._run import run_agent_loop_continue as run_agent_loop_continue
from ._state import AgentState as AgentState
from ._subagent import sub_agent_tool as sub_agent_tool
from ._tool import AgentTool as AgentTool
from ._tool import tool as tool
from ._tool_call import ABORTED_TOOL_TEXT as ABORTED_TOOL_TEXT
from ._tool_call import ToolCallOutcome as ToolCallOutcome
from ._tool_call import as_tool_result as as_tool_result
from ._tool_call import run_tool_call as run_tool_call
from ._types import AfterToolCallContext as AfterToolCallContext
from ._types import AfterToolCallResult as AfterToolCallResult
from ._types import AgentContext as AgentContext
from ._types import AgentEndEvent as AgentEndEvent
from ._types import AgentEvent as AgentEvent
from ._types import AgentLoopTurnUpdate as AgentLoopTurnUpdate
from ._types import AgentMessage as AgentMessage
from ._types import AgentRequestUpdate as AgentRequestUpdate
from ._types import AgentStartEvent as AgentStartEvent
from ._types import AgentToolResult as AgentToolResult
from ._types import AgentTurnContext as AgentTurnContext
from ._types import AgentTurnDecision as AgentTurnDecision
from ._types import AutoRetryEndEvent as AutoRetryEndEvent
from ._types import AutoRetryStartEvent as AutoRetryStartEvent
from ._types import BeforeToolCallContext as BeforeToolCallContext
from ._types import BeforeToolCallResult as BeforeToolCallResult
from ._types import CompactionEndEvent as CompactionEndEvent
from ._types import CompactionStartEvent as CompactionStartEvent
from ._types import MessageEndEvent as MessageEndEvent
from ._types import MessageStartEvent as MessageStartEvent
from ._types import MessageUpdateEvent as MessageUpdateEvent
from ._types import ModelFallbackEvent as ModelFallbackEvent
from ._types import PrepareRequestContext as PrepareRequestContext
from ._types import ToolExecutionEndEvent as ToolExecutionEndEvent
from ._types import ToolExecutionStartEvent as ToolExecutionStartEvent
from ._types import ToolExecutionUpdateEvent as ToolExecutionUpdateEvent
from ._types import ToolUpdateCallback as ToolUpdateCallback
from ._types import TurnEndEvent as TurnEndEvent
from ._types import TurnStartEvent as TurnStartEvent

__all__ = [
    "DEFAULT_AGENT_IDENTITY",
    "DEFAULT_FALLBACK_ON",
    "ABORTED_TOOL_TEXT",
    "AGENT_EVENT_BUFFER",
    "AbortController",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallHook",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentCreatedHook",
    "AgentEndEvent",
    "AgentEvent",
    "AgentEventStream",
    "AgentHooks",
    "AgentListener",
    "AgentLoopConfig",
    "AgentLoopTurnUpdate",
    "AgentMessage",
    "AgentRequestUpdate",
    "AgentStartEvent",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "AgentTurnContext",
    "AgentTurnDecision",
    "ApprovalDecision",
    "ApprovalPendingError",
    "ApprovalPolicy",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "BeforeToolCallContext",
    "BeforeToolCallHook",
    "BeforeToolCallResult",
    "Compaction",
    "CompactionEndEvent",
    "CompactionRequest",
    "CompactionStartEvent",
    "ContinueError",
    "ConvertToLlmHook",
    "DEFAULT_MAX_OUTPUT_RETRIES",
    "FINAL_RESULT_TOOL",
    "FallbackPolicy",
    "FallbackPredicate",
    "FinishTurnHook",
    "GetApiKeyHook",
    "MessageEndEvent",
    "MessagePoll",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelFallbackEvent",
    "OutputMode",
    "OutputValidationError",
    "PendingApproval",
    "PrepareNextTurnHook",
    "PrepareRequestContext",
    "PrepareRequestHook",
    "QueueMode",
    "ResumeError",
    "RUN_LIMIT_DIAGNOSTIC",
    "RunAbortedError",
    "RunCounters",
    "RunError",
    "RunLimitExceeded",
    "RunLimits",
    "RunResult",
    "RunStatus",
    "ShouldStopAfterTurnHook",
    "SignalHook",
    "ToolCallOutcome",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolUpdateCallback",
    "TranscriptChangedError",
    "TransformContextHook",
    "TurnEndEvent",
    "TurnStartEvent",
    "agent_loop",
    "agent_loop_continue",
    "approve",
    "as_tool_result",
    "call_hook",
    "default_convert_to_llm",
    "deny",
    "edit",
    "is_approval_placeholder",
    "on_agent_created",
    "pending_approvals",
    "positional_arity",
    "run_agent_loop",
    "run_agent_loop_continue",
    "run_limit_details",
    "run_tool_call",
    "sub_agent_tool",
    "stream_proxy",
    "tool",
]
