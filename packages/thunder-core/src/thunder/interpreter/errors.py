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


def source_location_of(code, instruction, fallback_line=None, qualname=None) -> SourceLocation:
    lineno = None
    positions = getattr(instruction, "positions", None)  # 3.10 instructions have no positions
    if positions is not None:
        lineno = positions.lineno
    if lineno is None:
        lineno = fallback_line if fallback_line is not None else code.co_firstlineno
    source = linecache.getline(code.co_filename, lineno).strip() if lineno else ""
    if qualname is None:
        qualname = getattr(code, "co_qualname", code.co_name)
    return SourceLocation(code.co_filename, lineno, qualname, source)


def unsupported(what: str, location: SourceLocation | None, advice: str = "") -> InterpreterError:
    where = f" at {location}" if location is not None else ""
    advice = advice or "rewrite the code without it or file an issue"
    return InterpreterError(f"{what} is not supported by the thunder interpreter{where}; {advice}.")
