"""The claiming mechanism of a fusion executor, shared by the fusion executors that use it.

A :class:`ClaimingFusionExecutor` claims fusible prims during dispatch and fuses them afterwards. A
third-party fusion executor subclasses it and gives only what is its own:

- ``claimable_prim(bsym)``: whether it can fuse this prim (with these arguments);
- ``copy_ok(bsym)``: whether it can store a ``prims.copy_to_out_`` into its ``out`` (default: never);
- ``fusion_pass(trace)``: forms its regions and calls :func:`fuse_regions` with a region builder.

It gets: a torch-language symbol claimed when every prim of its decomposition is claimable (size arithmetic
on numbers aside, lowered by the python/torch executor before the region); claimed prims rebound to *claim
symbols* (``<name>_claim_exp``) that mark what the fusion pass may group; the copy lowering registered as a
claim (:meth:`ClaimingFusionExecutor.register_copy_claim`); and the claims left in no region given back to
the torch executor, tags kept (:func:`fuse_regions`).
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import Symbol
from thunder.extend import FusionExecutor, get_executor, lower_keeping_tags

__all__ = ["ClaimingFusionExecutor", "COPY_TO_OUT", "prim_name", "leaves", "is_number_prim", "claim_symbol",
           "claimed_prim", "fallback_lower", "fuse_regions"]

COPY_TO_OUT = "prims.copy_to_out_"


def prim_name(bsym) -> str | None:
    """``"exp"`` for a bound ``prims.exp``; None for anything not a prim."""
    sym_id = bsym.sym.id
    return sym_id[len("prims."):] if sym_id.startswith("prims.") and bsym.sym.is_prim else None


def leaves(bsym):
    """The prims a bound symbol decomposes into, in order."""
    if bsym.sym.is_prim or not bsym.subsymbols:
        yield bsym
        return
    for sub in bsym.subsymbols:
        yield from leaves(sub)


def is_number_prim(bsym) -> bool:
    """A prim on numbers only (size arithmetic under symbolic values): runs in Python, outside regions."""
    return bsym.sym.is_prim and not any(isinstance(p, TensorProxy) for p in (*bsym.flat_proxy_args,
                                                                              *bsym.flat_proxy_outs))


_claim_symbols: dict[str, Symbol] = {}
_prims_of_claims: dict[str, Symbol] = {}


def claim_symbol(prim_sym: Symbol, executor) -> Symbol:
    """The marker symbol of a prim claimed by ``executor`` (never printed in a final trace: it is fused or
    given back)."""
    sym_id = f"{executor.name}_claim.{prim_sym.id}"
    sym = _claim_symbols.get(sym_id)
    if sym is None:
        sym = Symbol(f"{executor.name}_claim_{prim_sym.name}", prim_sym.meta, id=sym_id, is_prim=True,
                     executor=executor, tags=prim_sym.tags)
        _claim_symbols[sym_id] = sym
        _prims_of_claims[sym_id] = prim_sym
    return sym


def claimed_prim(bsym) -> Symbol | None:
    """The prim a claim symbol stands for, or None when ``bsym`` is not a claim."""
    return _prims_of_claims.get(bsym.sym.id)


def fallback_lower(bsym, who: str = "thunder") -> list:
    """Lowers ``bsym`` with the python executor, else the torch executor (what dispatch would have chosen)."""
    for name in ("python", "torch"):
        ex = get_executor(name)
        if ex is not None and ex.can_execute(bsym):
            return lower_keeping_tags(ex, bsym)
    raise RuntimeError(f"{who}: no executor can run {bsym.sym.id}")


class ClaimingFusionExecutor(FusionExecutor):
    """A fusion executor that claims prims by ``claimable_prim`` and copies by ``copy_ok`` (see the module)."""

    def claimable_prim(self, bsym) -> bool:
        raise NotImplementedError

    def copy_ok(self, bsym) -> bool:
        return False

    def can_execute(self, bsym) -> bool:
        if bsym.sym.id == COPY_TO_OUT:
            return COPY_TO_OUT in self.implmap and self.copy_ok(bsym)
        if bsym.sym.is_prim:
            return self.claimable_prim(bsym)
        found = False
        for leaf in leaves(bsym):
            if self.claimable_prim(leaf):
                found = True
            elif not is_number_prim(leaf):
                return False
        return found

    def why_not_prim(self, bsym) -> str | None:
        """Why the prim ``bsym`` is not claimed (None: it is); executors with reasons override it."""
        return None if self.claimable_prim(bsym) else f"{self.name} does not fuse {bsym.sym.id} with these arguments"

    def why_not(self, bsym) -> str | None:
        if self.can_execute(bsym):
            return None
        if bsym.sym.id == COPY_TO_OUT:
            return f"{self.name} leaves this copy to PyTorch"
        if bsym.sym.is_prim:
            return self.why_not_prim(bsym)
        for leaf in leaves(bsym):  # the first prim of the decomposition it cannot fuse
            if not is_number_prim(leaf) and not self.claimable_prim(leaf):
                return f"its decomposition has {leaf.sym.id}: {self.why_not_prim(leaf)}"
        return f"{self.name} claims nothing in its decomposition"

    def lower(self, bsym):
        if bsym.sym.id == COPY_TO_OUT:
            return [bsym.replace(sym=claim_symbol(bsym.sym, self), subsymbols=())]
        lowered = []
        for leaf in leaves(bsym):
            if self.claimable_prim(leaf):
                lowered.append(leaf.replace(sym=claim_symbol(leaf.sym, self), subsymbols=(),
                                            source=leaf.source or bsym.source))
            else:  # size arithmetic: runs in Python before the region
                lowered.extend(fallback_lower(leaf.replace(source=leaf.source or bsym.source),
                                              f"thunder_{self.name}"))
        return lowered

    def register_copy_claim(self) -> None:
        """Registers ``prims.copy_to_out_`` as a claim: the fusion pass puts the copy into the region computing
        the copied value or gives it back to the torch executor's copy (call from the plugin's
        ``thunder_register_copy_lowering`` hook)."""
        from thunder.core.prims import all_prims

        self.register_copy_lowering(copy_to_out=claim_symbol(all_prims["copy_to_out_"], self))


def fuse_regions(trace, regions, region_bsym):
    """``trace`` with each region (an object whose ``members`` are indices into its bound symbols, in order)
    replaced by ``region_bsym(region, prims, outputs)`` at its last member, and every claim in no region given
    back to the torch executor. ``prims`` are the region's claims rebound to their prims; ``outputs`` the values
    they compute that the trace returns or a symbol outside the region reads."""
    from thunder.core.trace import from_trace

    bsyms = list(trace.bound_symbols)
    member_of = {i: r for r in regions for i in r.members}
    consumers: dict[str, set[int]] = {}
    for j, b in enumerate(bsyms):
        for p in b.flat_proxy_args:
            consumers.setdefault(p.name, set()).add(j)
    returned = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}

    new = from_trace(trace)
    for i, b in enumerate(bsyms):
        r = member_of.get(i)
        if r is None:
            new.bound_symbols.extend(_give_back(b) if claimed_prim(b) is not None else [b])
        elif i == r.members[-1]:
            members, member_set = [bsyms[j] for j in r.members], set(r.members)
            # by name: a value rematerialization recomputes twice into one trace is defined twice, output once
            outputs = list({o.name: o for b in members for o in b.flat_proxy_outs
                            if o.name in returned or any(k not in member_set for k in consumers.get(o.name, ()))}.values())
            # an in-place store a region took (``regions.in_place_stores``) is the torch executor's call already
            prims = [b if claimed_prim(b) is None else b.replace(sym=claimed_prim(b)) for b in members]
            new.bound_symbols.append(region_bsym(r, prims, outputs))
    return new


def _give_back(b) -> list:
    return lower_keeping_tags(get_executor("torch"), b.replace(sym=claimed_prim(b)))
