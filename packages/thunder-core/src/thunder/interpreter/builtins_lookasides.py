"""Internal lookasides for builtins that would otherwise lose provenance or need the frame.

Keyed by the builtin object; bound builtin methods (``d.items``, ``d.__setitem__``) are matched through their
unbound descriptor (``dict.items``, ``dict.__setitem__``) with the wrapped receiver prepended.

The callable forms of statements (``operator.setitem(d, k, v)``, ``object.__setattr__(o, n, v)``,
``operator.iadd(lst, more)``) run as the statement would, so hooks see their reads and writes.
"""

from __future__ import annotations

import builtins
import itertools
import operator
import sys
import types

from .attributes import delete_attr, load_attr, store_attr
from .calls import call_value, native_call
from .class_bodies import build_class
from .consumers import CONSUMERS, elements
from .derivation import ViewSource, derive_item
from .hashed_keys import hashed
from .iteration import ProvenanceIterator, get_iter, is_tracked, next_wrapped, wrapped_iterator
from .operators import OPARG_OF_OPERATOR, binary_op, del_item, get_item, set_item
from .protocols import PROTOCOL_LOOKASIDES
from .provenance import Provenance
from .text import TEXT_LOOKASIDES
from .typeutil import hashable as _hashable
from .typeutil import lookup_type
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
    d, key = wargs[0].value, hashed(rt, wargs[1].value)
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


def _statement(fn, statement, arity: int):
    """``operator.setitem(d, k, v)`` is ``d[k] = v``. A slot's descriptor (``dict.__setitem__``) only when it is
    what the receiver's type uses: called on a subclass that overrides it, it bypasses the override on purpose,
    and runs natively."""
    slot = type(fn) is types.WrapperDescriptorType
    named = fn in (object.__setattr__, object.__delattr__)  # its second argument is an attribute's name

    def impl(rt, wargs, wkwargs):
        if wkwargs or len(wargs) != arity or (slot and lookup_type(type(wargs[0].value), fn.__name__) is not fn):
            return _native(fn, wargs, wkwargs)
        if named and type(wargs[1].value) is not str:
            return _native(fn, wargs, wkwargs)  # CPython's own TypeError
        result = statement(rt, *wargs)
        return result if isinstance(result, WrappedValue) else computed(None)

    return impl


def _store_attr(rt, wobj, wname, wvalue):
    store_attr(rt, wobj, wname.value, wvalue)


def _delete_attr(rt, wobj, wname):
    delete_attr(rt, wobj, wname.value)


def _operator(oparg: int):
    return lambda rt, wl, wr: binary_op(rt, oparg, wl, wr)


_STATEMENTS = {
    operator.getitem: (get_item, 2),
    operator.setitem: (set_item, 3),
    operator.delitem: (del_item, 2),
    **{fn: (_operator(oparg), 2) for fn, oparg in OPARG_OF_OPERATOR.items()},
    list.__setitem__: (set_item, 3),
    dict.__setitem__: (set_item, 3),
    list.__delitem__: (del_item, 2),
    dict.__delitem__: (del_item, 2),
    object.__setattr__: (_store_attr, 3),
    object.__delattr__: (_delete_attr, 2),
}


def _getter(read):
    """``operator.attrgetter("a.b")(o)`` / ``itemgetter(k)(d)``: the reads, with their provenance."""

    def impl(rt, wgetter, wargs, wkwargs):
        if wkwargs or len(wargs) != 1:
            return _native(wgetter.value, wargs, wkwargs)
        _, keys = wgetter.value.__reduce__()  # the names or keys it was made with
        results = [read(rt, wargs[0], key) for key in keys]
        return results[0] if len(results) == 1 else computed(tuple(w.value for w in results), items=tuple(results))

    return impl


def _read_attrs(rt, wobj, dotted):
    if type(dotted) is not str:
        return computed(operator.attrgetter(dotted)(wobj.value))  # CPython's own TypeError
    for name in dotted.split("."):
        wobj = load_attr(rt, wobj, name)
    return wobj


def _read_item(rt, wobj, key):
    return get_item(rt, wobj, constant(key))


def _reduce_ex(rt, wargs, wkwargs):
    """``object.__reduce_ex__(o, protocol)``, which ``copy.copy`` and ``copy.deepcopy`` call: its state is
    ``o.__dict__`` itself, read with its provenance so the copy's attributes are checked reads of ``o``'s."""
    result = _native(object.__reduce_ex__, wargs, wkwargs)
    if wkwargs or len(wargs) != 2 or not isinstance(result.value, tuple) or len(result.value) < 3:
        return result
    wobj = wargs[0]
    state = result.value[2]
    if state is None or state is not getattr(wobj.value, "__dict__", None):
        return result  # a Python __getstate__/__reduce__ made it, or slots: natively as before
    wstate = load_attr(rt, wobj, "__dict__")
    for wkey in elements(rt, wstate):  # each value read (checked) here: the copy holds them, read natively later
        get_item(rt, wstate, wkey)
    items = [computed(v) for v in result.value]
    items[2] = wstate
    return computed(result.value, items=tuple(items))


# callables looked up by their type, the callable itself becoming the first argument
_BY_TYPE = {operator.attrgetter: _getter(_read_attrs), operator.itemgetter: _getter(_read_item)}

def _pop(tp, method):
    """``d.pop(k)`` / ``lst.pop(i)`` on a container the program built: the value popped keeps the provenance it
    was stored with (``kwargs["cache"] = kwargs.pop("past_key_values")`` in a decorator still hands the caller's
    object on, whose attribute stores are then the caller's side effects, not the program's own). Outside
    containers are the hooks' (read, then replayed by the epilogue); they never reach here."""

    def pop(rt, wargs, wkwargs):
        wobj = wargs[0] if wargs else None
        if wkwargs or wobj is None or type(wobj.value) is not tp or wobj.provenance.is_outside \
                or wobj.items is None or isinstance(wobj.items, ViewSource):
            return native_call(method, wargs, wkwargs)
        obj = wobj.value
        if tp is dict:
            if len(wargs) not in (2, 3):
                return native_call(method, wargs, wkwargs)
            key = hashed(rt, wargs[1].value)
            found = key in obj
        else:
            if len(wargs) > 2 or len(wargs) == 2 and type(wargs[1].value) is not int:
                return native_call(method, wargs, wkwargs)
            key = wargs[1].value if len(wargs) == 2 else -1
            found = -len(obj) <= key < len(obj)
            key = key % len(obj) if found else key
        w = derive_item(rt, wobj, key, obj[key]) if found else None
        result = native_call(method, wargs, wkwargs)  # CPython's result, or its KeyError / IndexError
        if type(wobj.items) is dict:
            wobj.items.pop(key, None)
        elif type(wobj.items) is list and found and len(wobj.items) == len(obj) + 1:
            del wobj.items[key]
        else:
            wobj.items = None
        if found:
            return w
        return wargs[2] if tp is dict and len(wargs) == 3 else result  # the default, as passed

    return pop


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
    dict.pop: _pop(dict, dict.pop),
    list.pop: _pop(list, list.pop),
    super: _super,
    object.__reduce_ex__: _reduce_ex,
    sys.exc_info: _exc_info,
    builtins.__build_class__: build_class,
}
_TABLE.update(CONSUMERS)
_TABLE.update(TEXT_LOOKASIDES)
_TABLE.update(PROTOCOL_LOOKASIDES)
_TABLE.update({fn: _statement(fn, statement, arity) for fn, (statement, arity) in _STATEMENTS.items()})
if hasattr(sys, "exception"):
    _TABLE[sys.exception] = _exception

_KEY_TYPES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
              types.MethodWrapperType, type)


def find_internal_lookaside(wfn: WrappedValue):
    """Returns (impl, wrapped receiver or None) for builtins handled internally, else None."""
    fn = wfn.value
    tp = type(fn)
    by_type = _BY_TYPE.get(tp)
    if by_type is not None:
        return (lambda rt, wargs, wkwargs: by_type(rt, wfn, wargs, wkwargs)), None
    if tp not in _KEY_TYPES:
        return None
    impl = _TABLE.get(fn)
    if impl is not None:
        return impl, None
    if tp in (types.BuiltinFunctionType, types.MethodWrapperType):  # a bound method, e.g. d.items, o.__setattr__
        receiver = getattr(fn, "__self__", None)
        if receiver is None or isinstance(receiver, types.ModuleType):
            return None
        descr = lookup_type(type(receiver), fn.__name__)
        impl = _TABLE.get(descr) if _hashable(descr) else None  # NOTFOUND and None find nothing
        if impl is not None:
            wreceiver = wfn.bound_self if wfn.bound_self is not None and wfn.bound_self.value is receiver \
                else computed(receiver)
            return impl, wreceiver
    return None


# ProvenanceIterator must stay importable from here for callers that check iterator types.
__all__ += ["ProvenanceIterator"]
