"""Parser for the zero-cost exception table (co_exceptiontable) of CPython 3.11+."""

from __future__ import annotations

from typing import NamedTuple

from .wrapped import computed

__all__ = ["ExceptionTableEntry", "parse_exception_table", "find_handler", "unwind_to_handler"]


class ExceptionTableEntry(NamedTuple):
    start: int  # byte offsets, [start, end)
    end: int
    target: int
    depth: int  # stack depth to unwind to before pushing (lasti?) and the exception
    push_lasti: bool


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    # 6 bits of payload per byte, most significant chunk first; bit 6 says "more follows".
    b = data[pos]
    pos += 1
    value = b & 63
    while b & 64:
        b = data[pos]
        pos += 1
        value = (value << 6) | (b & 63)
    return value, pos


def parse_exception_table(code) -> tuple[ExceptionTableEntry, ...]:
    data = getattr(code, "co_exceptiontable", b"")  # 3.10 uses a block stack instead
    entries = []
    pos = 0
    while pos < len(data):
        start, pos = _read_varint(data, pos)
        length, pos = _read_varint(data, pos)
        target, pos = _read_varint(data, pos)
        depth_lasti, pos = _read_varint(data, pos)
        # The table counts 2-byte code units; dis offsets are bytes.
        entries.append(
            ExceptionTableEntry(2 * start, 2 * (start + length), 2 * target, depth_lasti >> 1, bool(depth_lasti & 1))
        )
    return tuple(entries)


def find_handler(entries, offset: int) -> ExceptionTableEntry | None:
    for entry in entries:
        if entry.start <= offset < entry.end:
            return entry
    return None


def unwind_to_handler(rt, frame, exc) -> bool:
    """Jump to the handler of the failing instruction (stack trimmed, (lasti,) exc pushed), if any."""
    entry = find_handler(frame.info.exception_entries, frame.instr.offset)
    if entry is None:
        return False
    del frame.stack[entry.depth:]
    if entry.push_lasti:
        frame.stack.append(computed(frame.instr.offset))
    frame.stack.append(computed(exc))
    frame.jump_to_offset(entry.target)
    return True
