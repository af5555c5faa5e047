"""The types of the callables an Agent calls: its hooks and its listeners.

Each hook of ``AgentHooks`` has its type here (``BeforeToolCallHook``…), written with
``SignalHook``: a hook called with a context and, if it takes a second parameter, the
run's ``AbortSignal``; every hook may be a plain or an ``async`` function. The contexts
they are called with and the results they return (``BeforeToolCallContext``,
``BeforeToolCallResult``…) are in ``pi_trio.agent``. ``AgentListener`` is what
``Agent.subscribe`` takes, ``ToolUpdateCallback`` a tool's ``on_update``, ``MessagePoll``
the queue polls of the stateless loop, and ``default_convert_to_llm`` what runs when no
``convert_to_llm`` hook is given.
"""

from __future__ import annotations

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
from ._types import ToolUpdateCallback as ToolUpdateCallback

__all__ = [
    "AfterToolCallHook",
    "AgentListener",
    "BeforeToolCallHook",
    "ConvertToLlmHook",
    "FinishTurnHook",
    "GetApiKeyHook",
    "MessagePoll",
    "PrepareNextTurnHook",
    "PrepareRequestHook",
    "ShouldStopAfterTurnHook",
    "SignalHook",
    "ToolUpdateCallback",
    "TransformContextHook",
    "default_convert_to_llm",
]
