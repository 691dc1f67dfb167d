"""Opcode handlers specific to CPython 3.13 bytecode (3.12's table with the differences overridden).

Main differences from 3.12 that matter here:

* call sites are laid out ``callable, self_or_NULL, args...`` (3.12: ``NULL_or_method,
  callable_or_self``), so LOAD_GLOBAL / LOAD_ATTR / LOAD_SUPER_ATTR push the NULL *after* the
  value, CALL / CALL_FUNCTION_EX read it from the other slot, and KW_NAMES became CALL_KW;
* superinstructions LOAD_FAST_LOAD_FAST, STORE_FAST_LOAD_FAST, STORE_FAST_STORE_FAST (two 4-bit
  local indices packed in the oparg);
* TO_BOOL before conditional jumps, COMPARE_OP's bit 16 asks for a bool result;
* FORMAT_VALUE split into CONVERT_VALUE, FORMAT_SIMPLE and FORMAT_WITH_SPEC;
* MAKE_FUNCTION takes no flags; SET_FUNCTION_ATTRIBUTE sets defaults/closure/... one by one;
* an exhausted FOR_ITER skips both END_FOR and the POP_TOP after it; END_FOR pops one value.
"""

from __future__ import annotations

import types

from .attributes import load_attr, load_method
from .calls import call_value
from .errors import unsupported
from .opcodes_312 import HANDLERS as HANDLERS_312
from .opcodes_312 import (
    finish_delegation,  # noqa: F401 - same SEND/END_SEND layout as 3.12
    super_attr_lookup,
)
from .opcodes_common import for_iter_next
from .operators import compare_op
from .protocols import truth
from .provenance import Provenance
from .text import text_of
from .wrapped import computed

HANDLERS = dict(HANDLERS_312)

for _name in ("KW_NAMES", "FORMAT_VALUE"):
    HANDLERS.pop(_name, None)


def _unbound(name):
    return UnboundLocalError(f"cannot access local variable '{name}' where it is not associated with a value")


def _local(frame, index):
    w = frame.locals[index]
    if w is None:
        raise _unbound(frame.info.localsplus_names[index])
    return w


# ----- locals -------------------------------------------------------------------------------------


def _load_fast_load_fast(rt, frame, instr):
    frame.stack.append(_local(frame, instr.arg >> 4))
    frame.stack.append(_local(frame, instr.arg & 15))


def _store_fast_load_fast(rt, frame, instr):
    frame.locals[instr.arg >> 4] = frame.stack.pop()
    frame.stack.append(_local(frame, instr.arg & 15))


def _store_fast_store_fast(rt, frame, instr):
    frame.locals[instr.arg >> 4] = frame.stack.pop()
    frame.locals[instr.arg & 15] = frame.stack.pop()


# ----- globals and attributes (NULL goes above the value) -----------------------------------------


def _load_global(rt, frame, instr):
    name = instr.argval
    if name in frame.globals:
        w = rt.input(frame.globals[name], Provenance.global_(frame.globals, name))
    elif name in frame.builtins:
        w = rt.input(frame.builtins[name], Provenance.builtin(name, frame.builtins))
    else:
        raise NameError(f"name '{name}' is not defined", name=name)
    frame.stack.append(w)
    if instr.arg & 1:
        frame.stack.append(None)


def _push_method(frame, meth, w):
    # (method, self) when a method was found unbound, else (attribute, NULL).
    if meth is None:
        frame.stack.append(w)
        frame.stack.append(None)
    else:
        frame.stack.append(meth)
        frame.stack.append(w)


def _load_attr(rt, frame, instr):
    wobj = frame.stack.pop()
    if instr.arg & 1:
        meth, w = load_method(rt, wobj, instr.argval)
        _push_method(frame, meth, w)
    else:
        frame.stack.append(load_attr(rt, wobj, instr.argval))


def _load_super_attr(rt, frame, instr):
    method, meth, w = super_attr_lookup(rt, frame, instr)
    if method:
        _push_method(frame, meth, w)
    else:
        frame.stack.append(w)


# ----- calls --------------------------------------------------------------------------------------


def _pop_call(st, argc):
    args = st[len(st) - argc:]
    del st[len(st) - argc:]
    self_or_null = st.pop()
    fn = st.pop()
    if self_or_null is not None:
        args.insert(0, self_or_null)
    return fn, args


def _call(rt, frame, instr):
    fn, args = _pop_call(frame.stack, instr.arg)
    frame.stack.append(call_value(fn, args, {}))


def _call_kw(rt, frame, instr):
    st = frame.stack
    kw_names = st.pop().value
    fn, args = _pop_call(st, instr.arg)
    n = len(kw_names)
    kwargs = dict(zip(kw_names, args[len(args) - n:])) if n else {}
    if n:
        del args[len(args) - n:]
    st.append(call_value(fn, args, kwargs))


def _call_function_ex(rt, frame, instr):
    # 3.13: func, NULL, args[, kwargs]; reuse the common handler, which expects NULL, func, ...
    st = frame.stack
    i = len(st) - (2 if instr.arg & 1 else 1) - 2  # the callable
    st[i], st[i + 1] = st[i + 1], st[i]
    return HANDLERS_312["CALL_FUNCTION_EX"](rt, frame, instr)


def _dict_merge(rt, frame, instr):
    # The common handler finds the callable at stack[-arg-2] (3.12 layout); here it is one lower.
    st = frame.stack
    i = len(st) - 1 - instr.arg - 3
    st[i], st[i + 1] = st[i + 1], st[i]
    try:
        return HANDLERS_312["DICT_MERGE"](rt, frame, instr)
    finally:
        st[i], st[i + 1] = st[i + 1], st[i]


# ----- functions ----------------------------------------------------------------------------------


def _make_function(rt, frame, instr):
    code = frame.stack.pop().value
    # Cells come later (SET_FUNCTION_ATTRIBUTE 8); FunctionType insists on a closure of the right size.
    placeholder = tuple(types.CellType() for _ in code.co_freevars) or None
    fn = types.FunctionType(code, frame.globals, code.co_name, None, placeholder)
    fn.__qualname__ = code.co_qualname
    frame.stack.append(computed(fn))


def _set_function_attribute(rt, frame, instr):
    st = frame.stack
    wfn = st.pop()
    value = st.pop().value
    fn = wfn.value
    flag = instr.arg
    if flag == 0x01:
        fn.__defaults__ = value
    elif flag == 0x02:
        fn.__kwdefaults__ = value
    elif flag == 0x04:
        if isinstance(value, tuple):
            value = dict(zip(value[::2], value[1::2]))
        fn.__annotations__ = value
    elif flag == 0x08:
        # __closure__ is read-only: rebuild the function with its cells.
        new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, value)
        new.__qualname__ = fn.__qualname__
        if fn.__kwdefaults__ is not None:
            new.__kwdefaults__ = fn.__kwdefaults__
        if fn.__dict__.get("__annotations__") is not None:
            new.__annotations__ = fn.__annotations__
        fn = new
    else:
        raise unsupported(f"SET_FUNCTION_ATTRIBUTE {flag}", frame.source_location())
    st.append(computed(fn))


# ----- operators, truth, iteration ----------------------------------------------------------------


def _to_bool(rt, frame, instr):
    w = frame.stack.pop()
    frame.stack.append(w if type(w.value) is bool else computed(truth(rt, w)))


def _compare_op(rt, frame, instr):
    wr = frame.stack.pop()
    wl = frame.stack.pop()
    w = compare_op(rt, instr.argval, wl, wr)
    if instr.arg & 16 and type(w.value) is not bool:
        w = computed(bool(w.value))
    frame.stack.append(w)


def _for_iter(rt, frame, instr):
    w = for_iter_next(rt, frame)
    if w is None:
        frame.stack.pop()
        frame.jump_to_offset(instr.argval)
        # An exhausted FOR_ITER skips the END_FOR and the POP_TOP that follows it.
        if frame.info.instructions[frame.ip].opname == "END_FOR":
            frame.ip += 2
    else:
        frame.stack.append(w)


def _end_for(rt, frame, instr):
    frame.stack.pop()


# ----- f-strings ----------------------------------------------------------------------------------


def _convert_value(rt, frame, instr):
    w = frame.stack.pop()
    if instr.arg == 3:
        frame.stack.append(computed(ascii(w.value)))
    else:
        frame.stack.append(text_of(rt, w, "str" if instr.arg == 1 else "repr"))


def _format_simple(rt, frame, instr):
    w = frame.stack.pop()
    if type(w.value) is str:
        frame.stack.append(w)
    else:
        frame.stack.append(text_of(rt, w, "format"))


def _format_with_spec(rt, frame, instr):
    spec = frame.stack.pop().value
    frame.stack.append(text_of(rt, frame.stack.pop(), "format", spec))


def _enter_executor(rt, frame, instr):
    raise unsupported("opcode ENTER_EXECUTOR (tier-2 executor in the bytecode)", frame.source_location())


_enter_executor.rejects = "ENTER_EXECUTOR"  # for the opcode audit: never seen by dis, see the README


HANDLERS.update({
    "LOAD_FAST_LOAD_FAST": _load_fast_load_fast,
    "STORE_FAST_LOAD_FAST": _store_fast_load_fast,
    "STORE_FAST_STORE_FAST": _store_fast_store_fast,
    "LOAD_GLOBAL": _load_global,
    "LOAD_ATTR": _load_attr,
    "LOAD_SUPER_ATTR": _load_super_attr,
    "CALL": _call,
    "CALL_KW": _call_kw,
    "CALL_FUNCTION_EX": _call_function_ex,
    "DICT_MERGE": _dict_merge,
    "MAKE_FUNCTION": _make_function,
    "SET_FUNCTION_ATTRIBUTE": _set_function_attribute,
    "TO_BOOL": _to_bool,
    "COMPARE_OP": _compare_op,
    "FOR_ITER": _for_iter,
    "END_FOR": _end_for,
    "CONVERT_VALUE": _convert_value,
    "FORMAT_SIMPLE": _format_simple,
    "FORMAT_WITH_SPEC": _format_with_spec,
    "ENTER_EXECUTOR": _enter_executor,
})
