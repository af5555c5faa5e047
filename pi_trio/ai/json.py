"""JSON in the original's format, beyond ``to_json`` / ``from_json`` and
``messages_to_json`` / ``messages_from_json`` (which are in ``pi_trio.ai``).

Transcripts as JSON lines, the fields pi_trio does not know (``extra_fields``), the
nesting bound of every decode of outside bytes (``MAX_JSON_DEPTH``), a tool call's
arguments as text (``parse_tool_call_arguments``, ``repair_json``, the incremental
``StreamingJsonParser``; ``parse_streaming_json`` is in ``pi_trio.ai``) and lone UTF-16
surrogates (``sanitize_surrogates``).
"""

from __future__ import annotations

from ._arguments._final import ToolCallArguments as ToolCallArguments
from ._arguments._final import parse_tool_call_arguments as parse_tool_call_arguments
from ._arguments._partial import repair_json as repair_json
from ._arguments._streaming import StreamingJsonParser as StreamingJsonParser
from ._json._codec import extra_fields as extra_fields
from ._json._codec import messages_from_jsonl as messages_from_jsonl
from ._json._codec import messages_to_jsonl as messages_to_jsonl
from ._json._depth import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from ._sanitize import sanitize_surrogates as sanitize_surrogates

__all__ = [
    "MAX_JSON_DEPTH",
    "StreamingJsonParser",
    "ToolCallArguments",
    "extra_fields",
    "messages_from_jsonl",
    "messages_to_jsonl",
    "parse_tool_call_arguments",
    "repair_json",
    "sanitize_surrogates",
]
