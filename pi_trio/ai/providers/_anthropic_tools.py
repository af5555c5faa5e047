"""The tool declarations of an Anthropic Messages request (sans-IO; the original's
``convertTools`` in ``src/api/anthropic-messages.ts``).

The input schema keeps the root's ``properties``, ``required``, ``additionalProperties``
and shared definitions (``$defs``, ``definitions``): Anthropic refuses a root
``anyOf``/``oneOf``/``allOf``. A tool asking for JSON-schema constrained sampling
(``constrained_sampling={"type": "json_schema", ...}``) is sent with ``strict: true`` and
its schema in the strict subset (``_constrained``) when the model has strict tools
(``compat.supportsStrictTools``) and the schema fits Anthropic's subset; one that
requires it (``"strict": "require"``) and cannot have it is refused, one that prefers it
goes as it is. ``relax_preferred_strict`` sends the preferring ones non-strict
(``_strict_limits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .._types import Model, Tool
from ._constrained import prefers_strict_sampling, strict_tool_schema

__all__ = [
    "anthropic_strict_tool_unsupported",
    "canonical_tool_name",
    "convert_anthropic_tools",
    "sends_preferred_strict_tools",
]

# Claude Code's own tool names; OAuth requests spell matching tools exactly like this.
_CLAUDE_CODE_TOOLS: Final = {
    name.lower(): name
    for name in (
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "KillShell",
        "NotebookEdit",
        "Skill",
        "Task",
        "TaskOutput",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
    )
}
# https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations
_UNSUPPORTED: Final = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    }
)
_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
# Root keywords kept beside properties and required in a tool's input schema.
_KEPT_ROOT_KEYS: Final = ("additionalProperties", "$defs", "definitions")


def canonical_tool_name(name: str) -> str:
    """The Claude Code spelling of ``name`` when it names one of its tools (any case)."""
    return _CLAUDE_CODE_TOOLS.get(name.lower(), name)


def supports_strict_tools(model: Model) -> bool:
    return (model.compat or {}).get("supportsStrictTools") is True


def anthropic_strict_tool_unsupported(key: str, value: Any) -> bool:
    """The keywords Claude's strict tools refuse with a 400 for the whole request."""
    if key in _UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1) or isinstance(value, bool)
    if key == "format":
        return not isinstance(value, str) or value not in _FORMATS
    return False


def _strict_schema(tool: Tool, supported: bool) -> dict[str, Any] | None:
    return strict_tool_schema(tool, supported, anthropic_strict_tool_unsupported)


def sends_preferred_strict_tools(model: Model, tools: Sequence[Tool]) -> bool:
    """Whether ``tools`` (without ``relax_preferred_strict``) include one sent strict that
    only prefers it: a refusal for the strict-tool limits may then be answered."""
    supported = supports_strict_tools(model)
    return any(
        prefers_strict_sampling(tool) and _strict_schema(tool, supported) is not None
        for tool in tools
    )


def convert_anthropic_tools(
    tools: Sequence[Tool],
    model: Model,
    *,
    eager_input_streaming: bool,
    cache_control: dict[str, Any] | None,
    oauth: bool = False,
    relax_preferred_strict: bool = False,
) -> list[dict[str, Any]]:
    """Tool declarations (the module docstring); ``cache_control`` marks the last one."""
    supported = supports_strict_tools(model)
    converted: list[dict[str, Any]] = []
    for tool in tools:
        strict = None
        if not (relax_preferred_strict and prefers_strict_sampling(tool)):
            strict = _strict_schema(tool, supported)
        schema = tool.parameters if strict is None else strict
        input_schema: dict[str, Any] = {
            "type": "object",
            "properties": schema.get("properties") or {},
            "required": schema.get("required") or [],
        }
        for key in _KEPT_ROOT_KEYS:
            if key in schema:
                input_schema[key] = schema[key]
        entry: dict[str, Any] = {
            "name": canonical_tool_name(tool.name) if oauth else tool.name,
            "description": tool.description,
        }
        if eager_input_streaming:
            entry["eager_input_streaming"] = True
        if strict is not None:
            entry["strict"] = True
            input_schema = {**strict, **input_schema}
        entry["input_schema"] = input_schema
        converted.append(entry)
    if converted and cache_control is not None:
        converted[-1]["cache_control"] = cache_control
    return converted
