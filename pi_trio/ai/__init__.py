"""One stateless LLM call: the message model, the event protocol, providers and the catalog."""

from ._events import AssistantMessageEvent as AssistantMessageEvent
from ._events import DoneEvent as DoneEvent
from ._events import ErrorEvent as ErrorEvent
from ._events import StartEvent as StartEvent
from ._events import TextDeltaEvent as TextDeltaEvent
from ._events import TextEndEvent as TextEndEvent
from ._events import TextStartEvent as TextStartEvent
from ._events import ThinkingDeltaEvent as ThinkingDeltaEvent
from ._events import ThinkingEndEvent as ThinkingEndEvent
from ._events import ThinkingStartEvent as ThinkingStartEvent
from ._events import ToolCallDeltaEvent as ToolCallDeltaEvent
from ._events import ToolCallEndEvent as ToolCallEndEvent
from ._events import ToolCallStartEvent as ToolCallStartEvent
from ._types import AssistantMessage as AssistantMessage
from ._types import Context as Context
from ._types import Cost as Cost
from ._types import CostTier as CostTier
from ._types import ImageContent as ImageContent
from ._types import Message as Message
from ._types import Model as Model
from ._types import ModelCost as ModelCost
from ._types import ModelThinkingLevel as ModelThinkingLevel
from ._types import StopReason as StopReason
from ._types import SystemMessage as SystemMessage
from ._types import TextContent as TextContent
from ._types import ThinkingContent as ThinkingContent
from ._types import ThinkingLevel as ThinkingLevel
from ._types import Tool as Tool
from ._types import ToolCall as ToolCall
from ._types import ToolRef as ToolRef
from ._types import ToolResultMessage as ToolResultMessage
from ._types import Usage as Usage
from ._types import UserMessage as UserMessage
from ._types import now_ms as now_ms

__all__ = [
    "AssistantMessage",
    "AssistantMessageEvent",
    "Context",
    "Cost",
    "CostTier",
    "DoneEvent",
    "ErrorEvent",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "ModelThinkingLevel",
    "StartEvent",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolRef",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "now_ms",
]
