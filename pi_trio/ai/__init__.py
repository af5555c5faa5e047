"""One stateless LLM call: the message model, the event protocol, providers and the catalog.

The top level holds what a program writes every day: the messages and their content
blocks, the assistant-message events, ``complete`` / ``open_stream`` (and their
``*_simple`` forms) with ``StreamOptions``, the catalog look-ups, the provider registry's
three functions, the abort signal, the JSON of messages and the errors. The rest lives in
namespaces:

- ``pi_trio.ai.transcript``: the system messages of a transcript (the prompt and the
  declared tools), and handing a transcript to another model;
- ``pi_trio.ai.json``: JSONL transcripts, unknown fields, the depth bound, partial and
  streaming JSON, surrogates;
- ``pi_trio.ai.models``: what a ``Model`` is made of (costs, limits, thinking levels) and
  what a model can do;
- ``pi_trio.ai.failures``: telling transient failures and context overflow apart, and
  retrying a call of your own;
- ``pi_trio.ai.deferred``: answers a provider finishes later, and their handles;
- ``pi_trio.ai.providers``: for writing a provider (the registry, ``MessageBuilder``, the
  stream-function type, keys from the environment, client identity) — and the built-in
  providers, one module per API.

A name that moved from the top level to a namespace says where it went when it is used.
"""

import typing

from ._arguments._partial import parse_streaming_json as parse_streaming_json
from ._catalog._models import calculate_cost as calculate_cost
from ._catalog._models import get_model as get_model
from ._catalog._models import get_models as get_models
from ._catalog._models import get_providers as get_providers
from ._catalog._models import resolve_model as resolve_model
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
from ._failures._retry import RetryPolicy as RetryPolicy
from ._json._codec import from_json as from_json
from ._json._codec import messages_from_json as messages_from_json
from ._json._codec import messages_to_json as messages_to_json
from ._json._codec import to_json as to_json
from ._moved import moved_name_error as _moved_name_error
from ._stream._abort import AbortController as AbortController
from ._stream._abort import AbortSignal as AbortSignal
from ._stream._open import AssistantMessageStream as AssistantMessageStream
from ._stream._open import complete as complete
from ._stream._open import complete_simple as complete_simple
from ._stream._open import open_stream as open_stream
from ._stream._open import open_stream_simple as open_stream_simple
from ._stream._options import OutputFormat as OutputFormat
from ._stream._options import StreamOptions as StreamOptions
from ._stream._options import ThinkingBudgets as ThinkingBudgets
from ._stream._registry import get_api_provider as get_api_provider
from ._stream._registry import register_api_provider as register_api_provider
from ._stream._registry import unregister_api_provider as unregister_api_provider
from ._types import AssistantMessage as AssistantMessage
from ._types import Context as Context
from ._types import Cost as Cost
from ._types import ImageContent as ImageContent
from ._types import Message as Message
from ._types import Model as Model
from ._types import StopReason as StopReason
from ._types import SystemMessage as SystemMessage
from ._types import TextContent as TextContent
from ._types import ThinkingContent as ThinkingContent
from ._types import ThinkingLevel as ThinkingLevel
from ._types import Tool as Tool
from ._types import ToolCall as ToolCall
from ._types import ToolResultMessage as ToolResultMessage
from ._types import Usage as Usage
from ._types import UserMessage as UserMessage
from ._validation._validate import ToolArgumentsError as ToolArgumentsError
from ._validation._validate import validate_tool_arguments as validate_tool_arguments
from ._validation._validate import validate_tool_arguments_async as validate_tool_arguments_async
from ._validation._validate import validate_tool_call as validate_tool_call

__all__ = [
    "AbortController",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageStream",
    "Context",
    "Cost",
    "DoneEvent",
    "ErrorEvent",
    "ImageContent",
    "Message",
    "MessageDecodeError",
    "MessageValidationError",
    "Model",
    "OutputFormat",
    "PiError",
    "ProviderError",
    "ProviderNotFoundError",
    "RetryPolicy",
    "StartEvent",
    "StopReason",
    "StreamOptions",
    "StreamProtocolError",
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
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolResultMessage",
    "UnknownModelError",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "complete",
    "complete_simple",
    "from_json",
    "get_api_provider",
    "get_model",
    "get_models",
    "get_providers",
    "messages_from_json",
    "messages_to_json",
    "open_stream",
    "open_stream_simple",
    "parse_streaming_json",
    "register_api_provider",
    "resolve_model",
    "to_json",
    "unregister_api_provider",
    "validate_tool_arguments",
    "validate_tool_arguments_async",
    "validate_tool_call",
]


# the namespaces, where the names that left the top level live; see ``_moved``
_NAMESPACES = (
    "pi_trio.ai.transcript",
    "pi_trio.ai.json",
    "pi_trio.ai.models",
    "pi_trio.ai.failures",
    "pi_trio.ai.providers",
    "pi_trio.ai.deferred",
)

if not typing.TYPE_CHECKING:  # a type checker keeps reporting unknown names as errors

    def __getattr__(name: str) -> object:
        raise _moved_name_error(__name__, name, _NAMESPACES)
