"""InterpreterError and source locations of interpreted code."""

from __future__ import annotations

import linecache
from typing import NamedTuple

__all__ = ["InterpreterError", "SourceLocation", "source_location_of"]


class SourceLocation(NamedTuple):
    """Where an interpreted frame is executing."""

    filename: str
    lineno: int | None
    function: str
    source: str  # stripped source line, "" when unavailable

    def __str__(self):
        text = f"{self.filename}:{self.lineno}"
        return f"{text}: {self.source}" if self.source else text


class InterpreterError(Exception):
    """Raised for constructs the interpreter does not support (not catchable by interpreted code)."""


def source_location_of(code, instruction, fallback_line=None) -> SourceLocation:
    lineno = None
    if instruction is not None and instruction.positions is not None:
        lineno = instruction.positions.lineno
    if lineno is None:
        lineno = fallback_line if fallback_line is not None else code.co_firstlineno
    source = linecache.getline(code.co_filename, lineno).strip() if lineno else ""
    return SourceLocation(code.co_filename, lineno, code.co_qualname, source)


def unsupported(what: str, location: SourceLocation | None, advice: str = "") -> InterpreterError:
    where = f" at {location}" if location is not None else ""
    advice = advice or "rewrite the code without it or file an issue"
    return InterpreterError(f"{what} is not supported by the thunder interpreter{where}; {advice}.")
