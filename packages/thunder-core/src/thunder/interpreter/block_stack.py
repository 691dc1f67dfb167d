"""CPython 3.10 exception handling: a per-frame block stack instead of an exception table.

``SETUP_FINALLY``/``SETUP_WITH`` push a handler block (offset of the handler, stack level);
``POP_BLOCK`` pops it. When an exception is raised, blocks are popped until a handler block is
found: the stack is trimmed to its level, an ``EXCEPT_HANDLER`` block is pushed, and the previous
handled exception (traceback, value, type) then the new one (traceback, value, type) are pushed
before jumping to the handler. ``POP_EXCEPT`` (or unwinding through an ``EXCEPT_HANDLER`` block)
trims the stack back and restores the previously handled exception.
"""

from __future__ import annotations

from typing import NamedTuple

from .wrapped import computed

__all__ = ["Block", "FINALLY", "EXCEPT_HANDLER", "push_block", "pop_block", "pop_except", "unwind_exception"]

FINALLY = "SETUP_FINALLY"
EXCEPT_HANDLER = "EXCEPT_HANDLER"


class Block(NamedTuple):
    kind: str
    handler: int | None  # byte offset of the handler (FINALLY blocks)
    level: int  # stack depth when the block was pushed


def push_block(frame, kind, handler) -> None:
    frame.blocks.append(Block(kind, handler, len(frame.stack)))


def pop_block(frame) -> Block:
    return frame.blocks.pop()


def _restore_exc(rt, st) -> None:
    st.pop()  # type
    wvalue = st.pop()
    st.pop()  # traceback
    rt.exc_stack[-1].exc = wvalue.value


def _unwind_except_handler(rt, frame, block) -> None:
    del frame.stack[block.level + 3:]
    _restore_exc(rt, frame.stack)


def pop_except(rt, frame) -> None:
    # The previous exception is on top (a return value may have been rotated below it).
    block = frame.blocks.pop()
    if block.kind != EXCEPT_HANDLER:
        raise SystemError("popped block is not an except handler")
    _restore_exc(rt, frame.stack)


def _push_exc_triple(st, exc) -> None:
    if exc is None:
        st.extend((computed(None), computed(None), computed(None)))
    else:
        st.extend((computed(exc.__traceback__), computed(exc), computed(type(exc))))


def unwind_exception(rt, frame, exc) -> bool:
    """Jump to the innermost handler block for ``exc``; False when the exception leaves the frame.

    Except-handler blocks passed on the way restore the exception they were handling, also when
    the exception leaves the frame.
    """
    blocks = frame.blocks
    while blocks:
        block = blocks.pop()
        if block.kind == EXCEPT_HANDLER:
            _unwind_except_handler(rt, frame, block)
            continue
        st = frame.stack
        del st[block.level:]
        blocks.append(Block(EXCEPT_HANDLER, None, len(st)))
        entry = rt.exc_stack[-1]
        _push_exc_triple(st, entry.exc)
        entry.exc = exc
        _push_exc_triple(st, exc)
        frame.jump_to_offset(block.handler)
        return True
    return False
