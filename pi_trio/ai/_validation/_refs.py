"""Where a ``$ref`` of a tool schema points, for coercion and for explaining failures.

A reference resolves against the base URI of the schema node that holds it: the root's
``$id`` (if any), changed by every ``$id`` on the way down, as in draft 2020-12. JSON
Pointers (``#/$defs/x``), anchors (``#name``), and references to the root or to an embedded
resource by URI (``tool.json#/$defs/x``, ``item.json``) resolve; documents outside the
schema are never fetched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urldefrag, urljoin

import referencing
import referencing.exceptions
import referencing.jsonschema

__all__ = ["resolver_of"]

_MAX_HOPS: Final = 32  # chained $refs followed from one node (a cycle guard)

# Keywords whose value holds subschemas: a map of them, a list of them, or one.
_MAPS: Final = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_ONES: Final = (
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "items",
)


def resolver_of(schema: Any) -> Callable[[Any], Any]:
    """``resolve(node)``: the schema a node's ``$ref`` names, following chains of
    references; the node itself when it has no ``$ref`` or names nothing."""
    resource = referencing.jsonschema.DRAFT202012.create_resource(schema)
    root = urldefrag(resource.id() or "")[0]
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(root, resource)
    # embedded resources (a subschema with its own $id) become addressable; a draft 7
    # tuple where 2020-12 has a schema stops the crawl
    with contextlib.suppress(AttributeError, TypeError):
        registry = registry.crawl()
    bases: dict[int, tuple[Any, str]] = {}
    _index(schema, root, bases)

    resolved: dict[int, tuple[Any, Any]] = {}

    def resolve(node: Any) -> Any:
        known = resolved.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        target = follow(node)
        if id(node) in bases:  # a node of the schema: it lives as long as the schema
            resolved[id(node)] = (node, target)
        return target

    def follow(node: Any) -> Any:
        for _ in range(_MAX_HOPS):
            ref = node.get("$ref") if isinstance(node, dict) else None
            if not isinstance(ref, str):
                return node
            entry = bases.get(id(node))
            base = entry[1] if entry is not None and entry[0] is node else root
            try:
                node = registry.resolver(base).lookup(ref).contents
            except (referencing.exceptions.Unresolvable, ValueError):
                return node
        return node

    return resolve


def _index(node: Any, base: str, bases: dict[int, tuple[Any, str]]) -> None:
    """Record the base URI of every schema node under ``node``."""
    if not isinstance(node, dict) or id(node) in bases:
        return
    own = node.get("$id")
    if isinstance(own, str):
        base = urldefrag(urljoin(base, own))[0]
    bases[id(node)] = (node, base)
    for key in _MAPS:
        children = node.get(key)
        if isinstance(children, dict):
            for child in children.values():
                _index(child, base, bases)
    for key in _LISTS:
        children = node.get(key)
        if isinstance(children, list):
            for child in children:
                _index(child, base, bases)
    for key in _ONES:
        _index(node.get(key), base, bases)
