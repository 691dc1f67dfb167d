"""Opcode handlers whose semantics are the same in CPython 3.11 and 3.12.

A handler is ``handler(rt, frame, instr) -> signal | None``; version modules copy
``COMMON_HANDLERS`` and add or override entries where the bytecode differs.
"""

from __future__ import annotations

import collections.abc
import operator
import sys
import types

from .attributes import delete_attr, load_attr, load_method, store_attr
from .calls import bind_method, call_value
from .class_bodies import NAME_HANDLERS
from .class_lookups import special_method
from .derivation import derive_item
from .errors import unsupported
from .exception_groups import check_except_star_type, exception_group_match, prep_reraise_star
from .hashed_keys import hashed
from .iteration import get_iter, is_tracked, next_wrapped
from .loop import GENERATOR, RETURN, YIELD
from .operators import binary_op, compare_op, contains_op, del_item, get_item, set_item, unary_op
from .protocols import truth
from .provenance import Provenance
from .text import text_of
from .typeutil import NOTFOUND, function_str, lookup_type
from .wrapped import WrappedValue, computed, constant

COMMON_HANDLERS = {}


def handler(*names):
    def register(fn):
        for name in names:
            COMMON_HANDLERS[name] = fn
        return fn

    return register


def not_supported(what, advice=""):
    def reject(rt, frame, instr):
        raise unsupported(what, frame.source_location(), advice)

    reject.rejects = what  # the opcode audit (tests/interpreter/test_opcode_coverage.py) reads this
    return reject


# ----- stack and constants ------------------------------------------------------------------------


@handler("NOP", "RESUME", "EXTENDED_ARG", "CACHE", "COPY_FREE_VARS")
def _nop(rt, frame, instr):
    # COPY_FREE_VARS: closure cells are copied into the frame when arguments are bound.
    return None


@handler("POP_TOP")
def _pop_top(rt, frame, instr):
    frame.stack.pop()


@handler("PUSH_NULL")
def _push_null(rt, frame, instr):
    frame.stack.append(None)


@handler("COPY")
def _copy(rt, frame, instr):
    frame.stack.append(frame.stack[-instr.arg])


@handler("SWAP")
def _swap(rt, frame, instr):
    st = frame.stack
    st[-1], st[-instr.arg] = st[-instr.arg], st[-1]


@handler("LOAD_CONST")
def _load_const(rt, frame, instr):
    frame.stack.append(constant(instr.argval))


@handler("RETURN_VALUE")
def _return_value(rt, frame, instr):
    return RETURN, frame.stack.pop()


@handler("LOAD_ASSERTION_ERROR")
def _load_assertion_error(rt, frame, instr):
    frame.stack.append(constant(AssertionError))


# ----- locals, cells, globals ---------------------------------------------------------------------


if sys.version_info >= (3, 11):
    _UNBOUND_LOCAL = "cannot access local variable '{}' where it is not associated with a value"
    _EMPTY_FREE = "cannot access free variable '{}' where it is not associated with a value in enclosing scope"
else:
    _UNBOUND_LOCAL = "local variable '{}' referenced before assignment"
    _EMPTY_FREE = "free variable '{}' referenced before assignment in enclosing scope"


def _unbound_local(name):
    return UnboundLocalError(_UNBOUND_LOCAL.format(name))


@handler("LOAD_FAST", "LOAD_FAST_CHECK")
def _load_fast(rt, frame, instr):
    w = frame.locals[instr.arg]
    if w is None:
        raise _unbound_local(instr.argval)
    frame.stack.append(w)


@handler("STORE_FAST")
def _store_fast(rt, frame, instr):
    frame.locals[instr.arg] = frame.stack.pop()


@handler("DELETE_FAST")
def _delete_fast(rt, frame, instr):
    if frame.locals[instr.arg] is None:
        raise _unbound_local(instr.argval)
    frame.locals[instr.arg] = None


@handler("MAKE_CELL")
def _make_cell(rt, frame, instr):
    frame.locals[instr.arg] = new_cell(rt, frame.locals[instr.arg])


def new_cell(rt, wold):
    """A cell made by interpreted code, holding ``wold`` (None: empty)."""
    cell = types.CellType() if wold is None else types.CellType(wold.value)
    rt.created_cells[id(cell)] = cell
    if wold is not None:
        rt.cell_shadow[id(cell)] = wold
    return computed(cell)


@handler("LOAD_CLOSURE")
def _load_closure(rt, frame, instr):
    frame.stack.append(frame.locals[instr.arg])


def _cell_is_outside(rt, cell) -> bool:
    return rt.created_cells.get(id(cell)) is not cell


def _cell_provenance(frame, index, cell) -> Provenance:
    nfree = frame.info.nfree
    free_index = index - (len(frame.locals) - nfree)
    return Provenance.closure_cell(frame.qualname, free_index, frame.info.localsplus_names[index], cell)


def _empty_cell_error(frame, index):
    name = frame.info.localsplus_names[index]
    if index >= len(frame.locals) - frame.info.nfree:
        return NameError(_EMPTY_FREE.format(name))
    return _unbound_local(name)


@handler("LOAD_DEREF")
def _load_deref(rt, frame, instr):
    cell = frame.locals[instr.arg].value
    try:
        value = cell.cell_contents
    except ValueError:
        value = _EMPTY
    if value is _EMPTY:
        raise _empty_cell_error(frame, instr.arg)
    shadow = rt.cell_shadow.get(id(cell))
    if shadow is not None and shadow.value is value and not _cell_is_outside(rt, cell):
        frame.stack.append(shadow)
    elif _cell_is_outside(rt, cell):
        frame.stack.append(rt.input(value, _cell_provenance(frame, instr.arg, cell)))
    else:
        frame.stack.append(computed(value))


_EMPTY = object()


@handler("STORE_DEREF")
def _store_deref(rt, frame, instr):
    wcell = frame.locals[instr.arg]
    w = frame.stack.pop()
    cell = wcell.value
    if _cell_is_outside(rt, cell):
        target = WrappedValue(cell, _cell_provenance(frame, instr.arg, cell))
        rt.hooks.on_store("cell", target, instr.argval, w)
        return
    cell.cell_contents = w.value
    rt.cell_shadow[id(cell)] = w


@handler("DELETE_DEREF")
def _delete_deref(rt, frame, instr):
    cell = frame.locals[instr.arg].value
    try:
        cell.cell_contents
    except ValueError:
        raise _empty_cell_error(frame, instr.arg) from None
    if _cell_is_outside(rt, cell):
        target = WrappedValue(cell, _cell_provenance(frame, instr.arg, cell))
        rt.hooks.on_store("delete_cell", target, instr.argval, None)
        return
    del cell.cell_contents
    rt.cell_shadow.pop(id(cell), None)


@handler("LOAD_GLOBAL")
def _load_global(rt, frame, instr):
    if instr.arg & 1:
        frame.stack.append(None)
    frame.stack.append(load_global(rt, frame, instr.argval))


def load_global(rt, frame, name):
    if name in frame.globals:
        w = rt.input(frame.globals[name], Provenance.global_(frame.globals, name))
    elif name in frame.builtins:
        # a global of that name defined later would win: the globals dict must still lack it
        rt.hooks.on_membership(WrappedValue(frame.globals, Provenance.globals_dict(frame.globals)), name, False)
        w = rt.input(frame.builtins[name], Provenance.builtin(name, frame.builtins))
    else:
        raise NameError(f"name '{name}' is not defined", name=name)
    return w


@handler("STORE_GLOBAL")
def _store_global(rt, frame, instr):
    rt.hooks.on_store("global", None, instr.argval, frame.stack.pop())


@handler("DELETE_GLOBAL")
def _delete_global(rt, frame, instr):
    if instr.argval not in frame.globals:
        raise NameError(f"name '{instr.argval}' is not defined", name=instr.argval)
    rt.hooks.on_store("delete_global", None, instr.argval, None)


# ----- attributes ---------------------------------------------------------------------------------


@handler("STORE_ATTR")
def _store_attr(rt, frame, instr):
    wobj = frame.stack.pop()
    wvalue = frame.stack.pop()
    store_attr(rt, wobj, instr.argval, wvalue)


@handler("DELETE_ATTR")
def _delete_attr(rt, frame, instr):
    delete_attr(rt, frame.stack.pop(), instr.argval)


def push_method(rt, frame, wobj, name):
    meth, wself = load_method(rt, wobj, name)
    frame.stack.append(meth)
    frame.stack.append(wself)


# ----- calls and functions ------------------------------------------------------------------------


@handler("KW_NAMES")
def _kw_names(rt, frame, instr):
    frame.kw_names = frame.code.co_consts[instr.arg]  # dis does not decode this argument on 3.11


@handler("CALL")
def _call(rt, frame, instr):
    call_method_layout(frame, instr.arg)


def call_method_layout(frame, argc):
    """Call with (method, self) or (NULL, callable) below ``argc`` arguments, using frame.kw_names."""
    st = frame.stack
    args = st[len(st) - argc:]
    del st[len(st) - argc:]
    self_or_callable = st.pop()
    method = st.pop()
    if method is None:
        fn = self_or_callable
    else:
        fn = method
        args.insert(0, self_or_callable)
    kwargs = {}
    kw_names = frame.kw_names
    if kw_names:
        frame.kw_names = None
        n = len(kw_names)
        kwargs = dict(zip(kw_names, args[len(args) - n:]))
        del args[len(args) - n:]
    st.append(call_value(fn, args, kwargs))


def _wrapped_elements(rt, w: WrappedValue) -> list:
    value = w.value
    if isinstance(value, (list, tuple)) and is_tracked(w):
        return [derive_item(rt, w, i, v) for i, v in enumerate(value)]
    return [computed(v) for v in value]


@handler("CALL_FUNCTION_EX")
def _call_function_ex(rt, frame, instr):
    st = frame.stack
    wkw = st.pop() if instr.arg & 1 else None
    wargs = st.pop()
    wfn = st.pop()
    st.pop()  # NULL
    st.append(call_function_ex(rt, wfn, wargs, wkw))


def call_function_ex(rt, wfn, wargs, wkw):
    """``fn(*args, **kw)`` with CPython's checks (``wkw`` may be None)."""
    if not isinstance(wargs.value, tuple):
        if _not_iterable(wargs.value):
            raise TypeError(f"{function_str(wfn.value)} argument after * must be an iterable, "
                            f"not {type(wargs.value).__name__}")
        wargs = computed(tuple(wargs.value))
    args = _wrapped_elements(rt, wargs)
    kwargs = {}
    if wkw is not None:
        kw = wkw.value
        if not isinstance(kw, dict):
            if lookup_type(type(kw), "keys") is NOTFOUND:
                raise TypeError(f"{function_str(wfn.value)} argument after ** must be a mapping, "
                                f"not {type(kw).__name__}")
            kw = dict(kw)
        kwargs = {k: derive_item(rt, wkw, k, v) if kw is wkw.value else computed(v) for k, v in kw.items()}
    return call_value(wfn, args, kwargs)


@handler("MAKE_FUNCTION")
def _make_function(rt, frame, instr):
    code = frame.stack.pop().value
    make_function(frame, code, code.co_qualname, instr.arg)


def make_function(frame, code, qualname, flags):
    st = frame.stack
    closure = st.pop().value if flags & 0x08 else None
    annotations = st.pop().value if flags & 0x04 else None
    kwdefaults = st.pop().value if flags & 0x02 else None
    defaults = st.pop().value if flags & 0x01 else None
    fn = types.FunctionType(code, frame.globals, code.co_name, defaults, closure)
    fn.__qualname__ = qualname
    if kwdefaults is not None:
        fn.__kwdefaults__ = kwdefaults
    if annotations is not None:
        if isinstance(annotations, tuple):
            annotations = dict(zip(annotations[::2], annotations[1::2]))
        fn.__annotations__ = annotations
    st.append(computed(fn))


@handler("LOAD_BUILD_CLASS")
def _load_build_class(rt, frame, instr):
    try:
        build_class = frame.builtins["__build_class__"]
    except KeyError:
        build_class = None
    if build_class is None:
        raise NameError("__build_class__ not found")
    frame.stack.append(constant(build_class))


# ----- containers ---------------------------------------------------------------------------------


def _pop_n(st, n):
    if n == 0:
        return []
    items = st[len(st) - n:]
    del st[len(st) - n:]
    return items


@handler("BUILD_TUPLE")
def _build_tuple(rt, frame, instr):
    items = tuple(_pop_n(frame.stack, instr.arg))
    frame.stack.append(computed(tuple(w.value for w in items), items=items))


@handler("BUILD_LIST")
def _build_list(rt, frame, instr):
    items = _pop_n(frame.stack, instr.arg)
    frame.stack.append(computed([w.value for w in items], items=items))


@handler("BUILD_SET")
def _build_set(rt, frame, instr):
    items = _pop_n(frame.stack, instr.arg)
    frame.stack.append(computed({hashed(rt, w.value) for w in items}))


@handler("BUILD_MAP")
def _build_map(rt, frame, instr):
    items = _pop_n(frame.stack, 2 * instr.arg)
    d, witems = {}, {}
    for i in range(0, len(items), 2):
        key = hashed(rt, items[i].value)
        d[key] = items[i + 1].value
        witems[key] = items[i + 1]
    frame.stack.append(computed(d, items=witems))


@handler("BUILD_CONST_KEY_MAP")
def _build_const_key_map(rt, frame, instr):
    keys = frame.stack.pop().value
    values = _pop_n(frame.stack, instr.arg)
    frame.stack.append(computed({k: w.value for k, w in zip(keys, values)}, items=dict(zip(keys, values))))


@handler("LIST_APPEND")
def _list_append(rt, frame, instr):
    w = frame.stack.pop()
    wlist = frame.stack[-instr.arg]
    wlist.value.append(w.value)
    if type(wlist.items) is list:
        wlist.items.append(w)


@handler("SET_ADD")
def _set_add(rt, frame, instr):
    w = frame.stack.pop()
    frame.stack[-instr.arg].value.add(hashed(rt, w.value))


@handler("MAP_ADD")
def _map_add(rt, frame, instr):
    wvalue = frame.stack.pop()
    wkey = frame.stack.pop()
    wdict = frame.stack[-instr.arg]
    key = hashed(rt, wkey.value)
    wdict.value[key] = wvalue.value
    if type(wdict.items) is dict:
        wdict.items[key] = wvalue


def _not_iterable(value) -> bool:
    tp = type(value)
    return lookup_type(tp, "__iter__") is NOTFOUND and lookup_type(tp, "__getitem__") is NOTFOUND


@handler("LIST_EXTEND")
def _list_extend(rt, frame, instr):
    wsrc = frame.stack.pop()
    wlist = frame.stack[-instr.arg]
    src = wsrc.value
    if _not_iterable(src):
        raise TypeError(f"Value after * must be an iterable, not {type(src).__name__}")
    if type(wlist.items) is list and isinstance(src, (list, tuple)):
        new = _wrapped_elements(rt, wsrc)
        wlist.value.extend(w.value for w in new)
        wlist.items.extend(new)
        return
    wlist.value.extend(src)
    wlist.items = None


@handler("SET_UPDATE")
def _set_update(rt, frame, instr):
    w = frame.stack.pop()
    frame.stack[-instr.arg].value.update(w.value)


@handler("DICT_UPDATE")
def _dict_update(rt, frame, instr):
    wsrc = frame.stack.pop()
    wdict = frame.stack[-instr.arg]
    src = wsrc.value
    if lookup_type(type(src), "keys") is NOTFOUND:
        raise TypeError(f"'{type(src).__name__}' object is not a mapping")
    if type(src) is dict and wsrc.provenance.is_outside:
        _copy_outside_dict(rt, wsrc, wdict)
        return
    wdict.value.update(src)
    wdict.items = None


def _copy_outside_dict(rt, wsrc, wdict):
    """``{**d}`` (and a match's ``**rest``) of an outside dict: its length and each item are inputs, so
    the copy is checked the way reading each key would be."""
    rt.hooks.on_length(wsrc)  # same length + every key below present = same keys
    src, d = wsrc.value, wdict.value
    items = wdict.items if type(wdict.items) is dict else ({} if not d else None)
    for key in list(src):
        w = derive_item(rt, wsrc, key, src[key])
        d[key] = w.value
        if items is not None:
            items[key] = w
    wdict.items = items


@handler("DICT_MERGE")
def _dict_merge(rt, frame, instr):
    wsrc = frame.stack.pop()
    wdict = frame.stack[-instr.arg]
    fn = frame.stack[-instr.arg - 2].value
    src = wsrc.value
    if lookup_type(type(src), "keys") is NOTFOUND:
        raise TypeError(f"{function_str(fn)} argument after ** must be a mapping, not {type(src).__name__}")
    if type(src) is dict and wsrc.provenance.is_outside:
        rt.hooks.on_length(wsrc)  # f(**d): the keyword names passed are d's keys
    d = wdict.value
    for key in src.keys():
        if key in d:
            raise TypeError(f"{function_str(fn)} got multiple values for keyword argument '{key}'")
        value = src[key]
        d[key] = value
        if type(wdict.items) is dict:
            wdict.items[key] = derive_item(rt, wsrc, key, value) if isinstance(src, dict) else computed(value)


def list_to_tuple(w: WrappedValue) -> WrappedValue:
    items = tuple(w.items) if type(w.items) is list else None
    return computed(tuple(w.value), items=items)


@handler("BUILD_SLICE")
def _build_slice(rt, frame, instr):
    parts = _pop_n(frame.stack, instr.arg)
    frame.stack.append(computed(slice(*(w.value for w in parts))))


@handler("BINARY_SUBSCR")
def _binary_subscr(rt, frame, instr):
    wkey = frame.stack.pop()
    wcontainer = frame.stack.pop()
    frame.stack.append(get_item(rt, wcontainer, wkey))


@handler("STORE_SUBSCR")
def _store_subscr(rt, frame, instr):
    wkey = frame.stack.pop()
    wcontainer = frame.stack.pop()
    wvalue = frame.stack.pop()
    set_item(rt, wcontainer, wkey, wvalue)


@handler("DELETE_SUBSCR")
def _delete_subscr(rt, frame, instr):
    wkey = frame.stack.pop()
    wcontainer = frame.stack.pop()
    del_item(rt, wcontainer, wkey)


# ----- unpacking ----------------------------------------------------------------------------------

_native_unpackers = {}


def _native_unpack_error(value, before, after, starred):
    """Re-run the unpacking natively to raise CPython's exact error."""
    key = (before, after, starred)
    fn = _native_unpackers.get(key)
    if fn is None:
        targets = [f"a{i}" for i in range(before)] + (["*s"] if starred else []) + [f"b{i}" for i in range(after)]
        ns = {}
        exec(f"def unpack(v):\n    {', '.join(targets) or '()'}, = v\n", ns)
        fn = _native_unpackers[key] = ns["unpack"]
    fn(value)


def _unpack(rt, w, before, after, starred):
    value = w.value
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        n = len(value)
        if (not starred and n != before) or (starred and n < before + after):
            _native_unpack_error(value, before, after, starred)
        return _wrapped_elements(rt, w)
    if _not_iterable(value):
        _native_unpack_error(value, before, after, starred)
    it = get_iter(rt, w)
    out = []
    limit = before + 1 if not starred else None
    while limit is None or len(out) < limit:
        try:
            out.append(next_wrapped(rt, it))
        except StopIteration:
            break
    if not starred:
        if len(out) < before:
            raise ValueError(f"not enough values to unpack (expected {before}, got {len(out)})")
        if len(out) > before:
            raise ValueError(f"too many values to unpack (expected {before})")
    elif len(out) < before + after:
        raise ValueError(f"not enough values to unpack (expected at least {before + after}, got {len(out)})")
    return out


@handler("UNPACK_SEQUENCE")
def _unpack_sequence(rt, frame, instr):
    w = frame.stack.pop()
    items = _unpack(rt, w, instr.arg, 0, False)
    frame.stack.extend(reversed(items))


@handler("UNPACK_EX")
def _unpack_ex(rt, frame, instr):
    before, after = instr.arg & 0xFF, instr.arg >> 8
    w = frame.stack.pop()
    items = _unpack(rt, w, before, after, True)
    middle = items[before:len(items) - after]
    packed = computed([x.value for x in middle], items=list(middle))
    result = items[:before] + [packed] + items[len(items) - after:]
    frame.stack.extend(reversed(result))


# ----- operators ----------------------------------------------------------------------------------


@handler("BINARY_OP")
def _binary_op(rt, frame, instr):
    wr = frame.stack.pop()
    wl = frame.stack.pop()
    frame.stack.append(binary_op(rt, instr.arg, wl, wr))


@handler("COMPARE_OP")
def _compare_op(rt, frame, instr):
    wr = frame.stack.pop()
    wl = frame.stack.pop()
    frame.stack.append(compare_op(rt, instr.argval, wl, wr))


@handler("UNARY_NEGATIVE")
def _unary_negative(rt, frame, instr):
    frame.stack.append(unary_op(rt, "__neg__", operator.neg, frame.stack.pop()))


@handler("UNARY_INVERT")
def _unary_invert(rt, frame, instr):
    frame.stack.append(unary_op(rt, "__invert__", operator.invert, frame.stack.pop()))


def unary_positive(rt, w):
    return unary_op(rt, "__pos__", operator.pos, w)


@handler("UNARY_NOT")
def _unary_not(rt, frame, instr):
    frame.stack.append(computed(not truth(rt, frame.stack.pop())))


@handler("IS_OP")
def _is_op(rt, frame, instr):
    wr = frame.stack.pop()
    wl = frame.stack.pop()
    if not (_is_singleton(wl.value) or _is_singleton(wr.value)):  # `x is None`: x's type answers it
        rt.hooks.on_identity(wl, wr)
    frame.stack.append(computed((wl.value is wr.value) != bool(instr.arg)))


def _is_singleton(value) -> bool:
    return value is None or value is True or value is False or value is Ellipsis or value is NotImplemented


@handler("CONTAINS_OP")
def _contains_op(rt, frame, instr):
    wcontainer = frame.stack.pop()
    witem = frame.stack.pop()
    result = contains_op(rt, witem, wcontainer)
    frame.stack.append(computed(result != bool(instr.arg)))


# ----- jumps and iteration ------------------------------------------------------------------------


@handler("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT")
def _jump(rt, frame, instr):
    frame.jump_to_offset(instr.argval)


def _pop_jump(predicate):
    def jump_if(rt, frame, instr):
        if predicate(rt, frame.stack.pop()):
            frame.jump_to_offset(instr.argval)

    return jump_if


_jump_if_true = _pop_jump(lambda rt, w: truth(rt, w))
_jump_if_false = _pop_jump(lambda rt, w: not truth(rt, w))
_jump_if_none = _pop_jump(lambda rt, w: w.value is None)
_jump_if_not_none = _pop_jump(lambda rt, w: w.value is not None)


@handler("GET_ITER")
def _get_iter(rt, frame, instr):
    frame.stack.append(get_iter(rt, frame.stack.pop()))


def for_iter_next(rt, frame):
    """Next element of the iterator on top of the stack, or None when exhausted."""
    try:
        return next_wrapped(rt, frame.stack[-1])
    except StopIteration:
        return None


@handler("GET_LEN")
def _get_len(rt, frame, instr):
    # as a call, so the hooks see what was read (the length of an outside dict or list is then checked)
    frame.stack.append(call_value(constant(len), [frame.stack[-1]], {}))


# ----- pattern matching ---------------------------------------------------------------------------


def _isinstance(wvalue, classes) -> bool:
    """``isinstance`` as the program's own call would run it: the hooks see the type being read (an outside
    subject's type is then checked) and may answer for values they stand in for."""
    return bool(call_value(constant(isinstance), [wvalue, constant(classes)], {}).value)


@handler("MATCH_MAPPING")
def _match_mapping(rt, frame, instr):
    frame.stack.append(computed(_isinstance(frame.stack[-1], collections.abc.Mapping)))


@handler("MATCH_SEQUENCE")
def _match_sequence(rt, frame, instr):
    w = frame.stack[-1]
    ok = _isinstance(w, collections.abc.Sequence) and not _isinstance(w, (str, bytes, bytearray))
    frame.stack.append(computed(ok))


_MISSING = object()


@handler("MATCH_KEYS")
def _match_keys(rt, frame, instr):
    frame.stack.append(match_keys(rt, frame.stack[-2], frame.stack[-1].value))


def match_keys(rt, wsubject, keys):
    """Tuple of the subject's values for ``keys``, or None when one is missing."""
    subject = wsubject.value
    if not keys:
        return computed(())
    seen = set()
    values = []
    for key in keys:
        if key in seen:
            raise ValueError(f"mapping pattern checks duplicate key ({key!r})")
        seen.add(key)
        value = subject.get(key, _MISSING)
        if value is _MISSING:
            if isinstance(subject, dict) and wsubject.provenance.is_outside:
                rt.hooks.on_membership(wsubject, key, False)  # the branch taken relied on the absence
            return computed(None)
        values.append(derive_item(rt, wsubject, key, value) if isinstance(subject, dict) else computed(value))
    return computed(tuple(w.value for w in values), items=tuple(values))


_MATCH_SELF_TYPES = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


@handler("MATCH_CLASS")
def _match_class(rt, frame, instr):
    st = frame.stack
    names = st.pop().value
    cls = st.pop().value
    wsubject = st.pop()
    st.append(match_class(rt, wsubject, cls, instr.arg, names))


def match_class(rt, wsubject, cls, nargs, kw_names):
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    if not _isinstance(wsubject, cls):
        return computed(None)
    seen = []
    attrs = []
    match_self = False
    if nargs:
        try:
            match_args = getattr(cls, "__match_args__")
        except AttributeError:
            match_args = _MISSING
        if match_args is _MISSING:
            match_self = issubclass(cls, _MATCH_SELF_TYPES) and any(
                t in _MATCH_SELF_TYPES for t in cls.__mro__ if t in _MATCH_SELF_TYPES)
            match_args = ()
        elif not isinstance(match_args, tuple):
            raise TypeError(f"{cls.__name__}.__match_args__ must be a tuple (got {type(match_args).__name__})")
        allowed = 1 if match_self else len(match_args)
        if allowed < nargs:
            plural = "" if allowed == 1 else "s"
            raise TypeError(f"{cls.__name__}() accepts {allowed} positional sub-pattern{plural} ({nargs} given)")
        if match_self:
            attrs.append(wsubject)
        else:
            for i in range(nargs):
                name = match_args[i]
                if not isinstance(name, str):
                    raise TypeError(f"__match_args__ elements must be strings (got {type(name).__name__})")
                w = _match_attr(rt, wsubject, cls, name, seen)
                if w is None:
                    return computed(None)
                attrs.append(w)
    for name in kw_names:
        w = _match_attr(rt, wsubject, cls, name, seen)
        if w is None:
            return computed(None)
        attrs.append(w)
    return computed(tuple(w.value for w in attrs), items=tuple(attrs))


def _match_attr(rt, wsubject, cls, name, seen):
    if name in seen:
        raise TypeError(f"{cls.__name__}() got multiple sub-patterns for attribute {name!r}")
    seen.append(name)
    try:
        return load_attr(rt, wsubject, name)
    except AttributeError:
        return None


# ----- strings ------------------------------------------------------------------------------------


@handler("FORMAT_VALUE")
def _format_value(rt, frame, instr):
    flags = instr.arg
    spec = frame.stack.pop().value if flags & 0x04 else ""
    w = frame.stack.pop()
    conversion = flags & 0x03
    if conversion == 3:
        w = computed(ascii(w.value))
    elif conversion:
        w = text_of(rt, w, "str" if conversion == 1 else "repr")
    if type(w.value) is str and not spec:
        frame.stack.append(computed(w.value))
    else:
        frame.stack.append(text_of(rt, w, "format", spec))


@handler("BUILD_STRING")
def _build_string(rt, frame, instr):
    parts = _pop_n(frame.stack, instr.arg)
    frame.stack.append(computed("".join(w.value for w in parts)))


# ----- exceptions ---------------------------------------------------------------------------------


def _make_exception(rt, value):
    if isinstance(value, type) and issubclass(value, BaseException):
        instance = call_value(constant(value), [], {}).value
        if not isinstance(instance, BaseException):
            raise TypeError(f"calling {value!r} should have returned an instance of BaseException, "
                            f"not {type(instance).__name__}")
        return instance
    if isinstance(value, BaseException):
        return value
    raise TypeError("exceptions must derive from BaseException")


@handler("RAISE_VARARGS")
def _raise_varargs(rt, frame, instr):
    argc = instr.arg
    if argc == 0:
        exc = rt.handled_exception()
        if exc is None:
            raise RuntimeError("No active exception to reraise")
        rt.no_chain = exc
        rt.reraised = (exc, exc.__traceback__)  # a re-raise keeps the traceback (see loop.py)
        raise exc
    wcause = frame.stack.pop() if argc == 2 else None
    exc = _make_exception(rt, frame.stack.pop().value)
    if wcause is not None:
        cause = wcause.value
        if isinstance(cause, type) and issubclass(cause, BaseException):
            cause = _make_exception(rt, cause)
        elif cause is not None and not isinstance(cause, BaseException):
            raise TypeError("exception causes must derive from BaseException")
        exc.__cause__ = cause
    rt.chain_context(exc)
    rt.no_chain = exc
    raise exc


@handler("RERAISE")
def _reraise(rt, frame, instr):
    exc = frame.stack.pop().value
    rt.no_chain = exc
    rt.reraised = (exc, exc.__traceback__)
    raise exc


@handler("PUSH_EXC_INFO")
def _push_exc_info(rt, frame, instr):
    w = frame.stack.pop()
    entry = rt.exc_stack[-1]
    frame.stack.append(computed(entry.exc))
    entry.exc = w.value
    frame.stack.append(w)


@handler("POP_EXCEPT")
def _pop_except(rt, frame, instr):
    rt.exc_stack[-1].exc = frame.stack.pop().value


def _check_exception_class(right):
    classes = right if isinstance(right, tuple) else (right,)
    for c in classes:
        if not (isinstance(c, type) and issubclass(c, BaseException)):
            raise TypeError("catching classes that do not inherit from BaseException is not allowed")


@handler("CHECK_EXC_MATCH")
def _check_exc_match(rt, frame, instr):
    right = frame.stack.pop().value
    _check_exception_class(right)
    left = frame.stack[-1].value
    frame.stack.append(computed(isinstance(left, right)))


@handler("CHECK_EG_MATCH")
def _check_eg_match(rt, frame, instr):
    # exc, type -> rest, match; a match becomes the exception being handled.
    st = frame.stack
    match_type = st.pop().value
    check_except_star_type(match_type)
    match, rest = exception_group_match(st[-1].value, match_type)
    st[-1] = computed(rest)
    st.append(computed(match))
    if match is not None:
        rt.exc_stack[-1].exc = match


@handler("PREP_RERAISE_STAR")
def _prep_reraise_star(rt, frame, instr):
    # 3.11: orig, [raised..., rest] -> what to re-raise (None: nothing); 3.12+ uses CALL_INTRINSIC_2.
    excs = frame.stack.pop().value
    orig = frame.stack.pop().value
    frame.stack.append(computed(prep_reraise_star(orig, excs)))


@handler("BEFORE_WITH")
def _before_with(rt, frame, instr):
    wmgr = frame.stack.pop()
    tp = type(wmgr.value)
    enter = lookup_type(tp, "__enter__")
    exit_ = lookup_type(tp, "__exit__")
    if enter is NOTFOUND:
        raise TypeError(f"'{tp.__name__}' object does not support the context manager protocol")
    if exit_ is NOTFOUND:
        raise TypeError(f"'{tp.__name__}' object does not support the context manager protocol "
                        "(missed __exit__ method)")
    special_method(rt, tp, "__exit__", exit_)  # patching either on the class later must retrace
    special_method(rt, tp, "__enter__", enter)
    frame.stack.append(bind_method(wmgr, exit_))
    frame.stack.append(call_value(bind_method(wmgr, enter), [], {}))


@handler("WITH_EXCEPT_START")
def _with_except_start(rt, frame, instr):
    exc = frame.stack[-1].value
    wexit = frame.stack[-4]
    result = call_value(wexit, [computed(type(exc)), computed(exc), computed(exc.__traceback__)], {})
    frame.stack.append(result)


# ----- generators ---------------------------------------------------------------------------------


@handler("RETURN_GENERATOR")
def _return_generator(rt, frame, instr):
    return GENERATOR, None


@handler("YIELD_VALUE")
def _yield_value(rt, frame, instr):
    return YIELD, frame.stack.pop()


@handler("GET_YIELD_FROM_ITER")
def _get_yield_from_iter(rt, frame, instr):
    from .generators import InterpretedGenerator

    w = frame.stack[-1]
    if type(w.value) in (types.GeneratorType, InterpretedGenerator):
        return
    if type(w.value) is types.CoroutineType:
        raise unsupported("'yield from' a coroutine", frame.source_location())
    frame.stack[-1] = get_iter(rt, w)


def send_value(rt, wreceiver, wvalue) -> WrappedValue:
    """One step of ``yield from``: raises StopIteration when the receiver is done."""
    from .generators import InterpretedGenerator

    receiver = wreceiver.value
    if type(receiver) is InterpretedGenerator:
        return receiver.send_wrapped(wvalue)
    if wvalue.value is None and lookup_type(type(receiver), "__next__") is not NOTFOUND:
        return next_wrapped(rt, wreceiver)
    return call_value(load_attr(rt, wreceiver, "send"), [wvalue], {})


# ----- imports ------------------------------------------------------------------------------------


@handler("IMPORT_NAME")
def _import_name(rt, frame, instr):
    fromlist = frame.stack.pop().value
    level = frame.stack.pop().value
    import_ = frame.builtins.get("__import__")
    if import_ is None:
        raise ImportError("__import__ not found")
    frame.stack.append(computed(import_(instr.argval, frame.globals, None, fromlist, level)))


@handler("IMPORT_FROM")
def _import_from(rt, frame, instr):
    import sys

    module = frame.stack[-1].value
    name = instr.argval
    try:
        value = getattr(module, name)
    except AttributeError:
        value = _MISSING
    if value is _MISSING:
        module_name = getattr(module, "__name__", None)
        value = sys.modules.get(f"{module_name}.{name}", _MISSING)
        if value is _MISSING:
            location = getattr(module, "__file__", None) or "unknown location"
            raise ImportError(f"cannot import name '{name}' from '{module_name}' ({location})",
                              name=module_name)
    frame.stack.append(computed(value))


# Class bodies (and non-optimized code): LOAD_NAME, STORE_NAME, DELETE_NAME, LOAD_CLASSDEREF, SETUP_ANNOTATIONS.
COMMON_HANDLERS.update(NAME_HANDLERS)
for _name in ("IMPORT_STAR", "PRINT_EXPR"):
    COMMON_HANDLERS[_name] = not_supported(f"opcode {_name} (module-level or interactive code only)")
for _name in ("GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "BEFORE_ASYNC_WITH", "END_ASYNC_FOR", "ASYNC_GEN_WRAP"):
    COMMON_HANDLERS[_name] = not_supported(f"async construct (opcode {_name})",
                                           "call it outside the jitted function")
