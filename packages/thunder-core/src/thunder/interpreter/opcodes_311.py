"""Opcode handlers specific to CPython 3.11 bytecode."""

from __future__ import annotations

from .attributes import load_attr
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
from .protocols import truth
from .wrapped import computed

HANDLERS = dict(COMMON_HANDLERS)


def _nop(rt, frame, instr):
    return None


def _load_attr(rt, frame, instr):
    frame.stack.append(load_attr(rt, frame.stack.pop(), instr.argval))


def _load_method(rt, frame, instr):
    push_method(rt, frame, frame.stack.pop(), instr.argval)


def _jump_if_true_or_pop(rt, frame, instr):
    if truth(rt, frame.stack[-1]):
        frame.jump_to_offset(instr.argval)
    else:
        frame.stack.pop()


def _jump_if_false_or_pop(rt, frame, instr):
    if not truth(rt, frame.stack[-1]):
        frame.jump_to_offset(instr.argval)
    else:
        frame.stack.pop()


def _for_iter(rt, frame, instr):
    w = for_iter_next(rt, frame)
    if w is None:
        frame.stack.pop()
        frame.jump_to_offset(instr.argval)
    else:
        frame.stack.append(w)


def _send(rt, frame, instr):
    # Stack: receiver, value -> receiver, yielded | (on StopIteration) return value, jump.
    st = frame.stack
    wvalue = st.pop()
    try:
        st.append(send_value(rt, st[-1], wvalue))
        return
    except StopIteration as e:
        result = e.value
    st[-1] = computed(result)
    frame.jump_to_offset(instr.argval)


def finish_delegation(frame, wresult):
    """After a delegated throw() made the sub-iterator return: continue after the yield-from loop."""
    send = frame.info.instructions[frame.ip - 2]  # SEND, YIELD_VALUE, <ip: RESUME>
    assert send.opname == "SEND", send
    frame.stack[-1] = wresult
    frame.jump_to_offset(send.argval)


def _list_to_tuple(rt, frame, instr):
    frame.stack.append(list_to_tuple(frame.stack.pop()))


def _unary_positive(rt, frame, instr):
    frame.stack.append(unary_positive(rt, frame.stack.pop()))


HANDLERS.update({
    "PRECALL": _nop,
    "LOAD_ATTR": _load_attr,
    "LOAD_METHOD": _load_method,
    "POP_JUMP_FORWARD_IF_TRUE": _jump_if_true,
    "POP_JUMP_BACKWARD_IF_TRUE": _jump_if_true,
    "POP_JUMP_FORWARD_IF_FALSE": _jump_if_false,
    "POP_JUMP_BACKWARD_IF_FALSE": _jump_if_false,
    "POP_JUMP_FORWARD_IF_NONE": _jump_if_none,
    "POP_JUMP_BACKWARD_IF_NONE": _jump_if_none,
    "POP_JUMP_FORWARD_IF_NOT_NONE": _jump_if_not_none,
    "POP_JUMP_BACKWARD_IF_NOT_NONE": _jump_if_not_none,
    "JUMP_IF_TRUE_OR_POP": _jump_if_true_or_pop,
    "JUMP_IF_FALSE_OR_POP": _jump_if_false_or_pop,
    "FOR_ITER": _for_iter,
    "SEND": _send,
    "LIST_TO_TUPLE": _list_to_tuple,
    "UNARY_POSITIVE": _unary_positive,
})
