"""Dead-code elimination: drops bound symbols none of whose outputs are used, unless they have side
effects (tagged ``side_effect``), may raise on tensor data (tagged ``data_checked``: index bounds) or produce
nothing (checks). The sub-traces of a kept bound symbol (a
cond's branches, a loop's body) are cleaned the same way, their outputs being their boundary."""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, from_trace, timed_transform

__all__ = ["dce"]


def _numbers_read_inside(bsym):
    for sub in bsym.subsymbols:
        yield from (a for a in sub.flat_proxy_args if isinstance(a, NumberProxy))
        yield from _numbers_read_inside(sub)


def dce(trace: TraceCtx) -> TraceCtx:
    with timed_transform("Dead code elimination") as done:
        live = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
        kept = []
        for bsym in reversed(trace.bound_symbols):
            outs = bsym.flat_proxy_outs
            needed = (not outs or "side_effect" in bsym.sym.tags or any(o.name in live for o in outs)
                      or bsym.may_raise_on_data())
            if not needed:
                # its outputs are unused, but a size its decomposition computed may be (``x[1:].shape[0]``)
                for number_def in reversed(bsym.number_definitions()):
                    if any(o.name in live for o in number_def.flat_proxy_outs):
                        kept.append(number_def)
                        live.update(a.name for a in number_def.flat_proxy_args)
            if needed:
                kept.append(bsym.map_subtraces(dce))
                live.update(a.name for a in bsym.flat_proxy_args)
                # sizes its decomposition reads (view's -1 from the size of a view re-derived by functionalization)
                live.update(a.name for a in _numbers_read_inside(bsym))
                # a symbolic dim of a kept tensor is defined in the trace, never popping up from nowhere
                live.update(d.name for o in outs if isinstance(o, TensorProxy) for d in o.shape
                            if isinstance(d, NumberProxy))
        new = from_trace(trace)
        new.bound_symbols = kept[::-1]
        done(new)
    return new
