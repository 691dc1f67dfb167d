"""Reshape chains of a backward trace.

Grad rules reshape a cotangent back to each view's input shape, so a chain of views in the forward
(``y.transpose(1, 2).contiguous().view(B, T, C)``, a reshape before a linear) becomes a chain of reshapes in the
backward, some to the shape the tensor already has. Each is a Python-level call when the backward runs, on caches
the forward and the optimizer have made cold. A reshape to its input's own shape is dropped (``reshape`` gives
the tensor's own layout back), and a reshape of a reshape of a tensor known to be contiguous reshapes that tensor.
Values are unchanged: the trace is still functional (no ``out=`` yet), and any reshape keeps the elements in their
order. Strides are eager's too: a reshape of a non-contiguous tensor may copy (a contiguous result), where one
reshape straight to the last shape would be a view (``x.reshape(6).reshape(2, 3)`` of a transposed ``x`` is
contiguous; ``x.reshape(2, 3)`` is ``x``), so a chain is folded only from a tensor every reshape of which is a view
of the same layout. Only static shapes are compared.
"""

from __future__ import annotations

import time

from thunder.core import prims
from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace
from thunder.extend import swap_proxies

__all__ = ["fold_reshape_chains"]

_RESHAPES = frozenset({"prims.reshape", "ltorch.reshape"})
# ops whose result is always a fresh contiguous tensor, whatever their arguments' strides
_CONTIGUOUS_RESULTS = frozenset({"prims.matmul", "ltorch.matmul", "ltorch.mm", "ltorch.bmm", "ltorch.linear"})


def _static_shape(t) -> tuple | None:
    shape = tuple(t.shape)
    return shape if all(type(d) is int for d in shape) else None


def fold_reshape_chains(trace: TraceCtx) -> TraceCtx:
    """``trace`` with each reshape to its input's shape dropped and each reshape of a reshape of a contiguous tensor
    made a reshape of that tensor (the first reshape is left for DCE where nothing else reads it); ``trace`` itself
    where none is found."""
    start = time.perf_counter_ns()
    returned = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
    base_of: dict[str, TensorProxy] = {}  # a reshape's output -> the tensor it reshapes
    contiguous: set[str] = set()  # tensors made by an op of _CONTIGUOUS_RESULTS
    rename: dict[str, Proxy] = {}
    kept, changed = [], False
    for b in trace.bound_symbols:
        if rename:
            b = swap_proxies(b, rename)
        if b.sym.id not in _RESHAPES or not b.args or not isinstance(b.args[0], TensorProxy) \
                or len(b.flat_proxy_outs) != 1:
            if b.sym.id in _CONTIGUOUS_RESULTS:
                contiguous.update(p.name for p in b.flat_proxy_outs)
            kept.append(b)
            continue
        out, x = b.flat_proxy_outs[0], b.args[0]
        shape = _static_shape(out)
        base = base_of.get(x.name, x)
        if shape is None or _static_shape(base) is None:
            kept.append(b)
            continue
        if shape == _static_shape(base) and out.name not in returned:
            rename[out.name] = base  # a reshape back to the shape the chain started from: no call at all
            changed = True
            continue
        if base is not x:
            b = prims.reshape.bind(base, shape, output=out, source=b.source)
            changed = True
        if base.name in contiguous:  # its reshapes are views, contiguous like it: the chain may start from it
            base_of[out.name] = base
        kept.append(b)
    if not changed:
        return trace
    new = from_trace(trace)
    new.bound_symbols = kept  # (the output is as it was: no returned reshape is dropped)
    new.provenance = TraceProvenance("Reshape chains folded", (time.perf_counter_ns() - start) / 1e9)
    return new
