"""A backward specialized for outputs the loss does not use.

An output whose cotangent is None (the loss does not reach it: a segment's output kept for continuations of the
program that this call does not take, an auxiliary output) gets a zero cotangent, which the backward adds to the
gradient flowing from the outputs that are used: ``g = torch.add(grad_unused, t)``, an allocation and a pass over
the tensor per such output, which eager's engine never runs. This pass drops each such add where ``t`` is a new
tensor the backward computed (an elementwise op, a matmul, a backward kernel), read by that add only, of the sum's
shape and dtype, and the sum is not returned: later reads of the sum read ``t``, and no gradient returned can
become an alias of another or of a saved tensor.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import _printed
from thunder.transforms.del_last_used import DEL, del_last_used

__all__ = ["without_zero_cotangents"]


def _makes_new_tensor(bsym) -> bool:
    from thunder.executors.torchex import ELEMENTWISE

    printed = _printed(bsym)
    return (printed in _NEW_TENSOR or printed.startswith("torch.ops.aten.")
            or (printed in ELEMENTWISE.values() and printed != "torch.where"))


# ops of the torch executor whose result never aliases an argument
_NEW_TENSOR = frozenset({"torch.matmul", "torch.nn.functional.linear", "torch.cat",
                         "thunder.executors.torch_impls.div", "thunder.executors.torch_impls.take",
                         "torch.index_select"})


def _shape_key(p: TensorProxy) -> tuple:
    return tuple(d if isinstance(d, int) else ("sym", d.name) for d in p.shape)


def _same_layout(a, b) -> bool:
    return (isinstance(a, TensorProxy) and isinstance(b, TensorProxy) and a.dtype is b.dtype
            and a.device == b.device and _shape_key(a) == _shape_key(b))


def without_zero_cotangents(backward_trace, zero_names: frozenset):
    """``backward_trace`` (as lowered, with its ``del`` statements) specialized for the arguments ``zero_names``
    being zero: (the trace, or None where nothing changes; the names of ``zero_names`` it still reads)."""
    bsyms = [b for b in backward_trace.bound_symbols if b.sym.id != DEL.id]
    producer = {o.name: b for b in bsyms for o in b.flat_proxy_outs}
    readers: dict[str, int] = {}
    for b in bsyms:
        for a in b.flat_proxy_args:
            readers[a.name] = readers.get(a.name, 0) + 1
    returned = {p.name for p in tree_flatten(backward_trace.output)[0] if isinstance(p, Proxy)}
    rename: dict[str, Proxy] = {}
    kept = []
    for b in bsyms:
        if _printed(b) == "torch.add" and len(b.args) == 2 and len(b.flat_proxy_outs) == 1:
            out, (x, y) = b.flat_proxy_outs[0], b.args
            other = y if isinstance(x, Proxy) and x.name in zero_names else \
                x if isinstance(y, Proxy) and y.name in zero_names else None
            # no alpha; out= only into the other operand (torch_copies.reuse_dead_temporaries)
            plain = not b.kwargs or (other is not None and set(b.kwargs) == {"out"}
                                     and getattr(b.kwargs["out"], "name", None) == other.name)
            if (other is not None and plain and out.name not in returned
                    and readers.get(other.name) == 1 + ("out" in b.kwargs)
                    and other.name in producer and _makes_new_tensor(producer[other.name])
                    and _same_layout(out, other)):
                rename[out.name] = rename.get(other.name, other)  # an add removed before: its own operand
                continue
        kept.append(b)
    if not rename:
        return None, zero_names
    from thunder.extend import swap_proxies

    new = from_trace(backward_trace)
    new.bound_symbols = [swap_proxies(b, rename) for b in kept]
    read = {a.name for b in new.bound_symbols for a in b.flat_proxy_args} | returned
    return del_last_used(new), frozenset(n for n in zero_names if n in read)
