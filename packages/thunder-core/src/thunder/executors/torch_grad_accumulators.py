"""A backward that sums gradients into buffers it is given instead of zeros it makes.

The gradient of a gather (``w[expert]``, ``x[rows]``) is a zero-filled tensor of the input's shape into which the
selected rows' gradients are added in place (``t = full(shape, 0)``, then ``index_put_(t, idx, g, True)``, as
executors/torch_stores.py lowers it). Where several segments of one call each compute such a gradient for the
same input (an experts loop: one segment per expert, each reading its weights ``w[expert]``), eager and a backward
per segment fill one weight-sized zero per segment and add them all. Given the sum so far, the backward adds its
rows into it instead: one fill per call, no sums (frontend/segment_node.py).
"""

from __future__ import annotations

from thunder.core.codegen import compile_trace
from thunder.core.proxies import Proxy
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import _printed

__all__ = ["fresh_gradients", "summing_into_given"]

_ZEROS = "thunder.executors.torch_impls.full"
_ADD_INTO = "thunder.executors.torch_impls.index_put_"


def fresh_gradients(trace) -> tuple[int, ...]:
    """Positions of the gradients ``trace`` (a lowered backward) returns that are zeros it made and then only added
    into in place (``index_put_(t, ..., accumulate=True)``): tensors nothing else holds, each returned once."""
    outputs = trace.output if isinstance(trace.output, (tuple, list)) else (trace.output,)
    zeros = {b.flat_proxy_outs[0].name for b in trace.bound_symbols
             if _printed(b) == _ZEROS and len(b.flat_proxy_outs) == 1 and b.args[1] == 0}
    for b in trace.bound_symbols:
        if not zeros:
            break
        read = [a.name for a in b.flat_proxy_args if a.name in zeros]
        if not read:
            continue
        adds_into = (_printed(b) == _ADD_INTO and isinstance(b.args[0], Proxy) and b.args[3] is True
                     and read == [b.args[0].name])
        if not adds_into:
            zeros.difference_update(read)
    names = [getattr(p, "name", None) for p in outputs]
    return tuple(k for k, n in enumerate(names) if n in zeros and names.count(n) == 1)


def summing_into_given(trace, n_saved: int):
    """(``trace`` compiled to take, after its cotangents, the buffer of each of its :func:`fresh_gradients`, which it
    adds into instead of zeros; those positions) or None where it has none. Its first ``n_saved`` arguments come in
    one list, as the backward's (core/codegen.py)."""
    positions = fresh_gradients(trace)
    if not positions:
        return None
    outputs = trace.output if isinstance(trace.output, (tuple, list)) else (trace.output,)
    given = {outputs[k].name for k in positions}
    summing = from_trace(trace)
    summing.fn_name = f"{trace.fn_name}_summing"
    summing.args = [*trace.args, *(outputs[k] for k in positions)]
    summing.bound_symbols = [b for b in trace.bound_symbols
                             if not (_printed(b) == _ZEROS and b.flat_proxy_outs[0].name in given)]
    return compile_trace(summing, first_args_in_list=n_saved), positions
