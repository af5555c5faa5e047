"""Where structs can occur in a wire type: the plans that guide lossless decoding.

`plan_for` turns a type (a struct, a union of tagged structs, a list of messages…) into a
tree that says, for each JSON object the type can hold, which struct it maps to and which
of its fields can hold more structs; positions that can hold no struct plan to ``None``.
"""

from __future__ import annotations

import contextlib
from typing import Any

import msgspec.inspect as mi

__all__ = ["DictPlan", "ListPlan", "StructPlan", "UnionPlan", "plan_for", "struct_bearing_fields"]


class StructPlan:
    __slots__ = ("canonical", "cls", "fields", "nullable", "numeric", "order", "tag_field")

    def __init__(self, info: mi.StructType) -> None:
        self.cls = info.cls
        self.tag_field = info.tag_field
        # encode name -> (attribute name, plan of the value or None when it holds no struct)
        self.fields: dict[str, tuple[str, Any]] = {}
        self.nullable: set[str] = set()
        # fields that can hold a float outside a struct (free-form JSON, a typed float)
        self.numeric = frozenset(
            field.encode_name for field in info.fields if _may_hold_float(field.type, 0)
        )
        names = [] if info.tag_field is None else [info.tag_field]
        for field in info.fields:
            names.append(field.encode_name)
            self.fields[field.encode_name] = (field.name, None)
            if field.default is None:
                self.nullable.add(field.encode_name)
        self.canonical = tuple(names)
        self.order = {name: index for index, name in enumerate(names)}  # canonical positions


class UnionPlan:
    __slots__ = ("array", "by_tag", "dict_plan", "single", "tag_field")

    def __init__(self) -> None:
        self.single: StructPlan | None = None
        self.by_tag: dict[Any, StructPlan] = {}
        self.tag_field: str | None = None
        self.array: Any = None
        self.dict_plan: Any = None


class ListPlan:
    __slots__ = ("item",)

    def __init__(self, item: Any) -> None:
        self.item = item


class DictPlan:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


_PLANS: dict[Any, Any] = {}


def plan_for(type_: Any) -> Any:
    try:
        return _PLANS[type_]
    except (KeyError, TypeError):
        pass
    plan = _build(mi.type_info(type_), {})
    with contextlib.suppress(TypeError):  # an unhashable type expression is planned each time
        _PLANS[type_] = plan
    return plan


def _build(info: Any, seen: dict[type, StructPlan]) -> Any:
    """The plan of ``info``, or None when no struct can occur inside it."""
    if isinstance(info, mi.StructType):
        if info.cls in seen:
            return seen[info.cls]
        plan = seen[info.cls] = StructPlan(info)
        for field in info.fields:
            plan.fields[field.encode_name] = (field.name, _build(field.type, seen))
        return plan
    if isinstance(info, mi.UnionType):
        union = UnionPlan()
        for member in info.types:
            sub = _build(member, seen)
            if isinstance(sub, StructPlan):
                if union.single is None and not union.by_tag:
                    union.single = sub
                if sub.tag_field is not None:
                    union.tag_field = sub.tag_field
                    union.by_tag[sub.cls.__struct_config__.tag] = sub
            elif isinstance(sub, ListPlan):
                union.array = sub
            elif isinstance(sub, DictPlan):
                union.dict_plan = sub
        if union.by_tag:
            union.single = None if len(union.by_tag) > 1 else union.single
        if union.single is None and not union.by_tag and union.array is None:
            return union.dict_plan
        return union
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        item = _build(info.item_type, seen)
        return None if item is None else ListPlan(item)
    if isinstance(info, mi.DictType):
        value = _build(info.value_type, seen)
        return None if value is None else DictPlan(value)
    return None


_BEARING: dict[type, tuple[str, ...]] = {}


def struct_bearing_fields(cls: type) -> tuple[str, ...]:
    """The attributes of struct type ``cls`` whose values can hold a struct (a struct, a
    list of structs, or ``Any``), in field order."""
    known = _BEARING.get(cls)
    if known is None:
        info = mi.type_info(cls)
        fields = info.fields if isinstance(info, mi.StructType) else ()
        known = _BEARING[cls] = tuple(f.name for f in fields if _may_hold_struct(f.type, 0))
    return known


def _may_hold_struct(info: Any, depth: int) -> bool:
    if depth > 8:
        return True
    if isinstance(info, mi.StructType | mi.AnyType | mi.CustomType):
        return True
    if isinstance(info, mi.UnionType):
        return any(_may_hold_struct(member, depth + 1) for member in info.types)
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return _may_hold_struct(info.item_type, depth + 1)
    if isinstance(info, mi.TupleType):
        return any(_may_hold_struct(item, depth + 1) for item in info.item_types)
    return False


def _may_hold_float(info: Any, depth: int) -> bool:
    """Whether a float can occur in ``info`` outside any struct it holds."""
    if depth > 8 or isinstance(info, mi.FloatType | mi.AnyType | mi.CustomType):
        return True
    if isinstance(info, mi.UnionType):
        return any(_may_hold_float(member, depth + 1) for member in info.types)
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return _may_hold_float(info.item_type, depth + 1)
    if isinstance(info, mi.DictType):
        return _may_hold_float(info.value_type, depth + 1)
    if isinstance(info, mi.TupleType):
        return any(_may_hold_float(item, depth + 1) for item in info.item_types)
    return False
