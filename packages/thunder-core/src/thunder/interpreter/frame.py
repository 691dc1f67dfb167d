"""Frames of interpreted functions and per-code-object decoded bytecode."""

from __future__ import annotations

import dis
import sys

from .errors import SourceLocation, source_location_of
from .exception_table import parse_exception_table

__all__ = ["CodeInfo", "code_info", "Frame"]


class CodeInfo:
    """Decoded, cached view of a code object."""

    __slots__ = ("code", "instructions", "index_of_offset", "exception_entries", "localsplus_names", "nfree",
                 "linenos", "cell_init", "catches")

    def __init__(self, code):
        self.code = code
        self.instructions = list(dis.get_instructions(code))
        self.index_of_offset = {ins.offset: i for i, ins in enumerate(self.instructions)}
        self.exception_entries = parse_exception_table(code)
        # the code has an exception handler (try, with): 3.11+ lists them in its table, 3.10 sets them up by opcode
        self.catches = bool(self.exception_entries) or any(
            ins.opname in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH") for ins in self.instructions)
        self.nfree = len(code.co_freevars)
        self.cell_init = ()  # 3.10: (cell slot, argument slot or None) to fill when the frame starts
        _decode_layout(self, code)


if sys.version_info >= (3, 11):

    def _decode_layout(info, code):
        # 3.11+ "fast locals plus": locals, then cells that are not also locals, then free vars.
        names = list(code.co_varnames)
        names += [c for c in code.co_cellvars if c not in code.co_varnames]
        names += list(code.co_freevars)
        info.localsplus_names = names
        info.linenos = [ins.positions.lineno if ins.positions is not None else None for ins in info.instructions]

else:

    _DEREF_OPS = {"LOAD_CLOSURE", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLASSDEREF"}

    def _decode_layout(info, code):
        # 3.10: locals, then all cell vars (even those that are arguments), then free vars; the
        # *_DEREF/LOAD_CLOSURE oparg indexes cells+frees, so shift it to index the frame's slots.
        nlocals = len(code.co_varnames)
        info.localsplus_names = list(code.co_varnames) + list(code.co_cellvars) + list(code.co_freevars)
        info.instructions = [ins._replace(arg=ins.arg + nlocals) if ins.opname in _DEREF_OPS else ins
                             for ins in info.instructions]
        info.cell_init = tuple(
            (nlocals + i, code.co_varnames.index(name) if name in code.co_varnames else None)
            for i, name in enumerate(code.co_cellvars)
        )
        # Line table: an instruction belongs to the line most recently started before it.
        linenos, line = [], None
        for ins in info.instructions:
            if ins.starts_line is not None:
                line = ins.starts_line
            linenos.append(line)
        info.linenos = linenos


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
        "kw_names", "generator", "last_line", "qualname", "blocks", "namespace",
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
        self.qualname = getattr(code, "co_qualname", None) or getattr(func, "__qualname__", code.co_name)
        self.blocks = []  # 3.10 block stack (SETUP_FINALLY, ...); unused on 3.11+
        # Class bodies: WrappedValue of the namespace mapping that LOAD_NAME/STORE_NAME/... use
        # (None for function frames, where non-optimized code uses the globals).
        self.namespace = None

    def jump_to_offset(self, offset: int) -> None:
        self.ip = self.info.index_of_offset[offset]

    def source_location(self) -> SourceLocation:
        loc = source_location_of(self.code, self.instr, self.last_line, self.qualname)
        return loc

    def __repr__(self):
        return f"<interpreted frame {self.qualname} at {self.source_location()}>"
