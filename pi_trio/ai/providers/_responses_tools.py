"""How the Responses api hears of tools and of a JSON-schema answer (sans-IO): the
function tools, the ``additional_tools`` items of ``"changes"`` mode with their notices,
and ``text.format``. See ``_responses_shared`` for when each form is used."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from .._stream._options import OutputFormat
from .._transcript._history import resolve_transcript_tools
from .._types import Message, Model, SystemMessage, Tool
from ._constrained import strict_tool_schema
from ._output import fit_output_schema, openai_strict_unsupported

__all__ = [
    "ToolChanges",
    "ToolSupport",
    "convert_responses_tools",
    "request_tools",
    "responses_text_format",
    "responses_tool_support",
]

ToolSupport = Literal["none", "changes"]


def responses_tool_support(model: Model) -> ToolSupport:
    """``"changes"`` when the model takes tool declarations as ``additional_tools`` items
    where the transcript declares them, else ``"none"`` (the module docstring)."""
    compat = model.compat or {}
    if compat.get("supportsMidConvoSystemMessages") is True and (
        compat.get("supportsAdditionalTools") is True
    ):
        return "changes"
    return "none"


def request_tools(messages: Sequence[Message], support: ToolSupport) -> list[Tool]:
    """The request's top-level ``tools``: none when the input items declare them."""
    if support == "changes":
        return []
    return resolve_transcript_tools(messages, False).request_tools


def _incremental_notice(unavailable: Collection[str]) -> str:
    notice = (
        "This is an incremental tools update. Previously declared tools remain available "
        "unless explicitly marked unavailable. A tool declared again here is available "
        "again, and its latest definition replaces the earlier one."
    )
    return f"{notice}\nStill unavailable: {', '.join(unavailable)}." if unavailable else notice


def _removal_notice(names: Sequence[str]) -> str:
    listed = "\n".join(f"- {name}" for name in names)
    return f"The following tools are no longer available. Do not call them:\n{listed}"


class ToolChanges:
    """The ``additional_tools`` items of ``"changes"`` mode, and the tools announced as
    removed and not declared again since."""

    __slots__ = ("declared", "options", "role", "unavailable")

    def __init__(self, role: str, options: dict[str, Any]) -> None:
        self.role = role
        self.options = options
        self.declared = False
        self.unavailable: dict[str, None] = {}

    def additions(self, message: SystemMessage, items: list[dict[str, Any]]) -> None:
        tools = message.tools_added or []
        for tool in tools:
            self.unavailable.pop(tool.name, None)
        if not tools:
            return
        if self.declared:
            items.append({"role": self.role, "content": _incremental_notice(self.unavailable)})
        self.declared = True
        items.append(
            {
                "type": "additional_tools",
                "role": "developer",
                "tools": convert_responses_tools(tools, **self.options),
            }
        )

    def removals(self, message: SystemMessage) -> str:
        added = {tool.name for tool in message.tools_added or ()}
        removed = [ref.name for ref in message.tools_removed or () if ref.name not in added]
        for name in removed:
            self.unavailable[name] = None
        return _removal_notice(removed) if removed else ""


def convert_responses_tools(
    tools: Sequence[Tool], *, strict: bool | None = False, strict_mode: bool = True
) -> list[dict[str, Any]]:
    """Function tools. A tool asking for JSON-schema constrained sampling is sent in the
    strict subset with ``strict: true`` when the model has a strict mode (``strict_mode``)
    and the schema fits (``_constrained``; one that requires it and cannot have it is an
    error); the others carry ``strict`` (the Codex backend takes ``null``), and no
    ``strict`` key at all without a strict mode."""
    out = []
    for tool in tools:
        strict_schema = strict_tool_schema(tool, strict_mode)
        item: dict[str, Any] = {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters if strict_schema is None else strict_schema,
        }
        if strict_mode:
            item["strict"] = strict if strict_schema is None else True
        out.append(item)
    return out


def responses_text_format(model: Model, output: OutputFormat) -> dict[str, Any]:
    """``text.format`` for ``options.output_format``: strict unless
    ``compat.supportsStrictMode`` is false or the schema does not fit."""
    strict_mode = (model.compat or {}).get("supportsStrictMode") is not False
    schema, strict = fit_output_schema(
        output, strict_mode=strict_mode, unsupported=openai_strict_unsupported
    )
    text_format: dict[str, Any] = {
        "type": "json_schema",
        "name": output.name,
        "schema": schema,
        "strict": strict,
    }
    if output.description:
        text_format["description"] = output.description
    return text_format
