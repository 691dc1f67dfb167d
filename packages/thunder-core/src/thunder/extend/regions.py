"""Region forming for fusion executors that fuse whatever they are given (no shape constraints).

Walking a dispatched trace in order, a claimed prim joins the open region, or opens one. A region runs where its
last member was, so it is *closed* (takes no more members) as soon as an unclaimed symbol reads one of its values,
or writes in place (a later member could otherwise depend on that reader, or read before the write). Unclaimed
symbols in between that read nothing from the region run before it. Regions are therefore acyclic by construction,
and printing each at its last member keeps every value defined before use.

``copy_to_out_(c, out=x)`` joins the region computing ``c`` when ``c`` has no other use and ``x`` comes from outside
the region (or only earlier copies in it wrote ``x``): the region writes into ``x``. Regions of views only are
dropped (PyTorch does views for free); their claims are given back by :func:`thunder.extend.fuse_regions`.

The Inductor and nvFuser executors form their regions here; an executor whose kernels constrain shapes (Triton)
forms its own.
"""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.extend.claiming import claimed_prim

__all__ = ["Region", "form_regions", "region_inputs", "count_uses"]


class Region:
    def __init__(self):
        self.members: list[int] = []  # trace indices, in order
        self.produced: set[str] = set()  # names of values computed (or overwritten) inside
        self.copied: set[str] = set()  # names of the inputs copies inside write into
        self.open = True


def count_uses(bsyms, output) -> dict[str, int]:
    """How many times each value is read by ``bsyms`` or returned in ``output``, by name."""
    uses: dict[str, int] = {}
    for b in bsyms:
        for p in b.flat_proxy_args:
            uses[p.name] = uses.get(p.name, 0) + 1
    for p in tree_flatten(output)[0]:
        if isinstance(p, Proxy):
            uses[p.name] = uses.get(p.name, 0) + 1
    return uses


def form_regions(bsyms, output, *, view_prims) -> list[Region]:
    """The regions of claimed prims among ``bsyms`` (see the module); ``view_prims`` are the prim names a region
    made only of them is not worth fusing."""
    uses = count_uses(bsyms, output)
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
            current.copied.add(b.kwargs["out"].name)
            continue
        if current is None or not current.open:
            current = Region()
            regions.append(current)
        join(current, i, b)
    return [r for r in regions if any(claimed_prim(bsyms[i]).name not in view_prims for i in r.members)]


def _copy_joins(b, r: Region | None, uses) -> bool:
    computed, out = b.args[0], b.kwargs["out"]
    # ``out`` comes from outside, or an earlier copy in the region wrote it (``x.mul_(a).add_(b)``: the last wins)
    return (r is not None and r.open and computed.name in r.produced and uses.get(computed.name) == 1
            and (out.name not in r.produced or out.name in r.copied))


def region_inputs(prims_) -> tuple[list[TensorProxy], list[NumberProxy]]:
    """(tensors, numbers) a region's prims read from outside it, in the order first read."""
    inside: set[str] = set()
    tensors: list[TensorProxy] = []
    numbers: list[NumberProxy] = []
    seen: set[str] = set()
    for b in prims_:
        for p in b.flat_proxy_args:
            if p.name not in inside and p.name not in seen and isinstance(p, (TensorProxy, NumberProxy)):
                seen.add(p.name)
                (tensors if isinstance(p, TensorProxy) else numbers).append(p)
        inside.update(o.name for o in b.flat_proxy_outs)
    return tensors, numbers
