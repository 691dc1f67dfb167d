"""Opcode handlers specific to CPython 3.12 bytecode."""

from __future__ import annotations

import dis
import opcode
import types

from .attributes import load_attr, load_method, load_super_attr
from .calls import call_value
from .class_bodies import frame_namespace, mapping_lookup
from .errors import unsupported
from .exception_groups import prep_reraise_star
from .loop import RETURN
from .opcodes_common import (
    COMMON_HANDLERS,
    _jump_if_false,
    _jump_if_none,
    _jump_if_not_none,
    _jump_if_true,
    for_iter_next,
    list_to_tuple,
    load_global,
    push_method,
    send_value,
    unary_positive,
)
from .operators import get_item, set_item
from .typeutil import NOTFOUND
from .wrapped import computed, constant

HANDLERS = dict(COMMON_HANDLERS)


def _load_attr(rt, frame, instr):
    wobj = frame.stack.pop()
    if instr.arg & 1:  # method form: push (method, self) or (NULL, attribute)
        push_method(rt, frame, wobj, instr.argval)
    else:
        frame.stack.append(load_attr(rt, wobj, instr.argval))


def super_attr_lookup(rt, frame, instr):
    """LOAD_SUPER_ATTR's lookup (3.12+): (method form?, method or None, WrappedValue); the caller pushes."""
    st = frame.stack
    wself = st.pop()
    wcls = st.pop()
    wsuper = st.pop()
    method = bool(instr.arg & 1)
    if wsuper.value is super:
        meth, w = load_super_attr(rt, wcls.value, wself, instr.argval, method)
    else:  # a shadowed `super`: call it and look the attribute up normally
        wsuper_obj = call_value(wsuper, [wcls, wself] if instr.arg & 2 else [], {})
        if method:
            meth, w = load_method(rt, wsuper_obj, instr.argval)
        else:
            meth, w = None, load_attr(rt, wsuper_obj, instr.argval)
    return method, meth, w


def _load_super_attr(rt, frame, instr):
    method, meth, w = super_attr_lookup(rt, frame, instr)
    if method:
        frame.stack.append(meth)
    frame.stack.append(w)


def _for_iter(rt, frame, instr):
    w = for_iter_next(rt, frame)
    if w is None:
        frame.stack.pop()
        frame.jump_to_offset(instr.argval)
        if frame.info.instructions[frame.ip].opname == "END_FOR":
            frame.ip += 1  # exhausted FOR_ITER skips END_FOR
    else:
        frame.stack.append(w)


def _end_for(rt, frame, instr):
    del frame.stack[-2:]


def _send(rt, frame, instr):
    # Stack: receiver, value -> receiver, yielded | (on StopIteration) receiver, return value, jump.
    st = frame.stack
    wvalue = st.pop()
    try:
        st.append(send_value(rt, st[-1], wvalue))
        return
    except StopIteration as e:
        result = e.value
    st.append(computed(result))
    frame.jump_to_offset(instr.argval)


def finish_delegation(frame, wresult):
    """After a delegated throw() made the sub-iterator return: continue at the yield-from's END_SEND."""
    send = frame.info.instructions[frame.ip - 2]  # SEND, YIELD_VALUE, <ip: RESUME>
    assert send.opname == "SEND", send
    frame.stack.append(wresult)
    frame.jump_to_offset(send.argval)


def _end_send(rt, frame, instr):
    w = frame.stack.pop()
    frame.stack[-1] = w


def _cleanup_throw(rt, frame, instr):
    st = frame.stack
    exc = st[-1].value
    if isinstance(exc, StopIteration):
        del st[-3:]
        st.append(computed(None))
        st.append(computed(exc.value))
        return
    rt.no_chain = exc
    st.pop()
    raise exc


def _return_const(rt, frame, instr):
    return RETURN, constant(instr.argval)


def _load_fast_and_clear(rt, frame, instr):
    frame.stack.append(frame.locals[instr.arg])  # None (unbound) acts as NULL
    frame.locals[instr.arg] = None


def _binary_slice(rt, frame, instr):
    st = frame.stack
    wend = st.pop()
    wstart = st.pop()
    wcontainer = st.pop()
    st.append(get_item(rt, wcontainer, computed(slice(wstart.value, wend.value))))


def _store_slice(rt, frame, instr):
    st = frame.stack
    wend = st.pop()
    wstart = st.pop()
    wcontainer = st.pop()
    wvalue = st.pop()
    set_item(rt, wcontainer, computed(slice(wstart.value, wend.value)), wvalue)


def _stopiteration_error(w):
    exc = w.value
    if isinstance(exc, StopIteration):
        error = RuntimeError("generator raised StopIteration")
        error.__cause__ = exc
        error.__context__ = exc
        return computed(error)
    return w


def _native_intrinsic(kind, arg):
    """A function whose body is ``CALL_INTRINSIC_<kind> arg`` on its arguments, run by CPython itself.

    The PEP 695 intrinsics make TypeVars with lazily evaluated bounds/constraints/defaults and
    lazily evaluated type aliases, which no Python-level API can build; running the very intrinsic
    gives CPython's objects.
    """
    def intrinsic(rt, frame, *wargs):
        code = _native_intrinsic_codes.get((kind, arg))
        if code is None:
            op = dis.opmap
            units = [(op["RESUME"], 0), *((op["LOAD_FAST"], i) for i in range(kind)),
                     (op[f"CALL_INTRINSIC_{kind}"], arg), (op["RETURN_VALUE"], 0)]
            template = (lambda a: None) if kind == 1 else (lambda a, b: None)
            code = template.__code__.replace(
                co_code=bytes(b for unit in units for b in unit), co_stacksize=kind, co_consts=(None,),
                co_linetable=bytes([0xF8 | (len(units) - 1)]),  # one "no location" entry
                co_exceptiontable=b"", co_name="<intrinsic>", co_qualname="<intrinsic>")
            _native_intrinsic_codes[(kind, arg)] = code
        # The frame's globals: a type alias takes __module__ from its creator's globals.
        fn = types.FunctionType(code, frame.globals)
        result = fn(*(w.value for w in wargs))
        return wargs[0] if kind == 2 and result is wargs[0].value else computed(result)

    return intrinsic


_native_intrinsic_codes = {}


def _prep_reraise_star(rt, frame, worig, wexcs):
    return computed(prep_reraise_star(worig.value, wexcs.value))


def _intrinsic_table(descs, impls):
    # Handlers by oparg; the oparg of each name comes from the running CPython's opcode module.
    return {descs.index(name): impl for name, impl in impls.items() if name in descs}


_INTRINSIC_1_IMPLS = {
    "INTRINSIC_STOPITERATION_ERROR": lambda rt, frame, w: _stopiteration_error(w),
    "INTRINSIC_UNARY_POSITIVE": lambda rt, frame, w: unary_positive(rt, w),
    "INTRINSIC_LIST_TO_TUPLE": lambda rt, frame, w: list_to_tuple(w),
}
_INTRINSIC_2_IMPLS = {"INTRINSIC_PREP_RERAISE_STAR": _prep_reraise_star}
for _name in ("INTRINSIC_TYPEVAR", "INTRINSIC_PARAMSPEC", "INTRINSIC_TYPEVARTUPLE", "INTRINSIC_SUBSCRIPT_GENERIC",
              "INTRINSIC_TYPEALIAS"):
    _INTRINSIC_1_IMPLS[_name] = _native_intrinsic(1, opcode._intrinsic_1_descs.index(_name))
for _name in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS",
              "INTRINSIC_SET_FUNCTION_TYPE_PARAMS", "INTRINSIC_SET_TYPEPARAM_DEFAULT"):  # the last: 3.13+
    if _name in opcode._intrinsic_2_descs:
        _INTRINSIC_2_IMPLS[_name] = _native_intrinsic(2, opcode._intrinsic_2_descs.index(_name))

# Not handled (raise InterpreterError): INTRINSIC_PRINT (interactive mode only), INTRINSIC_IMPORT_STAR
# (module level only), INTRINSIC_ASYNC_GEN_WRAP (async generators are not interpreted).
INTRINSIC_1 = _intrinsic_table(opcode._intrinsic_1_descs, _INTRINSIC_1_IMPLS)
INTRINSIC_2 = _intrinsic_table(opcode._intrinsic_2_descs, _INTRINSIC_2_IMPLS)


def _call_intrinsic_1(rt, frame, instr):
    impl = INTRINSIC_1.get(instr.arg)
    if impl is None:
        raise unsupported(f"CALL_INTRINSIC_1 {instr.argrepr or instr.arg}", frame.source_location())
    frame.stack.append(impl(rt, frame, frame.stack.pop()))


def _call_intrinsic_2(rt, frame, instr):
    impl = INTRINSIC_2.get(instr.arg)
    if impl is None:
        raise unsupported(f"CALL_INTRINSIC_2 {instr.argrepr or instr.arg}", frame.source_location())
    st = frame.stack
    w1 = st.pop()
    w2 = st.pop()
    st.append(impl(rt, frame, w2, w1))


def _load_locals(rt, frame, instr):
    # Class bodies push their namespace; a function frame has no locals mapping unless its code is
    # not optimized, where CPython uses the globals.
    wns = frame_namespace(frame)
    if wns is NOTFOUND:
        raise SystemError("no locals found")
    frame.stack.append(computed(frame.globals) if wns is None else wns)


def _load_from_dict_or_deref(rt, frame, instr):
    # Annotation scopes and class bodies: the class namespace first, then the cell.
    w = mapping_lookup(rt, frame.stack.pop(), instr.argval)
    if w is None:
        return HANDLERS["LOAD_DEREF"](rt, frame, instr)
    frame.stack.append(w)


def _load_from_dict_or_globals(rt, frame, instr):
    w = mapping_lookup(rt, frame.stack.pop(), instr.argval)
    frame.stack.append(load_global(rt, frame, instr.argval) if w is None else w)


HANDLERS.update({
    "LOAD_LOCALS": _load_locals,
    "LOAD_FROM_DICT_OR_DEREF": _load_from_dict_or_deref,
    "LOAD_FROM_DICT_OR_GLOBALS": _load_from_dict_or_globals,
    "LOAD_ATTR": _load_attr,
    "LOAD_SUPER_ATTR": _load_super_attr,
    "POP_JUMP_IF_TRUE": _jump_if_true,
    "POP_JUMP_IF_FALSE": _jump_if_false,
    "POP_JUMP_IF_NONE": _jump_if_none,
    "POP_JUMP_IF_NOT_NONE": _jump_if_not_none,
    "FOR_ITER": _for_iter,
    "END_FOR": _end_for,
    "SEND": _send,
    "END_SEND": _end_send,
    "CLEANUP_THROW": _cleanup_throw,
    "RETURN_CONST": _return_const,
    "LOAD_FAST_AND_CLEAR": _load_fast_and_clear,
    "BINARY_SLICE": _binary_slice,
    "STORE_SLICE": _store_slice,
    "CALL_INTRINSIC_1": _call_intrinsic_1,
    "CALL_INTRINSIC_2": _call_intrinsic_2,
})
