"""Keeping what pi_trio does not know: unknown JSON fields and the source's key order.

Decoding takes msgspec's strict path first (every wire struct forbids unknown fields), so a
document made only of known fields costs nothing extra. When that path meets an unknown
field, `decode_keeping_layout` reads the document again: guided by the target type, it
splits every object that maps to a struct into its known fields and its extras, decodes the
known part with the same strict decoder (so wrong types still fail with their path), and
gives each struct whose source object had extras, or its keys in another order, or a
number in JavaScript's spelling where msgspec spells it otherwise (``0.000003``, ``1e+21``)
in a free-form field, a *layout*: the source key order, the extras as raw JSON, the known
keys that were an explicit ``null``, and the known keys whose numbers are to be written in
JavaScript's spelling. Such a struct becomes an instance of a private subclass of its type
(equal to the plain struct with the same fields) that carries the layout.

`apply_layouts` runs before encoding while any layout is alive: it writes each laid-out
struct as an object with its keys in the source order, the extras unchanged in their place,
and the known fields with their current values (a field set since decoding takes its
canonical place among its neighbours; the numbers of a field noted for its spelling are
written as JavaScript writes them). Copies made with ``copy``, ``pickle`` or
``copy.deepcopy`` keep the layout; ``msgspec.structs.replace`` gives a plain copy.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any, Final

import msgspec

from ._jsnum import js_number_text, needs_js_spelling
from ._wire_plans import (
    DictPlan,
    ListPlan,
    StructPlan,
    UnionPlan,
    plan_for,
    struct_bearing_fields,
)

__all__ = [
    "apply_layouts",
    "decode_keeping_layout",
    "extra_fields",
    "layouts_alive",
    "replace_keeping_layout",
]

_LAYOUT_KEY: Final = "__pi_trio_layout__"
_RAW_OBJECT: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_ARRAY: Final = msgspec.json.Decoder(list[msgspec.Raw])
_RAW_SCALAR: Final = msgspec.json.Decoder()
_NULL: Final = msgspec.Raw(b"null")
_CONTAINERS: Final = (msgspec.Struct, list, tuple)
# how JavaScript writes the numbers msgspec respells: [1e-6, 1e-5) in fixed notation, and
# from 1e21 up with an explicit "+" in the exponent (checked on raw bytes: a hit inside a
# string only costs a respelling pass that changes nothing)
_JS_SPELLINGS: Final = (b"0.00000", b"e+")
# a JSON string (skipped) or a float as msgspec writes it (fraction or exponent)
_STRING_OR_FLOAT: Final = re.compile(
    rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9]+(?:\.[0-9]+)?e[-+]?[0-9]+|-?[0-9]+\.[0-9]+'
)


class _Layout:
    """How one source object was written: its keys in order, the raw JSON of the keys
    pi_trio does not know, the known keys that were an explicit ``null``, and the known
    keys whose numbers are to be written in JavaScript's spelling."""

    __slots__ = ("__weakref__", "extras", "js_numbers", "keys", "nulls")

    def __init__(
        self,
        keys: tuple[str, ...],
        extras: dict[str, bytes],
        nulls: frozenset[str],
        js_numbers: frozenset[str] = frozenset(),
    ):
        self.keys = keys
        self.extras = extras
        self.nulls = nulls
        self.js_numbers = js_numbers
        _ALIVE.add(self)


_ALIVE: Final[weakref.WeakSet[_Layout]] = weakref.WeakSet()


def layouts_alive() -> bool:
    """Whether any decoded struct still carries a layout (encoding then has work to do)."""
    return bool(_ALIVE)


def extra_fields(value: msgspec.Struct) -> dict[str, Any]:
    """The fields of ``value``'s source JSON that pi_trio does not know, decoded, in order."""
    layout = _layout_of(value)
    if layout is None:
        return {}
    return {key: msgspec.json.decode(raw) for key, raw in layout.extras.items()}


def replace_keeping_layout(value: Any, **changes: Any) -> Any:
    """``msgspec.structs.replace`` that keeps ``value``'s layout on the copy."""
    copy = msgspec.structs.replace(value, **changes)
    layout = _layout_of(value)
    if layout is not None:
        copy.__dict__[_LAYOUT_KEY] = layout
    return copy


def _layout_of(value: Any) -> _Layout | None:
    if type(value) not in _BASE_OF:
        return None
    layout: _Layout | None = value.__dict__.get(_LAYOUT_KEY)
    return layout


# --------------------------------------------------------------------------- laid-out types

_LAID: dict[type[msgspec.Struct], type[msgspec.Struct]] = {}
_BASE_OF: dict[type[msgspec.Struct], type[msgspec.Struct]] = {}


def _laid_class(cls: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """The private subclass of ``cls`` whose instances carry a layout."""
    known = _LAID.get(cls)
    if known is not None:
        return known
    config = cls.__struct_config__
    options: dict[str, Any] = {"dict": True, "gc": True}
    if config.tag_field is not None:
        options["tag"] = config.tag
    namespace = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__eq__": _laid_eq,
        "__ne__": _laid_ne,
        "__copy__": _laid_copy,
        "__reduce__": _laid_reduce,
    }
    metaclass: Any = type(cls)
    laid: type[msgspec.Struct] = metaclass(cls.__name__, (cls,), namespace, **options)
    _LAID[cls] = laid
    _BASE_OF[laid] = cls
    return laid


def _fields(value: msgspec.Struct) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__struct_fields__}


def _with_layout(cls: type[msgspec.Struct], fields: dict[str, Any], layout: _Layout) -> Any:
    # StructMeta.__call__ directly: a metaclass's own __call__ (ToolResultMessage's turns
    # details=None into UNSET) must not rewrite values that came from JSON.
    value = msgspec.StructMeta.__call__(_laid_class(cls), **fields)
    value.__dict__[_LAYOUT_KEY] = layout
    return value


def _laid_eq(self: msgspec.Struct, other: object) -> Any:
    base = _BASE_OF[type(self)]
    if not isinstance(other, base):
        return NotImplemented
    return all(getattr(self, name) == getattr(other, name) for name in base.__struct_fields__)


def _laid_ne(self: msgspec.Struct, other: object) -> Any:
    # msgspec's own ``!=`` says a laid-out struct differs from every plain one (another type)
    equal = _laid_eq(self, other)
    return equal if equal is NotImplemented else not equal


def _laid_copy(self: msgspec.Struct) -> Any:
    return _with_layout(_BASE_OF[type(self)], _fields(self), self.__dict__[_LAYOUT_KEY])


def _laid_reduce(self: msgspec.Struct) -> tuple[Any, ...]:
    layout: _Layout = self.__dict__[_LAYOUT_KEY]
    state = (layout.keys, layout.extras, layout.nulls, layout.js_numbers)
    return (_restore, (_BASE_OF[type(self)], _fields(self), state))


def _restore(
    cls: type[msgspec.Struct],
    fields: dict[str, Any],
    state: tuple[tuple[str, ...], dict[str, bytes], frozenset[str], frozenset[str]],
) -> Any:
    return _with_layout(cls, fields, _Layout(*state))


# --------------------------------------------------------------------------- decoding


class _Node:
    """The layout of one struct (or None) and those of the structs inside it."""

    __slots__ = ("children", "layout")

    def __init__(self, layout: _Layout | None, children: dict[str, Any]) -> None:
        self.layout = layout
        self.children = children


def decode_keeping_layout(data: bytes, type_: Any, decode: Callable[[bytes], Any]) -> Any:
    """Decode ``data`` as ``type_`` keeping unknown fields and the key order of every
    object; ``decode`` is the strict decoder of ``type_``."""
    # numbers to keep in JavaScript's spelling are looked for only where the document has some
    spelled = any(spelling in data for spelling in _JS_SPELLINGS)
    stripped, node = _split(msgspec.Raw(data), plan_for(type_), spelled)
    value = decode(msgspec.json.encode(stripped))
    return _attach(value, node)


def _split(raw: msgspec.Raw, plan: Any, spelled: bool) -> tuple[Any, Any]:
    """``raw`` without the fields no struct knows, and the layout tree of its structs."""
    if plan is None:
        return raw, None
    head = memoryview(raw)[:1].tobytes()
    if isinstance(plan, UnionPlan):
        if head == b"[":
            return _split(raw, plan.array, spelled)
        if head != b"{":
            return raw, None
        if plan.single is not None:
            return _split_struct(raw, plan.single, spelled)
        if plan.by_tag:
            members = _RAW_OBJECT.decode(raw)
            chosen = plan.by_tag.get(_tag(members.get(plan.tag_field or "")))
            if chosen is None:
                return raw, None  # the strict decoder names the bad tag
            return _split_struct(raw, chosen, spelled, members)
        return _split(raw, plan.dict_plan, spelled)
    if isinstance(plan, StructPlan):
        return _split_struct(raw, plan, spelled) if head == b"{" else (raw, None)
    if isinstance(plan, ListPlan):
        if head != b"[":
            return raw, None
        items, nodes = [], []
        for item in _RAW_ARRAY.decode(raw):
            stripped, node = _split(item, plan.item, spelled)
            items.append(stripped)
            nodes.append(node)
        return items, (nodes if any(n is not None for n in nodes) else None)
    if isinstance(plan, DictPlan):
        if head != b"{":
            return raw, None
        out, children = {}, {}
        for key, item in _RAW_OBJECT.decode(raw).items():
            out[key], node = _split(item, plan.value, spelled)
            if node is not None:
                children[key] = node
        return out, (_Node(None, children) if children else None)
    return raw, None


def _tag(raw: msgspec.Raw | None) -> str | int | None:
    """The value of a tag field when it is a string or an integer (the kinds msgspec tags
    take); anything else (an array, an object, a float) picks no struct."""
    if raw is None:
        return None
    try:
        value = _RAW_SCALAR.decode(raw)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _split_struct(
    raw: msgspec.Raw,
    plan: StructPlan,
    spelled: bool,
    members: dict[str, msgspec.Raw] | None = None,
) -> tuple[Any, Any]:
    if members is None:
        members = _RAW_OBJECT.decode(raw)
    known: dict[str, Any] = {}
    extras: dict[str, bytes] = {}
    nulls: set[str] = set()
    js_numbers: set[str] = set()
    children: dict[str, Any] = {}
    order = plan.order
    last = -1
    reordered = False
    for key, item in members.items():
        position = order.get(key)
        if position is None:
            extras[key] = bytes(item)
            continue
        if position < last:
            reordered = True
        last = position
        if key == plan.tag_field:
            known[key] = item
            continue
        name, sub = plan.fields[key]
        if sub is None:
            known[key] = item
            if spelled and key in plan.numeric and _js_spelled(item):
                js_numbers.add(key)
        else:
            known[key], node = _split(item, sub, spelled)
            if node is not None:
                children[name] = node
        if key in plan.nullable and bytes(item) == b"null":
            nulls.add(key)
    layout = None
    if extras or nulls or reordered or js_numbers:
        layout = _Layout(tuple(members), extras, frozenset(nulls), frozenset(js_numbers))
    node = _Node(layout, children) if layout is not None or children else None
    return known, node


def _js_spelled(raw: msgspec.Raw) -> bool:
    """Whether ``raw`` may hold a number that JavaScript spells otherwise than msgspec."""
    data = bytes(raw)
    return any(spelling in data for spelling in _JS_SPELLINGS)


def _attach(value: Any, node: Any) -> Any:
    """Give the structs of ``value`` the layouts of ``node`` (bottom-up, in place)."""
    if node is None:
        return value
    if isinstance(node, list):
        if isinstance(value, list):
            for index, (item, sub) in enumerate(zip(value, node, strict=False)):
                if sub is not None:
                    value[index] = _attach(item, sub)
        return value
    if isinstance(value, msgspec.Struct):
        for name, sub in node.children.items():
            item = getattr(value, name)
            attached = _attach(item, sub)
            if attached is not item:
                setattr(value, name, attached)
        if node.layout is not None:
            return _with_layout(type(value), _fields(value), node.layout)
        return value
    if isinstance(value, dict):
        for key, sub in node.children.items():
            if key in value:
                value[key] = _attach(value[key], sub)
    return value


# --------------------------------------------------------------------------- encoding


def apply_layouts(value: Any, encode: Callable[[Any], bytes]) -> Any:
    """``value`` with every laid-out struct replaced by an object in its source layout (the
    structs and lists holding one are copied; ``value`` itself is not changed). Only the
    fields whose type can hold a struct are visited."""
    kind = type(value)
    if kind is list or kind is tuple:
        copied: list[Any] | None = None
        for index, item in enumerate(value):
            if isinstance(item, _CONTAINERS):
                new = apply_layouts(item, encode)
                if new is not item:
                    if copied is None:
                        copied = list(value)
                    copied[index] = new
        return value if copied is None else copied
    if not isinstance(value, msgspec.Struct):
        return value
    changed = {}
    for name in struct_bearing_fields(_BASE_OF.get(kind, kind)):
        item = getattr(value, name)
        if isinstance(item, _CONTAINERS):
            new = apply_layouts(item, encode)
            if new is not item:
                changed[name] = new
    layout = _layout_of(value)
    prepared = msgspec.structs.replace(value, **changed) if changed else value
    if layout is None:
        return prepared
    return _render(prepared, layout, encode)


def _render(value: msgspec.Struct, layout: _Layout, encode: Callable[[Any], bytes]) -> Any:
    current = _RAW_OBJECT.decode(encode(value))  # the canonical keys and values, in order
    for key in layout.js_numbers:
        if key in current:
            current[key] = msgspec.Raw(_STRING_OR_FLOAT.sub(_js_float, bytes(current[key])))
    names = dict(zip(value.__struct_encode_fields__, value.__struct_fields__, strict=True))
    out: list[tuple[str, msgspec.Raw]] = []
    for key in layout.keys:
        if key in layout.extras:
            out.append((key, msgspec.Raw(layout.extras[key])))
        elif key in current:
            out.append((key, current[key]))
        elif key in layout.nulls and getattr(value, names[key]) is None:
            out.append((key, _NULL))
    placed = {key for key, _ in out}
    canonical = list(current)
    for index, key in enumerate(canonical):
        if key in placed:
            continue
        # a field set since decoding: right after its nearest canonical predecessor
        position = 0
        for before in reversed(canonical[:index]):
            if before in placed:
                position = next(i for i, (k, _) in enumerate(out) if k == before) + 1
                break
        out.insert(position, (key, current[key]))
        placed.add(key)
    return dict(out)


def _js_float(match: re.Match[bytes]) -> bytes:
    """A float token of msgspec's output in JavaScript's spelling (strings unchanged)."""
    token = match.group()
    if token[:1] == b'"':
        return token
    number = float(token)
    return js_number_text(number).encode() if needs_js_spelling(number) else token
