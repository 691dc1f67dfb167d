"""Builtins that call one Python dunder of their argument (``len``, ``bool``, ``int``, ``float``, ``hash``, ``abs``,
``round``, ``operator.index``) and the truth test of ``if obj:``, interpreted when that dunder is Python code.

Natively, ``len(cache)`` would call the class's ``__len__`` behind the interpreter's back: what it reads would
be baked into the trace unchecked, and a later call with a longer cache would take the first call's branch. Only
dunders the interpreter would interpret itself are called through it (thunder's own proxies answer natively), with
CPython's checks of what they return.
"""

from __future__ import annotations

import operator
import types

from .calls import call_value, native_call
from .class_lookups import special_method
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed

__all__ = ["truth", "index_of", "python_dunder", "call_dunder", "PROTOCOL_LOOKASIDES"]


def python_dunder(rt, tp, name):
    """The Python method ``name`` of ``tp`` when the interpreter would interpret it; else None."""
    method = lookup_type(tp, name)
    if type(method) is types.FunctionType and rt.hooks.should_interpret(method):
        return method
    return None


def call_dunder(rt, w, name, method, *wargs) -> WrappedValue:
    return call_value(special_method(rt, type(w.value), name, method), [w, *wargs], {})


def _length(rt, w, method) -> int:
    n = call_dunder(rt, w, "__len__", method).value
    n = operator.index(n)  # CPython's TypeError for a non-integer
    if n < 0:
        raise ValueError("__len__() should return >= 0")
    return n


# types whose truth is native (exactly these types, not subclasses): every conditional jump asks, so they skip the
# dunder lookups
_NATIVE_TRUTH = frozenset({bool, int, float, str, type(None), tuple, list, dict, set, frozenset})


def truth(rt, w: WrappedValue, native=None) -> bool:
    """``bool(v)`` as ``if v:`` asks it; ``native``: how to ask when no Python dunder answers."""
    tp = type(w.value)
    if tp in _NATIVE_TRUTH:
        return bool(w.value)
    method = python_dunder(rt, tp, "__bool__")
    if method is not None:
        result = call_dunder(rt, w, "__bool__", method).value
        if type(result) is not bool:
            raise TypeError(f"__bool__ should return bool, returned {type(result).__name__}")
        return result
    if lookup_type(tp, "__bool__") is NOTFOUND:
        method = python_dunder(rt, tp, "__len__")
        if method is not None:
            return _length(rt, w, method) != 0
    return native() if native is not None else bool(w.value)


def index_of(rt, w: WrappedValue):
    """``operator.index(v)``; the value itself when its ``__index__`` is not Python code."""
    method = python_dunder(rt, type(w.value), "__index__")
    if method is None:
        return w.value
    result = call_dunder(rt, w, "__index__", method).value
    if not isinstance(result, int):
        raise TypeError(f"__index__ returned non-int (type {type(result).__name__})")
    return result


def _one_argument(fn, impl):
    def lookaside(rt, wargs, wkwargs):
        if wkwargs or len(wargs) != 1:
            return native_call(fn, wargs, wkwargs)
        return impl(rt, wargs[0], lambda: native_call(fn, wargs, wkwargs))

    return lookaside


def _len(rt, w, native):
    method = python_dunder(rt, type(w.value), "__len__")
    return computed(_length(rt, w, method)) if method is not None else native()


def _bool(rt, w, native):
    return computed(truth(rt, w, lambda: native().value))


def _converter(name, result_type, *fallbacks):
    """``int(v)`` / ``float(v)``: the first of ``name`` and ``fallbacks`` the type defines, if it is Python."""

    def impl(rt, w, native):
        tp = type(w.value)
        for dunder in (name, *fallbacks):
            found = lookup_type(tp, dunder)
            if found is NOTFOUND:
                continue
            method = python_dunder(rt, tp, dunder)
            if method is None:
                return native()
            result = call_dunder(rt, w, dunder, method).value
            if not isinstance(result, int if dunder == "__index__" else result_type):
                raise TypeError(f"{dunder} returned non-{result_type.__name__} (type {type(result).__name__})")
            return computed(result_type(result))
        return native()

    return impl


def _hash(rt, w, native):
    method = python_dunder(rt, type(w.value), "__hash__")
    if method is None:
        return native()
    result = call_dunder(rt, w, "__hash__", method).value
    if not isinstance(result, int):
        raise TypeError("__hash__ method should return an integer")
    return computed(hash(result))  # CPython reduces it as it hashes an int (-1 becomes -2)


def _abs(rt, w, native):
    method = python_dunder(rt, type(w.value), "__abs__")
    return call_dunder(rt, w, "__abs__", method) if method is not None else native()


def _index(rt, w, native):
    method = python_dunder(rt, type(w.value), "__index__")
    return computed(index_of(rt, w)) if method is not None else native()


def _round(rt, wargs, wkwargs):
    if not wargs or len(wargs) > 2 or set(wkwargs) - {"ndigits"}:
        return native_call(round, wargs, wkwargs)
    method = python_dunder(rt, type(wargs[0].value), "__round__")
    if method is None:
        return native_call(round, wargs, wkwargs)
    return call_dunder(rt, wargs[0], "__round__", method, *wargs[1:], *wkwargs.values())


def _range(rt, wargs, wkwargs):
    """``range(n)`` of an object with a Python ``__index__``: its value, read through the interpreter."""
    if wkwargs or not any(python_dunder(rt, type(w.value), "__index__") for w in wargs):
        return native_call(range, wargs, wkwargs)
    return native_call(range, [computed(index_of(rt, w)) for w in wargs], {})


PROTOCOL_LOOKASIDES = {
    len: _one_argument(len, _len),
    bool: _one_argument(bool, _bool),
    int: _one_argument(int, _converter("__int__", int, "__index__", "__trunc__")),
    float: _one_argument(float, _converter("__float__", float, "__index__")),
    hash: _one_argument(hash, _hash),
    abs: _one_argument(abs, _abs),
    operator.index: _one_argument(operator.index, _index),
    round: _round,
    range: _range,
}
