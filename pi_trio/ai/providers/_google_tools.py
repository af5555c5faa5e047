"""The tool declarations and calling mode of a Gemini request (sans-IO, as pi 1.6).

Parameters go as ``parametersJsonSchema``, with string and number ``const`` values
rewritten into one-value ``enum``s (Gemini ignores ``const`` there but honours ``enum``).
Gemini 3 and later (model ids ``gemini-<n>…`` / ``gemini-live-<n>…``, n >= 3) take
strict tools: a tool asking for JSON-schema constrained sampling is declared with its
schema in the strict subset (``_constrained``), and a request with such a tool calls
functions in ``VALIDATED`` mode unless the tool choice is ``none`` or ``any``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from .._types import Model, Tool
from ._constrained import strict_tool_schema

__all__ = [
    "VALIDATED_MODE",
    "google_calling_mode",
    "google_function_declarations",
    "rewrite_const_as_enum",
    "supports_strict_tools",
]

VALIDATED_MODE: Final = "VALIDATED"
_TOOL_CHOICE: Final = {"auto": "AUTO", "none": "NONE", "any": "ANY", "required": "ANY"}
_GEMINI_MAJOR: Final = re.compile(r"^gemini(?:-live)?-(\d+)")
# Keywords holding a subschema or a list of them, and those mapping names to subschemas.
_SUBSCHEMA_KEYS: Final = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_NAME_MAP_KEYS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def supports_strict_tools(model: Model) -> bool:
    """Gemini 3 and later enforce the parameters of validated function calls."""
    match = _GEMINI_MAJOR.match(model.id.lower())
    return match is not None and int(match.group(1)) >= 3


def rewrite_const_as_enum(schema: Any, name_map: bool = False) -> Any:
    """``schema`` (left unchanged) with each string or number ``const`` of a schema
    without an ``enum`` turned into ``"enum": [value]``; property names and literal data
    are never touched."""
    if isinstance(schema, list):
        return [rewrite_const_as_enum(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result: dict[str, Any] = {}
    for key, value in schema.items():
        if name_map or key in _SUBSCHEMA_KEYS:
            result[key] = rewrite_const_as_enum(value)
        elif key in _NAME_MAP_KEYS:
            result[key] = rewrite_const_as_enum(value, True)
        else:
            result[key] = value
    if not name_map and "const" in result and "enum" not in result:
        value = result["const"]
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            del result["const"]
            result["enum"] = [value]
    return result


def google_function_declarations(model: Model, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """One declaration per tool (the module docstring)."""
    supported = supports_strict_tools(model)
    declarations = []
    for tool in tools:
        strict = strict_tool_schema(tool, supported)
        parameters = tool.parameters if strict is None else strict
        declarations.append(
            {
                "name": tool.name,
                "description": tool.description,
                "parametersJsonSchema": rewrite_const_as_enum(parameters),
            }
        )
    return declarations


def _choice_mode(choice: Any) -> str:
    mode = _TOOL_CHOICE.get(choice.lower()) if isinstance(choice, str) else None
    if mode is None:
        raise ValueError(
            f"unknown Google tool_choice {choice!r}; expected one of "
            f"{', '.join(repr(c) for c in _TOOL_CHOICE)}"
        )
    return mode


def google_calling_mode(model: Model, tools: Sequence[Tool], choice: Any) -> str | None:
    """``functionCallingConfig.mode``: the tool choice's, or ``VALIDATED`` for strict
    tools unless the choice is ``none`` or ``any``; ``None`` to leave it to Gemini."""
    mode = None if choice is None else _choice_mode(choice)
    if isinstance(choice, str) and choice.lower() in ("none", "any"):
        return mode
    supported = supports_strict_tools(model)
    if any(strict_tool_schema(tool, supported) is not None for tool in tools):
        return VALIDATED_MODE
    return mode
