"""``ConstantFolding``: compute at compile time what depends on no input.

A computation that builds a tensor from constants (``torch.tensor([2.]) * 10 / 5``) is evaluated once, when
the program is compiled, and replaced by one creation of the result (``ltorch.tensor([4.0], ...)``). Only
small results are folded (at most ``max_numel`` elements, printed as a literal in the trace); random,
in-place and other side-effecting operations never are. Operations with no tensor input (the creations
themselves) are left as they are.
"""

from __future__ import annotations

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace, tracectx
from thunder.transforms.transform import Transform

__all__ = ["ConstantFolding"]

_NEVER_FOLDED = frozenset({"random", "side_effect", "inplace"})


class ConstantFolding(Transform):
    def __init__(self, max_numel: int = 64):
        self.max_numel = max_numel

    def transform_traces_pre_prologue(self, prologue_trace, computation_trace, epilogue_trace, **kwargs):
        folded = fold_constants(computation_trace, self.max_numel)
        return prologue_trace, folded, epilogue_trace


def _foldable(bsym, constant: dict, max_numel: int, *, creation: bool = False) -> bool:
    """Whether ``bsym`` computes small tensors from constants only (``creation``: from no tensor at all)."""
    if _NEVER_FOLDED.intersection(bsym.sym.tags) or bsym.subtraces:
        return False
    outs = bsym.flat_proxy_outs
    if not outs or not all(isinstance(o, TensorProxy) and not o.requires_grad for o in outs):
        return False
    if any(isinstance(d, NumberProxy) for o in outs for d in o.shape):
        return False
    if any(_numel(o) > max_numel for o in outs):
        return False
    args = bsym.flat_proxy_args
    if creation:
        return not any(isinstance(a, TensorProxy) for a in args) and all(_is_constant(a, constant) for a in args)
    return any(isinstance(a, TensorProxy) for a in args) and all(_is_constant(a, constant) for a in args)


def _is_constant(p: Proxy, constant: dict) -> bool:
    return p.name in constant or (isinstance(p, NumberProxy) and p.static)


def _numel(t: TensorProxy) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


def _evaluate(bsym, constant: dict):
    """Runs ``bsym`` alone, on the constant values of its inputs, as the torch executor would."""
    from thunder.extend import resolve_executors
    from thunder.transforms.dispatch import dispatch_to_executors

    single = TraceCtx("fold")
    single.args = list({a.name: a for a in bsym.flat_proxy_args}.values())
    single.bound_symbols = [bsym]
    single.output = bsym.output
    program = dispatch_to_executors(single, resolve_executors(["torch"])).python_callable()
    return program(*(constant[a.name] if a.name in constant else a.value for a in single.args))


def _creation(value, proxy: TensorProxy, trace) -> list:
    """Bound symbols that create ``value`` (a torch tensor) as ``proxy``."""
    from thunder.extend import swap_proxies
    from thunder.torch import tensor as ltorch_tensor

    scratch = TraceCtx("fold")
    scratch.names = set(trace.names)
    with tracectx(scratch):
        made = ltorch_tensor(value.tolist(), dtype=dtypes.from_torch_dtype(value.dtype), device=proxy.device)
    trace.names.update(scratch.names)
    return [swap_proxies(b, {made.name: proxy}) for b in scratch.bound_symbols]


def fold_constants(trace, max_numel: int = 64):
    constant: dict = {}  # proxy name -> its value, for tensors that depend on no input
    new_bsyms = []
    new = from_trace(trace)
    for bsym in trace.bound_symbols:
        if _foldable(bsym, constant, max_numel, creation=True):
            # a creation from constants: kept as is, its value known for what follows
            constant.update(_named_values(bsym, _evaluate(bsym, constant)))
            new_bsyms.append(bsym)
        elif _foldable(bsym, constant, max_numel):
            outs = _evaluate(bsym, constant)
            values = _named_values(bsym, outs)
            constant.update(values)
            for o in bsym.flat_proxy_outs:
                new_bsyms.extend(b.replace(source=bsym.source) for b in _creation(values[o.name], o, new))
        else:
            new_bsyms.append(bsym)
    new.bound_symbols = new_bsyms
    new.provenance = TraceProvenance("Constant folding")
    if len(new_bsyms) == len(trace.bound_symbols) and all(a is b for a, b in zip(new_bsyms, trace.bound_symbols)):
        return trace
    from thunder.transforms.dce import dce

    cleaned = dce(new)
    cleaned.provenance = TraceProvenance("Constant folding (and dead-code elimination)")
    return cleaned


def _named_values(bsym, outs) -> dict:
    from thunder.core.pytree import tree_flatten

    values = tree_flatten(outs)[0]
    return {o.name: v for o, v in zip(bsym.flat_proxy_outs, values) if isinstance(o, Proxy)}
