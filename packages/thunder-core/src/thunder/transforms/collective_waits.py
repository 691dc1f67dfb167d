"""Waits for collectives placed late: each bound symbol tagged ``collective_wait`` (``ltorch.wait``) moves down to
just before the first bound symbol that reads its result, or to the end of the trace, so that the computation
between the collective's issue and the use of its result runs while it is in flight. A gradient rule writes
``wait(all_reduce(g))``; user code waits where it first touches a functional collective's result; either way the
wait comes no earlier than it did. Only waits move (later, never earlier): the collectives are issued where they
were, in the same order on every rank. A bound symbol with sub-traces (a loop, a branch), whose reads inside are not
among its arguments, gets every pending wait before it."""

from __future__ import annotations

from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, from_trace, timed_transform
from thunder.transforms.overwrites import memory_root

__all__ = ["sink_waits"]

TAG = "collective_wait"


def sink_waits(trace: TraceCtx) -> TraceCtx:
    if not any(TAG in b.sym.tags for b in trace.bound_symbols):
        return trace
    with timed_transform("Waits for collectives placed just before their results are read") as done:
        root_of = memory_root(trace.bound_symbols)
        producers = {o.name: b for b in trace.bound_symbols for o in b.flat_proxy_outs}

        def memory_of(proxies) -> set:
            return {root_of(p.name) for p in proxies if isinstance(p, TensorProxy)}

        placed, pending = [], []  # pending: (wait, the memory its collective reads)
        for bsym in trace.bound_symbols:
            reads = {p.name for p in bsym.flat_proxy_args}
            touched = memory_of((*bsym.flat_proxy_args, *bsym.flat_proxy_outs))
            due = [w for w, read in pending if bsym.subtraces or w.output.name in reads or read & touched]
            placed += due
            pending = [(w, read) for w, read in pending if w not in due]
            if TAG in bsym.sym.tags:
                collective = [producers[p.name] for p in bsym.flat_proxy_args if p.name in producers]
                pending.append((bsym, memory_of([p for c in collective for p in c.flat_proxy_args])))
            else:
                placed.append(bsym)
        new = from_trace(trace)
        new.bound_symbols = placed + [w for w, _ in pending]
        done(new)
    return new
