"""Region formation: groups the claimed prims of a dispatched trace into regions, one Inductor graph each.

Inductor fuses whatever it is given, so a region has no shape constraints: walking the trace in order, a
claimed prim joins the open region, or opens one. A region runs where its last member was, so it is *closed*
(takes no more members) as soon as an unclaimed symbol reads one of its values, or writes in place (a later
member could otherwise depend on that reader, or read before the write). Unclaimed symbols in between that read
nothing from the region run before it. Regions are therefore acyclic by construction, and printing each at its
last member keeps every value defined before use.

``copy_to_out_(c, out=x)`` joins the region computing ``c`` when ``c`` has no other use: the graph copies into
``x`` (Inductor stores there). Claims that end in no region worth compiling (only views) are given back to the
torch executor.
"""

from __future__ import annotations

from functools import partial

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import BoundSymbol
from thunder.extend import fuse_regions
from thunder.extend.claiming import claimed_prim
from thunder_inductor import claims

__all__ = ["fuse", "form_regions"]


class Region:
    def __init__(self):
        self.members: list[int] = []  # trace indices, in order
        self.produced: set[str] = set()  # names of values computed (or overwritten) inside
        self.open = True


def _count_uses(bsyms, output) -> dict[str, int]:
    uses: dict[str, int] = {}
    for b in bsyms:
        for p in b.flat_proxy_args:
            uses[p.name] = uses.get(p.name, 0) + 1
    for p in tree_flatten(output)[0]:
        if isinstance(p, Proxy):
            uses[p.name] = uses.get(p.name, 0) + 1
    return uses


def form_regions(bsyms, output) -> list[Region]:
    uses = _count_uses(bsyms, output)
    regions: list[Region] = []
    current: Region | None = None

    def join(r: Region, i: int, b) -> None:
        r.members.append(i)
        r.produced.update(o.name for o in b.flat_proxy_outs)

    for i, b in enumerate(bsyms):
        prim = claimed_prim(b)
        if prim is None or prim.name == "copy_to_out_" and not _copy_joins(b, current, uses):
            if current is not None and (any(p.name in current.produced for p in b.flat_proxy_args)
                                        or "inplace" in b.sym.tags or "out" in b.kwargs
                                        or prim is not None):
                current.open = False
                current = None
            continue
        if prim.name == "copy_to_out_":
            join(current, i, b)
            current.produced.add(b.kwargs["out"].name)  # later readers of ``out`` must wait for the region
            continue
        if current is None or not current.open:
            current = Region()
            regions.append(current)
        join(current, i, b)
    return [r for r in regions if _worth_compiling(r, bsyms)]


def _copy_joins(b, r: Region | None, uses) -> bool:
    computed = b.args[0]
    return r is not None and r.open and computed.name in r.produced and uses.get(computed.name) == 1


def _worth_compiling(r: Region, bsyms) -> bool:
    """Regions of views only are free in PyTorch: no compiled graph for them."""
    return any(claimed_prim(bsyms[i]).name not in claims.SHAPE_PRIMS for i in r.members)


# ---------------------------------------------------------------------------------------------
# Rewriting the trace
# ---------------------------------------------------------------------------------------------


def fuse(executor, trace):
    from thunder_inductor.compile import region_fusion

    regions = form_regions(list(trace.bound_symbols), trace.output)
    return fuse_regions(trace, regions, partial(_region_bsym, executor, region_fusion))


def _region_bsym(executor, region_fusion, r: Region, prims_, outputs) -> BoundSymbol:
    inside: set[str] = set()
    tensor_inputs: list[TensorProxy] = []
    number_inputs: list[NumberProxy] = []
    seen: set[str] = set()
    for b in prims_:
        for p in b.flat_proxy_args:
            if p.name not in inside and p.name not in seen and isinstance(p, (TensorProxy, NumberProxy)):
                seen.add(p.name)
                (tensor_inputs if isinstance(p, TensorProxy) else number_inputs).append(p)
        inside.update(o.name for o in b.flat_proxy_outs)
    symbol = region_fusion(executor, prims_, tensor_inputs, number_inputs, outputs)
    return BoundSymbol(symbol, (*tensor_inputs, *number_inputs), {}, tuple(outputs), tuple(prims_),
                       prims_[0].source)
