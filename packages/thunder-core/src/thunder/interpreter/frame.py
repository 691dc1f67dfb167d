"""Frames of interpreted functions and per-code-object decoded bytecode."""

from __future__ import annotations

import dis

from .errors import SourceLocation, source_location_of
from .exception_table import parse_exception_table

__all__ = ["CodeInfo", "code_info", "Frame"]


class CodeInfo:
    """Decoded, cached view of a code object."""

    __slots__ = ("code", "instructions", "index_of_offset", "exception_entries", "localsplus_names", "nfree")

    def __init__(self, code):
        self.code = code
        self.instructions = list(dis.get_instructions(code))
        self.index_of_offset = {ins.offset: i for i, ins in enumerate(self.instructions)}
        self.exception_entries = parse_exception_table(code)
        # 3.11+ "fast locals plus": locals, then cells that are not also locals, then free vars.
        names = list(code.co_varnames)
        names += [c for c in code.co_cellvars if c not in code.co_varnames]
        names += list(code.co_freevars)
        self.localsplus_names = names
        self.nfree = len(code.co_freevars)


_code_infos: dict[int, tuple[object, CodeInfo]] = {}


def code_info(code) -> CodeInfo:
    entry = _code_infos.get(id(code))
    if entry is None or entry[0] is not code:
        entry = (code, CodeInfo(code))
        _code_infos[id(code)] = entry
    return entry[1]


class Frame:
    """Execution state of one interpreted function call."""

    __slots__ = (
        "code", "info", "func", "globals", "builtins", "locals", "stack", "ip", "instr",
        "kw_names", "generator", "last_line",
    )

    def __init__(self, func, code, globals_, builtins_):
        self.func = func
        self.code = code
        self.info = code_info(code)
        self.globals = globals_
        self.builtins = builtins_
        self.locals = [None] * len(self.info.localsplus_names)  # None = unbound
        self.stack = []
        self.ip = 0  # index of the next instruction
        self.instr = None  # instruction being executed (for exceptions and source locations)
        self.kw_names = None  # set by KW_NAMES for the next CALL
        self.generator = None
        self.last_line = None

    def jump_to_offset(self, offset: int) -> None:
        self.ip = self.info.index_of_offset[offset]

    def source_location(self) -> SourceLocation:
        loc = source_location_of(self.code, self.instr, self.last_line)
        return loc

    def __repr__(self):
        return f"<interpreted frame {self.code.co_qualname} at {self.source_location()}>"
