"""JSON-schema constrained sampling for tools, as pi 1.6 does it (sans-IO).

A tool asks for it with ``constrained_sampling={"type": "json_schema", "strict":
"prefer" | "require"}``. Where the model has strict tools and the tool's schema fits the
subset constrained decoders compile, the tool is declared strict with its schema
rewritten into that subset (``make_strict_tool_schema``): every object lists all its
properties as required and allows no others, and an optional property that does not
already allow ``null`` becomes ``{"anyOf": [<its schema>, {"type": "null"}]}``, so the
model writes ``null`` where it would have left it out (argument validation drops such
nulls again). A tool that prefers it and cannot have it goes as it is; one that requires
it is refused with the reason (``strict_tool_schema``).

Structured output (``StreamOptions.output_format``) has its own subset, in ``_output``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

import msgspec

from .._errors import ProviderError
from .._types import Tool

__all__ = [
    "UnsupportedStrictSchema",
    "make_strict_tool_schema",
    "prefers_strict_sampling",
    "strict_tool_schema",
]

# Keywords a strict schema may not use at all.
UNSUPPORTED_STRICT_KEYS: Final = (
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
)

UnsupportedKeyword = Callable[[str, Any], bool]
"""``(keyword, value) -> True`` when a provider's strict tools reject that keyword."""


class UnsupportedStrictSchema(ValueError):
    """A tool schema outside the strict subset; the message says which part."""


def _types(schema: dict[str, Any]) -> list[Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    return kind if isinstance(kind, list) else []


def _structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    types = _types(schema)
    return "object" in types or "array" in types or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if "null" in _types(schema):
        return True
    if "const" in schema and schema["const"] is None:
        return True
    enum = schema.get("enum")
    if isinstance(enum, list) and None in enum:
        return True
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _strict_node(schema: Any, unsupported: UnsupportedKeyword | None) -> None:
    """Rewrites ``schema`` in place (it is a copy)."""
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("boolean schemas are unsupported")
    for key in UNSUPPORTED_STRICT_KEYS:
        if key in schema:
            raise UnsupportedStrictSchema(f"{key} schemas are unsupported")
    if unsupported is not None:
        for key, value in schema.items():
            if unsupported(key, value):
                shown = msgspec.json.encode(value).decode()
                raise UnsupportedStrictSchema(f"{key}: {shown} is unsupported")
    # a bare enum counts as typed, a bare const does not
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise UnsupportedStrictSchema("schemas without a type are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise UnsupportedStrictSchema("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise UnsupportedStrictSchema("object and array unions are unsupported")
            _strict_node(variant, unsupported)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise UnsupportedStrictSchema("tuple schemas are unsupported")
        _strict_node(schema["items"], unsupported)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise UnsupportedStrictSchema("properties require type object")
    if is_object:
        _strict_object(schema, unsupported)


def _strict_object(schema: dict[str, Any], unsupported: UnsupportedKeyword | None) -> None:
    if "additionalProperties" in schema and schema["additionalProperties"] is not False:
        raise UnsupportedStrictSchema("schema-valued or true additionalProperties is unsupported")
    if "properties" in schema and not isinstance(schema["properties"], dict):
        raise UnsupportedStrictSchema("object properties must be a schema map")
    required = schema.get("required", [])
    if "required" in schema and (
        not isinstance(required, list) or not all(isinstance(k, str) for k in required)
    ):
        raise UnsupportedStrictSchema("object required must be a string array")
    properties: dict[str, Any] = schema.get("properties", {})
    if any(key not in properties for key in required):
        raise UnsupportedStrictSchema("required contains an unknown property")
    for key, value in properties.items():
        _strict_node(value, unsupported)
        if key not in required and not _allows_null(value):
            properties[key] = {"anyOf": [value, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def make_strict_tool_schema(
    schema: Any, unsupported: UnsupportedKeyword | None = None
) -> dict[str, Any]:
    """``schema`` (left unchanged) in the strict subset, as the module docstring says;
    ``UnsupportedStrictSchema`` names the first part the subset cannot express
    (``unsupported`` adds a provider's own refusals)."""
    if not isinstance(schema, dict):
        raise UnsupportedStrictSchema("root schema must have type object")
    cloned = copy.deepcopy(schema)
    _strict_node(cloned, unsupported)
    if cloned.get("type") != "object":
        raise UnsupportedStrictSchema("root schema must have type object")
    return cloned


def prefers_strict_sampling(tool: Tool) -> bool:
    """Whether ``tool`` asks for constrained sampling only where it can have it
    (``"strict": "prefer"``)."""
    sampling = tool.constrained_sampling
    return (
        isinstance(sampling, dict)
        and sampling.get("type") == "json_schema"
        and sampling.get("strict") == "prefer"
    )


def strict_tool_schema(
    tool: Tool, supported: bool, unsupported: UnsupportedKeyword | None = None
) -> dict[str, Any] | None:
    """The strict form of ``tool``'s parameters when the tool is declared strict: it asks
    for JSON-schema constrained sampling, the model has strict tools (``supported``) and
    the schema fits; else ``None``, the tool going as it is. A tool that requires it and
    cannot have it raises ``ProviderError`` saying why."""
    sampling = tool.constrained_sampling
    if not isinstance(sampling, dict) or sampling.get("type") != "json_schema":
        return None
    required = sampling.get("strict") == "require"
    if supported:
        try:
            return make_strict_tool_schema(tool.parameters, unsupported)
        except UnsupportedStrictSchema as exc:
            if not required:
                return None
            reason = str(exc)
    elif required:
        reason = "strict tools are unsupported"
    else:
        return None
    raise ProviderError(
        f'Tool "{tool.name}" requires JSON-schema constrained sampling, but {reason}.'
    )
