"""What attribute lookup found on a class is outside state: the caller may patch a class after the first
call (``C.apply = ...``, a property, ``Base.forward``), so each entry found is an input reached by a
``lookup`` provenance and checked by identity, and a function about to run is checked to hold the same code."""

from __future__ import annotations

import types

from .derivation import derive_attr
from .provenance import Provenance
from .wrapped import WrappedValue, computed

__all__ = ["class_dependency", "code_dependency", "instance_dict", "special_method"]

# Descriptors CPython makes for a class's slots and __dict__/__weakref__: not replaced after the fact.
_SLOT_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType, types.WrapperDescriptorType,
                     types.MethodDescriptorType, types.ClassMethodDescriptorType)
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: built-in and extension types nobody can patch


def instance_dict(obj):
    """``obj.__dict__`` when it is a real dict, else None (no instance attributes, or only slots)."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return d if isinstance(d, dict) else None


def class_dependency(rt, wobj: WrappedValue | None, tp: type, name: str, descr, *, shadowable: bool,
                     after: type | None = None) -> WrappedValue:
    """The program used ``descr``, found under ``name`` along ``tp``'s MRO (a method, property,
    classmethod, ...; NOTFOUND when nothing was found and the lookup failed). The entry found is an input
    (a ``lookup`` provenance); for an outside receiver, so are its type being ``tp`` and, where an instance
    attribute would win (``shadowable``), its ``__dict__`` lacking ``name``. Returns the wrapped entry."""
    if id(tp) in rt.created_classes or not rt.hooks.is_outside_class(tp):
        return computed(descr)
    wdescr = computed(descr)
    if not (tp.__flags__ & _IMMUTABLE_TYPE or isinstance(descr, _SLOT_DESCRIPTORS)):
        wdescr = rt.input(descr, Provenance.lookup(Provenance.class_(tp), name, after))
        if wobj is not None and wobj.provenance.is_outside:
            rt.input(tp, Provenance.type_of(wobj.provenance))
    d = instance_dict(wobj.value) if shadowable and wobj is not None and wobj.provenance.is_outside else None
    if d is not None:
        rt.hooks.on_membership(derive_attr(rt, wobj, "__dict__", d), name, False)
    return wdescr


def code_dependency(rt, wfn: WrappedValue) -> None:
    """An outside function about to be interpreted runs the code it holds now (``f.__code__`` can be
    replaced while the function object stays the same)."""
    if wfn.provenance.is_outside:
        rt.input(wfn.value.__code__, Provenance.attr(wfn.provenance, "__code__"))


def special_method(rt, tp: type, name: str, method) -> WrappedValue:
    """``method``, found on ``tp`` by a protocol (an operator, ``in``, ``[]``, ``iter``, ``with``, creating an
    instance): a Python function there is the class's entry like any method, an input."""
    if type(method) is not types.FunctionType:
        return computed(method)
    return class_dependency(rt, None, tp, name, method, shadowable=False)
