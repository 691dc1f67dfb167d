"""Builtins that consume a whole iterable (``list(d)``, ``sorted(d)``, ``sum(d.values())``, ``dict(d)``).

Run natively, they would read an outside container behind the interpreter's back: its keys, length and
elements would be baked into the trace unchecked, and the elements would lose their provenance
(``list(module_list)[-1]`` would hold a module whose parameters no path reaches). When the iterable is
one whose reads matter (an outside container or a view of one, a container the interpreter built, an
interpreted iterator or generator, an object with a Python ``__iter__``), its elements are read here
through the interpreter's own iteration, then the builtin runs on them.
"""

from __future__ import annotations

import types

from .calls import call_value, native_call
from .derivation import ViewSource
from .generators import InterpretedGenerator
from .iteration import ProvenanceIterator, get_iter, is_tracked, next_wrapped
from .typeutil import lookup_type
from .wrapped import computed

__all__ = ["CONSUMERS"]

_ITERATORS = (ProvenanceIterator, InterpretedGenerator)


def _reads_matter(w) -> bool:
    tp = type(w.value)
    return is_tracked(w) or tp in _ITERATORS or type(lookup_type(tp, "__iter__")) is types.FunctionType


def _elements(rt, w) -> list:
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
        ws = _elements(rt, wargs[0])
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
    pairs = _elements(rt, w)
    result = dict(_values(pairs))
    items = {}
    for pair in pairs:  # an element built by the interpreter remembers its key and value wrappers
        if isinstance(pair.items, tuple) and len(pair.items) == 2:
            items[pair.items[0].value] = pair.items[1]
    return computed(result, items=items if len(items) == len(result) else None)


def _sort_key(rt, wkey):
    """The key function, interpreted (natively it would read its own outside values unchecked)."""
    if wkey is None or wkey.value is None:
        return lambda w: w.value
    return lambda w: call_value(wkey, [w], {}).value


def _sorted(rt, wargs, wkwargs):
    if len(wargs) != 1 or set(wkwargs) - {"key", "reverse"} or not _reads_matter(wargs[0]):
        return native_call(sorted, wargs, wkwargs)
    ws = _elements(rt, wargs[0])
    key = _sort_key(rt, wkwargs.get("key"))
    keys = [key(w) for w in ws]
    reverse = wkwargs["reverse"].value if "reverse" in wkwargs else False
    order = sorted(range(len(ws)), key=keys.__getitem__, reverse=reverse)  # stable, as sorted() is
    return computed([ws[i].value for i in order], items=[ws[i] for i in order])


def _reduction(fn):
    """sum, min, max, any, all of a container or view: a generator is consumed natively as before (its body
    is interpreted either way, and these may stop early or raise midway)."""

    def impl(rt, wargs, wkwargs):
        if not wargs or not _reads_matter(wargs[0]) or type(wargs[0].value) in _ITERATORS:
            return native_call(fn, wargs, wkwargs)
        if fn in (min, max) and (len(wargs) != 1 or "key" in wkwargs):
            return native_call(fn, wargs, wkwargs)  # several arguments, or a key function (run natively)
        ws = _elements(rt, wargs[0])
        return native_call(fn, [computed(_values(ws)), *wargs[1:]], wkwargs)

    return impl


CONSUMERS = {
    list: _container(list), tuple: _container(tuple), set: _container(set), frozenset: _container(frozenset),
    dict: _dict, sorted: _sorted,
    sum: _reduction(sum), min: _reduction(min), max: _reduction(max), any: _reduction(any), all: _reduction(all),
}
