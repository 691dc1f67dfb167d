"""Rematerialization: recompute cheap values in backward instead of saving them.

After the autograd split, each tensor the forward saves for backward is a candidate: if the bound
symbol that made it is cheap to run again (elementwise, shape, reductions, gathers; no randomness, no
side effects), lands in a fusion executor's kernel in backward (or is a view, free anywhere), and the
tensors it reads cost fewer bytes to keep than the tensor itself (because they are inputs of the call,
which live anyway, or are saved already), backward recomputes it from them. With the torch executor
alone, nothing but views is recomputed: eager recomputes nothing either.
Repeated to a fixed point, this turns chains like ``gelu(linear(x))`` into one saved tensor.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.trace import TraceProvenance, from_trace
from thunder.transforms.autograd import (
    _CHEAP_PRIMS,
    ForwardBackward,
    _cheap,
    _walk,
    forward_output,
    order_saved,
    saved_bytes,
    tensor_bytes,
)

__all__ = ["rematerialize"]

_VIEW_PRIMS = frozenset({"prims.broadcast_in_dim", "prims.reshape", "prims.transpose", "prims.squeeze", "prims.slice"})


def _recomputable(b, executors) -> bool:
    tags = b.sym.tags
    if "side_effect" in tags or "random" in tags or b.sym.executor is not None:
        return False
    if not (_cheap(b) if b.subsymbols else b.sym.is_prim and ("elementwise" in tags or b.sym.id in _CHEAP_PRIMS)):
        return False
    # Recomputed by an operator executor, it would be a kernel eager never runs (and reads its inputs again):
    # only a fusion executor makes it nearly free, folded into the backward kernel that reads it. Shape ops are
    # views, free for anyone.
    return _is_view(b) or any(ex.kind == "fusion" and ex.can_execute(b) for ex in executors)


def _is_view(b) -> bool:
    return all(s.sym.id in _VIEW_PRIMS for s in _walk([b]) if not s.subsymbols)


def rematerialize(split: ForwardBackward, executors=()) -> ForwardBackward:
    import time

    start = time.perf_counter_ns()
    fw, bw = split.forward, split.backward
    producers = {o.name: b for b in fw.bound_symbols for o in b.flat_proxy_outs}
    inputs = {a.name for a in fw.args if isinstance(a, Proxy)}
    cotangents = bw.args[len(split.saved):]
    saved = list(split.saved)
    body = list(bw.bound_symbols)
    changed = True
    while changed:
        changed = False
        names = {p.name for p in saved}
        for r in saved:
            if not isinstance(r, TensorProxy) or r.name in inputs:
                continue
            b = producers.get(r.name)
            if b is None or not _recomputable(b, executors):
                continue
            reads = {p.name: p for p in b.flat_proxy_args}
            extra = sum(tensor_bytes(p) for n, p in reads.items() if n not in names and n not in inputs)
            outs = {o.name for o in b.flat_proxy_outs}
            freed = sum(tensor_bytes(p) for p in saved if p.name in outs)
            if extra >= freed:
                continue
            first_use = next((i for i, s in enumerate(body) if any(p.name in outs for p in s.flat_proxy_args)), None)
            if first_use is None:  # kept only for its version check (eager's node saves it): the reference is the point
                continue
            body.insert(first_use, b)
            saved = [p for p in saved if p.name not in outs]
            saved += [p for n, p in reads.items() if n not in {q.name for q in saved}]
            changed = True
            break
    if len(saved) == len(split.saved) and all(a is b for a, b in zip(saved, split.saved)):
        return split
    saved = order_saved(saved)
    new_bw = from_trace(bw)
    new_bw.bound_symbols = body
    new_bw.args = saved + list(cotangents)
    new_fw = from_trace(fw)
    new_fw.bound_symbols = list(fw.bound_symbols)
    new_fw.output = forward_output(fw.output[0], saved)
    seconds = (time.perf_counter_ns() - start) / 1e9
    before, after = saved_bytes(split.saved), saved_bytes(saved)
    what = f"Rematerialization (saved for backward: {before} -> {after} bytes)"
    new_fw.provenance = TraceProvenance(what, seconds)
    new_bw.provenance = TraceProvenance(what, seconds)
    return ForwardBackward(new_fw, new_bw, saved, split.output_spec, split.differentiable_outputs,
                           split.differentiable_inputs)
