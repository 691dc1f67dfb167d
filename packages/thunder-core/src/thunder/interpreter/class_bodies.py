"""Class bodies: the ``__build_class__`` lookaside and the name-based opcodes of class-body code.

``class C(*bases, **kwds): body`` compiles to ``__build_class__(<body function>, "C", *bases,
**kwds)``. The lookaside follows CPython's ``builtin___build_class__``: ``__mro_entries__`` of
non-class bases, the most derived metaclass, ``__prepare__``, the body run in an interpreted frame
whose ``namespace`` is the prepared mapping, ``__orig_bases__``, the metaclass call through the
normal call path (a Python ``__new__``/``__init__``/``__call__`` is interpreted) and the
``__classcell__`` check. The body's ``LOAD_NAME``/``STORE_NAME``/... read and write that mapping
(a Python-level ``__getitem__``/``__setitem__`` of a custom mapping is interpreted); values stored
by the body keep their provenance when read back.

Frames without a namespace (function frames) run non-optimized code against their globals, as
CPython's function calls do.
"""

from __future__ import annotations

import builtins
import inspect
import types

from .attributes import load_attr
from .calls import bind_arguments, call_value, native_call
from .derivation import derive_item
from .errors import InterpreterError
from .frame import Frame
from .operators import del_item, get_item, set_item
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed, constant

__all__ = ["build_class", "NAME_HANDLERS", "mapping_lookup", "frame_namespace"]

_BUILD_CLASS = builtins.__build_class__
_HEAPTYPE = 1 << 9


def _tp_name(tp) -> str:
    """CPython's ``tp_name``: heap types (classes) have their bare name, static types may be dotted."""
    if tp.__flags__ & _HEAPTYPE or tp.__module__ == "builtins":
        return tp.__name__
    return f"{tp.__module__}.{tp.__qualname__}"


# ----- namespace access ---------------------------------------------------------------------------


def frame_namespace(frame):
    """The WrappedValue of the frame's locals mapping, or None where the globals serve (non-optimized
    code called as a function). Optimized code has no mapping (SystemError in CPython)."""
    if frame.namespace is not None:
        return frame.namespace
    if frame.code.co_flags & inspect.CO_OPTIMIZED:
        return NOTFOUND
    return None


def mapping_lookup(rt, wmapping, name):
    """``mapping[name]`` with provenance, or None when the key is missing (KeyError), as the
    class-body opcodes do: an exact dict is read directly, other mappings through ``__getitem__``."""
    mapping = wmapping.value
    if type(mapping) is dict:
        try:
            value = mapping[name]
        except KeyError:
            return None
        return derive_item(rt, wmapping, name, value)
    try:
        return get_item(rt, wmapping, constant(name))
    except KeyError:
        return None


def _load_global(rt, frame, name):
    from .opcodes_common import load_global

    return load_global(rt, frame, name)


def _load_name(rt, frame, instr):
    name = instr.argval
    wns = frame_namespace(frame)
    if wns is NOTFOUND:
        raise SystemError(f"no locals when loading {name!r}")
    if wns is not None:
        w = mapping_lookup(rt, wns, name)
        if w is not None:
            frame.stack.append(w)
            return
    frame.stack.append(_load_global(rt, frame, name))


def _store_name(rt, frame, instr):
    name = instr.argval
    w = frame.stack.pop()
    wns = frame_namespace(frame)
    if wns is NOTFOUND:
        raise SystemError(f"no locals found when storing {name!r}")
    if wns is None:
        rt.hooks.on_store("global", None, name, w)
    else:
        set_item(rt, wns, constant(name), w)


def _delete_name(rt, frame, instr):
    name = instr.argval
    wns = frame_namespace(frame)
    if wns is NOTFOUND:
        raise SystemError(f"no locals when deleting {name!r}")
    if wns is None:
        if name not in frame.globals:
            raise NameError(f"name '{name}' is not defined", name=name)
        rt.hooks.on_store("delete_global", None, name, None)
        return
    failed = False
    try:
        del_item(rt, wns, constant(name))
    except InterpreterError:
        raise
    except Exception:  # CPython replaces any error of the deletion by the NameError
        failed = True
    if failed:  # raised outside the except block: the failed deletion is not its __context__
        raise NameError(f"name '{name}' is not defined", name=name)


def _load_classderef(rt, frame, instr):
    # 3.10/3.11: a free variable read in a class body: the namespace first, then the cell.
    wns = frame.namespace
    if wns is not None:
        w = mapping_lookup(rt, wns, instr.argval)
        if w is not None:
            frame.stack.append(w)
            return
    from .opcode_table import HANDLERS

    return HANDLERS["LOAD_DEREF"](rt, frame, instr)


def _setup_annotations(rt, frame, instr):
    wns = frame_namespace(frame)
    if wns is NOTFOUND:
        raise SystemError("no locals found when setting up annotations")
    if wns is None:
        if "__annotations__" not in frame.globals:
            rt.hooks.on_store("global", None, "__annotations__", computed({}, items={}))
        return
    if mapping_lookup(rt, wns, "__annotations__") is None:
        set_item(rt, wns, constant("__annotations__"), computed({}, items={}))


NAME_HANDLERS = {
    "LOAD_NAME": _load_name,
    "STORE_NAME": _store_name,
    "DELETE_NAME": _delete_name,
    "LOAD_CLASSDEREF": _load_classderef,
    "SETUP_ANNOTATIONS": _setup_annotations,
}


# ----- __build_class__ ----------------------------------------------------------------------------


def _update_bases(rt, wbases, wbases_tuple):
    """PEP 560: replace non-class bases by their ``__mro_entries__(bases)``; None when unchanged."""
    new = None
    for i, wbase in enumerate(wbases):
        if issubclass(type(wbase.value), type):
            if new is not None:
                new.append(wbase)
            continue
        try:
            wmeth = load_attr(rt, wbase, "__mro_entries__")
        except AttributeError:
            wmeth = None
        if wmeth is None:
            if new is not None:
                new.append(wbase)
            continue
        wentries = call_value(wmeth, [wbases_tuple], {})
        entries = wentries.value
        if not isinstance(entries, tuple):
            raise TypeError("__mro_entries__ must return a tuple")
        if new is None:
            new = list(wbases[:i])
        new.extend(derive_item(rt, wentries, j, v) for j, v in enumerate(entries))
    return new


def _calculate_metaclass(meta, bases):
    """The most derived metaclass of ``meta`` and the bases' types (CPython's _PyType_CalculateMetaclass)."""
    winner = meta
    for base in bases:
        tp = type(base)
        if type.__subclasscheck__(tp, winner):  # PyType_IsSubtype(winner, tp)
            continue
        if type.__subclasscheck__(winner, tp):
            winner = tp
            continue
        raise TypeError("metaclass conflict: the metaclass of a derived class must be a (non-strict) "
                        "subclass of the metaclasses of all its bases")
    return winner


def _run_body(rt, func, wns):
    from .loop import execute

    frame = Frame(func, func.__code__, func.__globals__, func.__builtins__)
    frame.namespace = wns
    bind_arguments(rt, frame, func, [], {}, False)  # no arguments: copies the closure cells
    if frame.info.cell_init:  # 3.10: __class__ / __classdict__ cells
        from .opcodes_310 import init_cells

        init_cells(rt, frame)
    _, wresult = execute(rt, frame)
    return wresult


def build_class(rt, wargs, wkwargs) -> WrappedValue:
    """``builtins.__build_class__(func, name, *bases, metaclass=..., **kwds)`` with an interpreted body."""
    if len(wargs) < 2:
        raise TypeError("__build_class__: not enough arguments")
    wfunc, wname, *wbases = wargs
    func = wfunc.value
    if type(func) is not types.FunctionType:
        raise TypeError("__build_class__: func must be a function")
    if not isinstance(wname.value, str):
        raise TypeError("__build_class__: name is not a string")
    if not rt.hooks.should_interpret(func):
        return native_call(_BUILD_CLASS, wargs, wkwargs)

    orig_bases = tuple(w.value for w in wbases)
    wbases_tuple = computed(orig_bases, items=tuple(wbases))
    new_bases = _update_bases(rt, wbases, wbases_tuple)
    if new_bases is None:
        wbases_final = wbases_tuple
    else:
        wbases_final = computed(tuple(w.value for w in new_bases), items=tuple(new_bases))
    bases = wbases_final.value

    mkw = dict(wkwargs)
    wmeta = mkw.pop("metaclass", None)
    if wmeta is None:
        meta = _calculate_metaclass(type(bases[0]) if bases else type, bases)
        wmeta = computed(meta)
        is_class = True
    else:
        is_class = isinstance(wmeta.value, type)
        if is_class:
            meta = _calculate_metaclass(wmeta.value, bases)
            if meta is not wmeta.value:
                wmeta = computed(meta)

    try:
        wprepare = load_attr(rt, wmeta, "__prepare__")
    except AttributeError:
        wprepare = None
    if wprepare is None:
        wns = computed({}, items={})
    else:
        wns = call_value(wprepare, [wname, wbases_final], mkw)
        if type(wns.value) is dict and wns.items is None and not wns.provenance.is_outside:
            wns = WrappedValue(wns.value, wns.provenance, None, {})  # remember what the body stores
    ns = wns.value
    if lookup_type(type(ns), "__getitem__") is NOTFOUND:  # PyMapping_Check
        owner = _tp_name(wmeta.value) if is_class else "<metaclass>"
        raise TypeError(f"{owner}.__prepare__() must return a mapping, not {_tp_name(type(ns))}")

    wcell = _run_body(rt, func, wns)

    if new_bases is not None:
        set_item(rt, wns, constant("__orig_bases__"), wbases_tuple)
    wcls = call_value(wmeta, [wname, wbases_final, wns], mkw)
    cls, cell = wcls.value, wcell.value
    rt.created_classes[id(cls)] = cls  # made by this call: its attributes are not outside state
    if isinstance(cls, type) and type(cell) is types.CellType:
        try:
            cell_cls = cell.cell_contents
        except ValueError:  # empty; raised below, outside the except block (no __context__)
            cell_cls = NOTFOUND
        if cell_cls is NOTFOUND:
            raise RuntimeError(f"__class__ not set defining {repr(wname.value)[:200]} as {repr(cls)[:200]}. "
                               "Was __classcell__ propagated to type.__new__?")
        if cell_cls is not cls:
            raise TypeError(f"__class__ set to {repr(cell_cls)[:200]} defining {repr(wname.value)[:200]} "
                            f"as {repr(cls)[:200]}")
    return wcls
