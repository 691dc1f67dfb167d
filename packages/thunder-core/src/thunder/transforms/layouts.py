"""Memory layouts, for the decisions PyTorch makes from strides: whether ``reshape``/``flatten``/
``reshape_as``/``contiguous`` return a view of their input or a copy, and whether an opaque call's result
shares memory with its arguments.

Traces carry no strides. Functionalization asks this model only when the answer matters (an in-place
update reaches such a result or its base). The model replays the program as eager ran it, on meta
tensors: a trace input is an empty meta tensor with the strides of the tensor seen when tracing, and every
other tensor is the torch executor's call of the op that made it on the meta tensors of its arguments, so
its strides are PyTorch's own (elementwise ops keep a permuted layout, ``contiguous`` copies, ...). Each
input whose strides a decision read is listed in ``trace.layout_inputs``; the prologue checks its strides,
so a call with another layout gets its own cache entry.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_map
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx

__all__ = ["Layouts", "MAYBE_VIEWS"]

# torch-language symbols that return a view when the strides allow it and a copy otherwise
MAYBE_VIEWS = frozenset({"ltorch.reshape", "ltorch.reshape_as", "ltorch.flatten", "ltorch.contiguous"})


def _root(t: torch.Tensor) -> torch.Tensor:
    return t._base if t._is_view() else t




def _torch_call(bsym: BoundSymbol):
    """The torch callable the torch executor runs ``bsym`` as, or None."""
    from thunder.extend import get_executor

    impl = get_executor("torch").implmap.get(bsym.sym.id)
    op = impl.symbol if impl is not None else None
    if op is None:
        return None
    if op.call_ctx:
        return next(iter(op.call_ctx.values()))
    obj = __import__(op.module)
    for part in op.module.split(".")[1:] + op.name.split("."):
        obj = getattr(obj, part)
    return obj


class Layouts:
    def __init__(self, trace: TraceCtx):
        self.trace = trace
        self.strides = trace.input_strides
        self.inputs = {p.name: p for p in trace.args if isinstance(p, TensorProxy)}
        self.producers: dict[str, BoundSymbol] = {}
        for b in trace.bound_symbols:
            if "inplace" in b.sym.tags:  # an in-place op keeps its target's layout
                continue
            for o in b.flat_proxy_outs:
                self.producers.setdefault(o.name, b)
        self._meta: dict[str, torch.Tensor] = {}
        self._outs: dict[int, object] = {}
        self.used: set[str] = set()  # inputs whose strides were read

    def value(self, x):
        """The value of a number a decision reads; a symbolic one is constrained to it (the prologue checks)."""
        if isinstance(x, NumberProxy):
            if not x.static:
                self.trace.add_constraint(x, x.value)
            return x.value
        return x

    def _shape(self, p: TensorProxy) -> tuple:
        return tuple(int(self.value(d)) for d in p.shape)

    def _contiguous_meta(self, p: TensorProxy) -> torch.Tensor:
        return torch.empty(self._shape(p), dtype=dtypes.to_torch_dtype(p.dtype), device="meta")

    def aliases(self, bsym: BoundSymbol, index: int = 0) -> bool:
        """Whether output ``index`` of ``bsym`` (a symbol of MAYBE_VIEWS) is a view of its first argument in
        eager, at the strides of this trace's inputs."""
        base = self.meta(bsym.args[0])
        out = tree_flatten(self._run(bsym))[0][index]
        return isinstance(out, torch.Tensor) and (out is base or (out._is_view() and _root(out) is _root(base)))

    def may_alias_an_argument(self, p: TensorProxy) -> bool:
        """Whether ``p``, an output of an opaque call, shares memory with one of the call's tensor arguments in
        eager (asked of PyTorch on meta tensors); True where PyTorch cannot tell us."""
        b = self.producers.get(p.name)
        outs = self._run(b) if b is not None else None
        if outs is None:
            return True
        out = next((o for o, q in zip(tree_flatten(outs)[0], b.flat_outs) if isinstance(q, Proxy) and q.name == p.name),
                   None)
        if not isinstance(out, torch.Tensor):
            return True
        roots = {id(_root(self.meta(a))) for a in b.flat_args if isinstance(a, TensorProxy)}
        return id(_root(out)) in roots

    def meta(self, p: TensorProxy) -> torch.Tensor:
        m = self._meta.get(p.name)
        if m is not None:
            return m
        if p.name in self.inputs:
            self.used.add(p.name)
            strides = self.strides.get(p.name)
            m = (torch.empty_strided(self._shape(p), strides, dtype=dtypes.to_torch_dtype(p.dtype), device="meta")
                 if strides is not None else self._contiguous_meta(p))
        else:
            b = self.producers.get(p.name)
            outs = self._run(b) if b is not None else None
            m = next((o for o, q in zip(tree_flatten(outs)[0], b.flat_outs) if isinstance(q, Proxy) and q.name == p.name
                      and isinstance(o, torch.Tensor)), None) if outs is not None else None
            if m is None or tuple(m.shape) != self._shape(p):
                m = self._contiguous_meta(p)  # no meta kernel (or no torch call): a fresh contiguous tensor
        self._meta[p.name] = m
        return m

    def _run(self, bsym: BoundSymbol):
        key = id(bsym)
        if key in self._outs:
            return self._outs[key]
        fn = _torch_call(bsym)
        out = None
        if fn is not None and any(isinstance(a, TensorProxy) for a in bsym.flat_args):
            def convert(x):
                if isinstance(x, TensorProxy):
                    return self.meta(x)
                if isinstance(x, NumberProxy):
                    return self.value(x)
                if isinstance(x, dtypes.dtype):
                    return dtypes.to_torch_dtype(x)
                if isinstance(x, Device):
                    return torch.device("meta")
                if isinstance(x, slice):  # indexing keys: their bounds may be symbolic numbers
                    return slice(*(self.value(v) for v in (x.start, x.stop, x.step)))
                return x

            try:
                out = fn(*tree_map(convert, bsym.args), **tree_map(convert, bsym.kwargs))
            except Exception:  # no meta kernel: callers fall back to a contiguous result
                out = None
        self._outs[key] = out
        return out
