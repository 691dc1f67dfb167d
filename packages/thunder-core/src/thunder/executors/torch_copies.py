"""The torch executor's copy lowering: ``x1 = copy_to_out_(t, out=x)`` where ``t = torch.add(x, y)`` becomes
``x1 = torch.add(x, y, out=x)``, one pass over memory instead of two (what the copy_to_out_ contract is for).

Folding is done when the op that computed ``t`` is an elementwise torch function with ``out=`` (whose output
may alias its inputs), ``t`` is read by nothing but the copy, and nothing reads ``x`` (under any of its names:
``x`` and the outputs of earlier copies into it) between the op and the copy (so no reader sees the new value
early).
"""

from __future__ import annotations

from thunder.core.trace import from_trace
from thunder.transforms.dispatch import tagged_symbol

__all__ = ["fold_copies_into_out", "OUT_CAPABLE"]

# torch functions that accept out= and compute elementwise (out may alias an input)
OUT_CAPABLE = frozenset({
    "torch.add", "torch.sub", "torch.mul", "torch.div", "torch.lerp", "torch.addcmul", "torch.addcdiv",
    "torch.sqrt", "torch.rsqrt", "torch.neg", "torch.exp", "torch.log", "torch.abs", "torch.maximum",
    "torch.minimum", "torch.clamp", "torch.sigmoid", "torch.tanh", "torch.pow", "torch.where",
})


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
    buffer: dict[str, set[str]] = {}  # an input -> the names of its versions (x, then each copy's output)
    for j, copy in enumerate(bsyms):
        if not _is_copy(copy):
            continue
        computed, out = copy.args[0], copy.kwargs["out"]
        versions = buffer.setdefault(out.name, {out.name})
        versions.update(o.name for o in copy.flat_proxy_outs)
        i = producer_of.get(computed.name)
        if i is None or i in replace or uses.get(computed.name) != 1:
            continue
        producer = bsyms[i]
        if f"{producer.sym.module}.{producer.sym.name}" not in OUT_CAPABLE or "out" in producer.kwargs:
            continue
        if len(producer.flat_proxy_outs) != 1:
            continue
        if out.requires_grad and copy.kwargs.get("grad_enabled", True):
            continue  # autograd must see an in-place update of x (and refuse it on leaves, as in eager)
        between = bsyms[i + 1:j]
        if any(versions & {a.name for a in b.flat_proxy_args} for b in between):
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
