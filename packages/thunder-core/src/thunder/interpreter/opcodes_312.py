"""Opcode handlers specific to CPython 3.12 bytecode."""

from __future__ import annotations

from .attributes import load_attr, load_method, load_super_attr
from .calls import call_value
from .errors import unsupported
from .loop import RETURN
from .opcodes_common import (
    COMMON_HANDLERS,
    _jump_if_false,
    _jump_if_none,
    _jump_if_not_none,
    _jump_if_true,
    for_iter_next,
    list_to_tuple,
    push_method,
    send_value,
    unary_positive,
)
from .operators import get_item, set_item
from .wrapped import computed, constant

HANDLERS = dict(COMMON_HANDLERS)


def _load_attr(rt, frame, instr):
    wobj = frame.stack.pop()
    if instr.arg & 1:  # method form: push (method, self) or (NULL, attribute)
        push_method(rt, frame, wobj, instr.argval)
    else:
        frame.stack.append(load_attr(rt, wobj, instr.argval))


def _load_super_attr(rt, frame, instr):
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
    if method:
        st.append(meth)
    st.append(w)


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


_INTRINSIC_1 = {
    3: lambda rt, w: _stopiteration_error(w),
    5: unary_positive,
    6: lambda rt, w: list_to_tuple(w),
}


def _call_intrinsic_1(rt, frame, instr):
    impl = _INTRINSIC_1.get(instr.arg)
    if impl is None:
        raise unsupported(f"CALL_INTRINSIC_1 {instr.argrepr or instr.arg}", frame.source_location())
    frame.stack.append(impl(rt, frame.stack.pop()))


def _call_intrinsic_2(rt, frame, instr):
    raise unsupported(f"CALL_INTRINSIC_2 {instr.argrepr or instr.arg} (except* or generic type parameters)",
                      frame.source_location())


HANDLERS.update({
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
