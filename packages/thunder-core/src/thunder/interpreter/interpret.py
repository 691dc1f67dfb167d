"""Entry point: interpret(fn, args, kwargs, hooks=...)."""

from __future__ import annotations

import sys

from .calls import call_value
from .errors import InterpreterError
from .hooks import Hooks
from .provenance import Provenance
from .runtime import Runtime, pop_runtime, push_runtime

__all__ = ["interpret"]


def interpret(fn, args: tuple = (), kwargs: dict | None = None, *, hooks: Hooks | None = None) -> object:
    """Run ``fn(*args, **kwargs)`` by interpreting its bytecode and return the plain result.

    ``fn`` may be any callable: a Python function, bound method, callable object (its Python
    ``__call__`` is interpreted), functools.partial, class, ... Calls it makes go through
    ``hooks`` (lookasides, should_interpret); values entering from outside go through
    ``hooks.on_input`` and writes to outside state through ``hooks.on_store``. Exceptions raised
    by the program propagate unchanged (same object); unsupported constructs raise InterpreterError.
    """
    from .opcode_table import HANDLERS, SUPPORTED_VERSIONS

    if HANDLERS is None:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_VERSIONS)
        raise InterpreterError(
            f"the thunder interpreter does not support Python {sys.version_info[0]}.{sys.version_info[1]} yet "
            f"(supported: {supported}); use a supported Python or file an issue"
        )
    rt = Runtime(hooks if hooks is not None else Hooks(), fn)
    kwargs = {} if kwargs is None else kwargs
    push_runtime(rt)
    try:
        wfn = rt.input(fn, Provenance.fn())
        wargs = [rt.input(a, Provenance.arg(i)) for i, a in enumerate(args)]
        wkwargs = {k: rt.input(v, Provenance.kwarg(k)) for k, v in kwargs.items()}
        result = call_value(wfn, wargs, wkwargs)
    finally:
        pop_runtime(rt)
    return result.value
