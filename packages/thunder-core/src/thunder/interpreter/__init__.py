"""Thunder's bytecode interpreter: runs Python functions opcode by opcode with provenance.

See README.md in this folder for the design. Depends only on the standard library.
"""

from .calls import call_wrapped
from .errors import InterpreterError
from .hooks import Hooks
from .interpret import interpret
from .provenance import Provenance
from .runtime import current_source_location, interpreted_frames, next_instruction
from .wrapped import WrappedValue

__all__ = [
    "interpret",
    "Hooks",
    "WrappedValue",
    "Provenance",
    "InterpreterError",
    "current_source_location",
    "interpreted_frames",
    "next_instruction",
    "call_wrapped",
]
