"""The hooks an Agent calls, and its listeners: the types of the callables, the contexts
they are called with and the results they return.

Each hook of ``AgentHooks`` has its type here (``BeforeToolCallHook``…), written with
``SignalHook``: a hook called with a context and, if it takes a second parameter, the
run's ``AbortSignal``; every hook may be a plain or an ``async`` function. Its context
and result are here too: ``before_tool_call`` gets a ``BeforeToolCallContext`` and may
return a ``BeforeToolCallResult``, ``after_tool_call`` an ``AfterToolCallContext`` and
``AfterToolCallResult``, ``finish_turn`` an ``AgentTurnContext`` and
``AgentTurnDecision``, ``prepare_next_turn`` an ``AgentTurnContext`` and
``AgentLoopTurnUpdate``, ``prepare_request`` a ``PrepareRequestContext`` and
``AgentRequestUpdate``; a result may also be a dict of its fields, or ``None``.
``AgentListener`` is what ``Agent.subscribe`` takes, ``ToolUpdateCallback`` a tool's
``on_update``, ``MessagePoll`` the queue polls of the stateless loop, and
``default_convert_to_llm`` what runs when no ``convert_to_llm`` hook is given.
``ApprovalPolicy`` is what a tool's ``needs_approval`` takes (``True``, or a predicate of
the call's arguments), ``FallbackPredicate`` what ``FallbackPolicy(on=...)`` may take
instead of a set of failure kinds, ``SummarizeHook`` what ``Compaction(summarize=...)``
takes (called with a ``CompactionRequest``: what the summary is made of).
"""

from __future__ import annotations

from ._approval import ApprovalPolicy as ApprovalPolicy
from ._compaction import CompactionRequest as CompactionRequest
from ._compaction import SummarizeHook as SummarizeHook
from ._config import AfterToolCallHook as AfterToolCallHook
from ._config import AgentListener as AgentListener
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
from ._fallback import FallbackPredicate as FallbackPredicate
from ._types import AfterToolCallContext as AfterToolCallContext
from ._types import AfterToolCallResult as AfterToolCallResult
from ._types import AgentLoopTurnUpdate as AgentLoopTurnUpdate
from ._types import AgentRequestUpdate as AgentRequestUpdate
from ._types import AgentTurnContext as AgentTurnContext
from ._types import AgentTurnDecision as AgentTurnDecision
from ._types import BeforeToolCallContext as BeforeToolCallContext
from ._types import BeforeToolCallResult as BeforeToolCallResult
from ._types import PrepareRequestContext as PrepareRequestContext
from ._types import ToolUpdateCallback as ToolUpdateCallback

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallHook",
    "AfterToolCallResult",
    "AgentListener",
    "AgentLoopTurnUpdate",
    "AgentRequestUpdate",
    "AgentTurnContext",
    "AgentTurnDecision",
    "ApprovalPolicy",
    "BeforeToolCallContext",
    "BeforeToolCallHook",
    "BeforeToolCallResult",
    "CompactionRequest",
    "ConvertToLlmHook",
    "FallbackPredicate",
    "FinishTurnHook",
    "GetApiKeyHook",
    "MessagePoll",
    "PrepareNextTurnHook",
    "PrepareRequestContext",
    "PrepareRequestHook",
    "ShouldStopAfterTurnHook",
    "SignalHook",
    "SummarizeHook",
    "ToolUpdateCallback",
    "TransformContextHook",
    "default_convert_to_llm",
]
