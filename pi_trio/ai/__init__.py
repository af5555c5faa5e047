"""One stateless LLM call: the message model, the event protocol, providers and the catalog."""

from ._arguments._final import ToolCallArguments as ToolCallArguments
from ._arguments._final import parse_tool_call_arguments as parse_tool_call_arguments
from ._arguments._partial import parse_streaming_json as parse_streaming_json
from ._arguments._partial import repair_json as repair_json
from ._arguments._streaming import StreamingJsonParser as StreamingJsonParser
from ._catalog._models import calculate_cost as calculate_cost
from ._catalog._models import clamp_thinking_level as clamp_thinking_level
from ._catalog._models import get_model as get_model
from ._catalog._models import get_models as get_models
from ._catalog._models import get_providers as get_providers
from ._catalog._models import get_supported_thinking_levels as get_supported_thinking_levels
from ._catalog._models import models_are_equal as models_are_equal
from ._catalog._models import resolve_model as resolve_model
from ._deferred import DEFAULT_POLL_INTERVAL_MS as DEFAULT_POLL_INTERVAL_MS
from ._deferred import cancel_deferred as cancel_deferred
from ._deferred import fetch_deferred as fetch_deferred
from ._deferred import open_deferred_stream as open_deferred_stream
from ._deferred import poll_deferred as poll_deferred
from ._errors import MessageDecodeError as MessageDecodeError
from ._errors import MessageValidationError as MessageValidationError
from ._errors import PiError as PiError
from ._errors import ProviderError as ProviderError
from ._errors import ProviderNotFoundError as ProviderNotFoundError
from ._errors import StreamProtocolError as StreamProtocolError
from ._errors import UnknownModelError as UnknownModelError
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
from ._failures._overflow import FailureKind as FailureKind
from ._failures._overflow import failure_kind as failure_kind
from ._failures._overflow import get_overflow_patterns as get_overflow_patterns
from ._failures._overflow import is_context_overflow as is_context_overflow
from ._failures._overflow import is_recoverable_length as is_recoverable_length
from ._failures._overflow import is_retryable_assistant_error as is_retryable_assistant_error
from ._failures._retry import DEFAULT_MAX_AGENT_RETRY_DELAY_MS as DEFAULT_MAX_AGENT_RETRY_DELAY_MS
from ._failures._retry import RetryPolicy as RetryPolicy
from ._failures._retry import retry_assistant_call as retry_assistant_call
from ._failures._retry import retry_delay_ms as retry_delay_ms
from ._identity import PI_TRIO_ATTRIBUTION as PI_TRIO_ATTRIBUTION
from ._identity import ClientAttribution as ClientAttribution
from ._identity import ClientIdentity as ClientIdentity
from ._identity import CustomUserAgent as CustomUserAgent
from ._identity import merge_client_identity as merge_client_identity
from ._json._codec import extra_fields as extra_fields
from ._json._codec import from_json as from_json
from ._json._codec import messages_from_json as messages_from_json
from ._json._codec import messages_from_jsonl as messages_from_jsonl
from ._json._codec import messages_to_json as messages_to_json
from ._json._codec import messages_to_jsonl as messages_to_jsonl
from ._json._codec import to_json as to_json
from ._json._depth import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from ._keys._env import env_api_key_names as env_api_key_names
from ._keys._env import find_env_keys as find_env_keys
from ._keys._env import get_env_api_key as get_env_api_key
from ._sanitize import sanitize_surrogates as sanitize_surrogates
from ._stream._abort import AbortController as AbortController
from ._stream._abort import AbortSignal as AbortSignal
from ._stream._builder import MessageBuilder as MessageBuilder
from ._stream._consume import MessageFold as MessageFold
from ._stream._open import AssistantMessageStream as AssistantMessageStream
from ._stream._open import complete as complete
from ._stream._open import complete_simple as complete_simple
from ._stream._open import open_stream as open_stream
from ._stream._open import open_stream_simple as open_stream_simple
from ._stream._options import DeferredCancelFn as DeferredCancelFn
from ._stream._options import DeferredFetchFn as DeferredFetchFn
from ._stream._options import DeferredFetchOptions as DeferredFetchOptions
from ._stream._options import DeferredOptions as DeferredOptions
from ._stream._options import DeferredWindow as DeferredWindow
from ._stream._options import OutputFormat as OutputFormat
from ._stream._options import ResponseInfo as ResponseInfo
from ._stream._options import StreamFn as StreamFn
from ._stream._options import StreamOptions as StreamOptions
from ._stream._options import ThinkingBudgets as ThinkingBudgets
from ._stream._registry import ApiProvider as ApiProvider
from ._stream._registry import ProviderRegistry as ProviderRegistry
from ._stream._registry import default_registry as default_registry
from ._stream._registry import get_api_provider as get_api_provider
from ._stream._registry import get_api_providers as get_api_providers
from ._stream._registry import register_api_provider as register_api_provider
from ._stream._registry import unregister_api_provider as unregister_api_provider
from ._stream._registry import unregister_api_providers as unregister_api_providers
from ._stream._replay import replay_events as replay_events
from ._transcript._history import ResolvedTranscriptTools as ResolvedTranscriptTools
from ._transcript._history import get_declared_tools as get_declared_tools
from ._transcript._history import get_initial_system_message as get_initial_system_message
from ._transcript._history import has_non_additive_tool_changes as has_non_additive_tool_changes
from ._transcript._history import has_tool_redefinitions as has_tool_redefinitions
from ._transcript._history import resolve_transcript as resolve_transcript
from ._transcript._history import resolve_transcript_tools as resolve_transcript_tools
from ._transcript._history import without_initial_system_message as without_initial_system_message
from ._transcript._system import ToolStateChanges as ToolStateChanges
from ._transcript._system import collapse_system_messages as collapse_system_messages
from ._transcript._system import create_initial_system_message as create_initial_system_message
from ._transcript._system import declarations_equal as declarations_equal
from ._transcript._system import declare_tool_changes as declare_tool_changes
from ._transcript._system import get_added_tool_names as get_added_tool_names
from ._transcript._system import get_current_system_message as get_current_system_message
from ._transcript._system import get_current_system_prompt as get_current_system_prompt
from ._transcript._system import get_current_tools as get_current_tools
from ._transcript._system import get_system_message_text as get_system_message_text
from ._transcript._system import get_tool_state_changes as get_tool_state_changes
from ._transcript._system import normalize_context as normalize_context
from ._transcript._system import render_system_message_update as render_system_message_update
from ._transcript._system import to_tool_declaration as to_tool_declaration
from ._transcript._transform import transform_messages as transform_messages
from ._types import AssistantMessage as AssistantMessage
from ._types import Context as Context
from ._types import Cost as Cost
from ._types import CostTier as CostTier
from ._types import DeferredHandle as DeferredHandle
from ._types import ImageContent as ImageContent
from ._types import Message as Message
from ._types import Model as Model
from ._types import ModelCost as ModelCost
from ._types import ModelImageInputLimits as ModelImageInputLimits
from ._types import ModelImageResizeOptions as ModelImageResizeOptions
from ._types import ModelInputLimits as ModelInputLimits
from ._types import ModelPromptCache as ModelPromptCache
from ._types import ModelThinkingLevel as ModelThinkingLevel
from ._types import NestedToolCallRecord as NestedToolCallRecord
from ._types import NestedToolCalls as NestedToolCalls
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
from ._validation._validate import ToolArgumentsError as ToolArgumentsError
from ._validation._validate import validate_tool_arguments as validate_tool_arguments
from ._validation._validate import (
    validate_tool_arguments_async as validate_tool_arguments_async,
)
from ._validation._validate import validate_tool_call as validate_tool_call
from .providers._output import supports_json_schema_output as supports_json_schema_output
from .providers._sessions import cleanup_session_resources as cleanup_session_resources

__all__ = [
    "AbortController",
    "AbortSignal",
    "ApiProvider",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageStream",
    "ClientAttribution",
    "ClientIdentity",
    "Context",
    "Cost",
    "CostTier",
    "CustomUserAgent",
    "DEFAULT_MAX_AGENT_RETRY_DELAY_MS",
    "DEFAULT_POLL_INTERVAL_MS",
    "DeferredCancelFn",
    "DeferredFetchFn",
    "DeferredFetchOptions",
    "DeferredHandle",
    "DeferredOptions",
    "DeferredWindow",
    "DoneEvent",
    "ErrorEvent",
    "FailureKind",
    "ImageContent",
    "MAX_JSON_DEPTH",
    "Message",
    "MessageBuilder",
    "MessageDecodeError",
    "MessageFold",
    "MessageValidationError",
    "Model",
    "ModelCost",
    "ModelImageInputLimits",
    "ModelImageResizeOptions",
    "ModelInputLimits",
    "ModelPromptCache",
    "ModelThinkingLevel",
    "NestedToolCallRecord",
    "NestedToolCalls",
    "OutputFormat",
    "PI_TRIO_ATTRIBUTION",
    "PiError",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderRegistry",
    "ResolvedTranscriptTools",
    "ResponseInfo",
    "RetryPolicy",
    "StartEvent",
    "StopReason",
    "StreamFn",
    "StreamOptions",
    "StreamProtocolError",
    "StreamingJsonParser",
    "SystemMessage",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingBudgets",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallArguments",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolRef",
    "ToolResultMessage",
    "ToolStateChanges",
    "UnknownModelError",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "cancel_deferred",
    "clamp_thinking_level",
    "cleanup_session_resources",
    "collapse_system_messages",
    "complete",
    "complete_simple",
    "create_initial_system_message",
    "declarations_equal",
    "declare_tool_changes",
    "default_registry",
    "env_api_key_names",
    "extra_fields",
    "failure_kind",
    "fetch_deferred",
    "find_env_keys",
    "from_json",
    "get_added_tool_names",
    "get_api_provider",
    "get_api_providers",
    "get_current_system_message",
    "get_current_system_prompt",
    "get_current_tools",
    "get_declared_tools",
    "get_env_api_key",
    "get_initial_system_message",
    "get_model",
    "get_models",
    "get_overflow_patterns",
    "get_providers",
    "get_supported_thinking_levels",
    "get_system_message_text",
    "get_tool_state_changes",
    "has_non_additive_tool_changes",
    "has_tool_redefinitions",
    "is_context_overflow",
    "is_recoverable_length",
    "is_retryable_assistant_error",
    "merge_client_identity",
    "messages_from_json",
    "messages_from_jsonl",
    "messages_to_json",
    "messages_to_jsonl",
    "models_are_equal",
    "normalize_context",
    "now_ms",
    "open_deferred_stream",
    "open_stream",
    "open_stream_simple",
    "parse_streaming_json",
    "parse_tool_call_arguments",
    "poll_deferred",
    "register_api_provider",
    "render_system_message_update",
    "repair_json",
    "replay_events",
    "resolve_model",
    "resolve_transcript",
    "resolve_transcript_tools",
    "retry_assistant_call",
    "retry_delay_ms",
    "sanitize_surrogates",
    "supports_json_schema_output",
    "to_json",
    "to_tool_declaration",
    "transform_messages",
    "unregister_api_provider",
    "unregister_api_providers",
    "validate_tool_arguments",
    "validate_tool_arguments_async",
    "validate_tool_call",
    "without_initial_system_message",
]
