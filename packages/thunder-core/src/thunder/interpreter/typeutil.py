"""Static type-attribute lookup helpers (no user code runs during lookup)."""

from __future__ import annotations

import types

__all__ = ["NOTFOUND", "lookup_type", "is_python_function", "function_str", "hashable"]

NOTFOUND = object()


def lookup_type(tp: type, name: str, after: type | None = None):
    """``name`` looked up along ``tp.__mro__`` without invoking descriptors (like _PyType_Lookup);
    ``after``: only the classes after that one in the MRO (what ``super(after, obj)`` searches)."""
    mro = tp.__mro__
    if after is not None:
        mro = mro[mro.index(after) + 1:] if after in mro else ()
    for klass in mro:
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


def hashable(value) -> bool:
    """Whether ``value`` can key a table (a callable with a mutable ``__eq__`` cannot)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True
