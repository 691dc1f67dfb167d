"""Static type-attribute lookup helpers (no user code runs during lookup)."""

from __future__ import annotations

import types

__all__ = ["NOTFOUND", "lookup_type", "is_python_function", "function_str"]

NOTFOUND = object()


def lookup_type(tp: type, name: str):
    """``name`` looked up along ``tp.__mro__`` without invoking descriptors (like _PyType_Lookup)."""
    for klass in tp.__mro__:
        d = klass.__dict__
        if name in d:
            return d[name]
    return NOTFOUND


def is_python_function(obj) -> bool:
    return type(obj) is types.FunctionType


def function_str(fn) -> str:
    """Like CPython's _PyObject_FunctionStr, used in call error messages."""
    qualname = getattr(fn, "__qualname__", None)
    if qualname is None:
        return str(fn)
    module = getattr(fn, "__module__", None)
    if module is not None and module != "builtins":
        return f"{module}.{qualname}()"
    return f"{qualname}()"
