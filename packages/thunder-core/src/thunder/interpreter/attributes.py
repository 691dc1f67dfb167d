"""Attribute protocol with provenance: reads, method loads, super() lookups, writes, deletes.

Python-level __getattribute__/__getattr__, properties and other Python descriptors are
interpreted, so provenance flows through their code; C-level ones run natively.
"""

from __future__ import annotations

import types

from .calls import bind_method, call_value
from .class_lookups import class_dependency, instance_dict
from .derivation import derive_attr
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed, constant

__all__ = ["load_attr", "load_method", "load_super_attr", "store_attr", "delete_attr"]

_METHOD_TYPES = (types.FunctionType, types.MethodDescriptorType)
def _is_data_descriptor(dtp) -> bool:
    return lookup_type(dtp, "__set__") is not NOTFOUND or lookup_type(dtp, "__delete__") is not NOTFOUND


def _descriptor_get(rt, wobj, name, descr, get, owner) -> WrappedValue:
    if type(descr) is property and descr.fget is not None:
        return call_value(computed(descr.fget), [wobj], {})
    if type(get) is types.FunctionType:
        return call_value(computed(get), [computed(descr), wobj, computed(owner)], {})
    return derive_attr(rt, wobj, name, get(descr, wobj.value, owner))


def _generic_getattr(rt, wobj, name, fallback: bool = False) -> WrappedValue:
    """object.__getattribute__ with provenance. ``fallback``: a Python ``__getattr__`` handles a failure (its
    own reads are then what is checked)."""
    obj = wobj.value
    tp = type(obj)
    descr = lookup_type(tp, name)
    get = NOTFOUND
    if descr is not NOTFOUND:
        dtp = type(descr)
        get = lookup_type(dtp, "__get__")
        if get is not NOTFOUND and dtp is not types.FunctionType and _is_data_descriptor(dtp):
            class_dependency(rt, wobj, tp, name, descr, shadowable=False)
            return _descriptor_get(rt, wobj, name, descr, get, tp)
    d = instance_dict(obj)
    if d is not None and name in d:
        return derive_attr(rt, wobj, name, d[name])
    if descr is not NOTFOUND:
        if type(descr) is types.FunctionType:
            class_dependency(rt, wobj, tp, name, descr, shadowable=True)
            return bind_method(wobj, descr)  # made now from checked parts: not itself an input
        if get is not NOTFOUND:
            class_dependency(rt, wobj, tp, name, descr, shadowable=True)
            return _descriptor_get(rt, wobj, name, descr, get, tp)
        return derive_attr(rt, wobj, name, descr)
    if not fallback:
        class_dependency(rt, wobj, tp, name, NOTFOUND, shadowable=True)  # a later class or instance attribute wins
    raise AttributeError(f"'{tp.__name__}' object has no attribute '{name}'", name=name, obj=obj)


def load_attr(rt, wobj: WrappedValue, name: str) -> WrappedValue:
    try:
        return _load_attr(rt, wobj, name)
    except AttributeError:
        if wobj.provenance.is_outside:
            rt.hooks.on_missing_attribute(wobj, name)  # hasattr(o, "d") is False: the program relied on it
        raise


def _load_attr(rt, wobj: WrappedValue, name: str) -> WrappedValue:
    obj = wobj.value
    tp = type(obj)
    if tp is super:
        return load_super_attr(rt, obj.__thisclass__, wobj.bound_self or computed(obj.__self__), name, False)[1]
    getattribute = lookup_type(tp, "__getattribute__")
    if getattribute is not object.__getattribute__:
        if type(getattribute) is types.FunctionType:
            return call_value(computed(getattribute), [wobj, constant(name)], {})
        # C-level lookup (classes, modules, ...): run natively, keep provenance.
        return derive_attr(rt, wobj, name, getattr(obj, name))  # a missing one: load_attr tells the hooks
    getattr_hook = lookup_type(tp, "__getattr__")
    if getattr_hook is NOTFOUND:
        return _generic_getattr(rt, wobj, name)
    try:
        return _generic_getattr(rt, wobj, name, fallback=type(getattr_hook) is types.FunctionType)
    except AttributeError:
        pass  # leave the except block first so the fallback is not chained to this error
    if type(getattr_hook) is types.FunctionType:
        return call_value(computed(getattr_hook), [wobj, constant(name)], {})
    return derive_attr(rt, wobj, name, getattr_hook(obj, name))


def load_method(rt, wobj: WrappedValue, name: str):
    """Returns (unbound method, self) like LOAD_METHOD, or (None, attribute)."""
    obj = wobj.value
    tp = type(obj)
    if tp is super:
        return load_super_attr(rt, obj.__thisclass__, wobj.bound_self or computed(obj.__self__), name, True)
    if lookup_type(tp, "__getattribute__") is object.__getattribute__:
        descr = lookup_type(tp, name)
        if type(descr) in _METHOD_TYPES:
            d = instance_dict(obj)
            if d is None or name not in d:
                seen = rt.hooks.attribute_value(obj, name, descr)
                if seen is descr:
                    return class_dependency(rt, wobj, tp, name, descr, shadowable=True), wobj
                return None, WrappedValue(seen, computed(None).provenance, wobj)
    return None, load_attr(rt, wobj, name)


def load_super_attr(rt, start_cls, wself: WrappedValue, name: str, method: bool):
    """``super(start_cls, self).name``; returns (method, self) or (None, value) like load_method."""
    obj = wself.value
    starttype = obj if isinstance(obj, type) and issubclass(obj, start_cls) else type(obj)
    mro = starttype.__mro__
    try:
        i = mro.index(start_cls) + 1
    except ValueError:
        i = len(mro)
    if name != "__class__":
        for klass in mro[i:]:
            d = klass.__dict__
            if name not in d:
                continue
            descr = d[name]
            dtp = type(descr)
            instance = None if obj is starttype else obj
            class_dependency(rt, wself if instance is not None else None, starttype, name, descr, shadowable=False,
                             after=start_cls)
            if dtp is types.FunctionType and instance is not None:
                if method:
                    return computed(descr), wself
                return None, WrappedValue(types.MethodType(descr, obj), computed(None).provenance, wself)
            if dtp is property and instance is not None and descr.fget is not None:
                return None, call_value(computed(descr.fget), [wself], {})
            get = lookup_type(dtp, "__get__")
            if get is NOTFOUND:
                return None, computed(descr)
            if type(get) is types.FunctionType:
                return None, call_value(computed(get), [computed(descr), computed(instance), computed(starttype)], {})
            value = get(descr, instance, starttype)
            w = computed(value)
            if getattr(value, "__self__", None) is obj:
                w.bound_self = wself
            return None, w
    # Not found (or __class__): let super raise / answer natively.
    return None, computed(getattr(super(start_cls, obj), name))


def store_attr(rt, wobj: WrappedValue, name: str, wvalue: WrappedValue) -> None:
    if wobj.provenance.is_outside:
        rt.hooks.on_store("attr", wobj, name, wvalue)
        return
    obj = wobj.value
    tp = type(obj)
    setattr_hook = lookup_type(tp, "__setattr__")
    if type(setattr_hook) is types.FunctionType:
        call_value(computed(setattr_hook), [wobj, constant(name), wvalue], {})
        return
    if setattr_hook is object.__setattr__:
        descr = lookup_type(tp, name)
        if descr is not NOTFOUND:
            if type(descr) is property and descr.fset is not None:
                call_value(computed(descr.fset), [wobj, wvalue], {})
                return
            set_ = lookup_type(type(descr), "__set__")
            if type(set_) is types.FunctionType:
                call_value(computed(set_), [computed(descr), wobj, wvalue], {})
                return
    rt.hooks.set_attribute(obj, name, wvalue.value)


def delete_attr(rt, wobj: WrappedValue, name: str) -> None:
    if wobj.provenance.is_outside:
        rt.hooks.on_store("delete_attr", wobj, name, None)
        return
    obj = wobj.value
    tp = type(obj)
    delattr_hook = lookup_type(tp, "__delattr__")
    if type(delattr_hook) is types.FunctionType:
        call_value(computed(delattr_hook), [wobj, constant(name)], {})
        return
    if delattr_hook is object.__delattr__:
        descr = lookup_type(tp, name)
        if type(descr) is property and descr.fdel is not None:
            call_value(computed(descr.fdel), [wobj], {})
            return
        if descr is not NOTFOUND:
            delete = lookup_type(type(descr), "__delete__")
            if type(delete) is types.FunctionType:
                call_value(computed(delete), [computed(descr), wobj], {})
                return
    delattr(obj, name)


__all__ += ["bind_method"]
