"""Waits for collectives placed late: each bound symbol tagged ``collective_wait`` (``ltorch.wait``) moves down to
just before the first bound symbol that reads its result, or to the end of the trace, so that the computation
between the collective's issue and the use of its result runs while it is in flight. A gradient rule writes
``wait(all_reduce(g))``; user code waits where it first touches a functional collective's result; either way the
wait comes no earlier than it did. Only waits move (later, never earlier): the collectives are issued where they
were, in the same order on every rank. A bound symbol with sub-traces (a loop, a branch), whose reads inside are not
among its arguments, gets every pending wait before it."""

from __future__ import annotations

from thunder.core.trace import TraceCtx, from_trace, timed_transform

__all__ = ["sink_waits"]

TAG = "collective_wait"


def sink_waits(trace: TraceCtx) -> TraceCtx:
    if not any(TAG in b.sym.tags for b in trace.bound_symbols):
        return trace
    with timed_transform("Waits for collectives placed just before their results are read") as done:
        placed, pending = [], []
        for bsym in trace.bound_symbols:
            reads = {p.name for p in bsym.flat_proxy_args}
            if bsym.subtraces:
                placed += pending
                pending = []
            else:
                placed += [w for w in pending if w.output.name in reads]
                pending = [w for w in pending if w.output.name not in reads]
            (pending if TAG in bsym.sym.tags else placed).append(bsym)
        new = from_trace(trace)
        new.bound_symbols = placed + pending
        done(new)
    return new
