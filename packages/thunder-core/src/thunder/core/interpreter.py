"""``thunder.core.interpreter.interpret``: lightning-thunder's name for running a Python function through the
bytecode interpreter. The interpreter itself is :mod:`thunder.interpreter`; this is a thin alias over it.

``interpret(fn)(*args, **kwargs)`` runs ``fn`` opcode by opcode, as CPython would, and returns its result.
Tensors are not traced: torch functions run as ordinary calls (use ``thunder.jit`` to trace). Exceptions
the program raises propagate unchanged.
"""

from __future__ import annotations

import functools

__all__ = ["interpret"]


def interpret(fn, *, fn_lookaside=None, callbacks=None, with_provenance_tracking: bool = False,
              unwrap_result: bool = True, record_history: bool = False, uncacheable_classes=None):
    """Returns a callable that runs ``fn`` through thunder's bytecode interpreter.

    ``fn_lookaside``: an optional ``callable -> replacement or None``, consulted for each call the program
    makes; the replacement runs natively instead. lightning-thunder's other options (callbacks, history
    records, wrapped results) have no counterpart and must keep their defaults.
    """
    if callbacks or record_history or not unwrap_result:
        raise ValueError("interpret(): callbacks=, record_history=True and unwrap_result=False are not supported; "
                         "see thunder.interpreter.Hooks for the interpreter's extension points")
    from thunder.interpreter import Hooks
    from thunder.interpreter import interpret as run

    hooks = Hooks()
    if fn_lookaside is not None:
        hooks.lookaside = fn_lookaside

    @functools.wraps(fn)
    def interpreted(*args, **kwargs):
        return run(fn, args, kwargs, hooks=hooks)

    return interpreted
