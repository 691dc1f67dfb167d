"""Region formation: groups the claimed prims of a dispatched trace into regions, one kernel each.

A region has a *domain*: the shape ``D`` every value in it is indexed over, and at most one reduction
axis ``r``. Its values live at two levels: *full* (shape ``D``) and *reduced* (``D`` without ``r``, or
with ``r`` of size 1, what keepdim reductions produce). Inputs of other shapes enter only through
``broadcast_in_dim``, as loads with broadcast strides.

Walking the trace in order, each claimed prim joins an open region whose domain fits it (preferring the
region that computes its inputs), or opens a new one. A region runs where its last member was, so:

* a region is *closed* (takes no more members) as soon as anything outside it reads one of its values;
  a later member could otherwise depend on that reader, which depends on the region: a cycle;
* a non-fused in-place update closes every open region (their reads must happen before the write).

Regions are therefore acyclic by construction, and printing each at its last member keeps every value
defined before use. ``copy_to_out_(c, out=x)`` joins the region computing ``c``: the kernel stores into
``x`` directly. Claims that end in no region (or only in broadcasts, which PyTorch does as views) are
given back to the torch executor.
"""

from __future__ import annotations

from functools import partial

from thunder.core.proxies import NumberProxy, TensorProxy
from thunder.core.symbol import BoundSymbol
from thunder.extend import fuse_regions
from thunder.extend.claiming import claimed_prim
from thunder.extend.regions import count_uses
from thunder_triton import rules

__all__ = ["fuse", "Region", "same_shape", "level_of"]

FULL, REDUCED = "full", "reduced"


def same_dim(a, b) -> bool:
    # never compare IntegerProxy values with ==: that would record a constraint on the size
    if isinstance(a, NumberProxy) or isinstance(b, NumberProxy):
        return isinstance(a, NumberProxy) and isinstance(b, NumberProxy) and a.name == b.name
    return a == b


def same_shape(a, b) -> bool:
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b))


def reduced_shapes(domain, raxis):
    dropped = tuple(d for k, d in enumerate(domain) if k != raxis)
    kept = tuple(1 if k == raxis else d for k, d in enumerate(domain))
    return dropped, kept


def level_of(shape, domain, raxis) -> str | None:
    if same_shape(shape, domain):
        return FULL
    if raxis is not None and any(same_shape(shape, s) for s in reduced_shapes(domain, raxis)):
        return REDUCED
    return None


class Region:
    def __init__(self, domain, raxis):
        self.domain, self.raxis = tuple(domain), raxis
        self.members: list[int] = []  # trace indices, in order
        self.produced: set[str] = set()  # names of values computed inside
        self.reads: set[str] = set()  # names of tensors read from outside
        self.open = True

    def level(self, p) -> str | None:
        return level_of(p.shape, self.domain, self.raxis)


def _operands(bsym) -> list:
    return [a for a in bsym.flat_args if isinstance(a, TensorProxy)]


def _fits(region: Region, bsym, prim: str):
    """(domain, raxis) the region would have with ``bsym`` in it, or None when it does not fit."""
    out = bsym.flat_proxy_outs[0]
    if prim in rules.REDUCTIONS:
        a, axis = bsym.args[0], tuple(bsym.args[1])[0]
        if not same_shape(a.shape, region.domain) or region.raxis not in (None, axis):
            return None
        return region.domain, axis
    if region.level(out) is None:
        return None
    if prim in rules.SHAPE_PRIMS:
        a, _, bdims = bsym.args
        if a.name in region.produced:
            return (region.domain, region.raxis) if _internal_broadcast_ok(region, a, out, tuple(bdims)) else None
    return region.domain, region.raxis


def _internal_broadcast_ok(region: Region, a, out, bdims) -> bool:
    """A broadcast of a value computed in the region: the identity, or reduced -> full along the outer dims."""
    la, lo = region.level(a), region.level(out)
    n = len(region.domain)
    if la is None:
        return False
    if len(a.shape) == n:  # keepdim form or same shape: the dims line up
        return bdims == tuple(range(n))
    return la == REDUCED and bdims == tuple(k for k in range(n) if k != region.raxis) and lo is not None


def _new_region(bsym, prim: str) -> Region:
    if prim in rules.REDUCTIONS:
        return Region(bsym.args[0].shape, tuple(bsym.args[1])[0])
    return Region(bsym.flat_proxy_outs[0].shape, None)


def form_regions(bsyms, output) -> list[Region]:
    uses = count_uses(bsyms, output)
    regions: list[Region] = []
    region_of_value: dict[str, Region] = {}

    def close_readers_of(name: str, keep=None) -> None:
        for r in regions:
            if r.open and r is not keep and name in r.reads:
                r.open = False

    for i, b in enumerate(bsyms):
        prim_sym = claimed_prim(b)
        if prim_sym is None:
            for p in b.flat_proxy_args:  # read outside a region: the region runs before this, complete
                r = region_of_value.get(p.name)
                if r is not None:
                    r.open = False
            if "inplace" in b.sym.tags or "out" in b.kwargs:
                for r in regions:
                    r.open = False
            continue
        prim = prim_sym.name
        if prim == "copy_to_out_":
            r = _copy_region(b, region_of_value, uses)
            if r is None:  # given back: an eager copy, which reads ``computed`` and writes ``out``
                for p in b.flat_proxy_args:
                    if p.name in region_of_value:
                        region_of_value[p.name].open = False
                for r2 in regions:
                    r2.open = False
                continue
            out = b.kwargs["out"]
            close_readers_of(out.name, keep=r)
            r.members.append(i)
            r.reads.add(out.name)
            for o in b.flat_proxy_outs:
                r.produced.add(o.name)
                region_of_value[o.name] = r
            continue
        inputs_from = {region_of_value[p.name] for p in b.flat_proxy_args if p.name in region_of_value}
        chosen, fit = None, None
        for r in reversed(regions):
            if not r.open:
                continue
            f = _fits(r, b, prim)
            if f is None:
                continue
            if chosen is None or (r in inputs_from and chosen not in inputs_from):
                chosen, fit = r, f
        if chosen is None:
            chosen = _new_region(b, prim)
            regions.append(chosen)
        else:
            chosen.domain, chosen.raxis = fit
        for r in inputs_from:
            if r is not chosen:
                r.open = False  # read by another region, which runs after it
        chosen.members.append(i)
        for p in _operands(b):
            if p.name not in chosen.produced:
                chosen.reads.add(p.name)
        for o in b.flat_proxy_outs:
            chosen.produced.add(o.name)
            region_of_value[o.name] = chosen
    return [r for r in regions if _worth_a_kernel(r, bsyms)]


def _copy_region(b, region_of_value, uses):
    """The region that computes ``b``'s value and can store it into ``out`` directly, or None."""
    computed, out = b.args[0], b.kwargs["out"]
    r = region_of_value.get(computed.name)
    if r is None or not r.open or uses.get(computed.name) != 1 or r.level(out) is None:
        return None
    if out.name in r.reads and r.level(out) != r.level(computed):
        return None
    return r


def _worth_a_kernel(r: Region, bsyms) -> bool:
    """Regions of broadcasts only are views in PyTorch: no kernel for them."""
    return any(claimed_prim(bsyms[i]).name not in rules.SHAPE_PRIMS for i in r.members)


# ---------------------------------------------------------------------------------------------
# Rewriting the trace
# ---------------------------------------------------------------------------------------------


def fuse(executor, trace):
    from thunder_triton.kernel_cache import region_launcher

    regions = form_regions(list(trace.bound_symbols), trace.output)
    return fuse_regions(trace, regions, partial(_region_bsym, executor, region_launcher))


def _region_bsym(executor, region_launcher, r: Region, prims_, outputs) -> BoundSymbol:
    tensor_inputs: list[TensorProxy] = []
    seen: set[str] = set()
    for b in prims_:
        for p in _operands(b):
            if p.name not in r.produced and p.name not in seen:
                seen.add(p.name)
                tensor_inputs.append(p)
    launcher, scalars = region_launcher(executor, prims_, r.domain, r.raxis, tensor_inputs, outputs)
    return BoundSymbol(launcher.symbol, (*tensor_inputs, *scalars, *r.domain), {}, tuple(outputs), tuple(prims_),
                       prims_[0].source)
