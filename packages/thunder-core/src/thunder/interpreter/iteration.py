"""Iteration with provenance: iterators over outside containers yield wrapped elements."""

from __future__ import annotations

import collections
import types

from .calls import call_value
from .class_lookups import special_method
from .derivation import ViewSource, derive_item
from .provenance import Provenance
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed

__all__ = ["ProvenanceIterator", "get_iter", "next_wrapped", "is_tracked"]


class ProvenanceIterator:
    """A real iterator (usable by native code) whose elements the interpreter gets wrapped."""

    __slots__ = ("_source", "stands_for")

    def __init__(self, source, stands_for: type | None = None):
        self._source = source  # a Python generator yielding WrappedValues
        # the type of the iterator CPython would have made (zip, enumerate, list_iterator, ...), which
        # isinstance() answers for (a jit's isinstance lookaside consults it)
        self.stands_for = stands_for

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._source).value

    def next_wrapped(self) -> WrappedValue:
        return next(self._source)


def is_tracked(w: WrappedValue) -> bool:
    return w.items is not None or w.provenance.is_outside


def _sequence_elements(rt, wseq):
    seq = wseq.value
    i = 0
    while i < len(seq):  # re-check each step, like list iterators
        yield derive_item(rt, wseq, i, seq[i])
        i += 1


# Containers whose elements are reached by position in iteration order (``tuple(d)[i]``): dicts' keys, and the
# elements of sets, which have no other path
_KEYED_ITERS = (dict.__iter__, collections.OrderedDict.__iter__, set.__iter__, frozenset.__iter__)


def _keys_in_order(rt, wdict):
    yield from (wkey for wkey, _ in _entries_in_order(rt, wdict))


def _entries_in_order(rt, wdict):
    """(wrapped key, key) of a dict (or set) in iteration order. The keys of an outside dict are inputs (the
    ``i``-th key is reached and checked like any other value) and iterating to the end relies on how many
    there are, so a dict that gained, lost or reordered entries does not reuse a program unrolled over the
    old ones."""
    prov = wdict.provenance
    outside = prov.is_outside and rt.hooks.keys_are_inputs(wdict)
    for i, key in enumerate(iter(wdict.value)):
        yield (rt.input(key, Provenance.dict_key(prov, i)) if outside else computed(key)), key
    if outside:
        rt.hooks.on_length(wdict)  # the loop ended after that many keys


def _dict_view_elements(rt, kind, wdict):
    d = wdict.value
    for wkey, key in _entries_in_order(rt, wdict):
        if kind == "keys":
            yield wkey
            continue
        wvalue = derive_item(rt, wdict, key, dict.__getitem__(d, key))
        yield wvalue if kind == "values" else computed((wkey.value, wvalue.value), items=(wkey, wvalue))


def wrapped_iterator(source, stands_for: type | None = None) -> WrappedValue:
    return computed(ProvenanceIterator(source, stands_for))


def get_iter(rt, w: WrappedValue) -> WrappedValue:
    from .generators import InterpretedGenerator

    value = w.value
    tp = type(value)
    if tp is ProvenanceIterator or tp is InterpretedGenerator:
        return w
    method = lookup_type(tp, "__iter__")
    if type(method) is types.FunctionType:
        result = call_value(special_method(rt, tp, "__iter__", method), [w], {})
        if lookup_type(type(result.value), "__next__") is NOTFOUND:
            raise TypeError(f"iter() returned non-iterator of type '{type(result.value).__name__}'")
        return result
    if isinstance(w.items, ViewSource):
        return wrapped_iterator(_dict_view_elements(rt, w.items.kind, w.items.wdict), type(iter(value)))
    if is_tracked(w):
        if method is list.__iter__ or method is tuple.__iter__:
            return wrapped_iterator(_sequence_elements(rt, w), type(iter(value)))
        if method in _KEYED_ITERS and w.provenance.is_outside:
            return wrapped_iterator(_keys_in_order(rt, w), type(iter(value)))
    it = iter(value)
    return w if it is value else computed(it)  # an iterator is its own: one from outside stays outside


def next_wrapped(rt, wit: WrappedValue) -> WrappedValue:
    """next() on a wrapped iterator; raises StopIteration when exhausted."""
    from .generators import InterpretedGenerator

    it = wit.value
    tp = type(it)
    if tp is ProvenanceIterator:
        return it.next_wrapped()
    if tp is InterpretedGenerator:
        return it.send_wrapped(None)
    method = lookup_type(tp, "__next__")
    if type(method) is types.FunctionType:
        return call_value(special_method(rt, tp, "__next__", method), [wit], {})
    if method is NOTFOUND:
        raise TypeError(f"'{tp.__name__}' object is not an iterator")
    rt.hooks.on_native_call(next, [wit], {})  # an iterator from outside advances in native code
    return computed(next(it))
