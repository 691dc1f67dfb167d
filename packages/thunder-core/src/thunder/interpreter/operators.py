"""Operator protocols (binary, in-place, comparison, unary, containment, subscripts).

When a relevant dunder is a Python function it is called through the normal call path (so hooks
apply), following CPython's NotImplemented / reflected-operand rules; otherwise the operator
runs natively, except a native in-place dunder (``list.__iadd__``), which mutates its operand and is
called through the call path so hooks see the mutation.
"""

from __future__ import annotations

import operator
import types

from .calls import bind_method, call_value
from .class_lookups import special_method
from .derivation import derive_item
from .hashed_keys import hashed
from .protocols import index_of
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed

__all__ = ["binary_op", "compare_op", "unary_op", "contains_op", "get_item", "set_item", "del_item", "OPARG_OF_OPERATOR"]

# BINARY_OP oparg -> (symbol, method, reflected method, in-place method, native operator).
_BINARY = [
    ("+", "add", operator.add, operator.iadd),
    ("&", "and", operator.and_, operator.iand),
    ("//", "floordiv", operator.floordiv, operator.ifloordiv),
    ("<<", "lshift", operator.lshift, operator.ilshift),
    ("@", "matmul", operator.matmul, operator.imatmul),
    ("*", "mul", operator.mul, operator.imul),
    ("%", "mod", operator.mod, operator.imod),
    ("|", "or", operator.or_, operator.ior),
    ("**", "pow", operator.pow, operator.ipow),
    (">>", "rshift", operator.rshift, operator.irshift),
    ("-", "sub", operator.sub, operator.isub),
    ("/", "truediv", operator.truediv, operator.itruediv),
    ("^", "xor", operator.xor, operator.ixor),
]
BINARY_OPS = {}
OPARG_OF_OPERATOR = {}  # operator.add -> the oparg of ``+``, operator.iadd -> of ``+=``: the same operation
for _i, (_sym, _name, _native, _inative) in enumerate(_BINARY):
    BINARY_OPS[_i] = (_sym, f"__{_name}__", f"__r{_name}__", None, _native)
    BINARY_OPS[_i + 13] = (_sym + "=", f"__{_name}__", f"__r{_name}__", f"__i{_name}__", _inative)
    OPARG_OF_OPERATOR[_native], OPARG_OF_OPERATOR[_inative] = _i, _i + 13

_SEQUENCES = (list, tuple, str, bytes, range)

_COMPARE = {
    "<": ("__lt__", "__gt__", operator.lt),
    "<=": ("__le__", "__ge__", operator.le),
    "==": ("__eq__", "__eq__", operator.eq),
    "!=": ("__ne__", "__ne__", operator.ne),
    ">": ("__gt__", "__lt__", operator.gt),
    ">=": ("__ge__", "__le__", operator.ge),
}


def _call_dunder(rt, method, name: str, wself: WrappedValue, wother: WrappedValue) -> WrappedValue:
    if type(method) is types.FunctionType:
        return call_value(special_method(rt, type(wself.value), name, method), [wself, wother], {})
    if method is object.__ne__:
        # object.__ne__ inverts __eq__; do it here so a Python __eq__ is interpreted.
        eq = lookup_type(type(wself.value), "__eq__")
        if type(eq) is types.FunctionType:
            result = call_value(special_method(rt, type(wself.value), "__eq__", eq), [wself, wother], {})
            if result.value is NotImplemented:
                return result
            return computed(not result.value)
    get = lookup_type(type(method), "__get__")
    if get is not NOTFOUND:
        return computed(get(method, wself.value, type(wself.value))(wother.value))
    return computed(method(wself.value, wother.value))


def _any_python(*methods) -> bool:
    return any(type(m) is types.FunctionType for m in methods)


def binary_op(rt, oparg: int, wl: WrappedValue, wr: WrappedValue) -> WrappedValue:
    symbol, name, rname, iname, native = BINARY_OPS[oparg]
    left, right = wl.value, wr.value
    lt, rt_ = type(left), type(right)
    if lt is str and name == "__mod__":
        from .text import percent_format  # text reads items through this module

        return percent_format(rt, wl, wr)
    imethod = lookup_type(lt, iname) if iname else NOTFOUND
    lmethod = lookup_type(lt, name)
    rmethod = lookup_type(rt_, rname) if rt_ is not lt else NOTFOUND
    if not _any_python(imethod, lmethod, rmethod) and not (name == "__ne__"):
        if imethod is not NOTFOUND:
            # ``lst += more`` mutates ``lst``: a method call the hooks see (lookasides, writes to outside state)
            result = call_value(bind_method(wl, imethod), [wr], {})
            if result.value is not NotImplemented:
                return result
        return computed(native(left, right))
    if imethod is not NOTFOUND:
        result = _call_dunder(rt, imethod, iname, wl, wr)
        if result.value is not NotImplemented:
            return result
    # A type standing in for a subclass of the left operand's (``stands_for``: a symbolic torch.Size) gets its
    # reflected method first, as CPython gives a subclass's
    stands_in = issubclass(rt_, lt) or lt in getattr(rt_, "stands_for", ())
    if rmethod is not NOTFOUND and stands_in and rmethod is not lookup_type(lt, rname):
        result = _call_dunder(rt, rmethod, rname, wr, wl)
        if result.value is not NotImplemented:
            return result
        rmethod = NOTFOUND
    if lmethod is not NOTFOUND:
        result = _call_dunder(rt, lmethod, name, wl, wr)
        if result.value is not NotImplemented:
            return result
    if rmethod is not NOTFOUND:
        result = _call_dunder(rt, rmethod, rname, wr, wl)
        if result.value is not NotImplemented:
            return result
    if symbol == "**" and iname is None:
        raise TypeError(f"unsupported operand type(s) for ** or pow(): '{lt.__name__}' and '{rt_.__name__}'")
    raise TypeError(f"unsupported operand type(s) for {symbol}: '{lt.__name__}' and '{rt_.__name__}'")


def compare_op(rt, op: str, wl: WrappedValue, wr: WrappedValue) -> WrappedValue:
    name, rname, native = _COMPARE[op]
    left, right = wl.value, wr.value
    lt, rt_ = type(left), type(right)
    lmethod = lookup_type(lt, name)
    rmethod = lookup_type(rt_, rname)
    python_eq = op == "!=" and (type(lookup_type(lt, "__eq__")) is types.FunctionType
                                or type(lookup_type(rt_, "__eq__")) is types.FunctionType)
    if not _any_python(lmethod, rmethod) and not python_eq:
        return computed(native(left, right))
    checked_reverse = False
    if lt is not rt_ and issubclass(rt_, lt) and rmethod is not NOTFOUND:
        checked_reverse = True
        result = _call_dunder(rt, rmethod, rname, wr, wl)
        if result.value is not NotImplemented:
            return result
    if lmethod is not NOTFOUND:
        result = _call_dunder(rt, lmethod, name, wl, wr)
        if result.value is not NotImplemented:
            return result
    if not checked_reverse and rmethod is not NOTFOUND:
        result = _call_dunder(rt, rmethod, rname, wr, wl)
        if result.value is not NotImplemented:
            return result
    if op == "==":
        return computed(left is right)
    if op == "!=":
        return computed(left is not right)
    raise TypeError(f"'{op}' not supported between instances of '{lt.__name__}' and '{rt_.__name__}'")


def unary_op(rt, name: str, native, wv: WrappedValue) -> WrappedValue:
    method = lookup_type(type(wv.value), name)
    if type(method) is types.FunctionType:
        return call_value(special_method(rt, type(wv.value), name, method), [wv], {})
    return computed(native(wv.value))


def contains_op(rt, witem: WrappedValue, wcontainer: WrappedValue) -> bool:
    method = lookup_type(type(wcontainer.value), "__contains__")
    if type(method) is types.FunctionType:
        wmethod = special_method(rt, type(wcontainer.value), "__contains__", method)
        return bool(call_value(wmethod, [wcontainer, witem], {}).value)
    container = wcontainer.value
    if isinstance(container, (dict, set, frozenset)):
        key = hashed(rt, witem.value)
        present = key in container
        if wcontainer.provenance.is_outside:
            rt.hooks.on_membership(wcontainer, key, present, witem)
        return present
    present = witem.value in container
    if type(container) in (list, tuple) and wcontainer.provenance.is_outside:
        rt.hooks.on_membership(wcontainer, witem.value, present, witem)  # the answer depends on every item
    return present


def get_item(rt, wcontainer: WrappedValue, wkey: WrappedValue) -> WrappedValue:
    container, key = wcontainer.value, wkey.value
    if isinstance(container, dict):
        key = hashed(rt, key)
    elif type(key) not in (int, slice) and isinstance(container, _SEQUENCES):
        key = index_of(rt, wkey)  # an index with a Python __index__, read through the interpreter
    if not isinstance(container, type):
        method = lookup_type(type(container), "__getitem__")
        if type(method) is types.FunctionType:
            return call_value(special_method(rt, type(container), "__getitem__", method), [wcontainer, wkey], {})
    try:
        value = container[key]
    except KeyError:
        if type(container) is dict and wcontainer.provenance.is_outside:
            rt.hooks.on_membership(wcontainer, key, False, wkey)  # ``try: d[k] except KeyError``: the absence counts
        raise
    if isinstance(container, (list, tuple, dict)):
        if type(key) is slice:
            items = wcontainer.items
            if isinstance(items, (list, tuple)) and len(items) == len(container):
                sliced = tuple(items[key])
                if len(sliced) == len(value) and all(w.value is v for w, v in zip(sliced, value)):
                    return computed(value, items=sliced)
            if not wcontainer.provenance.is_outside:
                return computed(value)
        return derive_item(rt, wcontainer, key, value)
    return computed(value)


def set_item(rt, wcontainer: WrappedValue, wkey: WrappedValue, wvalue: WrappedValue) -> None:
    if isinstance(wcontainer.value, dict):
        wkey = WrappedValue(hashed(rt, wkey.value), wkey.provenance)
    if wcontainer.provenance.is_outside:
        rt.hooks.on_store("item", wcontainer, wkey.value, wvalue)
        return
    container = wcontainer.value
    method = lookup_type(type(container), "__setitem__")
    if type(method) is types.FunctionType:
        call_value(special_method(rt, type(container), "__setitem__", method), [wcontainer, wkey, wvalue], {})
        return
    container[wkey.value] = wvalue.value
    items = wcontainer.items
    if type(items) is dict:
        items[wkey.value] = wvalue
    elif type(items) is list and type(wkey.value) is int:
        try:
            items[wkey.value] = wvalue
        except IndexError:
            pass


def del_item(rt, wcontainer: WrappedValue, wkey: WrappedValue) -> None:
    if wcontainer.provenance.is_outside:
        rt.hooks.on_store("delete_item", wcontainer, wkey.value, None)
        return
    container = wcontainer.value
    method = lookup_type(type(container), "__delitem__")
    if type(method) is types.FunctionType:
        call_value(special_method(rt, type(container), "__delitem__", method), [wcontainer, wkey], {})
        return
    del container[wkey.value]
