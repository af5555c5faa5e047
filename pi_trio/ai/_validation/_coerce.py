"""Coercion of tool arguments towards their schema, as the original coerces
(``@earendil-works/pi-schema`` 1.6, whose rules are TypeBox 1.3.27's ``Value.Convert``).

Three passes, in order:

1. **Optional nulls.** A ``null`` in an optional property whose schema rejects null is
   dropped, as if omitted (in ``properties``, and inside ``patternProperties`` and
   ``additionalProperties`` values; not for a property that is a bare ``$ref``).
2. **Conversions**, keyed on the first keyword of a schema that applies: ``$ref`` follows the
   reference; ``const`` and ``enum`` take the member the value converts to; ``anyOf`` /
   ``oneOf`` keep a value one branch accepts, else take the first branch's conversion the
   whole schema accepts; ``allOf`` converts with each member in turn; then by ``type``:

   - ``string``: numbers and booleans to their JavaScript text, ``null`` to ``"null"``;
   - ``number``: numeric strings as JavaScript's ``Number()`` reads them (``""`` is 0,
     ``"0x10"`` 16, ``"12n"`` 12), ``"true"``/``"false"`` in any case, booleans to 1/0,
     ``null`` to 0;
   - ``integer``: as ``number``, then truncated (``"3.7"`` and 3.7 become 3);
   - ``boolean``: ``"true"``/``"false"`` in any case, ``"1"``/``"0"``, 1/0, ``null``;
   - ``null``: ``"null"``, ``"undefined"`` (any case), ``""``, ``"0"``, 0 and false;
   - ``array``: a single value becomes a one-item array, then each item converts; a tuple
     (``prefixItems`` or an ``items`` array) converts its items and never wraps;
   - ``object``: each property by ``properties``, ``patternProperties`` or
     ``additionalProperties``.
3. **Primitive coercion by type**, for what pass 2 leaves (type lists such as
   ``["integer", "null"]``): numbers from numeric strings and booleans, booleans from
   ``"true"``/``"false"`` and 1/0, strings from numbers and booleans, ``null`` from ``""``,
   0 and false, and ``null`` to ``""``, 0 or false. A value that has one of the listed
   types stays.

A value no rule applies to stays as it is, and validation reports it. Every pass copies
only what it changes and never modifies the value handed in.

pi_trio goes one step further, only where the original's result fails the schema: it drops
optional nulls also behind ``$ref`` (msgspec puts every nested struct behind one), and
takes that result when the schema accepts it. Integer strings convert to exact integers, as
pi_trio reads JSON integers; JavaScript rounds those past 2**53 to a double.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._json._jsnum import js_number
from ._budget import step
from ._regex import regex_search
from ._scalars import (
    NO,
    coerce_primitive,
    convert_literal,
    identical,
    matches_type,
    or_value,
    same,
    try_boolean,
    try_null,
    try_number,
    try_string,
)

__all__ = ["coerce"]

Accepts = Callable[[Any, Any], bool]
Resolve = Callable[[Any], Any]


def coerce(value: Any, schema: Any, accepts: Accepts, resolve: Resolve) -> tuple[Any, bool]:
    """``value`` coerced towards ``schema`` (see the module text), and whether ``schema``
    accepts the result. ``accepts(node, v)`` tells whether a schema node accepts a value;
    ``resolve(node)`` is the target of a node's ``$ref`` (the node itself when it names
    nothing)."""
    original = _Coercer(schema, accepts, resolve, nulls_behind_refs=False).run(value)
    if accepts(schema, original):
        return original, True
    wider = _Coercer(schema, accepts, resolve, nulls_behind_refs=True).run(value)
    if accepts(schema, wider):
        return wider, True
    return original, False


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    return [t for t in declared if isinstance(t, str)] if isinstance(declared, list) else []


def _dict(schema: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = schema.get(key)
    return value if isinstance(value, dict) else None


def _item_schema(schema: dict[str, Any], index: int) -> Any:
    """The schema of an array's item at ``index`` (None when nothing applies)."""
    items = schema.get("items")
    if isinstance(items, list):
        return items[index] if index < len(items) else None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    return items


def _map_items(items: list[Any], convert: Callable[[Any, int], Any]) -> list[Any]:
    out: list[Any] | None = None
    for index, item in enumerate(items):
        changed = convert(item, index)
        if same(changed, item):
            continue
        if out is None:
            out = list(items)
        out[index] = changed
    return items if out is None else out


class _Object:
    """A copy-on-write view of an object being coerced."""

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = value
        self.out: dict[str, Any] | None = None

    def current(self) -> dict[str, Any]:
        return self.value if self.out is None else self.out

    def set(self, key: str, changed: Any) -> None:
        if same(changed, self.current().get(key, NO)):
            return
        if self.out is None:
            self.out = dict(self.value)
        self.out[key] = changed

    def delete(self, key: str) -> None:
        if self.out is None:
            self.out = dict(self.value)
        del self.out[key]


class _Coercer:
    def __init__(
        self, schema: Any, accepts: Accepts, resolve: Resolve, *, nulls_behind_refs: bool
    ) -> None:
        self.schema = schema
        self.accepts = accepts
        self.resolve = resolve
        self.nulls_behind_refs = nulls_behind_refs
        # (node, value) pairs being converted through a $ref or a wrap into an array: a
        # recursive schema meeting a value it cannot convert would otherwise never end
        self.entered: list[tuple[Any, Any]] = []
        self.cuts = 0
        # results of $ref targets by (node, value) within one run: a recursive union
        # would convert the same children once per branch, exponentially in the depth
        self.memo: dict[tuple[int, Any], tuple[Any, Any]] = {}
        self.passed: dict[tuple[int, Any], tuple[Any, bool]] = {}

    def run(self, value: Any) -> Any:
        value = self.drop_optional_nulls(value, self.schema)
        value = self.convert(self.schema, value)
        return self.coerce_types(value, self.schema)

    def passes(self, node: Any, value: Any) -> bool:
        """``accepts``, asked once per (node, value) in a run: passes 2 and 3 ask the same
        union branches about the same values."""
        key = (id(node), _memo_key(value))
        known = self.passed.get(key)
        if known is None:
            # the entry holds the value: its id is not reused while the run lasts
            known = self.passed[key] = (value, self.accepts(node, value))
        return known[1]

    # -- pass 1: optional nulls

    def drop_optional_nulls(self, value: Any, schema: Any) -> Any:
        if self.nulls_behind_refs:
            schema = self.resolve(schema)
        if not isinstance(schema, dict):
            return value
        if isinstance(value, list):
            return _map_items(value, lambda item, i: self._drop_item(item, schema, i))
        if not isinstance(value, dict):
            return value
        properties = _dict(schema, "properties")
        patterns = _dict(schema, "patternProperties") or {}
        additional = _dict(schema, "additionalProperties")
        if not patterns and additional is None and properties is None:
            return value
        properties = properties or {}
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        view = _Object(value)
        for key, sub in properties.items():
            if key not in value:
                continue
            is_ref = isinstance(sub, dict) and isinstance(sub.get("$ref"), str)
            if (
                value[key] is None
                and key not in required
                and (self.nulls_behind_refs or not is_ref)
                and not self.passes(sub, None)
            ):
                view.delete(key)
                continue
            view.set(key, self.drop_optional_nulls(value[key], sub))
        for key in value:
            matched = key in properties
            for pattern, sub in patterns.items():
                if regex_search(pattern, key):
                    matched = True
                    if key in view.current():
                        view.set(key, self.drop_optional_nulls(view.current()[key], sub))
            if not matched and additional is not None:
                view.set(key, self.drop_optional_nulls(value[key], additional))
        return view.current()

    def _drop_item(self, item: Any, schema: dict[str, Any], index: int) -> Any:
        sub = _item_schema(schema, index)
        return item if sub is None else self.drop_optional_nulls(item, sub)

    # -- pass 2: conversions

    def convert(self, node: Any, value: Any) -> Any:
        if not isinstance(node, dict):
            return value
        if isinstance(node.get("$ref"), str):
            target = self.resolve(node)
            if target is node or not isinstance(target, dict):
                return value
            return self.reenter(target, value, memoize=True)
        return self.convert_node(node, value)

    def reenter(self, node: dict[str, Any], value: Any, *, memoize: bool) -> Any:
        for entered_node, entered_value in self.entered:
            if entered_node is node and identical(entered_value, value):
                self.cuts += 1
                return value
        key = (id(node), _memo_key(value))
        if memoize and key in self.memo:
            return self.memo[key][1]
        cuts = self.cuts
        self.entered.append((node, value))
        try:
            result = self.convert(node, value)
        finally:
            self.entered.pop()
        if memoize and self.cuts == cuts:
            self.memo[key] = (value, result)  # holding the value keeps its id unique
        return result

    def convert_node(self, node: dict[str, Any], value: Any) -> Any:
        enum = node.get("enum")
        step(1 + len(enum) if isinstance(enum, list) else 1)  # the validation's budget
        if "const" in node:
            return convert_literal(node["const"], value)
        if isinstance(node.get("enum"), list):
            return self.convert_enum(node, node["enum"], value)
        for keyword in ("anyOf", "oneOf"):
            if isinstance(node.get(keyword), list):
                return self.convert_union(node, node[keyword], value)
        if isinstance(node.get("allOf"), list):
            for member in node["allOf"]:
                value = self.convert(member, value)
            return self.convert_members(node, value)
        kind = node.get("type")
        if kind == "string":
            return or_value(try_string(value), value)
        if kind == "number":
            return or_value(try_number(value), value)
        if kind == "integer":
            number = try_number(value)
            if number is NO:
                return value
            return number if isinstance(number, int) else js_number(float(math.trunc(number)))
        if kind == "boolean":
            return or_value(try_boolean(value), value)
        if kind == "null":
            return or_value(try_null(value), value)
        if kind == "array":
            return self.convert_array(node, value)
        if kind == "object":
            return self.convert_object(node, value)
        if kind is None:
            if "properties" in node or "patternProperties" in node:
                return self.convert_object(node, value)
            if "items" in node or "prefixItems" in node:
                return self.convert_array(node, value)
        return value

    def convert_enum(self, node: dict[str, Any], members: list[Any], value: Any) -> Any:
        if any(same(member, value) for member in members):
            return value
        for member in members:
            candidate = convert_literal(member, value)
            if not same(candidate, value) and self.passes(node, candidate):
                return candidate
        return value

    def convert_union(self, node: dict[str, Any], branches: list[Any], value: Any) -> Any:
        if any(self.passes(branch, value) for branch in branches):
            return self.convert_members(node, value)
        for branch in branches:
            candidate = self.convert_members(node, self.convert(branch, value))
            if self.passes(node, candidate):
                return candidate
        return self.convert_members(node, value)

    def convert_members(self, node: dict[str, Any], value: Any) -> Any:
        declares = any(
            key in node for key in ("properties", "patternProperties", "additionalProperties")
        )
        return self.convert_object(node, value) if declares else value

    def convert_array(self, node: dict[str, Any], value: Any) -> Any:
        items = node.get("items")
        prefix = items if isinstance(items, list) else node.get("prefixItems")
        if isinstance(prefix, list):
            if not isinstance(value, list):
                return value  # a tuple never wraps a single value
            rest = None if isinstance(items, list) else items
            tuple_prefix = prefix

            def convert_item(item: Any, index: int) -> Any:
                sub = tuple_prefix[index] if index < len(tuple_prefix) else rest
                return item if sub is None else self.convert(sub, item)

            return _map_items(value, convert_item)
        if isinstance(value, list):
            if "items" not in node:
                return value
            return _map_items(value, lambda item, _: self.convert(items, item))
        return [self.reenter(items, value, memoize=False) if isinstance(items, dict) else value]

    def convert_object(self, node: dict[str, Any], value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        properties = _dict(node, "properties") or {}
        patterns = _dict(node, "patternProperties") or {}
        additional = _dict(node, "additionalProperties")
        view = _Object(value)
        for key, item in value.items():
            changed = item
            matched = key in properties
            if matched:
                changed = self.convert(properties[key], changed)
            for pattern, sub in patterns.items():
                if regex_search(pattern, key):
                    matched = True
                    changed = self.convert(sub, changed)
            if not matched and additional is not None:
                changed = self.convert(additional, changed)
            view.set(key, changed)
        return view.current()

    # -- pass 3: primitive coercion by type

    def coerce_types(self, value: Any, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return value
        members = schema.get("allOf")
        for member in members if isinstance(members, list) else ():
            value = self.coerce_types(value, member)
        for keyword in ("anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                value = self.coerce_union(value, schema[keyword])
        types = _types(schema)
        matches_one = len(types) > 1 and any(matches_type(value, kind) for kind in types)
        if types and not matches_one:
            for kind in types:
                candidate = coerce_primitive(value, kind)
                if not same(candidate, value):
                    value = candidate
                    break
        if "object" in types and isinstance(value, dict):
            value = self.coerce_properties(value, schema)
        if "array" in types and isinstance(value, list):
            value = _map_items(
                value,
                lambda item, i: (
                    self.coerce_types(item, sub)
                    if isinstance(sub := _item_schema(schema, i), dict)
                    else item
                ),
            )
        return value

    def coerce_union(self, value: Any, branches: list[Any]) -> Any:
        if any(self.passes(branch, value) for branch in branches):
            return value
        for branch in branches:
            coerced = self.coerce_types(value, branch)
            if self.passes(branch, coerced):
                return coerced
        return value

    def coerce_properties(self, value: dict[str, Any], schema: dict[str, Any]) -> Any:
        properties = _dict(schema, "properties") or {}
        patterns = _dict(schema, "patternProperties") or {}
        additional = _dict(schema, "additionalProperties")
        view = _Object(value)
        for key, sub in properties.items():
            if key in value:
                view.set(key, self.coerce_types(value[key], sub))
        for key in value:
            matched = key in properties
            for pattern, sub in patterns.items():
                if regex_search(pattern, key):
                    matched = True
                    view.set(key, self.coerce_types(view.current()[key], sub))
            if not matched and additional is not None:
                view.set(key, self.coerce_types(value[key], additional))
        return view.current()


def _memo_key(value: Any) -> Any:
    return ("ref", id(value)) if isinstance(value, dict | list) else (type(value), value)
