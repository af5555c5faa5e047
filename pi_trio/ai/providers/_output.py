"""JSON-schema output (``StreamOptions.output_format``): which models take it natively, and
the strict subset of JSON Schema that constrained decoding accepts (sans-IO).

The original runtime has no request-level output format, so whether a model takes one is
pi_trio's rule, read from the model's metadata:

- ``model.compat["supportsJsonSchemaOutput"]`` (pi_trio's key), when set, decides for any
  api;
- ``openai-completions``: the server's compat entry ``supports_json_schema_output``
  (detected for OpenAI, Azure, xAI, Cerebras, Mistral and local servers; see
  ``_openai_compat``);
- ``openai-responses`` / ``azure-openai-responses`` / ``openai-codex-responses``: always
  (``text.format`` is part of that api);
- ``mistral-conversations``: always (``response_format`` with ``json_schema``);
- ``anthropic-messages``: models whose compat has ``supportsStrictTools`` (the catalog's
  flag for Anthropic's structured outputs), when the schema fits Anthropic's subset;
- ``google-generative-ai`` and ``google-vertex``: Gemini models; before Gemini 3 only in
  requests without tools (older Gemini refuses a JSON answer together with function
  calling);
- ``bedrock-converse-stream``: models whose compat has ``supportsStrictMode`` (the
  catalog's flag for Bedrock's structured outputs: ``outputConfig.textFormat``);
- any other api: no.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import msgspec

from .._stream._options import OutputFormat
from .._types import Model
from ._anthropic_tools import anthropic_strict_tool_unsupported
from ._openai_compat import resolve_compat

__all__ = [
    "StrictSchemaError",
    "UnsupportedKeyword",
    "anthropic_strict_unsupported",
    "fit_output_schema",
    "make_strict_schema",
    "openai_strict_unsupported",
    "strict_schema_or_none",
    "supports_json_schema_output",
]

UnsupportedKeyword = Callable[[str, Any], bool]
"""``(keyword, value) -> True`` when a provider's strict mode rejects that keyword."""

# Keywords no strict mode accepts (the constrained decoders compile a subset of JSON Schema).
_NEVER_STRICT: Final = frozenset(
    {
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "dependentSchemas",
        "dependencies",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "contains",
        "prefixItems",
    }
)
# Annotations that carry no constraint and that strict modes reject or ignore.
_DROPPED: Final = ("default", "discriminator")

_OPENAI_UNSUPPORTED: Final = frozenset(
    {"minLength", "maxLength", "minProperties", "maxProperties", "minContains", "maxContains"}
)
# Anthropic's output format refuses the string-length limits besides what its strict tools
# refuse (the same structured-outputs subset).
_ANTHROPIC_OUTPUT_ONLY: Final = frozenset({"minLength", "maxLength"})
_GEMINI_MAJOR: Final = re.compile(r"gemini-(\d+)")
_COMPAT_KEY: Final = "supportsJsonSchemaOutput"


class StrictSchemaError(ValueError):
    """A schema that constrained decoding cannot take; the message says which part."""


def openai_strict_unsupported(key: str, value: Any) -> bool:
    """The keywords OpenAI's strict mode rejects."""
    return key in _OPENAI_UNSUPPORTED


def anthropic_strict_unsupported(key: str, value: Any) -> bool:
    """The keywords Anthropic's structured outputs reject: those its strict tools reject
    (numeric limits, ``minItems`` other than 0 or 1, string formats outside its list) and
    the string-length limits."""
    return key in _ANTHROPIC_OUTPUT_ONLY or anthropic_strict_tool_unsupported(key, value)


def _strict_node(schema: Any, path: str, unsupported: UnsupportedKeyword | None) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise StrictSchemaError(f"{path}: boolean schemas are unsupported")
    for key, value in schema.items():
        if key in _NEVER_STRICT or (unsupported is not None and unsupported(key, value)):
            shown = msgspec.json.encode(value).decode()
            raise StrictSchemaError(f"{path}: {key}: {shown} is unsupported")
    node = {k: v for k, v in schema.items() if k not in _DROPPED}
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise StrictSchemaError(f"{path}: only local $ref into $defs is supported")
        return node
    if not any(k in node for k in ("type", "anyOf", "enum", "const")):
        raise StrictSchemaError(f"{path}: a schema without a type is unsupported")
    if "anyOf" in node:
        variants = node["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise StrictSchemaError(f"{path}: anyOf must list at least one schema")
        node["anyOf"] = [
            _strict_node(v, f"{path}.anyOf[{i}]", unsupported) for i, v in enumerate(variants)
        ]
    if "items" in node:
        if not isinstance(node["items"], dict):
            raise StrictSchemaError(f"{path}: tuple schemas are unsupported")
        node["items"] = _strict_node(node["items"], f"{path}[]", unsupported)
    kind = node.get("type")
    if "properties" in node and kind != "object":
        raise StrictSchemaError(f"{path}: properties need type object")
    if kind == "object":
        _strict_object(node, path, unsupported)
    return node


def _strict_object(node: dict[str, Any], path: str, unsupported: UnsupportedKeyword | None) -> None:
    extra = node.get("additionalProperties")
    if extra is not None and extra is not False:
        raise StrictSchemaError(f"{path}: additionalProperties other than false is unsupported")
    if "properties" not in node and extra is not False:
        raise StrictSchemaError(f"{path}: an object without declared properties is unsupported")
    properties = node.get("properties") or {}
    if not isinstance(properties, dict):
        raise StrictSchemaError(f"{path}: properties must map names to schemas")
    # Constrained decoding writes every property: requiring the optional ones narrows
    # what the model may answer, never what the schema accepts.
    strict = {
        name: _strict_node(schema, f"{path}.{name}", unsupported)
        for name, schema in properties.items()
    }
    node["properties"] = strict
    node["required"] = list(strict)
    node["additionalProperties"] = False


def make_strict_schema(
    schema: dict[str, Any], unsupported: UnsupportedKeyword | None = None
) -> dict[str, Any]:
    """``schema`` in the subset constrained decoding takes: every object lists all its
    properties as required and allows no others, annotations that are no constraint
    (``default``, ``discriminator``) are left out, ``$defs`` are converted too. Whatever
    the result accepts, ``schema`` accepts. Raises ``StrictSchemaError`` naming the first
    part the subset cannot express (``unsupported`` adds a provider's own refusals)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise StrictSchemaError("$: the root schema must have type object")
    defs = schema.get("$defs")
    root = _strict_node({k: v for k, v in schema.items() if k != "$defs"}, "$", unsupported)
    if isinstance(defs, dict):
        root["$defs"] = {
            name: _strict_node(sub, f"$defs.{name}", unsupported) for name, sub in defs.items()
        }
    return root


def strict_schema_or_none(
    schema: dict[str, Any], unsupported: UnsupportedKeyword | None = None
) -> dict[str, Any] | None:
    """``make_strict_schema``, or ``None`` when the schema does not fit."""
    try:
        return make_strict_schema(schema, unsupported)
    except StrictSchemaError:
        return None


def fit_output_schema(
    output: OutputFormat, *, strict_mode: bool, unsupported: UnsupportedKeyword | None = None
) -> tuple[dict[str, Any], bool]:
    """``(schema, strict)`` to send for ``output``: its strict subset and ``True`` when
    the server has a strict mode (``strict_mode``) and the schema fits, else the schema as
    given and ``False``. ``output.strict=True`` requires the strict subset (a
    ``ValueError`` says why it cannot be had); ``False`` never uses it."""
    if output.strict is False or (output.strict is None and not strict_mode):
        return output.schema, False
    try:
        if not strict_mode:
            raise StrictSchemaError("this server has no strict mode (compat supportsStrictMode)")
        return make_strict_schema(output.schema, unsupported), True
    except StrictSchemaError as exc:
        if output.strict is None:
            return output.schema, False
        raise ValueError(
            f"output_format {output.name!r} asks for strict=True, but {exc}; "
            "pass strict=None to send the schema without strict mode where it does not fit"
        ) from exc


def supports_json_schema_output(
    model: Model, schema: dict[str, Any] | None = None, *, with_tools: bool = False
) -> bool:
    """Whether ``model``'s provider takes ``StreamOptions.output_format`` natively, for
    ``schema`` (when given) in a request with or without tools (the rule: module
    docstring)."""
    explicit = (model.compat or {}).get(_COMPAT_KEY)
    if isinstance(explicit, bool):
        return explicit
    api = model.api
    if api == "openai-completions":
        return resolve_compat(model).supports_json_schema_output
    if api in (
        "openai-responses",
        "azure-openai-responses",
        "openai-codex-responses",
        "mistral-conversations",
    ):
        return True
    if api == "anthropic-messages":
        if (model.compat or {}).get("supportsStrictTools") is not True:
            return False
        return (
            schema is None
            or strict_schema_or_none(schema, anthropic_strict_unsupported) is not None
        )
    if api == "bedrock-converse-stream":
        return (model.compat or {}).get("supportsStrictMode") is True
    if api in ("google-generative-ai", "google-vertex"):
        match = _GEMINI_MAJOR.search(model.id)
        if match is None and "gemini" not in model.id:
            return False
        return not with_tools or (match is not None and int(match.group(1)) >= 3)
    return False
