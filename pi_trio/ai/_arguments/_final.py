"""The one parse of a finished tool call's argument text: the arguments, or ``{}`` and an
error text that quotes what the model sent (the streamed preview is
``_streaming.StreamingJsonParser``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from .._sanitize import replace_lone_surrogate_escapes
from ._partial import repair_json
from ._v8_errors import describe_json_error

__all__ = ["ToolCallArguments", "parse_tool_call_arguments"]


class ToolCallArguments(NamedTuple):
    """The parsed arguments of a finished tool call; ``arguments_error`` is set (and
    ``arguments`` is ``{}``) when the text was not a JSON object."""

    arguments: dict[str, Any]
    arguments_error: str | None = None


def parse_tool_call_arguments(text: str | None) -> ToolCallArguments:
    """Parse the complete argument text of a tool call, once, when the call ends.

    Blank text means no arguments. Text that is not a JSON object, even after repairing
    raw control characters and invalid escapes in its strings, gives ``{}`` and an error
    that names the problem and quotes the text (``<problem>\\n\\nReceived arguments:\\n<text>``);
    validation reports that back to the model instead of calling the tool with ``{}``.
    Unlike `parse_streaming_json`, a truncated text keeps nothing.
    """
    if text is None or not text.strip():
        return ToolCallArguments({})
    try:
        parsed = _parse_with_repair(text)
        if type(parsed) is not dict:
            raise ValueError("Tool arguments must be a JSON object")
    except ValueError as exc:
        return ToolCallArguments({}, f"{exc}\n\nReceived arguments:\n{text}")
    return ToolCallArguments(parsed)


def _parse_with_repair(text: str) -> Any:
    try:
        return _strict(text)
    except ValueError as first:
        repaired = repair_json(text)
        if repaired == text:
            raise first from None
        return _strict(repaired)


def _strict(text: str) -> Any:
    raw = text.encode("utf-8", "surrogatepass")
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        repaired = replace_lone_surrogate_escapes(raw)
        if repaired != raw:
            try:
                return msgspec.json.decode(repaired)
            except msgspec.DecodeError:
                pass
        raise ValueError(describe_json_error(text) or f"Invalid JSON: {exc}") from None
    except RecursionError:
        raise ValueError("Tool arguments are nested too deeply") from None
