"""A program that raises: the exception it raised, kept as a template the compiled entry raises anew.

When the user's function raises out of itself, eager PyTorch has already done everything before the
raise (in-place updates of inputs, attribute and global stores, ``finally`` blocks, ``__exit__`` of
context managers). The compiled entry does the same: the computation runs the tensor work recorded up
to the raise, the epilogue replays the writes recorded up to it, then raises a fresh copy of the
exception (same type, arguments, attributes, ``__cause__``/``__context__`` chain), on every call.
"""

from __future__ import annotations

import copy

from thunder.core.errors import ThunderError, UnsupportedError
from thunder.core.proxies import NumberProxy, Proxy
from thunder.core.pytree import tree_flatten, tree_map
from thunder.interpreter import InterpreterError

__all__ = ["is_program_exception", "exception_template", "copy_of", "with_plain_numbers"]

_CHAIN_DEPTH = 8  # __cause__/__context__ links copied; deeper ones are dropped (a chain that long is a loop)


def is_program_exception(e: BaseException) -> bool:
    """Raised by the user's program as eager would raise it, not thunder refusing to compile it."""
    return isinstance(e, Exception) and not isinstance(e, (ThunderError, InterpreterError))


def with_plain_numbers(e: BaseException) -> BaseException:
    """``e`` with the symbolic numbers among its arguments (``raise ValueError("bad size", n)``) replaced by their
    values, as eager has them; each becomes a constraint the prologue checks. Called while tracing."""
    if any(isinstance(a, NumberProxy) for a in tree_flatten(e.args)[0]):
        e.args = tree_map(lambda a: a._concrete("an exception's argument") if isinstance(a, NumberProxy) else a, e.args)
    return e


def copy_of(template: BaseException, _depth: int = 0) -> BaseException:
    """A new exception equal to ``template``: what ``raise`` in the user's code makes on each call."""
    new = copy.copy(template)  # type(e)(*e.args), then e.__dict__ (attributes the program set)
    if "__notes__" in vars(template):
        new.__notes__ = list(template.__notes__)
    if _depth < _CHAIN_DEPTH:
        if template.__cause__ is not None:
            new.__cause__ = copy_of(template.__cause__, _depth + 1)
        if template.__context__ is not None:
            new.__context__ = copy_of(template.__context__, _depth + 1)
    new.__suppress_context__ = template.__suppress_context__
    return new


def exception_template(e: BaseException) -> BaseException | None:
    """A copy of ``e`` to raise on later calls, or None when copying does not give the same exception
    (a class whose ``__init__`` does not take its own ``args``): then every call traces again."""
    leaves = tree_flatten((e.args, dict(vars(e))))[0]
    if any(isinstance(x, Proxy) for x in leaves):
        raise UnsupportedError(
            f"the jitted function raised {type(e).__name__} carrying a value computed inside it (a tensor); "
            "thunder.jit cannot raise it on later calls: raise it with a message made of plain Python values, or "
            "call the function without thunder.jit"
        ) from e
    try:
        template = copy_of(e)
        same = type(template) is type(e) and template.args == e.args and str(template) == str(e)
    except Exception:
        return None
    return template if same else None
