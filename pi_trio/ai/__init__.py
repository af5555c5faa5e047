"""One stateless LLM call: the message model, the event protocol, providers and the catalog."""

from ._env import env_api_key_names as env_api_key_names
from ._env import find_env_keys as find_env_keys
from ._env import get_env_api_key as get_env_api_key
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
from ._json_parse import StreamingJsonParser as StreamingJsonParser
from ._json_parse import parse_streaming_json as parse_streaming_json
from ._json_parse import repair_json as repair_json
from ._models import calculate_cost as calculate_cost
from ._models import clamp_thinking_level as clamp_thinking_level
from ._models import get_model as get_model
from ._models import get_models as get_models
from ._models import get_providers as get_providers
from ._models import get_supported_thinking_levels as get_supported_thinking_levels
from ._models import models_are_equal as models_are_equal
from ._overflow import get_overflow_patterns as get_overflow_patterns
from ._overflow import is_context_overflow as is_context_overflow
from ._overflow import is_retryable_assistant_error as is_retryable_assistant_error
from ._sanitize import sanitize_surrogates as sanitize_surrogates
from ._transcript import ToolStateChanges as ToolStateChanges
from ._transcript import collapse_system_messages as collapse_system_messages
from ._transcript import create_initial_system_message as create_initial_system_message
from ._transcript import declarations_equal as declarations_equal
from ._transcript import declare_tool_changes as declare_tool_changes
from ._transcript import get_current_system_message as get_current_system_message
from ._transcript import get_current_system_prompt as get_current_system_prompt
from ._transcript import get_current_tools as get_current_tools
from ._transcript import get_system_message_text as get_system_message_text
from ._transcript import get_tool_state_changes as get_tool_state_changes
from ._transcript import normalize_context as normalize_context
from ._transcript import render_system_message_update as render_system_message_update
from ._transcript import to_tool_declaration as to_tool_declaration
from ._transform import transform_messages as transform_messages
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
from ._validation import ToolArgumentsError as ToolArgumentsError
from ._validation import validate_tool_arguments as validate_tool_arguments
from ._validation import validate_tool_call as validate_tool_call

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
    "StreamingJsonParser",
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
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolRef",
    "ToolResultMessage",
    "ToolStateChanges",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "clamp_thinking_level",
    "collapse_system_messages",
    "create_initial_system_message",
    "declarations_equal",
    "declare_tool_changes",
    "env_api_key_names",
    "find_env_keys",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_env_api_key",
    "get_model",
    "get_models",
    "get_overflow_patterns",
    "get_providers",
    "get_supported_thinking_levels",
    "get_system_message_text",
    "get_tool_state_changes",
    "is_context_overflow",
    "is_retryable_assistant_error",
    "models_are_equal",
    "normalize_context",
    "now_ms",
    "parse_streaming_json",
    "render_system_message_update",
    "repair_json",
    "sanitize_surrogates",
    "to_tool_declaration",
    "transform_messages",
    "validate_tool_arguments",
    "validate_tool_call",
]
