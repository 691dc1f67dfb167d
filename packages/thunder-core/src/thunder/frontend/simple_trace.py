"""Tracing a function that only calls thunder/torch operations on its tensor arguments, without the
interpreter: the function runs natively with proxies (torch calls reach the torch language through
``TensorProxy.__torch_function__``). Used to test the torch language op by op, and as ``thunder.trace``."""

from __future__ import annotations

import torch

from thunder.core.pytree import tree_map
from thunder.core.trace import TraceCtx, tracectx
from thunder.frontend.proxify import tensor_proxy

__all__ = ["trace_program", "run_traced", "trace"]


def trace_program(fn, args: tuple, kwargs: dict | None = None) -> tuple[TraceCtx, list]:
    """(trace, flat tensor inputs in the order of ``trace.args``)."""
    kwargs = kwargs or {}
    trace = TraceCtx("computation")
    inputs: list = []
    with tracectx(trace):

        def proxify(x):
            if isinstance(x, torch.Tensor):
                p = tensor_proxy(x)
                trace.args.append(p)
                inputs.append(x)
                return p
            return x

        pargs, pkwargs = tree_map(proxify, args), tree_map(proxify, kwargs)
        trace.output = fn(*pargs, **pkwargs)
    return trace, inputs


def run_traced(fn, *args, executors=None, **kwargs):
    """Traces ``fn`` on proxies of ``args``, dispatches to executors, compiles and runs it on ``args``.
    Returns (result, final trace)."""
    from thunder.extend import resolve_executors
    from thunder.transforms.dce import dce
    from thunder.transforms.dispatch import dispatch_to_executors

    trace, inputs = trace_program(fn, args, kwargs)
    final = dce(dispatch_to_executors(trace, resolve_executors(executors)))
    out = final.python_callable()(*inputs)
    return out, final




def trace(compile_data=None, inline_trace: bool = True, rename_proxies: bool = True,
          include_return_statement: bool = True, use_dce: bool = True, insert_ddp_syncs: bool = False):
    """``thunder.trace()(fn, *args, **kwargs)``: the trace of ``fn`` called on proxies of the tensors among the
    arguments (other arguments are constants), without the interpreter, so ``fn`` may only call torch operations
    on its tensors. The trace's parameters are those tensors, in order. It records torch-language symbols, which
    run only while tracing: ``thunder.transforms.dispatch.dispatch_to_executors(trace, executors)`` gives the
    trace that runs (as ``thunder.jit`` would), and its ``python_callable()`` takes the same tensors.

    The keyword arguments are lightning-thunder's; ``compile_data`` and ``insert_ddp_syncs=True`` are refused
    (there is no compile data object here, and collectives are inserted by thunder.distributed), the others
    are accepted with these fixed meanings: a call inside another trace is inlined, proxies are named after
    nothing but their order, the return is always part of the trace, and dead code is always removed.
    """
    if compile_data is not None or insert_ddp_syncs:
        raise ValueError("thunder.trace: compile_data= and insert_ddp_syncs=True are not supported")

    def _trace(fn, *args, **kwargs) -> TraceCtx:
        from thunder.core.trace import TraceProvenance, get_tracectx
        from thunder.transforms.dce import dce

        if inline_trace and get_tracectx() is not None:
            return fn(*args, **kwargs)
        traced, _ = trace_program(fn, args, kwargs)
        if use_dce:
            traced = dce(traced)
        traced.provenance = TraceProvenance("thunder.trace")
        return traced

    return _trace
