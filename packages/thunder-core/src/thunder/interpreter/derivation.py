"""Provenance derivation for reads (attributes, items) from wrapped values."""

from __future__ import annotations

import types

from .provenance import Provenance
from .wrapped import WrappedValue, computed

__all__ = ["derive_attr", "derive_item", "ViewSource"]


class ViewSource:
    """Marks a dict view (keys/values/items) made from a wrapped dict, for iteration provenance."""

    __slots__ = ("kind", "wdict")

    def __init__(self, kind: str, wdict: WrappedValue):
        self.kind = kind
        self.wdict = wdict


def _remember_receiver(w: WrappedValue, wobj: WrappedValue) -> WrappedValue:
    value = w.value
    if type(value) in (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType) \
            and getattr(value, "__self__", None) is wobj.value:
        w.bound_self = wobj
    return w


def derive_attr(rt, wobj: WrappedValue, name: str, value) -> WrappedValue:
    """Wrap ``value`` read as attribute ``name`` of ``wobj``."""
    value = rt.hooks.attribute_value(wobj.value, name, value)
    if wobj.provenance.is_outside:
        w = rt.input(value, Provenance.attr(wobj.provenance, name))
    else:
        w = computed(value)
    return _remember_receiver(w, wobj)


def derive_item(rt, wobj: WrappedValue, key, value) -> WrappedValue:
    """Wrap ``value`` read as item ``key`` of ``wobj`` (a list/tuple/dict)."""
    items = wobj.items
    if items is not None and not isinstance(items, ViewSource):
        try:
            w = items[key]
        except (IndexError, KeyError, TypeError):
            w = None
        if isinstance(w, WrappedValue) and w.value is value:
            return w
    if wobj.provenance.is_outside:
        return rt.input(value, Provenance.item(wobj.provenance, key))
    return computed(value)
