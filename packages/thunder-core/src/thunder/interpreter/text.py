"""``str``, ``repr``, ``format`` and f-strings of objects whose text methods are Python code, interpreted.

Run natively, ``f"{cfg}"`` would call the class's ``__repr__`` behind the interpreter's back: the attributes it
reads would be baked into the trace unchecked, and a later call with changed attributes would print the first
call's text. Only the dunders the interpreter would interpret itself are called through it; the rest (builtins,
thunder's own proxies) run natively as before.
"""

from __future__ import annotations

import operator

from .calls import call_value, native_call
from .consumers import elements
from .operators import get_item
from .protocols import call_dunder, python_dunder
from .typeutil import lookup_type
from .wrapped import WrappedValue, computed

__all__ = ["text_of", "percent_format", "TEXT_LOOKASIDES"]


def _call_text_dunder(rt, w, name, method, *wargs) -> WrappedValue:
    result = call_dunder(rt, w, name, method, *wargs)
    if not isinstance(result.value, str):
        raise TypeError(f"{name} returned non-string (type {type(result.value).__name__})")
    return result


def text_of(rt, w: WrappedValue, kind: str, spec: str = "") -> WrappedValue:
    """``str(v)`` (kind "str"), ``repr(v)`` ("repr") or ``format(v, spec)`` ("format") of wrapped ``v``."""
    tp = type(w.value)
    if kind == "format":
        method = python_dunder(rt, tp, "__format__")
        if method is not None:
            return _call_text_dunder(rt, w, "__format__", method, computed(spec))
        if lookup_type(tp, "__format__") is object.__format__ and spec == "":
            return text_of(rt, w, "str")  # object.__format__(v, "") is str(v)
        return native_call(format, [w, computed(spec)], {})
    if kind == "str":
        method = python_dunder(rt, tp, "__str__")
        if method is not None:
            return _call_text_dunder(rt, w, "__str__", method)
        if lookup_type(tp, "__str__") is not object.__str__:
            return native_call(str, [w], {})
        kind = "repr"  # object.__str__ is repr
    method = python_dunder(rt, tp, "__repr__")
    if method is not None:
        return _call_text_dunder(rt, w, "__repr__", method)
    if tp in _CONTAINERS and _holds_python_text(rt, w.value, set()):
        return computed(_CONTAINERS[tp](rt, w))
    return native_call(repr, [w], {})


def _holds_python_text(rt, value, seen) -> bool:
    """A list, tuple or dict holding (at any depth) an object whose ``__repr__`` is interpreted; a container
    holding itself is left to CPython, which prints it as ``[...]``."""
    tp = type(value)
    if tp not in _CONTAINERS:
        return python_dunder(rt, tp, "__repr__") is not None
    if id(value) in seen:
        return False
    seen.add(id(value))
    contained = (*value.keys(), *value.values()) if tp is dict else value
    return any(_holds_python_text(rt, v, seen) for v in contained)


def _element_texts(rt, w):
    # read through the interpreter's iteration: an outside list's length is checked like its elements
    return [text_of(rt, e, "repr").value for e in elements(rt, w)]


def _list_text(rt, w) -> str:
    return "[" + ", ".join(_element_texts(rt, w)) + "]"


def _tuple_text(rt, w) -> str:
    parts = _element_texts(rt, w)
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _dict_text(rt, w) -> str:
    parts = [f"{text_of(rt, wkey, 'repr').value}: {text_of(rt, get_item(rt, w, wkey), 'repr').value}"
             for wkey in elements(rt, w)]
    return "{" + ", ".join(parts) + "}"


_CONTAINERS = {list: _list_text, tuple: _tuple_text, dict: _dict_text}


_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _stand_in(rt, w):
    """What native formatting gets for ``w``: the value, or, for an object whose text methods are Python code or
    whose fields a format string may read (``"{cfg.n}"``), a :class:`_Asked` standing in for it."""
    value = w.value
    if type(value) in _PLAIN:
        return value
    tp = type(value)
    if tp in _CONTAINERS:
        return _Asked(rt, w) if _holds_python_text(rt, value, set()) else value
    if w.provenance.is_outside or any(python_dunder(rt, tp, n) for n in ("__str__", "__repr__", "__format__")):
        return _Asked(rt, w)
    return value


class _Asked:
    """Stands in for an object handed to native formatting (``"%s" % cfg``, ``"{}".format(cfg)``): the native code
    asks it for text, a number or a field, and it answers through the interpreter, so what the object's methods
    read is read with its provenance."""

    __slots__ = ("_rt", "_w")

    def __init__(self, rt, w):
        self._rt, self._w = rt, w

    def __str__(self):
        return text_of(self._rt, self._w, "str").value

    def __repr__(self):
        return text_of(self._rt, self._w, "repr").value

    def __format__(self, spec):
        return text_of(self._rt, self._w, "format", spec).value

    def __int__(self):
        return call_value(computed(int), [self._w], {}).value

    def __index__(self):
        return call_value(computed(operator.index), [self._w], {}).value

    def __float__(self):
        return call_value(computed(float), [self._w], {}).value

    def __getattr__(self, name):
        from .attributes import load_attr

        return _stand_in(self._rt, load_attr(self._rt, self._w, name))

    def __getitem__(self, key):
        return _stand_in(self._rt, get_item(self._rt, self._w, computed(key)))


def _format_method(rt, wargs, wkwargs):
    """``fmt.format(*args, **kwargs)``."""
    if not wargs or type(wargs[0].value) is not str:
        return native_call(str.format, wargs, wkwargs)
    args = [_stand_in(rt, w) for w in wargs[1:]]
    kwargs = {k: _stand_in(rt, w) for k, w in wkwargs.items()}
    return computed(wargs[0].value.format(*args, **kwargs))


def percent_format(rt, wfmt, wargs) -> WrappedValue:
    """``fmt % args`` of a str: the arguments stand in so their text is read through the interpreter."""
    args = wargs.value
    if type(args) is tuple:
        stand_ins = tuple(_stand_in(rt, get_item(rt, wargs, computed(i))) for i in range(len(args)))
    elif type(args) is dict:
        stand_ins = {k: _stand_in(rt, get_item(rt, wargs, computed(k))) for k in args}
    else:
        stand_ins = _stand_in(rt, wargs)
    return computed(wfmt.value % stand_ins)


def _str(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1:
        return native_call(str, wargs, wkwargs)
    return text_of(rt, wargs[0], "str")


def _repr(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1:
        return native_call(repr, wargs, wkwargs)
    return text_of(rt, wargs[0], "repr")


def _format(rt, wargs, wkwargs):
    if wkwargs or len(wargs) not in (1, 2) or (len(wargs) == 2 and type(wargs[1].value) is not str):
        return native_call(format, wargs, wkwargs)
    return text_of(rt, wargs[0], "format", wargs[1].value if len(wargs) == 2 else "")


TEXT_LOOKASIDES = {str: _str, repr: _repr, format: _format, str.format: _format_method}
