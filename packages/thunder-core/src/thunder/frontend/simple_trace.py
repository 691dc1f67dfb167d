"""Tracing a function that only calls thunder/torch operations on its tensor arguments, without the
interpreter: the function runs natively with proxies (torch calls reach the torch language through
``TensorProxy.__torch_function__``). Used to test the torch language op by op."""

from __future__ import annotations

import torch

from thunder.core.pytree import tree_map
from thunder.core.trace import TraceCtx, tracectx
from thunder.frontend.proxify import tensor_proxy

__all__ = ["trace_program", "run_traced"]


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


