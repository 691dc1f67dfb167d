"""Dead-code elimination: drops bound symbols none of whose outputs are used, unless they have side
effects (tagged ``side_effect``), may raise on tensor data (tagged ``data_checked``: index bounds) or produce
nothing (checks). The sub-traces of a kept bound symbol (a
cond's branches, a loop's body) are cleaned the same way, their outputs being their boundary."""

from __future__ import annotations

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, from_trace, timed_transform

__all__ = ["dce", "may_raise_on_data"]


def may_raise_on_data(bsym) -> bool:
    """Whether ``bsym`` or its decomposition holds a symbol whose kernel checks tensor data (an index out of
    bounds): eager raises that error even when the result is unused, so the symbol stays. Only index tensors
    (integer tensors after the first argument) carry such data: ``v[..., ::2] = 0`` has none."""
    if "data_checked" in bsym.sym.tags and any(
            isinstance(p, TensorProxy) and dtypes.is_integer_dtype(p.dtype)
            for p in tree_flatten((bsym.args[1:], bsym.kwargs))[0]):
        return True
    return any(may_raise_on_data(s) for s in bsym.subsymbols)


def dce(trace: TraceCtx) -> TraceCtx:
    with timed_transform("Dead code elimination") as done:
        live = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
        kept = []
        for bsym in reversed(trace.bound_symbols):
            outs = bsym.flat_proxy_outs
            needed = (not outs or "side_effect" in bsym.sym.tags or any(o.name in live for o in outs)
                      or may_raise_on_data(bsym))
            if needed:
                kept.append(bsym.map_subtraces(dce))
                live.update(a.name for a in bsym.flat_proxy_args)
                # a symbolic dim of a kept tensor is defined in the trace, never popping up from nowhere
                live.update(d.name for o in outs if isinstance(o, TensorProxy) for d in o.shape
                            if isinstance(d, NumberProxy))
        new = from_trace(trace)
        new.bound_symbols = kept[::-1]
        done(new)
    return new
