"""Builtins that consume a whole iterable (``list(d)``, ``sorted(d)``, ``sum(d.values())``, ``dict(d)``).

Run natively, they would read an outside container behind the interpreter's back: its keys, length and
elements would be baked into the trace unchecked, and the elements would lose their provenance
(``list(module_list)[-1]`` would hold a module whose parameters no path reaches). When the iterable is
one whose reads matter (an outside container or a view of one, a container the interpreter built, an
interpreted iterator or generator, an object with a Python ``__iter__``), its elements are read here
through the interpreter's own iteration, then the builtin runs on them.
"""

from __future__ import annotations

import contextlib
import functools
import types

from .calls import call_value, native_call
from .derivation import ViewSource
from .generators import InterpretedGenerator
from .iteration import ProvenanceIterator, get_iter, is_tracked, next_wrapped
from .operators import compare_op
from .protocols import python_dunder
from .typeutil import lookup_type
from .wrapped import computed

__all__ = ["CONSUMERS", "elements"]

_ITERATORS = (ProvenanceIterator, InterpretedGenerator)


def _reads_matter(w) -> bool:
    tp = type(w.value)
    return is_tracked(w) or tp in _ITERATORS or type(lookup_type(tp, "__iter__")) is types.FunctionType


def elements(rt, w) -> list:
    it = get_iter(rt, w)
    out = []
    while True:
        try:
            out.append(next_wrapped(rt, it))
        except StopIteration:
            return out


def _values(ws) -> list:
    return [w.value for w in ws]


def _container(fn):
    """list(x), tuple(x), set(x), frozenset(x): list and tuple keep their elements' provenance."""

    def impl(rt, wargs, wkwargs):
        if wkwargs or len(wargs) != 1 or not _reads_matter(wargs[0]):
            return native_call(fn, wargs, wkwargs)
        ws = elements(rt, wargs[0])
        if fn is list:
            return computed(_values(ws), items=ws)
        if fn is tuple:
            return computed(tuple(_values(ws)), items=tuple(ws))
        return computed(fn(_values(ws)))

    return impl


def _dict(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1 or not _reads_matter(wargs[0]):
        return native_call(dict, wargs, wkwargs)
    w = wargs[0]
    if type(w.value) is dict:  # a mapping: its items, read with provenance
        w = computed(dict.items(w.value), items=ViewSource("items", w))
    elif isinstance(w.value, dict):
        return native_call(dict, wargs, wkwargs)  # a subclass may read its entries its own way
    pairs = elements(rt, w)
    result = dict(_values(pairs))
    items = {}
    for pair in pairs:  # an element built by the interpreter remembers its key and value wrappers
        if isinstance(pair.items, tuple) and len(pair.items) == 2:
            items[pair.items[0].value] = pair.items[1]
    return computed(result, items=items if len(items) == len(result) else None)


@contextlib.contextmanager
def _held(rt, *containers):
    """Values kept in this code's own locals while it interprets calls (keys, an accumulator): listed where a hook's
    walk for what the rest of the program can still reach sees them, as it sees a native call's arguments (a
    value read inside a key function splits the program, and the comparisons after it use the keys before)."""
    rt.native_arguments.append((containers, {}))
    try:
        yield
    finally:
        rt.native_arguments.pop()


def _keys(key, ws, wkeys: list) -> list:
    for w in ws:
        wkeys.append(key(w))
    return wkeys


def _sort_key(rt, wkey):
    """The key function, interpreted (natively it would read its own outside values unchecked)."""
    if wkey is None or wkey.value is None:
        return lambda w: w
    return lambda w: call_value(wkey, [w], {})


def _python_order(rt, ws) -> bool:
    """Some value orders itself with Python code the interpreter interprets (``__lt__``), which native sorting
    would call unseen (thunder's own proxies order themselves natively, recording what they read)."""
    return any(python_dunder(rt, type(w.value), name) for w in ws for name in ("__lt__", "__gt__"))


class _Ordered:
    """A sort key compared through the interpreter: ``sorted`` compares with ``<`` only."""

    __slots__ = ("rt", "w")

    def __init__(self, rt, w):
        self.rt, self.w = rt, w

    def __lt__(self, other):
        return bool(compare_op(self.rt, "<", self.w, other.w).value)


def _sorted(rt, wargs, wkwargs):
    # with a key, always here: natively, the keys the key function returns are held by C code only
    if len(wargs) != 1 or set(wkwargs) - {"key", "reverse"} or ("key" not in wkwargs and not _reads_matter(wargs[0])):
        return native_call(sorted, wargs, wkwargs)
    ws = elements(rt, wargs[0])
    key = _sort_key(rt, wkwargs.get("key"))
    wkeys = []
    with _held(rt, ws, wkeys):
        _keys(key, ws, wkeys)
        keys = [_Ordered(rt, w) for w in wkeys] if _python_order(rt, wkeys) else _values(wkeys)
        reverse = wkwargs["reverse"].value if "reverse" in wkwargs else False
        order = sorted(range(len(ws)), key=keys.__getitem__, reverse=reverse)  # stable, as sorted() is
    return computed([ws[i].value for i in order], items=[ws[i] for i in order])


def _list_sort(rt, wargs, wkwargs):
    """``lst.sort(key=...)`` of a list the program made: the key and the comparisons interpreted, as for sorted
    (an outside list's sort is refused by the jit's hooks: its effect is not replayed)."""
    if len(wargs) != 1 or set(wkwargs) - {"key", "reverse"} or type(wargs[0].value) is not list:
        return native_call(list.sort, wargs, wkwargs)
    wlist = wargs[0]
    ordered = _sorted(rt, [wlist], wkwargs)
    wlist.value[:] = ordered.value
    if isinstance(wlist.items, list):
        wlist.items[:] = ordered.items
    return computed(None)


_NO_VALUE = object()


def _reduce(rt, wargs, wkwargs):
    """``functools.reduce(fn, iterable[, initial])``: the function and the elements read through the interpreter."""
    if wkwargs or len(wargs) not in (2, 3):
        return native_call(functools.reduce, wargs, wkwargs)
    wfn = wargs[0]
    it = get_iter(rt, wargs[1])
    acc = wargs[2] if len(wargs) == 3 else _NO_VALUE
    held = [acc]
    with _held(rt, held):
        while True:  # element by element, as CPython interleaves reading and calling
            try:
                w = next_wrapped(rt, it)
            except StopIteration:
                break
            acc = w if acc is _NO_VALUE else call_value(wfn, [acc, w], {})
            held[0] = acc
    if acc is _NO_VALUE:
        raise TypeError("reduce() of empty iterable with no initial value")
    return acc


def _reduction(fn):
    """sum, any, all of a container or view: a generator is consumed natively as before (its body is interpreted
    either way, and these may stop early or raise midway)."""

    def impl(rt, wargs, wkwargs):
        if not wargs or not _reads_matter(wargs[0]) or type(wargs[0].value) in _ITERATORS:
            return native_call(fn, wargs, wkwargs)
        ws = elements(rt, wargs[0])
        return native_call(fn, [computed(_values(ws)), *wargs[1:]], wkwargs)

    return impl


def _extreme(fn, op: str):
    """min and max: with a key function or values ordered by Python code, the key and the comparisons are
    interpreted and the element itself (with its provenance) is the result, as CPython picks the first extreme."""

    def impl(rt, wargs, wkwargs):
        if not wargs or set(wkwargs) - {"key", "default"} or (len(wargs) > 1 and "default" in wkwargs):
            return native_call(fn, wargs, wkwargs)
        if len(wargs) == 1:
            if "key" not in wkwargs and not _reads_matter(wargs[0]):
                return native_call(fn, wargs, wkwargs)
            ws = elements(rt, wargs[0])
        else:
            ws = list(wargs)
        key = _sort_key(rt, wkwargs.get("key"))
        wkeys = []
        with _held(rt, ws, wkeys):
            _keys(key, ws, wkeys)
            if "key" not in wkwargs and not _python_order(rt, wkeys):  # the elements read, CPython compares them
                return native_call(fn, [computed(_values(ws))] if len(wargs) == 1 else wargs, wkwargs)
            if not ws:
                if "default" in wkwargs:
                    return wkwargs["default"]
                return native_call(fn, [computed(())], {})  # CPython's own ValueError
            best = 0
            for i in range(1, len(ws)):
                if compare_op(rt, op, wkeys[i], wkeys[best]).value:
                    best = i
        return ws[best]

    return impl


CONSUMERS = {
    list: _container(list), tuple: _container(tuple), set: _container(set), frozenset: _container(frozenset),
    dict: _dict, sorted: _sorted,
    sum: _reduction(sum), min: _extreme(min, "<"), max: _extreme(max, ">"), any: _reduction(any), all: _reduction(all),
    list.sort: _list_sort, functools.reduce: _reduce,
}
