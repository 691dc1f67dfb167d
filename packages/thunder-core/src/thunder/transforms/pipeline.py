"""The default order of transforms applied to a computation trace."""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.transforms.collective_waits import sink_waits
from thunder.transforms.cse import cse
from thunder.transforms.dce import dce
from thunder.transforms.del_last_used import del_last_used
from thunder.transforms.dispatch import dispatch_to_executors
from thunder.transforms.functionalize import check_inplace_copies, functionalize
from thunder.transforms.overwrites import snapshot_overwritten

__all__ = ["run_pipeline", "prepare", "lower"]


def run_pipeline(trace, executors, user_transforms=(), *, check_inplace: bool = True) -> list:
    """Returns the traces produced after ``trace``, the last one being what runs."""
    traces = prepare(trace)
    return traces + lower(traces[-1] if traces else trace, executors, user_transforms, check_inplace=check_inplace)


def prepare(trace) -> list:
    """The executor-independent transforms: functionalization, dead-code elimination, CSE."""
    traces = []
    t = functionalize(trace)  # first: CSE and DCE assume values never change
    if t is not trace:
        traces.append(t)
    t = dce(t)
    traces.append(t)
    t = cse(t)
    traces.append(t)
    snapped = snapshot_overwritten(t)  # CSE may have merged values two updates consume
    if snapped is not t:
        traces.append(snapped)
    return traces


def lower(trace, executors, user_transforms=(), *, check_inplace: bool = True) -> list:
    """Executor dispatch and the clean-ups after it; the last trace returned is what runs."""
    traces = []

    def step(t):
        traces.append(t)
        return t

    waits_late = sink_waits(trace)
    if waits_late is not trace:
        trace = step(waits_late)
    sized = sizes_from_shapes(trace)
    if sized is not trace:
        trace = step(sized)
    t = step(dispatch_to_executors(trace, executors))
    if any(isinstance(p, NumberProxy) for p in t.args):
        t = step(cse(t, numbers_only=True))  # sizes recomputed by several decompositions
    for transform in user_transforms:
        transformed = transform(t)
        if transformed is not t:  # a transform that changed nothing adds no trace
            t = step(transformed)
    t = step(dce(t))
    t = step(del_last_used(t))
    if check_inplace:
        check_inplace_copies(t)
    return traces



def sizes_from_shapes(trace):
    """The symbolic sizes in the shapes of a trace's tensors that the trace does not take or compute (a backward
    gets the saved tensors, not their sizes), bound first from the shape of an argument that has them: an executor's
    region may take them as arguments (a Triton kernel's ``s0``; fuzz seed 89: an UnboundLocalError). Unused, they
    are dropped after dispatch like any dead value."""
    from thunder.core import prims
    from thunder.core.trace import TraceProvenance, from_trace

    # a size is missing where a shape names it before the trace defines it: a backward may compute a size its
    # cotangents have (a slice's ``i0 = s0 - 1``, inside a later decomposition) after a region took it (fuzz seeds
    # 1664, 1666: an UnboundLocalError); read from an argument, it is the same value the later definition gives
    defined = {p.name for p in tree_flatten(trace.args)[0] if isinstance(p, Proxy)}
    missing = {}
    for b in trace.bound_symbols:
        for t in (*b.flat_proxy_args, *b.flat_proxy_outs):
            for d in t.shape if isinstance(t, TensorProxy) else ():
                if isinstance(d, NumberProxy) and d.name not in defined:
                    missing.setdefault(d.name, d)
        defined.update(o.name for o in b.flat_proxy_outs)
        defined.update(o.name for d in b.number_definitions() for o in d.flat_proxy_outs)
    if not missing:
        return trace
    unpacks = []
    for t in tree_flatten(trace.args)[0]:
        if not isinstance(t, TensorProxy) or not any(isinstance(d, NumberProxy) and d.name in missing for d in t.shape):
            continue
        dims = tuple(d if isinstance(d, NumberProxy) and missing.pop(d.name, None) is not None else None
                     for d in t.shape)
        unpacks.append(prims.unpack_dims.bind(t, output=dims))
    if not unpacks:
        return trace
    # a size no argument has (the shape of a PyTorch island's gradient) is left to the trace's own checks; the
    # others are bound all the same (fuzz seeds 1074, 1269: a Triton region's size of a cotangent went unbound)
    new = from_trace(trace)
    new.bound_symbols = unpacks + list(trace.bound_symbols)
    new.provenance = TraceProvenance("Sizes read from the shapes of the arguments")
    return new
