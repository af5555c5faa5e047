"""Why a value fails its schema, in the original's words (``@earendil-works/pi-schema``).

`explain` walks the schema the way pi-schema's explainer does and reports each failing
keyword at the value it failed on: ``expected number, got string``, ``missing`` (at the
path of the missing property), ``expected "add"``, ``expected one of ["a","b"]``,
``unknown field`` (at the path of the unexpected property), ``expected >= 1``… A failed
``type`` stops the walk at that value; a union names the alternative its tag selects, or
the one the value was most likely meant for. Paths are the value's path joined with
``.`` (``edits.0.oldText``), ``root`` for the whole value.

Whether a sub-schema accepts a value is asked of jsonschema, so only the wording and the
choice of what to report follow pi-schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from .._json._jsnum import js_number_text
from ._budget import MAX_ERROR_DETAILS, step

__all__ = ["explain"]

_LISTED_VALUES: Final = 20  # an enum's message names at most this many values
_MAX_DEPTH: Final = 64  # $ref / applicator steps followed on one value (cycle guard)

Accepts = Callable[[Any, Any], bool]
Resolve = Callable[[Any], Any]
Error = tuple[tuple[str | int, ...], str]


def explain(schema: Any, value: Any, accepts: Accepts, resolve: Resolve) -> list[tuple[str, str]]:
    """``(path, message)`` for each failure of ``value`` (which ``schema`` rejects), read in
    the original's dialect: draft 2020-12, with draft 7's ``items`` arrays and
    ``dependencies`` too."""
    out: list[Error] = []
    _Explainer(accepts, resolve).walk(schema, value, (), out, 0)
    if not out:
        out.append(((), "invalid"))
    return [(".".join(str(part) for part in path) or "root", message) for path, message in out]


def _json(value: Any) -> str:
    """``JSON.stringify(value)``."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return js_number_text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value), ensure_ascii=False)


def _listed(values: list[Any]) -> str:
    if len(values) <= _LISTED_VALUES:
        return _json(values)
    return f"{_json(values[:_LISTED_VALUES])[:-1]}, ... and {len(values) - _LISTED_VALUES} more]"


def _number(value: Any) -> str:
    return js_number_text(value) if isinstance(value, int | float) else str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return (
            js_number_text(value)
            if value != value or value in (float("inf"), -float("inf"))
            else "number"
        )
    return type(value).__name__


def _has_type(value: Any, name: Any) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if name == "number":
        return _is_number(value)
    if name == "integer":
        return _is_number(value) and float(value).is_integer()
    return False


def _equal(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


_BOUNDS: Final = (
    ("minimum", ">="),
    ("maximum", "<="),
    ("exclusiveMinimum", ">"),
    ("exclusiveMaximum", "<"),
)


def _within(value: float, bound: float, sign: str) -> bool:
    if sign == ">=":
        return value >= bound
    if sign == "<=":
        return value <= bound
    return value > bound if sign == ">" else value < bound


def _dict(node: dict[str, Any], key: str) -> dict[str, Any]:
    value = node.get(key)
    return value if isinstance(value, dict) else {}


def _list(node: dict[str, Any], key: str) -> list[Any]:
    value = node.get(key)
    return value if isinstance(value, list) else []


def _contains_message(low: int, high: float) -> str:
    if high == float("inf"):
        return f"expected at least {low} matching {'item' if low == 1 else 'items'}"
    if low == 0:
        return f"expected at most {int(high)} matching {'item' if high == 1 else 'items'}"
    return f"expected between {low} and {int(high)} matching items"


class _Explainer:
    def __init__(self, accepts: Accepts, resolve: Resolve) -> None:
        self.accepts = accepts
        self.resolve = resolve

    def walk(self, node: Any, v: Any, path: tuple[Any, ...], out: list[Error], depth: int) -> None:
        step()  # a step of the validation's budget
        if node is True or depth > _MAX_DEPTH or len(out) > MAX_ERROR_DETAILS:
            return  # past MAX_ERROR_DETAILS problems the rest are not shown: not looked for
        if node is False:
            out.append((path, "no value is allowed here"))
            return
        if not isinstance(node, dict) or self.accepts(node, v):
            return
        start = len(out)

        def push(message: str, at: tuple[Any, ...] = path) -> None:
            out.append((at, message))

        declared = node.get("type")
        if declared is not None:
            types = declared if isinstance(declared, list) else [declared]
            if not any(_has_type(v, t) for t in types):
                push(f"expected {' or '.join(str(t) for t in types)}, got {_type_name(v)}")
                return
        enum = node.get("enum")
        if isinstance(enum, list) and not any(_equal(v, e) for e in enum):
            push(f"expected one of {_listed(enum)}")
        if "const" in node and not _equal(v, node["const"]):
            push(f"expected {_json(node['const'])}")
        if isinstance(v, str):
            self.string(node, v, push)
        if _is_number(v):
            self.number(node, v, push)
        if isinstance(v, dict):
            self.object(node, v, path, out, depth, push)
        if isinstance(v, list):
            self.array(node, v, path, out, depth, push)
        for sub in _list(node, "allOf"):
            self.walk(sub, v, path, out, depth + 1)
        for keyword, exactly_one in (("anyOf", False), ("oneOf", True)):
            if isinstance(node.get(keyword), list):
                self.union(node[keyword], v, path, out, depth, exactly_one)
        if "not" in node and self.accepts(node["not"], v):
            push("must not match the schema in not")
        if "if" in node:
            branch = node.get("then") if self.accepts(node["if"], v) else node.get("else")
            if branch is not None:
                self.walk(branch, v, path, out, depth + 1)
        if isinstance(node.get("$ref"), str):
            target = self.resolve(node)
            if target is node:
                push(f"unresolved reference {node['$ref']}")
            else:
                self.walk(target, v, path, out, depth + 1)
        if len(out) == start and node.get("unevaluatedProperties") is False and isinstance(v, dict):
            known = _dict(node, "properties")
            for key in v:
                if key not in known:
                    push("unknown field", (*path, key))

    def string(self, node: dict[str, Any], v: str, push: Callable[[str], None]) -> None:
        if _is_number(node.get("minLength")) and len(v) < node["minLength"]:
            push(f"expected at least {_number(node['minLength'])} characters")
        if _is_number(node.get("maxLength")) and len(v) > node["maxLength"]:
            push(f"expected at most {_number(node['maxLength'])} characters")
        pattern = node.get("pattern")
        if isinstance(pattern, str) and not self.accepts({"pattern": pattern}, v):
            push(f"expected to match {pattern}")
        fmt = node.get("format")
        if isinstance(fmt, str) and not self.accepts({"format": fmt}, v):
            push(f"expected format {fmt}")

    def number(self, node: dict[str, Any], v: float, push: Callable[[str], None]) -> None:
        for keyword, sign in _BOUNDS:
            bound: Any = node.get(keyword)
            if _is_number(bound) and not _within(v, bound, sign):
                push(f"expected {sign} {_number(bound)}")
        step = node.get("multipleOf")
        if _is_number(step) and not self.accepts({"multipleOf": step}, v):
            push(f"expected a multiple of {_number(step)}")

    def object(
        self,
        node: dict[str, Any],
        v: dict[str, Any],
        path: tuple[Any, ...],
        out: list[Error],
        depth: int,
        push: Callable[..., None],
    ) -> None:
        properties = _dict(node, "properties")
        for key in _list(node, "required"):
            if isinstance(key, str) and key not in v:
                push("missing", (*path, key))
        for key, sub in properties.items():
            if key in v:
                self.walk(sub, v[key], (*path, key), out, depth + 1)
        patterns = list(_dict(node, "patternProperties").items())
        extra = node.get("additionalProperties")
        names = node.get("propertyNames")
        for key in v:
            matched = key in properties
            for pattern, sub in patterns:
                if re.search(pattern, key):
                    matched = True
                    self.walk(sub, v[key], (*path, key), out, depth + 1)
            if not matched and extra is not None:
                if extra is False:
                    push("unknown field", (*path, key))
                else:
                    self.walk(extra, v[key], (*path, key), out, depth + 1)
            if names is not None and not self.accepts(names, key):
                push("invalid property name", (*path, key))
        count = len(v)
        if _is_number(node.get("minProperties")) and count < node["minProperties"]:
            push(f"expected at least {_number(node['minProperties'])} properties")
        if _is_number(node.get("maxProperties")) and count > node["maxProperties"]:
            push(f"expected at most {_number(node['maxProperties'])} properties")
        dependencies = dict(_dict(node, "dependentRequired"))
        dependencies.update(_dict(node, "dependencies"))
        for key, needed in dependencies.items():
            if key not in v:
                continue
            if isinstance(needed, list):
                for name in needed:
                    if name not in v:
                        push(f"required when {key} is present", (*path, name))
            else:
                self.walk(needed, v, path, out, depth + 1)
        for key, sub in _dict(node, "dependentSchemas").items():
            if key in v:
                self.walk(sub, v, path, out, depth + 1)

    def array(
        self,
        node: dict[str, Any],
        v: list[Any],
        path: tuple[Any, ...],
        out: list[Error],
        depth: int,
        push: Callable[..., None],
    ) -> None:
        items = node.get("items")
        prefix: list[Any]
        if isinstance(items, list):
            prefix, rest = items, node.get("additionalItems")
        else:
            prefix = _list(node, "prefixItems")
            rest = items
        for index, item in enumerate(v):
            sub = prefix[index] if index < len(prefix) else rest
            if sub is not None:
                self.walk(sub, item, (*path, index), out, depth + 1)
        if _is_number(node.get("minItems")) and len(v) < node["minItems"]:
            push(f"expected at least {_number(node['minItems'])} items")
        if _is_number(node.get("maxItems")) and len(v) > node["maxItems"]:
            push(f"expected at most {_number(node['maxItems'])} items")
        if node.get("uniqueItems") is True and not self.accepts({"uniqueItems": True}, v):
            push("expected unique items")
        if "contains" in node:
            low = node["minContains"] if _is_number(node.get("minContains")) else 1
            high = node["maxContains"] if _is_number(node.get("maxContains")) else float("inf")
            matching = sum(1 for item in v if self.accepts(node["contains"], item))
            if not low <= matching <= high:
                push(_contains_message(low, high))

    def union(
        self,
        branches: list[Any],
        v: Any,
        path: tuple[Any, ...],
        out: list[Error],
        depth: int,
        exactly_one: bool,
    ) -> None:
        matches = sum(1 for branch in branches if self.accepts(branch, v))
        if matches == 1 or (not exactly_one and matches > 0):
            return
        if matches > 1:
            out.append((path, "matches more than one alternative"))
            return
        resolved = [self.resolve(branch) for branch in branches]
        tag = _tag_of(resolved)
        if tag is not None and isinstance(v, dict):
            key, values = tag
            chosen = next((i for i, t in enumerate(values) if _equal(v.get(key, ...), t)), None)
            if chosen is None:
                out.append(((*path, key), f"expected one of {_listed(values)}"))
            else:
                self.walk(branches[chosen], v, path, out, depth + 1)
            return
        best: tuple[list[Error], int] | None = None
        for branch, target in zip(branches, resolved, strict=True):
            errors: list[Error] = []
            self.walk(branch, v, path, errors, depth + 1)
            if not errors:
                continue
            known = target.get("properties") if isinstance(target, dict) else None
            declared = (
                len([k for k in v if k in known])
                if isinstance(v, dict) and isinstance(known, dict)
                else 0
            )
            if (
                best is None
                or declared > best[1]
                or (declared == best[1] and len(errors[0][0]) > len(best[0][0][0]))
            ):
                best = (errors, declared)
        out.extend(best[0] if best is not None else [(path, "matches no alternative")])


def _tag_of(branches: list[Any]) -> tuple[str, list[Any]] | None:
    """The property whose ``const`` differs in every branch (a tagged union), if any."""
    first = branches[0] if branches else None
    if not isinstance(first, dict) or not isinstance(first.get("properties"), dict):
        return None
    for key in first["properties"]:
        values = []
        for branch in branches:
            properties = branch.get("properties") if isinstance(branch, dict) else None
            tag = properties.get(key) if isinstance(properties, dict) else None
            if not isinstance(tag, dict) or "const" not in tag:
                break
            values.append(tag["const"])
        else:
            primitive = all(not isinstance(t, dict | list) for t in values)
            if primitive and len({_json(t) for t in values}) == len(values):
                return key, values
    return None
