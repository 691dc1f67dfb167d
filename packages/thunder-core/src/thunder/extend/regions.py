"""Region forming for fusion executors that fuse whatever they are given (no shape constraints).

Walking a dispatched trace in order, a claimed prim joins the open region, or opens one. A region runs where its
last member was, so it is *closed* (takes no more members) as soon as an unclaimed symbol reads one of its values,
or writes in place (a later member could otherwise depend on that reader, or read before the write). Unclaimed
symbols in between that read nothing from the region run before it. Regions are therefore acyclic by construction,
and printing each at its last member keeps every value defined before use.

``copy_to_out_(c, out=x)`` joins the region computing ``c`` when ``c`` has no other use and ``x`` comes from outside
the region (or only earlier copies in it wrote ``x``): the region writes into ``x``. Regions of views only are
dropped (PyTorch does views for free); their claims are given back by :func:`thunder.extend.fuse_regions`.

An in-place store of the torch executor's (``v.index_copy_(dim, index, source)`` into a view ``v = dest[key]`` of
an input: a KV-cache update, see :func:`in_place_stores`) that an executor takes (``stores``) joins the open region
instead of closing it, where its index comes from outside the region (so it can be checked before the region runs):
the region writes the new rows itself, fused with the op that computes them, and what reads the cache after the
store (attention) stays in the same region. Where the region computes the index from values it does not write
before (HF's ``StaticCache``: ``arange(n) + cumulative_length``), those members leave it and run before it.

The Inductor and nvFuser executors form their regions here; an executor whose kernels constrain shapes (Triton)
forms its own.
"""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.extend.claiming import claimed_prim

__all__ = ["Region", "form_regions", "region_inputs", "count_uses", "in_place_stores"]


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


def form_regions(bsyms, output, *, view_prims, stores=frozenset()) -> list[Region]:
    """The regions of claimed prims among ``bsyms`` (see the module); ``view_prims`` are the prim names a region
    made only of them is not worth fusing; ``stores`` the positions of in-place stores that may join an open
    region (:func:`in_place_stores`)."""
    uses = count_uses(bsyms, output)
    regions: list[Region] = []
    current: Region | None = None

    def join(r: Region, i: int, b) -> None:
        r.members.append(i)
        r.produced.update(o.name for o in b.flat_proxy_outs)

    for i, b in enumerate(bsyms):
        # a store joins where its index comes from outside the region: it can be checked before the region runs
        if i in stores and current is not None and current.open and (b.args[2].name not in current.produced
                                                                      or _hoist_index(current, bsyms, b, stores)):
            join(current, i, b)
            current.produced.add(b.args[0].name)  # later readers of the view see the new rows after the region
            continue
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
    return [r for r in regions if any(i in stores or claimed_prim(bsyms[i]).name not in view_prims
                                      for i in r.members)]


def _hoist_index(r: Region, bsyms, store, stores) -> bool:
    """Whether the members of ``r`` that compute ``store``'s index (HF's ``StaticCache``: ``arange(n) +
    cumulative_length``) can run before the region instead, and if so takes them out of it (their claims go back to
    the torch executor, where they are in the trace): the index is then the region's input, checked before it runs.
    They can where they read nothing the region writes before them (``cumulative_length.add_(n)`` before the
    store: they read the value from before it) and are no copy or store; a copy in the region of a value they
    compute keeps them (a region copies only what it computes)."""
    producer = {o.name: j for j in r.members for o in bsyms[j].flat_proxy_outs}
    if store.args[2].name not in producer:  # an input a copy in the region wrote
        return False
    hoisted: set[int] = set()
    pending = [producer[store.args[2].name]]
    while pending:
        j = pending.pop()
        if j not in hoisted:
            hoisted.add(j)
            pending.extend(producer[p.name] for p in bsyms[j].flat_proxy_args if p.name in producer)
    if len(hoisted) == len(r.members):
        return False
    made = {o.name for j in hoisted for o in bsyms[j].flat_proxy_outs}
    written: set[str] = set()  # what the region's other members wrote so far
    for j in r.members:
        b = bsyms[j]
        is_copy = j not in stores and claimed_prim(b).name == "copy_to_out_"
        if j in hoisted:
            if j in stores or is_copy or any(p.name in written for p in b.flat_proxy_args):
                return False
        elif is_copy:
            if b.args[0].name in made:
                return False
            written.add(b.kwargs["out"].name)
        elif j in stores:
            written.add(b.args[0].name)
    r.members = [j for j in r.members if j not in hoisted]
    r.produced = set()
    for j in r.members:
        b = bsyms[j]
        r.produced.update(o.name for o in b.flat_proxy_outs)
        if j in stores:
            r.produced.add(b.args[0].name)
        elif claimed_prim(b).name == "copy_to_out_":
            r.produced.add(b.kwargs["out"].name)
    return True


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


# the in-place stores a region may take, by the torch operator that makes them
_STORES = frozenset({"torch.Tensor.index_copy_"})
_GETITEM = "torch.Tensor.__getitem__"


def in_place_stores(trace, may_take) -> tuple:
    """(``trace`` with the in-place stores a region may take made now, their positions).

    The torch executor turns an input's region update ``copy_to_out_(setitem(dest, key, index_copy(dest[key],
    ...)), out=dest)`` into ``v = dest[key]; v.index_copy_(...)`` (:mod:`thunder.executors.torch_stores`), after
    fusion. A fusion executor that can write ``v`` itself runs that lowering before forming its regions and takes
    the stores ``may_take(bsym)`` accepts where nothing else can see ``v``'s memory (``v`` may be ``dest`` itself:
    ``cache.index_copy_(...)``): ``dest`` is read only to make ``v``, nothing reads ``v`` before the store, the only
    other values that may share their memory are made from the new value after the store, and
    neither is returned (so the region's graph gets one input for that memory, never two aliases of it)."""
    from thunder.executors.torch_stores import store_updates_in_place

    # Only the stores taken are lowered here: the torch executor lowers the others last, after its reordering of
    # independent chains, which does not see a store's write into its first argument.
    lowered = store_updates_in_place(trace)
    taken = _stores_taken(lowered, may_take)
    if not taken:
        return trace, frozenset()
    dests = {_view_base(lowered, i).name for i in taken}
    lowered = store_updates_in_place(trace, dests)
    taken = _stores_taken(lowered, may_take)
    if {_view_base(lowered, i).name for i in taken} != dests:  # (the same stores are taken, or none)
        return trace, frozenset()
    return lowered, taken


def _view_base(trace, i):
    """The tensor the store at ``i`` writes into: the base of its view, or the input it writes itself."""
    view = trace.bound_symbols[i].args[0]
    return next((b.args[0] for b in trace.bound_symbols if any(o.name == view.name for o in b.flat_proxy_outs)),
                view)


def _stores_taken(trace, may_take) -> frozenset:
    from thunder.executors.torch_copies import _printed, memory_sets

    bsyms = list(trace.bound_symbols)
    if not any(_printed(b) in _STORES for b in bsyms):
        return frozenset()
    producer_of = {o.name: i for i, b in enumerate(bsyms) for o in b.flat_proxy_outs}
    memory = memory_sets(bsyms, trace.input_memory, allocates=_claim_allocates)
    readers: dict[str, list[int]] = {}
    for i, b in enumerate(bsyms):
        for p in b.flat_proxy_args:
            readers.setdefault(p.name, []).append(i)
    returned = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
    read = readers.keys() | returned
    taken = set()
    for i, b in enumerate(bsyms):
        if _printed(b) not in _STORES or not isinstance(b.args[0], TensorProxy) or not may_take(b):
            continue
        view = b.args[0]
        g = producer_of.get(view.name)
        if g is None:  # a store into the input itself (HF's StaticCache: self.keys.index_copy_(2, pos, k))
            dest, made_from_dest = view, []
        elif _printed(bsyms[g]) == _GETITEM:
            dest, made_from_dest = bsyms[g].args[0], [g]
        else:
            continue
        # what may share the memory: ``dest``, ``v`` and views of the new value, made after the store
        shared = {n for n in read if memory.find(n) == memory.find(view.name)} - {view.name, dest.name}
        if (dest is not view and readers.get(dest.name) != made_from_dest) or min(readers[view.name]) != i \
                or {view.name, dest.name} & returned or any(producer_of.get(n, -1) <= i for n in shared):
            continue
        taken.add(i)
    return frozenset(taken)


def _claim_allocates(bsym) -> bool:
    """A claimed prim makes a new tensor unless it is a shape prim (a view, or the same values: reshape, slice)."""
    prim = claimed_prim(bsym)
    return prim is not None and "shape" not in prim.tags
