"""Per-interpretation state: hooks, frame stack, handled-exception stack, cell provenance."""

from __future__ import annotations

import sys
import threading

from .errors import SourceLocation
from .provenance import Provenance
from .wrapped import WrappedValue

__all__ = ["Runtime", "current_runtime", "current_source_location", "interpreted_frames", "next_instruction",
           "perform_store"]

_local = threading.local()


class ExcInfoEntry:
    """One entry of the handled-exception chain (CPython's _PyErr_StackItem)."""

    __slots__ = ("exc",)

    def __init__(self, exc=None):
        self.exc = exc


class Runtime:
    """State of one interpret() call (shared by the generators it creates)."""

    def __init__(self, hooks, fn):
        self.hooks = hooks
        self.fn = fn
        self.frames = []
        # arguments of the native calls in progress (``max(a, b)`` comparing proxies): values only native code holds
        self.native_arguments = []
        self.exc_stack = [ExcInfoEntry(sys.exc_info()[1])]
        self.created_cells = {}  # id -> cell: cells made by interpreted code are not outside state
        self.created_classes = {}  # id -> class: classes made by interpreted code are not outside state
        self.cell_shadow = {}  # id(cell) -> WrappedValue last stored by interpreted code
        self.no_chain = None  # exception being re-raised or propagated: do not set its __context__ again
        self.reraised = None  # (exception, its traceback) while a bare raise / RERAISE is raising it
        self.toplevel_done = False

    # ----- outside values -----------------------------------------------------------------
    def input(self, value, provenance: Provenance) -> WrappedValue:
        new = self.hooks.on_input(value, provenance)
        if new is value:
            return WrappedValue(value, provenance)
        return WrappedValue(new, Provenance.computed())

    # ----- handled exceptions ---------------------------------------------------------------
    def handled_exception(self):
        for entry in reversed(self.exc_stack):
            if entry.exc is not None:
                return entry.exc
        return None

    def chain_context(self, exc) -> None:
        """Set implicit exception context as CPython does when raising while handling."""
        handled = self.handled_exception()
        if handled is None or handled is exc:
            return
        # Break cycles the same way CPython does.
        o = handled
        while True:
            ctx = o.__context__
            if ctx is None:
                break
            if ctx is exc:
                o.__context__ = None
                break
            o = ctx
        exc.__context__ = handled


def current_runtime() -> Runtime | None:
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def push_runtime(rt: Runtime) -> None:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(rt)


def pop_runtime(rt: Runtime) -> None:
    stack = _local.stack
    assert stack[-1] is rt
    stack.pop()


def current_source_location() -> SourceLocation | None:
    """Location of the innermost interpreted frame being executed, or None when not interpreting."""
    rt = current_runtime()
    if rt is None or not rt.frames:
        return None
    return rt.frames[-1].source_location()


def next_instruction():
    """The ``dis.Instruction`` the innermost interpreted frame runs after the current one (None when not
    interpreting or at the end): hooks use it to tell how a value being loaded will be used."""
    rt = current_runtime()
    if rt is None or not rt.frames:
        return None
    frame = rt.frames[-1]
    instructions = frame.info.instructions
    return instructions[frame.ip] if frame.ip < len(instructions) else None


def interpreted_frames() -> list:
    """SourceLocations of the interpreted frames, outermost first (empty when not interpreting)."""
    rt = current_runtime()
    if rt is None:
        return []
    return [f.source_location() for f in rt.frames]


def perform_store(kind, target, key, value) -> None:
    """Carry out a write to outside state for real (the default of Hooks.on_store)."""
    if kind in ("global", "delete_global"):
        rt = current_runtime()
        globals_ = rt.frames[-1].globals
        if kind == "global":
            globals_[key] = value.value
        else:
            del globals_[key]
    elif kind == "cell":
        target.value.cell_contents = value.value
    elif kind == "delete_cell":
        del target.value.cell_contents
    elif kind == "attr":
        setattr(target.value, key, value.value)
    elif kind == "delete_attr":
        delattr(target.value, key)
    elif kind == "item":
        target.value[key] = value.value
    elif kind == "delete_item":
        del target.value[key]
    else:
        raise ValueError(f"unknown store kind {kind!r}")
