"""Opcode handlers specific to CPython 3.10 bytecode.

3.10 differs from 3.11+ mostly in calls (CALL_FUNCTION*/CALL_METHOD, no NULL below the callable
except for LOAD_METHOD), per-operator BINARY_*/INPLACE_* opcodes, ROT_*/DUP_TOP stack shuffles,
MAKE_FUNCTION taking the qualified name from the stack, pattern-matching opcodes pushing an extra
bool, and exceptions handled with a block stack (block_stack.py) instead of an exception table.
Cell/free variable opargs are shifted to frame slots when the code is decoded (frame.py).
"""

from __future__ import annotations

from .block_stack import FINALLY, pop_block, pop_except, push_block, unwind_exception
from .calls import bind_method, call_value
from .class_lookups import special_method
from .loop import GENERATOR, YIELD
from .opcodes_311 import HANDLERS as _HANDLERS_311
from .opcodes_common import (
    COMMON_HANDLERS,
    _check_exception_class,
    _jump_if_false,
    _jump_if_true,
    _pop_n,
    call_function_ex,
    call_method_layout,
    load_global,
    make_function,
    match_class,
    match_keys,
    new_cell,
    not_supported,
    send_value,
)
from .operators import binary_op
from .typeutil import NOTFOUND, lookup_type
from .wrapped import computed

__all__ = ["HANDLERS", "finish_delegation", "unwind_exception", "init_cells"]

HANDLERS = dict(COMMON_HANDLERS)

# Handlers whose 3.10 semantics are those of 3.11.
for _name in ("LOAD_ATTR", "LOAD_METHOD", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "FOR_ITER",
              "LIST_TO_TUPLE", "UNARY_POSITIVE"):
    HANDLERS[_name] = _HANDLERS_311[_name]


def init_cells(rt, frame):
    """Create the frame's cells when it starts (3.10 has no MAKE_CELL); argument cells take the argument.

    The argument's own slot keeps its value (CPython clears it) so zero-argument super() finds self.
    """
    slots = frame.locals
    for slot, arg in frame.info.cell_init:
        slots[slot] = new_cell(rt, None if arg is None else slots[arg])


# ----- stack --------------------------------------------------------------------------------------


def _rot_n(n):
    def rot(rt, frame, instr):
        st = frame.stack
        top = st.pop()
        st.insert(len(st) - n + 1, top)

    return rot


def _rot_n_arg(rt, frame, instr):
    st = frame.stack
    top = st.pop()
    st.insert(len(st) - instr.arg + 1, top)


def _dup_top(rt, frame, instr):
    frame.stack.append(frame.stack[-1])


def _dup_top_two(rt, frame, instr):
    frame.stack.extend(frame.stack[-2:])


# ----- globals, calls, functions ------------------------------------------------------------------


def _load_global(rt, frame, instr):
    frame.stack.append(load_global(rt, frame, instr.argval))


def _call_function(rt, frame, instr):
    st = frame.stack
    args = _pop_n(st, instr.arg)
    wfn = st.pop()
    st.append(call_value(wfn, args, {}))


def _call_function_kw(rt, frame, instr):
    st = frame.stack
    names = st.pop().value
    args = _pop_n(st, instr.arg)
    wfn = st.pop()
    n = len(names)
    kwargs = dict(zip(names, args[len(args) - n:]))
    del args[len(args) - n:]
    st.append(call_value(wfn, args, kwargs))


def _call_method(rt, frame, instr):
    call_method_layout(frame, instr.arg)


def _call_function_ex(rt, frame, instr):
    st = frame.stack
    wkw = st.pop() if instr.arg & 1 else None
    wargs = st.pop()
    wfn = st.pop()
    st.append(call_function_ex(rt, wfn, wargs, wkw))


def _make_function(rt, frame, instr):
    qualname = frame.stack.pop().value
    code = frame.stack.pop().value
    make_function(frame, code, qualname, instr.arg)


# ----- operators ----------------------------------------------------------------------------------

# Operator name suffix -> BINARY_OP oparg of 3.11 (operators.BINARY_OPS); in-place forms are +13.
_BINARY_SUFFIXES = ("ADD", "AND", "FLOOR_DIVIDE", "LSHIFT", "MATRIX_MULTIPLY", "MULTIPLY", "MODULO", "OR",
                    "POWER", "RSHIFT", "SUBTRACT", "TRUE_DIVIDE", "XOR")


def _binary(oparg):
    def op(rt, frame, instr):
        wr = frame.stack.pop()
        wl = frame.stack.pop()
        frame.stack.append(binary_op(rt, oparg, wl, wr))

    return op


for _i, _suffix in enumerate(_BINARY_SUFFIXES):
    HANDLERS[f"BINARY_{_suffix}"] = _binary(_i)
    HANDLERS[f"INPLACE_{_suffix}"] = _binary(_i + 13)


# ----- pattern matching ---------------------------------------------------------------------------


def _match_keys(rt, frame, instr):
    w = match_keys(rt, frame.stack[-2], frame.stack[-1].value)
    frame.stack.append(w)
    frame.stack.append(computed(w.value is not None))


def _match_class(rt, frame, instr):
    st = frame.stack
    names = st.pop().value
    w = match_class(rt, st[-2], st[-1].value, instr.arg, names)
    if w.value is not None:
        st[-2] = w
    st[-1] = computed(w.value is not None)


def _copy_dict_without_keys(rt, frame, instr):
    keys = frame.stack[-1].value
    rest = dict(frame.stack[-2].value)
    for key in keys:
        del rest[key]
    frame.stack[-1] = computed(rest)


# ----- exceptions and with ------------------------------------------------------------------------


def _setup_finally(rt, frame, instr):
    push_block(frame, FINALLY, instr.argval)


def _pop_block(rt, frame, instr):
    pop_block(frame)


def _pop_except(rt, frame, instr):
    pop_except(rt, frame)


def _reraise(rt, frame, instr):
    st = frame.stack
    st.pop()  # type
    exc = st.pop().value
    st.pop()  # traceback
    rt.no_chain = exc
    raise exc


def _jump_if_not_exc_match(rt, frame, instr):
    right = frame.stack.pop().value
    left = frame.stack.pop().value
    _check_exception_class(right)
    if not issubclass(left, right):
        frame.jump_to_offset(instr.argval)


def _setup_with(rt, frame, instr):
    wmgr = frame.stack.pop()
    tp = type(wmgr.value)
    enter = lookup_type(tp, "__enter__")
    if enter is NOTFOUND:
        raise AttributeError("__enter__")
    exit_ = lookup_type(tp, "__exit__")
    if exit_ is NOTFOUND:
        raise AttributeError("__exit__")
    special_method(rt, tp, "__exit__", exit_)
    special_method(rt, tp, "__enter__", enter)
    frame.stack.append(bind_method(wmgr, exit_))
    wresult = call_value(bind_method(wmgr, enter), [], {})
    push_block(frame, FINALLY, instr.argval)
    frame.stack.append(wresult)


def _with_except_start(rt, frame, instr):
    # Stack: exit, <previous exc: tb, value, type>, tb, value, type
    st = frame.stack
    wexit = st[-7]
    st.append(call_value(wexit, [st[-1], st[-2], st[-3]], {}))


# ----- generators ---------------------------------------------------------------------------------


def _gen_start(rt, frame, instr):
    if frame.generator is None:
        # Calling the function creates the generator; GEN_START runs again on the first resume.
        frame.ip -= 1
        return GENERATOR, None
    frame.stack.pop()  # the value sent by the first __next__/send (None)
    return None


def _yield_from(rt, frame, instr):
    st = frame.stack
    wvalue = st.pop()
    try:
        w = send_value(rt, st[-1], wvalue)
    except StopIteration as e:
        st[-1] = computed(e.value)
        return None
    frame.ip -= 1  # resumed with the sent value pushed: YIELD_FROM sends it on
    return YIELD, w


def finish_delegation(frame, wresult):
    """After a delegated throw() made the sub-iterator return: continue after YIELD_FROM."""
    instr = frame.info.instructions[frame.ip]
    assert instr.opname == "YIELD_FROM", instr
    frame.stack[-1] = wresult
    frame.ip += 1


HANDLERS.update({
    "ROT_TWO": _rot_n(2),
    "ROT_THREE": _rot_n(3),
    "ROT_FOUR": _rot_n(4),
    "ROT_N": _rot_n_arg,
    "DUP_TOP": _dup_top,
    "DUP_TOP_TWO": _dup_top_two,
    "LOAD_GLOBAL": _load_global,
    "CALL_FUNCTION": _call_function,
    "CALL_FUNCTION_KW": _call_function_kw,
    "CALL_METHOD": _call_method,
    "CALL_FUNCTION_EX": _call_function_ex,
    "MAKE_FUNCTION": _make_function,
    "POP_JUMP_IF_TRUE": _jump_if_true,
    "POP_JUMP_IF_FALSE": _jump_if_false,
    "JUMP_ABSOLUTE": COMMON_HANDLERS["JUMP_FORWARD"],
    "MATCH_KEYS": _match_keys,
    "MATCH_CLASS": _match_class,
    "COPY_DICT_WITHOUT_KEYS": _copy_dict_without_keys,
    "SETUP_FINALLY": _setup_finally,
    "POP_BLOCK": _pop_block,
    "POP_EXCEPT": _pop_except,
    "RERAISE": _reraise,
    "JUMP_IF_NOT_EXC_MATCH": _jump_if_not_exc_match,
    "SETUP_WITH": _setup_with,
    "WITH_EXCEPT_START": _with_except_start,
    "GEN_START": _gen_start,
    "YIELD_FROM": _yield_from,
    "SETUP_ASYNC_WITH": not_supported("async construct (opcode SETUP_ASYNC_WITH)",
                                      "call it outside the jitted function"),
})
# 3.11+ opcodes that 3.10 bytecode never contains.
for _name in ("PUSH_EXC_INFO", "CHECK_EXC_MATCH", "BEFORE_WITH", "CALL", "KW_NAMES", "PUSH_NULL", "COPY", "SWAP",
              "BINARY_OP", "MAKE_CELL", "COPY_FREE_VARS", "RETURN_GENERATOR", "LOAD_FAST_CHECK"):
    HANDLERS.pop(_name, None)
