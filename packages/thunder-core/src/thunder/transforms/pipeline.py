"""The default order of transforms applied to a computation trace."""

from __future__ import annotations

from thunder.core.proxies import NumberProxy
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
