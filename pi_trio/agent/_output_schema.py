"""An output type as the model sees it: an object JSON schema (from
``msgspec.json.schema``, references inlined), a name and a description, and the checks of
an answer against the type (msgspec validation, errors naming the field).

A type whose schema is not an object (``list[int]``, a union) travels wrapped as
``{"result": ...}``: providers' JSON-schema outputs and tool parameters take objects only.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

import msgspec

from ..ai import OutputFormat
from ..ai._seam import BoundedDecoder

__all__ = ["OUTPUT_SCHEMA_CACHE_SIZE", "OutputSchema", "output_schema"]

# Output types whose schema and decoder are kept; a program uses a handful.
OUTPUT_SCHEMA_CACHE_SIZE: Final = 64
_WRAPPER_FIELD: Final = "result"
_NAME_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]")
_NAME_MAX: Final = 64
_FENCE: Final = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n\s*```$", re.DOTALL)
_DEFS_PREFIX: Final = "#/$defs/"


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` into ``$defs`` replaced by its definition (without
    msgspec's ``title``); only recursive types keep a ``$defs`` entry and a ``$ref``."""
    defs: dict[str, Any] = schema.get("$defs", {})
    kept: dict[str, Any] = {}

    def resolve(node: Any, stack: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            name = ref[len(_DEFS_PREFIX) :]
            if name in stack:  # a recursive type refers to itself
                kept.setdefault(name, None)
                return node
            target = {k: v for k, v in defs[name].items() if k != "title"}
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return resolve({**target, **siblings}, stack | {name})
        return {k: resolve(v, stack) for k, v in node.items() if k != "$defs"}

    root: dict[str, Any] = resolve(schema, frozenset())
    done: dict[str, Any] = {}
    while len(done) < len(kept):
        for name in [n for n in kept if n not in done]:
            body = {k: v for k, v in defs[name].items() if k != "title"}
            done[name] = resolve(body, frozenset({name}))
    if done:
        root["$defs"] = done
    return root


def _schema_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    name = ref[len(_DEFS_PREFIX) :] if isinstance(ref, str) else _WRAPPER_FIELD
    return _NAME_UNSAFE.sub("_", name)[:_NAME_MAX] or _WRAPPER_FIELD


class OutputSchema:
    """One output type as the model sees it (``name``, ``description``, an object
    ``schema``) and the checks of an answer against it."""

    __slots__ = ("_decoder", "_wrapper", "description", "name", "schema", "type")

    def __init__(self, output_type: Any) -> None:
        try:
            raw = msgspec.json.schema(output_type)
        except TypeError as exc:
            reason = str(exc).strip().splitlines()[-1]  # msgspec's last line names the type
            raise TypeError(
                f"output_type={output_type!r} has no JSON schema ({reason}); use a msgspec "
                "Struct, a dataclass, a TypedDict or another type msgspec can describe"
            ) from exc
        self.type = output_type
        self.name = _schema_name(raw)
        schema = _inline_refs(raw)
        self.description: str | None = schema.get("description")
        self._wrapper: Any = None
        decode_as = output_type
        if schema.get("type") != "object":
            # Providers take object schemas only: the value travels as {"result": ...}.
            defs = schema.pop("$defs", None)
            schema = {
                "type": "object",
                "properties": {_WRAPPER_FIELD: schema},
                "required": [_WRAPPER_FIELD],
            }
            if defs:
                schema["$defs"] = defs
            decode_as = self._wrapper = msgspec.defstruct(
                f"{self.name}_output", [(_WRAPPER_FIELD, output_type)]
            )
        self.schema = schema
        # the answer is the model's text: decoded behind the nesting limit
        self._decoder = BoundedDecoder(decode_as)

    def output_format(self) -> OutputFormat:
        return OutputFormat(schema=self.schema, name=self.name, description=self.description)

    def from_text(self, text: str) -> Any:
        """The value of an answer's text (JSON, optionally inside one code fence); a
        ``ValueError`` says what is wrong, naming the field."""
        text = text.strip()
        fenced = _FENCE.match(text)
        if fenced is not None:
            text = fenced.group(1).strip()
        if not text:
            raise ValueError("the answer has no text; expected a JSON object")
        try:
            value = self._decoder.decode(text)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise ValueError(str(exc)) from exc
        return self._unwrap(value)

    def from_arguments(self, arguments: Any) -> Any:
        """The value of tool-call arguments (already JSON values)."""
        try:
            value = msgspec.convert(arguments, self._wrapper or self.type)
        except msgspec.ValidationError as exc:
            raise ValueError(str(exc)) from exc
        return self._unwrap(value)

    def _unwrap(self, value: Any) -> Any:
        return getattr(value, _WRAPPER_FIELD) if self._wrapper is not None else value


@functools.lru_cache(maxsize=OUTPUT_SCHEMA_CACHE_SIZE)
def _cached_schema(output_type: Any) -> OutputSchema:
    return OutputSchema(output_type)


def output_schema(output_type: Any) -> OutputSchema:
    """The ``OutputSchema`` of ``output_type`` (made once per type while it is used)."""
    try:
        return _cached_schema(output_type)
    except TypeError as exc:
        if "unhashable" not in str(exc):
            raise
        return OutputSchema(output_type)
