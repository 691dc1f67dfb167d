"""Internal lookasides for builtins that would otherwise lose provenance or need the frame.

Keyed by the builtin object; bound builtin methods (``d.items``) are matched through their
unbound descriptor (``dict.items``) with the wrapped receiver prepended.
"""

from __future__ import annotations

import builtins
import itertools
import sys
import types

from .attributes import delete_attr, load_attr, store_attr
from .calls import call_value, native_call
from .class_bodies import build_class
from .consumers import CONSUMERS
from .derivation import ViewSource, derive_item
from .iteration import ProvenanceIterator, get_iter, is_tracked, next_wrapped, wrapped_iterator
from .provenance import Provenance
from .wrapped import WrappedValue, computed, constant

__all__ = ["find_internal_lookaside"]

_NO_DEFAULT = object()


def _native(fn, wargs, wkwargs):
    return computed(fn(*[w.value for w in wargs], **{k: w.value for k, w in wkwargs.items()}))


def _getattr(rt, wargs, wkwargs):
    if wkwargs or len(wargs) not in (2, 3) or type(wargs[1].value) is not str:
        return _native(getattr, wargs, wkwargs)
    try:
        return load_attr(rt, wargs[0], wargs[1].value)
    except AttributeError:
        if len(wargs) == 2:
            raise
    return wargs[2]


def _hasattr(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 2 or type(wargs[1].value) is not str:
        return _native(hasattr, wargs, wkwargs)
    try:
        load_attr(rt, wargs[0], wargs[1].value)
    except AttributeError:
        return computed(False)
    return computed(True)


def _setattr(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 3 or type(wargs[1].value) is not str:
        return _native(setattr, wargs, wkwargs)
    store_attr(rt, wargs[0], wargs[1].value, wargs[2])
    return computed(None)


def _delattr(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 2 or type(wargs[1].value) is not str:
        return _native(delattr, wargs, wkwargs)
    delete_attr(rt, wargs[0], wargs[1].value)
    return computed(None)


def _iter(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1:
        return _native(iter, wargs, wkwargs)
    return get_iter(rt, wargs[0])


def _next(rt, wargs, wkwargs):
    if wkwargs or len(wargs) not in (1, 2):
        return _native(next, wargs, wkwargs)
    it = wargs[0].value
    if not hasattr(type(it), "__next__"):
        raise TypeError(f"'{type(it).__name__}' object is not an iterator")
    try:
        return next_wrapped(rt, wargs[0])
    except StopIteration:
        if len(wargs) == 1:
            raise
    return wargs[1]


def _enumerate(rt, wargs, wkwargs):
    if len(wargs) < 1 or len(wargs) > 2 or set(wkwargs) - {"start"} or not is_tracked(wargs[0]):
        return _native(enumerate, wargs, wkwargs)
    start = (wargs[1] if len(wargs) > 1 else wkwargs.get("start", constant(0))).value
    start.__index__()  # TypeError like enumerate() for non-integers
    it = get_iter(rt, wargs[0])

    def elements():
        i = start
        while True:
            try:
                w = next_wrapped(rt, it)
            except StopIteration:
                return
            yield computed((i, w.value), items=(computed(i), w))
            i += 1

    return wrapped_iterator(elements(), enumerate)


def _zip(rt, wargs, wkwargs):
    if wkwargs or not any(is_tracked(w) for w in wargs):
        return _native(zip, wargs, wkwargs)
    rows = _rows(rt, [get_iter(rt, w) for w in wargs])
    return wrapped_iterator((computed(tuple(w.value for w in row), items=tuple(row)) for row in rows), zip)


def _rows(rt, its):
    """One wrapped element of each iterator at a time, until the shortest ends (zip's and map's walk)."""
    if not its:
        return
    while True:
        row = []
        for it in its:
            try:
                row.append(next_wrapped(rt, it))
            except StopIteration:
                return
        yield row


def _reversed(rt, wargs, wkwargs):
    if not wkwargs and len(wargs) == 1 and type(wargs[0].value) is dict and wargs[0].provenance.is_outside:
        # the keys, read in order (each checked, and the length), then handed out last first
        keys = list(next_all(rt, get_iter(rt, wargs[0])))
        return wrapped_iterator(reversed(keys), type(reversed(wargs[0].value)))
    if wkwargs or len(wargs) != 1 or type(wargs[0].value) not in (list, tuple) or not is_tracked(wargs[0]):
        return _native(reversed, wargs, wkwargs)
    wseq = wargs[0]

    def elements():
        seq = wseq.value
        i = len(seq) - 1
        while 0 <= i < len(seq):
            yield derive_item(rt, wseq, i, seq[i])
            i -= 1

    return wrapped_iterator(elements(), type(reversed(wseq.value)))


def next_all(rt, wit):
    """The remaining elements of a wrapped iterator, wrapped."""
    while True:
        try:
            yield next_wrapped(rt, wit)
        except StopIteration:
            return


def _map(rt, wargs, wkwargs):
    """map(f, *iterables): f is called through the interpreter (natively, its own reads of outside state would go
    unchecked), lazily, as map does."""
    if wkwargs or len(wargs) < 2:
        return _native(map, wargs, wkwargs)
    wfn, rows = wargs[0], _rows(rt, [get_iter(rt, w) for w in wargs[1:]])
    return wrapped_iterator((call_value(wfn, row, {}) for row in rows), map)


def _filter(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 2:
        return _native(filter, wargs, wkwargs)
    wfn, it = wargs[0], get_iter(rt, wargs[1])

    def elements():
        for w in next_all(rt, it):
            keep = w.value if wfn.value is None else call_value(wfn, [w], {}).value
            if keep:
                yield w

    return wrapped_iterator(elements(), filter)


def _chain(rt, wargs, wkwargs):
    """itertools.chain(*iterables): each iterable walked through the interpreter, lazily, as chain does."""
    if wkwargs or not any(is_tracked(w) for w in wargs):
        return _native(itertools.chain, wargs, wkwargs)

    def elements():
        for w in wargs:
            yield from next_all(rt, get_iter(rt, w))

    return wrapped_iterator(elements(), itertools.chain)


def _chain_from_iterable(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1:
        return _native(itertools.chain.from_iterable, wargs, wkwargs)
    outer = get_iter(rt, wargs[0])

    def elements():
        for w in next_all(rt, outer):
            yield from next_all(rt, get_iter(rt, w))

    return wrapped_iterator(elements(), itertools.chain)


def _dict_view(kind, method):
    def view(rt, wargs, wkwargs):
        if wkwargs or len(wargs) != 1 or not isinstance(wargs[0].value, dict):
            return _native(method, wargs, wkwargs)
        w = _native(method, wargs, wkwargs)
        if is_tracked(wargs[0]):
            w.items = ViewSource(kind, wargs[0])
        return w

    return view


def _dict_get(rt, wargs, wkwargs):
    if wkwargs or len(wargs) not in (2, 3) or not isinstance(wargs[0].value, dict):
        return _native(dict.get, wargs, wkwargs)
    d, key = wargs[0].value, rt.hooks.dict_key(wargs[1].value)
    if key in d:
        return derive_item(rt, wargs[0], key, d[key])
    if wargs[0].provenance.is_outside:
        rt.hooks.on_membership(wargs[0], key, False, wargs[1])  # the absence is what the program relied on
    return wargs[2] if len(wargs) == 3 else computed(None)


def _super(rt, wargs, wkwargs):
    if wkwargs:
        return _native(super, wargs, wkwargs)
    if len(wargs) == 2:
        return WrappedValue(super(wargs[0].value, wargs[1].value), computed(None).provenance, wargs[1])
    if wargs:
        return _native(super, wargs, wkwargs)
    # Zero-argument form: use the calling interpreted frame's __class__ cell and first argument.
    frame = rt.frames[-1] if rt.frames else None
    if frame is None or frame.code.co_argcount == 0 and not frame.code.co_flags & 0x04:
        raise RuntimeError("super(): no arguments")
    wself = frame.locals[0]
    if wself is None:
        raise RuntimeError("super(): arg[0] deleted")
    if type(wself.value) is types.CellType and 0 < len(frame.code.co_cellvars) and \
            frame.code.co_varnames[0] in frame.code.co_cellvars:
        wself = rt.cell_shadow.get(id(wself.value)) or computed(wself.value.cell_contents)
    names = frame.info.localsplus_names
    if "__class__" not in frame.code.co_freevars:
        raise RuntimeError("super(): __class__ cell not found")
    cell = frame.locals[names.index("__class__", len(names) - frame.info.nfree)].value
    try:
        cls = cell.cell_contents
    except ValueError:
        raise RuntimeError("super(): empty __class__ cell") from None
    return WrappedValue(super(cls, wself.value), computed(None).provenance, wself)


def _exc_info(rt, wargs, wkwargs):
    if wargs or wkwargs:
        return _native(sys.exc_info, wargs, wkwargs)
    exc = rt.handled_exception()
    if exc is None:
        return computed((None, None, None))
    return computed((type(exc), exc, exc.__traceback__))


def _exception(rt, wargs, wkwargs):
    if wargs or wkwargs:
        return _native(sys.exception, wargs, wkwargs)
    return computed(rt.handled_exception())


def _frame_locals(rt):
    frame = rt.frames[-1]
    out = {}
    for name, w in zip(frame.info.localsplus_names, frame.locals):
        if w is None:
            continue
        value = w.value
        if type(value) is types.CellType and (name in frame.code.co_cellvars or name in frame.code.co_freevars):
            try:
                value = value.cell_contents
            except ValueError:
                continue
        out[name] = value
    return out


def _locals(rt, wargs, wkwargs):
    if wargs or wkwargs or not rt.frames:
        return _native(locals, wargs, wkwargs)
    if rt.frames[-1].namespace is not None:  # a class body: its namespace mapping itself
        return rt.frames[-1].namespace
    return computed(_frame_locals(rt))


def _globals(rt, wargs, wkwargs):
    if wargs or wkwargs or not rt.frames:
        return _native(globals, wargs, wkwargs)
    g = rt.frames[-1].globals
    return WrappedValue(g, Provenance.globals_dict(g))  # what the program finds in it is checked


def _type(rt, wargs, wkwargs):
    if wkwargs or len(wargs) != 1:
        return native_call(type, wargs, wkwargs)  # type(name, bases, ns) makes a class
    w = wargs[0]
    if type(w.value) is ProvenanceIterator and w.value.stands_for is not None:
        # an iterator the interpreter made for zip(...), iter(a_list), ...: the type CPython's would have
        return computed(w.value.stands_for)
    if w.provenance.is_outside:  # ``type(obj).X``: the class is reached (and checked) from the object
        return rt.input(type(w.value), Provenance.type_of(w.provenance))
    return computed(type(w.value))


def _vars(rt, wargs, wkwargs):
    if len(wargs) == 1 and not wkwargs:  # vars(obj) is obj.__dict__, with its provenance
        return load_attr(rt, wargs[0], "__dict__")
    if wargs or wkwargs or not rt.frames:
        return _native(vars, wargs, wkwargs)
    if rt.frames[-1].namespace is not None:
        return rt.frames[-1].namespace
    return computed(_frame_locals(rt))


def _dir(rt, wargs, wkwargs):
    if wargs or wkwargs or not rt.frames:
        return _native(dir, wargs, wkwargs)
    if rt.frames[-1].namespace is not None:
        return computed(sorted(rt.frames[-1].namespace.value.keys()))
    return computed(sorted(_frame_locals(rt)))


_TABLE = {
    locals: _locals,
    globals: _globals,
    type: _type,
    vars: _vars,
    dir: _dir,
    getattr: _getattr,
    hasattr: _hasattr,
    setattr: _setattr,
    delattr: _delattr,
    iter: _iter,
    next: _next,
    enumerate: _enumerate,
    zip: _zip,
    reversed: _reversed,
    map: _map,
    filter: _filter,
    itertools.chain: _chain,
    itertools.chain.from_iterable: _chain_from_iterable,
    dict.keys: _dict_view("keys", dict.keys),
    dict.values: _dict_view("values", dict.values),
    dict.items: _dict_view("items", dict.items),
    dict.get: _dict_get,
    super: _super,
    sys.exc_info: _exc_info,
    builtins.__build_class__: build_class,
}
_TABLE.update(CONSUMERS)
if hasattr(sys, "exception"):
    _TABLE[sys.exception] = _exception

_KEY_TYPES = (types.BuiltinFunctionType, types.MethodDescriptorType, type)


def find_internal_lookaside(wfn: WrappedValue):
    """Returns (impl, wrapped receiver or None) for builtins handled internally, else None."""
    fn = wfn.value
    tp = type(fn)
    if tp not in _KEY_TYPES:
        return None
    impl = _TABLE.get(fn)
    if impl is not None:
        return impl, None
    if tp is types.BuiltinFunctionType:  # a bound builtin method, e.g. d.items
        receiver = getattr(fn, "__self__", None)
        if receiver is None or isinstance(receiver, types.ModuleType):
            return None
        descr = type(receiver).__dict__.get(fn.__name__) if type(receiver) is dict else None
        impl = _TABLE.get(descr) if descr is not None else None
        if impl is not None:
            wreceiver = wfn.bound_self if wfn.bound_self is not None and wfn.bound_self.value is receiver \
                else computed(receiver)
            return impl, wreceiver
    return None


# ProvenanceIterator must stay importable from here for callers that check iterator types.
__all__ += ["ProvenanceIterator"]
