"""The torch executor's copy lowering: ``x1 = copy_to_out_(t, out=x)`` where ``t = torch.add(x, y)`` becomes
``x1 = torch.add(x, y, out=x)``, one pass over memory instead of two (what the copy_to_out_ contract is for).
And the reuse of dead temporaries: ``t2 = torch.add(t1, eps)`` where ``t1`` is a temporary read by nothing else
becomes ``torch.add(t1, eps, out=t1)``, as eager code's ``x.sqrt().div(c).add_(eps)`` does, instead of allocating
(and first touching) a new buffer. The elementwise ATen backward kernels (``gelu_backward``, ...) get the same
through their variants writing into a given buffer (``OUT_VARIANTS``): eager allocates their result, here it
is written over the dead incoming gradient.

Folding is done when the op that computed ``t`` is an elementwise torch function with ``out=`` (whose output
may alias its inputs), ``t`` is read by nothing but the copy, and nothing reads ``x`` (under any of its names:
``x``, the outputs of earlier copies into it, and views of it) between the op and the copy (so no reader sees the
new value early).
"""

from __future__ import annotations

from thunder.core.proxies import TensorProxy
from thunder.core.symbol import tagged_symbol
from thunder.core.trace import from_trace

__all__ = ["fold_copies_into_out", "reuse_dead_temporaries", "memory_sets", "Sets", "OUT_CAPABLE", "OUT_VARIANTS"]

# torch functions that accept out= and compute elementwise (out may alias an input)
OUT_CAPABLE = frozenset({
    "torch.add", "torch.sub", "torch.mul", "torch.div", "torch.lerp", "torch.addcmul", "torch.addcdiv",
    "torch.sqrt", "torch.rsqrt", "torch.neg", "torch.exp", "torch.log", "torch.abs", "torch.maximum",
    "torch.minimum", "torch.clamp", "torch.sigmoid", "torch.tanh", "torch.pow", "torch.where",
})

# printed name of an elementwise op that allocates its result -> the symbol of its variant taking out= (filled by
# the torch executor's registration: the ATen backward kernels of torch_grad.py)
OUT_VARIANTS: dict = {}


def _takes_out(bsym) -> bool:
    """Whether ``bsym`` can be given ``out=``: an elementwise torch function (``torch.where``'s out= overload takes
    tensors only)."""
    if f"{bsym.sym.module}.{bsym.sym.name}" not in OUT_CAPABLE or "out" in bsym.kwargs:
        return False
    return bsym.sym.name != "where" or all(isinstance(a, TensorProxy) for a in bsym.args[:3])


def _is_copy(bsym) -> bool:
    return bsym.sym.name.endswith("copy_to_out_") and "out" in bsym.kwargs


def fold_copies_into_out(trace):
    bsyms = list(trace.bound_symbols)
    producer_of = {}
    for i, b in enumerate(bsyms):
        for o in b.flat_proxy_outs:
            producer_of[o.name] = i
    uses: dict[str, int] = {}
    for b in bsyms:
        for a in b.flat_proxy_args:
            uses[a.name] = uses.get(a.name, 0) + 1
    drop, replace = set(), {}
    memory = None
    for j, copy in enumerate(bsyms):
        if not _is_copy(copy):
            continue
        computed, out = copy.args[0], copy.kwargs["out"]
        i = producer_of.get(computed.name)
        if i is None or i in replace or uses.get(computed.name) != 1:
            continue
        producer = bsyms[i]
        if not _takes_out(producer):
            continue
        if len(producer.flat_proxy_outs) != 1:
            continue
        if out.requires_grad and copy.kwargs.get("grad_enabled", True):
            continue  # autograd must see an in-place update of x (and refuse it on leaves, as in eager)
        # x under any of its names: its earlier versions, and views of it made before the op (``v = x.view(-1)``)
        memory = memory or memory_sets(bsyms, trace.input_memory)
        x = memory.find(out.name)
        if any(memory.find(a.name) == x for b in bsyms[i + 1:j] for a in b.flat_proxy_args if isinstance(a, TensorProxy)):
            continue
        # it now writes into an input: a side effect, never dropped or merged
        replace[i] = producer.replace(sym=tagged_symbol(producer.sym, ("side_effect",)),
                                      kwargs={**producer.kwargs, "out": out}, output=copy.output)
        drop.add(j)
    if not replace:
        return trace
    new = from_trace(trace)
    new.bound_symbols = [replace.get(i, b) for i, b in enumerate(bsyms) if i not in drop]
    return new


def _printed(bsym) -> str:
    return f"{bsym.sym.module}.{bsym.sym.name}"


def _static_same(x, y) -> bool:
    return (x.dtype is y.dtype and x.device == y.device and len(x.shape) == len(y.shape)
            and all(isinstance(a, int) and isinstance(b, int) and a == b for a, b in zip(x.shape, y.shape)))


def _allocates(bsym) -> bool:
    """Whether each output of ``bsym`` is a new buffer (no view, no alias of an input): elementwise ops, matmuls,
    concatenation and the ATen backward kernels."""
    name = _printed(bsym)
    if "out" in bsym.kwargs:
        return False
    return (name in OUT_CAPABLE and len(bsym.flat_proxy_outs) == 1) or name in ("torch.matmul", "torch.cat") or (
        name.startswith("torch.ops.aten.") and name.endswith(("_backward.default", "_backward_data.default")))


class Sets:
    """Union-find over hashable keys."""

    def __init__(self):
        self.parent = {}

    def find(self, x):
        parent = self.parent
        root = parent.setdefault(x, x)
        while root != parent[root]:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def memory_sets(bsyms, input_memory=None, allocates=None) -> Sets:
    """Names that may share memory end up in one set: a view shares its input's, an ``out=`` result its
    destination's, an input the ones ``input_memory`` (the trace's) pairs it with. Ops that surely allocate their
    result (elementwise ops, matmuls, backward kernels, and those ``allocates`` accepts) join nothing; any other op
    may return a view of any tensor argument."""
    memory = Sets()
    for name, other in (input_memory or {}).items():
        memory.union(other, name)
    for b in bsyms:
        outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        if "out" in b.kwargs:
            for o in outs:
                memory.union(b.kwargs["out"].name, o.name)
        elif outs and not _allocates(b) and not (allocates is not None and allocates(b)):
            for a in b.flat_proxy_args:
                if isinstance(a, TensorProxy):
                    for o in outs:
                        memory.union(a.name, o.name)
    return memory


def reuse_dead_temporaries(trace):
    """An elementwise op whose tensor argument is a temporary that an op of this trace allocated (so it aliases
    nothing), that nothing else reads (so no view of it exists) and that has the result's shape and dtype,
    writes its result into that temporary. A temporary that may require grad is never reused (the result would
    require grad too, also under no_grad), nor are the arguments of an op where grad mode may be on and one of them
    may require grad (``out=`` refuses them)."""
    from thunder.core.proxies import Proxy
    from thunder.core.pytree import tree_flatten

    bsyms = list(trace.bound_symbols)
    fresh = {}  # temporary name -> its proxy, for outputs of allocating elementwise ops
    for b in bsyms:
        if _allocates(b):
            fresh.update((o.name, o) for o in b.flat_proxy_outs if isinstance(o, TensorProxy))
    uses: dict[str, int] = {}
    for b in bsyms:
        for a in b.flat_proxy_args:
            uses[a.name] = uses.get(a.name, 0) + 1
    for p in tree_flatten(trace.output)[0]:
        if isinstance(p, Proxy):
            uses[p.name] = uses.get(p.name, 0) + 1
    replace, taken = {}, set()
    grad_on = trace.grad_enabled  # a backward trace runs with grad mode off: nothing in it requires grad
    # whether the tensor behind each name may require grad when it runs: made with grad mode on from values that
    # require grad, or the buffer of one that was (a result written with out= into it is that very tensor)
    tracked: dict[str, bool] = {}
    for j, b in enumerate(bsyms):
        if _printed(b) == "torch._C._set_grad_enabled":
            grad_on = bool(b.args[0])
        for o in b.flat_proxy_outs:
            if isinstance(o, TensorProxy):
                tracked[o.name] = grad_on and o.requires_grad
        variant = OUT_VARIANTS.get(_printed(b))
        if not (_takes_out(b) or variant is not None) or len(b.flat_proxy_outs) != 1:
            continue
        result = b.flat_proxy_outs[0]
        if not isinstance(result, TensorProxy) or (grad_on and result.requires_grad):
            continue
        if grad_on and any(tracked.get(a.name, a.requires_grad) for a in b.flat_proxy_args
                           if isinstance(a, TensorProxy)):
            continue  # out= refuses any argument that requires grad
        for a in b.args:
            if (isinstance(a, TensorProxy) and a.name in fresh and a.name not in taken and uses.get(a.name) == 1
                    and not tracked.get(a.name, grad_on and a.requires_grad) and _static_same(a, result)):
                taken.add(a.name)
                replace[j] = b.replace(sym=variant or b.sym, kwargs={**b.kwargs, "out": a})
                tracked[result.name] = tracked.get(a.name, a.requires_grad)
                break
    if not replace:
        return trace
    new = from_trace(trace)
    new.bound_symbols = [replace.get(i, b) for i, b in enumerate(bsyms)]
    return new
